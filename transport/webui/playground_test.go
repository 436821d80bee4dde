package webui

import (
	"encoding/json"
	"testing"
)

// playgroundFixtures are the playground filled from a call whose every text
// is the payload, and an empty one.
func playgroundFixtures(v *viewer) map[string]page {
	call := fixtureCall()
	view := playgroundView{Project: "team/p", Models: []string{xss, "m"}, RunURL: "/run", SaveURL: "/save", DiffURL: "/diff"}
	inputs, _ := json.Marshal(map[string]any{
		"model": xss,
		"messages": []any{
			map[string]any{"role": "system", "content": xss},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": xss}}},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": xss, "type": "function", "function": map[string]any{"name": "f", "arguments": "{}"}}}},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": xss}}}, "temperature": 0.5, "stop": []string{xss},
		"chat_template_kwargs": map[string]any{"enable_thinking": false, xss: xss},
	})
	if err := view.fill(inputs); err != nil {
		panic(err)
	}
	view.Original = &playgroundOriginal{ID: call.ID, Model: xss, Output: jsonTree(call.Output), Chat: chatOutput(call.Output)}
	view.Prompt = &playgroundPrompt{Name: xss, Version: 3, History: objectHistoryPath("team/p", xss)}
	return map[string]page{"playground": {Title: "Playground", Viewer: v, Project: "team/p", Body: view}}
}

// TestPlaygroundFill: a traced chat completion's request becomes the form,
// messages whose content is not text kept as JSON and their other members
// kept aside; inputs that are not a chat completion are refused.
func TestPlaygroundFill(t *testing.T) {
	var view playgroundView
	err := view.fill(json.RawMessage(`{"model":"m1","messages":[{"role":"user","content":"hi"},` +
		`{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"tool","content":"42","tool_call_id":"c1"}],` +
		`"max_tokens":64,"top_p":0.9,"seed":7,"response_format":{"type":"json_object"},"stop":"END"}`))
	if err != nil {
		t.Fatal(err)
	}
	if view.Model != "m1" || len(view.Messages) != 3 || view.Messages[0] != (playgroundMessage{Role: "user", Content: "hi"}) {
		t.Fatalf("view = %+v", view)
	}
	if m := view.Messages[1]; !m.JSON || m.Content != "[\n  {\n    \"type\": \"text\",\n    \"text\": \"x\"\n  }\n]" {
		t.Fatalf("JSON content = %+v", m)
	}
	if m := view.Messages[2]; m.Extra != `{"tool_call_id":"c1"}` || m.Content != "42" {
		t.Fatalf("tool message = %+v", m)
	}
	var switches playgroundView
	switches.fillTemplateSwitches(json.RawMessage(`{"enable_thinking":true,"reasoning_effort":"low"}`))
	if switches.EnableThinking != "true" || switches.TemplateKwargs != "{\n  \"reasoning_effort\": \"low\"\n}" {
		t.Fatalf("template switches = %q %q", switches.EnableThinking, switches.TemplateKwargs)
	}
	switches = playgroundView{}
	switches.fillTemplateSwitches(json.RawMessage(`{"enable_thinking":"yes"}`)) // not a boolean: kept as typed
	if switches.EnableThinking != "" || switches.TemplateKwargs != "{\n  \"enable_thinking\": \"yes\"\n}" {
		t.Fatalf("template switches = %q %q", switches.EnableThinking, switches.TemplateKwargs)
	}
	if view.MaxTokens != "64" || view.TopP != "0.9" || view.Seed != "7" || view.Stop != `"END"` || view.ResponseFormat != "{\n  \"type\": \"json_object\"\n}" || view.Tools != "" {
		t.Fatalf("options = %+v", view)
	}
	for _, bad := range []string{`[]`, `{"model":"m"}`, `{"messages":[]}`, `"text"`} {
		var v playgroundView
		if err := v.fill(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: filled", bad)
		}
	}
}
