package otlp

import (
	"encoding/json"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/weftlabs/weft/internal/jsontext"
)

// FuzzConvert: any OTLP/JSON request the decoder takes converts without
// panicking into calls whose JSON members are valid objects of storable
// text, or into span errors.
func FuzzConvert(f *testing.F) {
	f.Add([]byte(`{"resourceSpans":[{"resource":{"attributes":[{"key":"wandb.entity","value":{"stringValue":"e"}},{"key":"wandb.project","value":{"stringValue":"p"}}]},` +
		`"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"chat","startTimeUnixNano":"1","endTimeUnixNano":"2",` +
		`"attributes":[{"key":"gen_ai.input.messages","value":{"stringValue":"[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"hi\"}]}]"}},` +
		`{"key":"llm.input_messages.0.message.role","value":{"stringValue":"user"}},{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]}]}]}]}`))
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"zz","events":[{"name":"gen_ai.choice","attributes":[{"key":"message","value":{"kvlistValue":{"values":[{"key":"content","value":{"intValue":"3"}}]}}}]}]}]}]}]}`))
	conv := New(Config{MaxValueBytes: 64})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := ptraceotlp.NewExportRequest()
		if req.UnmarshalJSON(body) != nil {
			return
		}
		spans, _ := conv.Convert(req.Traces(), "d/p")
		for _, s := range spans {
			if s.Err != nil {
				continue
			}
			for _, raw := range [][]byte{s.Call.Inputs, s.Call.Attributes, s.Call.Summary} {
				var obj map[string]any
				if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
					t.Fatalf("not an object: %s", raw)
				}
			}
			for _, raw := range [][]byte{s.Call.Inputs, s.Call.Attributes, s.Call.Summary, s.Call.Output} {
				if !json.Valid(raw) || jsontext.Check(raw) != nil {
					t.Fatalf("not storable: %q", raw)
				}
			}
		}
	})
}
