package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects/ref"
)

// ModelClass is the class of the objects that hold a judge's model and
// parameters, as Weave names it.
const ModelClass = "LLMStructuredCompletionModel"

// Response formats of a judge.
const (
	// FormatSchema constrains the answer to the judge's JSON Schema; the
	// verdict is the JSON it wrote.
	FormatSchema = "json_schema"
	// FormatJSON constrains the answer to a JSON object.
	FormatJSON = "json"
	// FormatText takes the answer's text as the verdict.
	FormatText = "text"
)

// formatAliases are the other spellings of response formats: the chat
// API's, and later SDKs'.
var formatAliases = map[string]string{"json_object": FormatJSON, "jsonschema": FormatSchema}

// DefaultJudgeMaxTokens is the most tokens a judge writes per verdict when
// its model's default_params set no max_tokens.
const DefaultJudgeMaxTokens = 512

// Judge is an LLMAsAJudgeScorer, read: Weave's shape — a model (an
// LLMStructuredCompletionModel, inline or by ref, whose llm_model_id names
// the judge model as the chat gateway routes it and whose default_params
// hold the sampling parameters, messages_template and response_format) and
// a scoring_prompt (a [Template]) — plus what weft adds: response_schema,
// the JSON Schema of the verdict (also read from
// default_params.response_format_schema), which the judge answers under as
// a structured output, and include_children / max_children, which give the
// template the call's children as {children}.
type Judge struct {
	// Model is the judge model's name.
	Model string
	// ModelRef is the ref of the model object when the scorer names it by
	// ref ("" when inline); [Monitors] reads it.
	ModelRef string
	Prompt   *Template
	// Messages are the messages before the prompt (default_params'
	// messages_template), each content a template too.
	Messages []JudgeMessage
	// Format is FormatSchema, FormatJSON or FormatText.
	Format string
	// Schema is the verdict's JSON Schema (FormatSchema).
	Schema json.RawMessage
	// Params are the sampling parameters sent with each request:
	// temperature (0 unless set), top_p, max_tokens
	// (DefaultJudgeMaxTokens unless set), presence_penalty,
	// frequency_penalty, stop.
	Params map[string]json.RawMessage

	IncludeChildren bool
	// MaxChildren bounds the children given to the template (default 20).
	MaxChildren int

	schema *jsonschema.Schema
}

// JudgeMessage is one message of messages_template.
type JudgeMessage struct {
	Role    string
	Content *Template
}

// defaultMaxChildren bounds {children} when the scorer does not.
const defaultMaxChildren = 20

// maxChildrenLimit bounds max_children.
const maxChildrenLimit = 200

// sampling parameters a judge passes on from default_params.
var judgeParams = []string{"temperature", "top_p", "max_tokens", "presence_penalty", "frequency_penalty", "stop"}

func parseJudge(r ref.Ref, val json.RawMessage) (*Judge, error) {
	var raw struct {
		Model           json.RawMessage `json:"model"`
		ScoringPrompt   *string         `json:"scoring_prompt"`
		ResponseSchema  json.RawMessage `json:"response_schema"`
		IncludeChildren *bool           `json:"include_children"`
		MaxChildren     *int            `json:"max_children"`
	}
	if err := json.Unmarshal(val, &raw); err != nil {
		return nil, weft.Errorf(ErrInvalidScorer, "judge %s: %v", r.Name, err)
	}
	if raw.ScoringPrompt == nil || *raw.ScoringPrompt == "" {
		return nil, weft.Errorf(ErrInvalidScorer, "judge %s has no scoring_prompt", r.Name)
	}
	prompt, err := ParseTemplate(*raw.ScoringPrompt)
	if err != nil {
		return nil, weft.Errorf(ErrInvalidScorer, "judge %s: scoring_prompt: %v", r.Name, err)
	}
	j := &Judge{Prompt: prompt, IncludeChildren: raw.IncludeChildren != nil && *raw.IncludeChildren, MaxChildren: defaultMaxChildren}
	if raw.MaxChildren != nil {
		if *raw.MaxChildren < 0 || *raw.MaxChildren > maxChildrenLimit {
			return nil, weft.Errorf(ErrInvalidScorer, "judge %s: max_children must be from 0 to %d", r.Name, maxChildrenLimit)
		}
		j.MaxChildren = *raw.MaxChildren
	}
	if len(raw.ResponseSchema) > 0 && !isNull(raw.ResponseSchema) {
		j.Schema = raw.ResponseSchema
	}
	var modelRef string
	switch {
	case len(raw.Model) == 0 || isNull(raw.Model):
		return nil, weft.Errorf(ErrInvalidScorer, "judge %s has no model", r.Name)
	case json.Unmarshal(raw.Model, &modelRef) == nil:
		if err := checkModelRef(r.ProjectID(), modelRef); err != nil {
			return nil, weft.Errorf(ErrInvalidScorer, "judge %s: model: %v", r.Name, err)
		}
		j.ModelRef = modelRef
	default:
		if err := j.setModel(r.Name, raw.Model); err != nil {
			return nil, err
		}
	}
	if j.ModelRef == "" {
		if err := j.compile(r.Name); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// checkModelRef requires an object ref of projectID with a digest.
func checkModelRef(projectID, s string) error {
	return checkScorerRef(projectID, s)
}

// setModel reads an LLMStructuredCompletionModel value into j.
func (j *Judge) setModel(scorer string, val json.RawMessage) error {
	var m struct {
		LLMModelID    *string                    `json:"llm_model_id"`
		DefaultParams map[string]json.RawMessage `json:"default_params"`
	}
	if err := json.Unmarshal(val, &m); err != nil {
		return weft.Errorf(ErrInvalidScorer, "judge %s: model must be an %s with llm_model_id and default_params", scorer, ModelClass)
	}
	if m.LLMModelID == nil || *m.LLMModelID == "" {
		return weft.Errorf(ErrInvalidScorer, "judge %s: the model has no llm_model_id", scorer)
	}
	j.Model = *m.LLMModelID
	j.Params = map[string]json.RawMessage{"temperature": json.RawMessage("0"), "max_tokens": json.RawMessage(fmt.Sprint(DefaultJudgeMaxTokens))}
	params := m.DefaultParams
	for _, name := range judgeParams {
		if v, ok := params[name]; ok && !isNull(v) {
			j.Params[name] = v
		}
	}
	if v, ok := params["messages_template"]; ok && !isNull(v) {
		var msgs []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal(v, &msgs); err != nil {
			return weft.Errorf(ErrInvalidScorer, "judge %s: messages_template must be a list of {role, content} with text content", scorer)
		}
		for i, msg := range msgs {
			switch msg.Role {
			case "system", "user", "assistant", "developer":
			default:
				return weft.Errorf(ErrInvalidScorer, "judge %s: messages_template[%d] has role %q", scorer, i, msg.Role)
			}
			t, err := ParseTemplate(msg.Content)
			if err != nil {
				return weft.Errorf(ErrInvalidScorer, "judge %s: messages_template[%d]: %v", scorer, i, err)
			}
			j.Messages = append(j.Messages, JudgeMessage{Role: msg.Role, Content: t})
		}
	}
	if j.Schema == nil {
		if v, ok := params["response_format_schema"]; ok && !isNull(v) {
			j.Schema = v
		}
	}
	var format string
	if v, ok := params["response_format"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &format); err != nil {
			return weft.Errorf(ErrInvalidScorer, "judge %s: response_format must be json, json_schema or text", scorer)
		}
		if alias, ok := formatAliases[format]; ok {
			format = alias
		}
	}
	switch {
	case j.Schema != nil && (format == "" || format == FormatSchema || format == FormatJSON):
		j.Format = FormatSchema
	case format == FormatJSON:
		j.Format = FormatJSON
	case format == "" || format == FormatText:
		j.Format = FormatText
	case format == FormatSchema:
		return weft.Errorf(ErrInvalidScorer, "judge %s: response_format json_schema needs response_schema", scorer)
	default:
		return weft.Errorf(ErrInvalidScorer, "judge %s: response_format must be json, json_schema or text, not %q", scorer, format)
	}
	return nil
}

// compile checks the verdict schema once the model is known.
func (j *Judge) compile(scorer string) error {
	if j.Format != FormatSchema {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j.Schema))
	if err != nil {
		return weft.Errorf(ErrInvalidScorer, "judge %s: response_schema is not JSON: %v", scorer, err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return weft.Errorf(ErrInvalidScorer, "judge %s: response_schema must be a JSON Schema object", scorer)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("verdict.json", doc); err != nil {
		return weft.Errorf(ErrInvalidScorer, "judge %s: response_schema: %v", scorer, err)
	}
	s, err := c.Compile("verdict.json")
	if err != nil {
		return weft.Errorf(ErrInvalidScorer, "judge %s: response_schema: %s", scorer, strings.TrimSpace(err.Error()))
	}
	j.schema = s
	return nil
}

// resolveModel fills a judge that names its model by ref from the model
// object's value.
func (j *Judge) resolveModel(scorer string, val json.RawMessage) error {
	if err := j.setModel(scorer, val); err != nil {
		return err
	}
	return j.compile(scorer)
}
