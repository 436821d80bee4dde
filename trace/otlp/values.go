package otlp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TruncationMarker ends an attribute value cut at Config.MaxValueBytes; the
// number of bytes left out follows it, then "]".
const TruncationMarker = "…[truncated "

// attrs is a span's attributes as plain Go values (string, int64, float64,
// bool, []any, map[string]any, nil), keys as sent (dotted, not nested).
type attrs map[string]any

// values converts pcommon values, cutting strings and bytes longer than max.
type values struct{ max int }

func (v values) mapOf(m pcommon.Map) attrs {
	out := make(attrs, m.Len())
	for k, val := range m.All() {
		out[k] = v.value(val)
	}
	return out
}

func (v values) value(val pcommon.Value) any {
	switch val.Type() {
	case pcommon.ValueTypeStr:
		return v.truncate(val.Str())
	case pcommon.ValueTypeInt:
		return val.Int()
	case pcommon.ValueTypeDouble:
		f := val.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			// JSON has no NaN or infinity: keep the value as text.
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return f
	case pcommon.ValueTypeBool:
		return val.Bool()
	case pcommon.ValueTypeMap:
		return map[string]any(v.mapOf(val.Map()))
	case pcommon.ValueTypeSlice:
		s := val.Slice()
		out := make([]any, s.Len())
		for i := range s.Len() {
			out[i] = v.value(s.At(i))
		}
		return out
	case pcommon.ValueTypeBytes:
		return v.truncate(base64.StdEncoding.EncodeToString(val.Bytes().AsRaw()))
	}
	return nil
}

// truncate cuts s to at most max bytes on a rune boundary and appends the
// marker, so that an oversize value costs the span its tail, not the span.
func (v values) truncate(s string) string {
	if v.max <= 0 || len(s) <= v.max {
		return s
	}
	cut := v.max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + TruncationMarker + strconv.Itoa(len(s)-cut) + " bytes]"
}

// str is the attribute as text: strings as they are, numbers and booleans
// formatted; "" when absent or structured.
func (a attrs) str(key string) string {
	switch v := a[key].(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// first is the first of keys present with a non-empty text value.
func (a attrs) first(keys []string) string {
	for _, k := range keys {
		if s := a.str(k); s != "" {
			return s
		}
	}
	return ""
}

// structured is the attribute as a JSON-like value: a string holding a JSON
// object or array is parsed (invalid JSON stays the string); ok is false when
// the attribute is absent.
func (a attrs) structured(key string) (any, bool) {
	v, ok := a[key]
	if !ok {
		return nil, false
	}
	return parseJSONText(v), true
}

// parseJSONText parses a string that holds a JSON object or array; anything
// else is returned unchanged.
func parseJSONText(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return v
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil || dec.More() {
		return v
	}
	return out
}

// parseAnyJSON parses a string holding any JSON value (a tool result "42" or
// "\"text\"" included); text that is not JSON stays the string.
func parseAnyJSON(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil || dec.More() {
		return v
	}
	return out
}

// number reads a token count sent as an integer, a float or a numeric
// string (the Vercel AI SDK and int64-as-string JSON do that).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// firstNumber is the first of keys holding a number.
func (a attrs) firstNumber(keys []string) (float64, bool) {
	for _, k := range keys {
		if n, ok := number(a[k]); ok {
			return n, true
		}
	}
	return 0, false
}

// indexed collects the attributes prefix+"N."+rest of a flattened list
// (llm.input_messages.0.message.role, gen_ai.prompt.1.content) into one map
// of rest → value per N, in index order. Keys whose N is no number are not
// part of the list.
func indexed(flat map[string]any, prefix string) []map[string]any {
	byIndex := map[int]map[string]any{}
	for k, v := range flat {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		idx, field, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(idx)
		if err != nil || n < 0 {
			continue
		}
		if byIndex[n] == nil {
			byIndex[n] = map[string]any{}
		}
		byIndex[n][field] = v
	}
	if len(byIndex) == 0 {
		return nil
	}
	order := make([]int, 0, len(byIndex))
	for n := range byIndex {
		order = append(order, n)
	}
	sort.Ints(order)
	out := make([]map[string]any, len(order))
	for i, n := range order {
		out[i] = byIndex[n]
	}
	return out
}

// text is v as message text: strings as they are, anything else as JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

// strOf is v when it is a string, else "".
func strOf(v any) string {
	s, _ := v.(string)
	return s
}

// mapOf is v (or the JSON object text v holds) as a map, nil otherwise.
func mapOf(v any) map[string]any {
	m, _ := parseJSONText(v).(map[string]any)
	return m
}

// listOf is v (or the JSON array text v holds) as a list, nil otherwise.
func listOf(v any) []any {
	l, _ := parseJSONText(v).([]any)
	return l
}
