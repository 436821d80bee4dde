package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft/internal/jsontext"
	"github.com/weftlabs/weft/objects/ref"
)

// derivedWeaveKeys are the members of summary.weave the server owns: whatever
// a client stored under them is replaced on every read.
var derivedWeaveKeys = map[string]bool{"status": true, "trace_name": true, "latency_ms": true, "display_name": true, "costs": true}

// Status values of summary.weave.status.
const (
	StatusRunning         = "running"
	StatusSuccess         = "success"
	StatusError           = "error"
	StatusDescendantError = "descendant_error"
)

// rebuildSummary returns the summary of c as reads show it: the stored text
// with its "weave" member rebuilt from the call (status, latency_ms,
// display_name or trace_name, and costs when given). Other members keep their
// exact text.
func rebuildSummary(stored []byte, c *Call, costs []byte) []byte {
	members, ok := jsontext.ObjectMembers(stored)
	if !ok {
		members = nil
	}
	weaveAt := -1
	for i, m := range members {
		if m.Key == "weave" {
			weaveAt = i
		}
	}
	var weave []jsontext.Member
	if weaveAt >= 0 {
		old, _ := jsontext.ObjectMembers(members[weaveAt].RawValue)
		for _, m := range old {
			if !derivedWeaveKeys[m.Key] {
				weave = append(weave, m)
			}
		}
	}
	status := callStatus(c.Exception, c.EndedAt != nil, descendantErrorCount(members))
	weave = append(weave, jsontext.NewMember("status", quote(status)))
	if c.DisplayName != nil {
		weave = append(weave, jsontext.NewMember("display_name", quote(*c.DisplayName)))
	} else {
		weave = append(weave, jsontext.NewMember("trace_name", quote(opDisplayName(c.OpName))))
	}
	if c.EndedAt != nil {
		weave = append(weave, jsontext.NewMember("latency_ms", strconv.AppendInt(nil, latencyMS(c.StartedAt, *c.EndedAt), 10)))
	}
	if costs != nil {
		weave = append(weave, jsontext.NewMember("costs", costs))
	}
	var wb bytes.Buffer
	jsontext.WriteObject(&wb, weave)
	if weaveAt >= 0 {
		members[weaveAt].RawValue = wb.Bytes()
	} else {
		members = append(members, jsontext.NewMember("weave", wb.Bytes()))
	}
	var out bytes.Buffer
	jsontext.WriteObject(&out, members)
	return out.Bytes()
}

// callStatus is a call's summary.weave.status given its exception, whether
// it ended and its summary's status_counts.error (the errors of its
// descendants the SDK rolled up into it); the calls column status keeps it
// (see checkEnd and the 20261129060001 migration, which derives it in SQL).
func callStatus(exception *string, ended bool, descendantErrors float64) string {
	switch {
	case exception != nil && *exception != "":
		return StatusError
	case !ended:
		return StatusRunning
	case descendantErrors > 0:
		return StatusDescendantError
	}
	return StatusSuccess
}

// descendantErrorCount is status_counts.error among a summary's members
// when it is a JSON number (the last status_counts member when repeated),
// else 0.
func descendantErrorCount(members []jsontext.Member) float64 {
	var errorCount float64
	for _, m := range members {
		if m.Key == "status_counts" {
			var counts struct {
				Error float64 `json:"error"`
			}
			_ = json.Unmarshal(m.RawValue, &counts)
			errorCount = counts.Error
		}
	}
	return errorCount
}

// latencyMS is Weave's latency: whole milliseconds, truncated.
func latencyMS(start, end time.Time) int64 {
	return end.Sub(start).Microseconds() / 1000
}

// opDisplayName is the op's name inside an op ref of either scheme
// ("trace:///entity/project/op/name:digest" → "name"), or opName itself.
func opDisplayName(opName string) string {
	if r, isRef, err := parseOpRef(opName); isRef && err == nil {
		return r.Name
	}
	return opName
}

// parseOpRef parses an op_name that looks like a ref (either scheme); isRef
// is false for a plain name. A ref that is not an op ref is an error.
func parseOpRef(opName string) (r ref.Ref, isRef bool, err error) {
	if !ref.IsRef(opName) {
		return ref.Ref{}, false, nil
	}
	r, err = ref.Parse(opName)
	if err == nil && r.Kind != ref.KindOp {
		err = fmt.Errorf("%w: kind %q is not op", ref.ErrInvalid, r.Kind)
	}
	return r, true, err
}

func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// selectColumns keeps only the requested top-level members of the encoded call
// (plus the ones every call carries); attributes and inputs, which Weave's
// call schema requires, are {} when not requested.
func selectColumns(encoded []byte, columns map[string]bool) []byte {
	members, ok := jsontext.ObjectMembers(encoded)
	if !ok {
		return encoded
	}
	kept := members[:0]
	for _, m := range members {
		switch {
		case columns[m.Key] || alwaysReturned[m.Key]:
			kept = append(kept, m)
		case m.Key == "attributes" || m.Key == "inputs":
			m.RawValue = []byte("{}")
			kept = append(kept, m)
		}
	}
	var out bytes.Buffer
	jsontext.WriteObject(&out, kept)
	return out.Bytes()
}

// alwaysReturned are the fields a query returns whatever its columns say.
var alwaysReturned = map[string]bool{"id": true, "project_id": true, "trace_id": true, "op_name": true, "started_at": true}

// columnSet is the set of top-level fields that columns select, as Weave
// reads them: a column names the field of its first path segment
// ("output.result" selects output), a "_dump" suffix is dropped
// ("summary_dump" is summary), and summary (also implied by costs) brings the
// fields its derived members are made of: ended_at, exception and
// display_name. Nil (every field) when columns is empty.
func columnSet(columns []string, costs bool) map[string]bool {
	if len(columns) == 0 {
		return nil
	}
	set := map[string]bool{}
	for _, c := range columns {
		first, _, _ := strings.Cut(c, ".")
		set[strings.TrimSuffix(first, "_dump")] = true
	}
	if costs {
		set["summary"] = true
	}
	if set["summary"] {
		set["ended_at"], set["exception"], set["display_name"] = true, true, true
	}
	// Either spelling of the user and run fields selects the field.
	for pf, wb := range map[string]string{"pf_user_id": "wb_user_id", "pf_run_id": "wb_run_id", "pf_run_step": "wb_run_step", "pf_run_step_end": "wb_run_step_end"} {
		if set[wb] {
			set[pf] = true
		}
	}
	return set
}
