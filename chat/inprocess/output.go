package inprocess

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/engine"
)

// What a request asks of the shape of a local model's output: the
// constraint its tokens are sampled under (structured_outputs, the older
// guided_* fields, response_format, or tool_choice required or named), and
// how its text is read back (reasoning, tool calls).

// toolMode is how a request's tools shape the answer.
type toolMode int

const (
	// toolsOff: no tools, or tool_choice "none": the output is content.
	toolsOff toolMode = iota
	// toolsAuto: the model may call tools in its own format, parsed out.
	toolsAuto
	// toolsRequired: the output is constrained to a JSON array of calls.
	toolsRequired
	// toolsNamed: the output is constrained to one function's arguments.
	toolsNamed
)

// toolFormat is how a model writes tool calls of its own accord.
type toolFormat int

const (
	formatNone   toolFormat = iota // no known format: tool_choice auto reads content
	formatHermes                   // <tool_call>{...}</tool_call> (Hermes, Qwen2.5, Qwen3)
	formatLlama3                   // {"name", "parameters"} objects (Llama 3.x)
)

// outputPlan is what a local request asks of its answer's shape.
type outputPlan struct {
	// spec is the constraint, nil for free text; param names the field it
	// came from, for errors.
	spec  *constrain.Spec
	param string
	tools toolMode
	// named is the function of toolsNamed.
	named string
	// parallel is parallel_tool_calls: false keeps only the first call.
	parallel bool
	// format is the model's own tool-call format, for toolsAuto.
	format toolFormat
	// thinking: the model thinks in <think> blocks and the request leaves
	// thinking on, so the reasoning of its output's think block goes to
	// reasoning (see toolcall.Reasoning) and the constraint applies after
	// it.
	thinking bool
	// reasoningOpen: the prompt left a think block open (its generation
	// prompt ends in <think>), so the output starts as reasoning.
	reasoningOpen bool
	// includeReasoning is include_reasoning: false drops the reasoning.
	includeReasoning bool
}

// parsed reports whether the output's text is read by a parser rather
// than sent as content as it is.
func (p *outputPlan) parsed() bool { return p.thinking || p.tools != toolsOff }

// guidedFields are the structured-output fields older vLLM releases took
// at the top level of the request, and the structured_outputs member each
// stands for.
var guidedFields = []struct{ field, kind string }{
	{"guided_json", "json"}, {"guided_regex", "regex"}, {"guided_choice", "choice"}, {"guided_grammar", "grammar"},
}

// planOutput reads the request's structured-output, tool and reasoning
// fields for model lm.
func (lm *model) planOutput(req *chat.CompletionRequest) (outputPlan, error) {
	p := outputPlan{parallel: req.ParallelToolCalls == nil || *req.ParallelToolCalls, format: lm.toolFormat,
		includeReasoning: req.IncludeReasoning == nil || *req.IncludeReasoning}
	p.thinking = lm.thinks && thinkingEnabled(req)

	specs, err := requestConstraints(req)
	if err != nil {
		return p, err
	}
	if err := p.readTools(req); err != nil {
		return p, err
	}
	if p.tools == toolsRequired || p.tools == toolsNamed {
		if len(specs) > 0 {
			return p, chat.Invalid("structured_outputs", "You can only either use constraints for structured outputs or tools, not both.")
		}
		spec, err := p.toolSchema(req)
		if err != nil {
			return p, err
		}
		specs = append(specs, spec)
	}
	return p, p.constrainBy(specs)
}

// constrainBy makes the request's one constraint the plan's; more than one
// kind is a 400.
func (p *outputPlan) constrainBy(specs []namedSpec) error {
	switch len(specs) {
	case 0:
		return nil
	case 1:
		p.spec, p.param = &specs[0].spec, specs[0].param
		return nil
	}
	kinds := make([]string, len(specs))
	for i, s := range specs {
		kinds[i] = "'" + s.kind + "'"
	}
	sort.Strings(kinds)
	return chat.Invalid("structured_outputs", "You can only use one kind of structured outputs constraint but multiple are specified: {%s}", strings.Join(kinds, ", "))
}

// thinkingEnabled is the template's enable_thinking as the request sets it
// (chat_template_kwargs, else reasoning_effort "none" turns it off); true
// when left out, the thinking templates' default.
func thinkingEnabled(req *chat.CompletionRequest) bool {
	if v, ok := req.ChatTemplateKwargs["enable_thinking"]; ok {
		on, isBool := v.(bool)
		return !isBool || on
	}
	return req.ReasoningEffort == nil || *req.ReasoningEffort != "none"
}

// namedSpec is one constraint of the request, with the structured_outputs
// kind it counts as and the field it came from.
type namedSpec struct {
	spec        constrain.Spec
	kind, param string
}

// requestConstraints collects the constraints the request states: in
// response_format, structured_outputs and the guided_* fields.
func requestConstraints(req *chat.CompletionRequest) ([]namedSpec, error) {
	var specs []namedSpec
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			specs = append(specs, namedSpec{constrain.Spec{Kind: constrain.KindJSONObject}, "json_object", "response_format"})
		case "json_schema":
			var js struct {
				Schema json.RawMessage `json:"schema"`
			}
			if err := json.Unmarshal(rf.JSONSchema, &js); err != nil {
				return nil, chat.Malformed("response_format.json_schema", "model_type", "Input should be an object with name and schema")
			}
			schema := js.Schema
			if len(schema) == 0 || isNull(schema) {
				schema = json.RawMessage("{}") // no schema: any JSON value
			}
			specs = append(specs, namedSpec{constrain.Spec{Kind: constrain.KindJSONSchema, Schema: schema}, "json", "response_format"})
		case "structural_tag":
			return nil, localUnsupported("response_format", "`response_format` of type \"structural_tag\"")
		}
	}
	if so := req.StructuredOutputs; so != nil {
		if raw, _ := req.Field("structured_outputs"); hasMember(raw, "whitespace_pattern") {
			return nil, localUnsupported("structured_outputs.whitespace_pattern", "`structured_outputs.whitespace_pattern`")
		}
		if len(so.StructuralTag) > 0 && !isNull(so.StructuralTag) {
			return nil, localUnsupported("structured_outputs.structural_tag", "`structured_outputs.structural_tag`")
		}
		add := func(spec constrain.Spec, kind string) {
			specs = append(specs, namedSpec{spec, kind, "structured_outputs"})
		}
		if len(so.JSON) > 0 && !isNull(so.JSON) {
			schema, err := schemaText(so.JSON, "structured_outputs.json")
			if err != nil {
				return nil, err
			}
			add(constrain.Spec{Kind: constrain.KindJSONSchema, Schema: schema}, "json")
		}
		if so.Regex != nil {
			add(constrain.Spec{Kind: constrain.KindRegex, Regex: *so.Regex}, "regex")
		}
		if so.Choice != nil {
			add(constrain.Spec{Kind: constrain.KindChoice, Choice: so.Choice}, "choice")
		}
		if so.Grammar != nil {
			add(constrain.Spec{Kind: constrain.KindGrammar, Grammar: *so.Grammar}, "grammar")
		}
		if so.JSONObject != nil && *so.JSONObject {
			add(constrain.Spec{Kind: constrain.KindJSONObject}, "json_object")
		}
	}
	guided, err := guidedConstraints(req)
	if err != nil {
		return nil, err
	}
	return append(specs, guided...), nil
}

// guidedConstraints reads the older guided_* fields, which weft honours
// (vLLM has dropped them and would answer unconstrained).
func guidedConstraints(req *chat.CompletionRequest) ([]namedSpec, error) {
	if req.Has("guided_whitespace_pattern") {
		return nil, localUnsupported("guided_whitespace_pattern", "`guided_whitespace_pattern`")
	}
	if req.Has("guided_decoding_backend") {
		var backend string
		if raw, _ := req.Field("guided_decoding_backend"); json.Unmarshal(raw, &backend) != nil {
			return nil, chat.Malformed("guided_decoding_backend", "string_type", "Input should be a valid string")
		}
	}
	var specs []namedSpec
	for _, g := range guidedFields {
		raw, ok := req.Field(g.field)
		if !ok || isNull(raw) {
			continue
		}
		spec := constrain.Spec{}
		var err error
		switch g.kind {
		case "json":
			spec.Kind = constrain.KindJSONSchema
			spec.Schema, err = schemaText(raw, g.field)
		case "regex":
			spec.Kind = constrain.KindRegex
			if json.Unmarshal(raw, &spec.Regex) != nil {
				err = chat.Malformed(g.field, "string_type", "Input should be a valid string")
			}
		case "choice":
			spec.Kind = constrain.KindChoice
			if json.Unmarshal(raw, &spec.Choice) != nil {
				err = chat.Malformed(g.field, "list_type", "Input should be a valid list of strings")
			}
		case "grammar":
			spec.Kind = constrain.KindGrammar
			if json.Unmarshal(raw, &spec.Grammar) != nil {
				err = chat.Malformed(g.field, "string_type", "Input should be a valid string")
			}
		}
		if err != nil {
			return nil, err
		}
		specs = append(specs, namedSpec{spec, g.kind, g.field})
	}
	count := 0
	for _, s := range specs {
		if s.kind != "grammar" {
			count++
		}
	}
	if count > 1 {
		return nil, chat.Invalid("guided_json", "You can only use one kind of guided decoding ('guided_json', 'guided_regex' or 'guided_choice').")
	}
	return specs, nil
}

// schemaText is a JSON schema given as an object or as a JSON string
// holding one.
func schemaText(raw json.RawMessage, param string) ([]byte, error) {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		return raw, nil
	}
	if !json.Valid([]byte(text)) {
		return nil, chat.Invalid(param, "%s is not a valid JSON schema: the string does not hold JSON", param)
	}
	return []byte(text), nil
}

func hasMember(raw []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	v, ok := m[key]
	return ok && !isNull(v)
}

// localUnsupported is the 400 for a structured-output form local models do
// not implement.
func localUnsupported(param, what string) error {
	return weft.WithFields(chat.ErrUnsupportedField, map[string]any{"param": param}, "%s is not supported by local models.", what)
}

// readTools reads tool_choice: "none" (or no tools) turns parsing off,
// "auto" (the default with tools) parses the model's own format,
// "required" and a named function constrain the output.
func (p *outputPlan) readTools(req *chat.CompletionRequest) error {
	if len(req.Tools) == 0 {
		return nil
	}
	p.tools = toolsAuto
	if !req.Has("tool_choice") {
		return nil
	}
	var choice any
	_ = json.Unmarshal(req.ToolChoice, &choice)
	switch c := choice.(type) {
	case string:
		switch c {
		case "none":
			p.tools = toolsOff
		case "required":
			p.tools = toolsRequired
		}
	case map[string]any:
		fn, _ := c["function"].(map[string]any)
		p.named, _ = fn["name"].(string)
		p.tools = toolsNamed
	}
	return nil
}

// toolCallWhitespace bounds the white space between two JSON tokens of a
// tool call that tool_choice required or named constrains: a chat template
// renders a model's calls with tojson (Python's json.dumps, one space after
// "," and ":"), so one byte is all a model writes there. The routing
// file's max_whitespace, meant for any JSON a schema asks for, lets a
// model that favours white space wander 8 bytes at every gap of an array
// of calls with no end of its own, until max_tokens.
const toolCallWhitespace = 1

// toolSchema is the constraint of tool_choice required or named, built as
// vLLM builds it: a named function's parameters; for required, an array
// (at least one item, at most one without parallel_tool_calls) of objects
// {"name": <one tool's name>, "parameters": <its parameters>}, one anyOf
// branch per tool, with the tools' $defs lifted to the top. Its white
// space is bounded by toolCallWhitespace.
func (p *outputPlan) toolSchema(req *chat.CompletionRequest) (namedSpec, error) {
	params := func(t chat.Tool) json.RawMessage {
		if len(t.Function.Parameters) == 0 || isNull(t.Function.Parameters) {
			return json.RawMessage(`{"type":"object","properties":{}}`)
		}
		return t.Function.Parameters
	}
	if p.tools == toolsNamed {
		for _, t := range req.Tools {
			if t.Function.Name == p.named {
				return namedSpec{constrain.Spec{Kind: constrain.KindJSONSchema, Schema: params(t), MaxWhitespace: toolCallWhitespace}, "json", "tools"}, nil
			}
		}
		return namedSpec{}, chat.Invalid("tool_choice", "The tool specified in `tool_choice` does not match any of the specified `tools`")
	}
	branches := make([]json.RawMessage, len(req.Tools))
	defs := map[string]json.RawMessage{}
	for i, t := range req.Tools {
		var withDefs struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		_ = json.Unmarshal(params(t), &withDefs)
		for name, def := range withDefs.Defs {
			if prev, ok := defs[name]; ok && !jsonEqual(prev, def) {
				return namedSpec{}, chat.Invalid("tools", "chat.Tool definition '%s' has multiple schemas, which is not supported.", name)
			}
			defs[name] = def
		}
		name, _ := json.Marshal(t.Function.Name)
		// vLLM writes "type": "object" beside the anyOf; each branch
		// holds it here, which admits the same values.
		branches[i] = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"name":{"type":"string","enum":[%s]},"parameters":%s},"required":["name","parameters"]}`, name, params(t)))
	}
	schema := map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"anyOf": branches}}
	if !p.parallel {
		schema["maxItems"] = 1
	}
	if len(defs) > 0 {
		schema["$defs"] = defs
	}
	b, _ := json.Marshal(schema)
	return namedSpec{constrain.Spec{Kind: constrain.KindJSONSchema, Schema: b, MaxWhitespace: toolCallWhitespace}, "json", "tools"}, nil
}

func jsonEqual(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// compile compiles the plan's constraint for the engine, from its cache
// when seen before. A constraint the compiler refuses is a 400 whose
// message names the keyword or construct, with the field it came from as
// param.
func (p *outputPlan) compile(ctx context.Context, eng *engine.Engine) (*constrain.Constraint, error) {
	if p.spec == nil {
		return nil, nil
	}
	c, err := eng.Compile(ctx, *p.spec)
	if err == nil || !errors.Is(err, engine.ErrInvalidRequest) {
		return c, err
	}
	what := "structured outputs constraint"
	switch {
	case errors.Is(err, constrain.ErrUnsupported):
		what = "The structured outputs constraint uses what local models do not support"
	case errors.Is(err, constrain.ErrTooComplex):
		what = "The structured outputs constraint is too complex"
	default:
		what = "The structured outputs constraint is invalid"
	}
	return nil, weft.WithFields(chat.ErrBadRequest, map[string]any{"param": p.param}, "%s: %s", what, constrainDetail(err))
}

// constrainDetail is a compile error's own text, without the sentinel's
// prefix.
func constrainDetail(err error) string {
	msg := err.Error()
	for _, sentinel := range []error{constrain.ErrUnsupported, constrain.ErrTooComplex, constrain.ErrInvalid} {
		if rest, ok := strings.CutPrefix(msg, sentinel.Error()+": "); ok {
			return rest
		}
	}
	return msg
}

// isNull tells a JSON null.
func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }
