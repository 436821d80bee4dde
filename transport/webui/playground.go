package webui

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/transport/httpapi"
)

// errNoChat: the UI was built without the chat gateway (HTTP 503).
var errNoChat = weft.DefineError(weft.ErrUnavailable, "ServiceUnavailable", "chat completions are not served here")

// maxPlaygroundRequest bounds a playground request body.
const maxPlaygroundRequest = 4 << 20

// playgroundView is the data of the playground: the request as form fields.
type playgroundView struct {
	Project  string
	Models   []string
	Model    string
	Messages []playgroundMessage
	// The options, as text for their fields ("" when not set); Tools,
	// ResponseFormat and Stop are JSON.
	Tools, ResponseFormat, Stop        string
	Temperature, TopP, MaxTokens, Seed string
	// EnableThinking is the chat template's enable_thinking switch: "true",
	// "false" or "" (the model's default); TemplateKwargs the other
	// chat_template_kwargs as a JSON object ("" for none).
	EnableThinking, TemplateKwargs string
	// Original is the traced call the form was filled from, if any.
	Original *playgroundOriginal
	// Prompt is the prompt version the form was filled from, if any.
	Prompt  *playgroundPrompt
	RunURL  string
	SaveURL string
	DiffURL string // the diff page; the module adds left and right
}

// playgroundMessage is one message as form fields: Content is its text, or
// its content as JSON when JSON is set (parts, images); Extra holds its other
// members (tool_calls, tool_call_id, name) as JSON.
type playgroundMessage struct {
	Role    string
	Content string
	JSON    bool
	Extra   string
}

// playgroundOriginal is the call a playground was opened from.
type playgroundOriginal struct {
	ID     string
	Model  string
	Output *jsonNode
	Chat   []chatMessage
}

// roles are the message roles the form offers.
var roles = []string{"system", "developer", "user", "assistant", "tool"}

// playgroundPage shows the playground, filled from ?call= (a traced chat
// completion: its request as the form), from ?prompt= and ?version= (a
// prompt object's version: its messages) or empty; ?model= picks the model.
func (h *Handler) playgroundPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Chat == nil {
		h.refuse(w, r, weft.Errorf(errNoChat, "This server has no chat gateway."))
		return
	}
	view := playgroundView{Project: projectID, RunURL: projectPath(projectID, "playground/run"),
		SaveURL: projectPath(projectID, "playground/save"), DiffURL: projectPath(projectID, "diff")}
	for _, m := range h.cfg.Chat.Models() {
		view.Models = append(view.Models, m.ID)
	}
	if callID := r.URL.Query().Get("call"); callID != "" {
		if !validID(callID) {
			h.refuse(w, r, weft.Errorf(errBadView, "call: 1 to %d characters of text", maxIDLength))
			return
		}
		call, err := h.readCall(r.Context(), projectID, callID)
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		if err := view.fill(call.Inputs); err != nil {
			h.refuse(w, r, err)
			return
		}
		view.Original = &playgroundOriginal{ID: call.ID, Model: view.Model, Output: jsonTree(call.Output), Chat: chatOutput(call.Output)}
	}
	if r.URL.Query().Has("prompt") {
		if err := h.fillFromPrompt(r, projectID, &view); err != nil {
			h.refuse(w, r, err)
			return
		}
	}
	if m := r.URL.Query().Get("model"); m != "" {
		view.Model = m
	}
	if view.Model != "" && !contains(view.Models, view.Model) {
		view.Models = append(view.Models, view.Model)
	}
	if len(view.Messages) == 0 {
		view.Messages = []playgroundMessage{{Role: "user"}}
	}
	h.render(w, r, http.StatusOK, "playground", page{Title: "Playground", Viewer: v, Project: projectID, Body: view})
}

// fill sets the form from a chat-completion request (a traced call's
// inputs); a call whose inputs have no messages is not a chat completion.
func (view *playgroundView) fill(inputs json.RawMessage) error {
	var req map[string]json.RawMessage
	if json.Unmarshal(inputs, &req) != nil {
		return weft.Errorf(errBadView, "This call's inputs are not a chat-completion request.")
	}
	var messages []map[string]json.RawMessage
	if json.Unmarshal(req["messages"], &messages) != nil || len(messages) == 0 {
		return weft.Errorf(errBadView, "This call's inputs have no messages: it is not a chat completion.")
	}
	_ = json.Unmarshal(req["model"], &view.Model)
	for _, m := range messages {
		msg := playgroundMessage{}
		_ = json.Unmarshal(m["role"], &msg.Role)
		if content, ok := m["content"]; ok {
			if json.Unmarshal(content, &msg.Content) != nil && string(content) != "null" {
				msg.Content, msg.JSON = indentJSON(content), true
			}
		}
		delete(m, "role")
		delete(m, "content")
		if len(m) > 0 {
			b, _ := json.Marshal(m)
			msg.Extra = string(b)
		}
		view.Messages = append(view.Messages, msg)
	}
	text := func(key string) string {
		if raw, ok := req[key]; ok && string(raw) != "null" {
			return string(raw)
		}
		return ""
	}
	view.Tools, view.ResponseFormat, view.Stop = indentJSON(req["tools"]), indentJSON(req["response_format"]), text("stop")
	view.Temperature, view.TopP, view.Seed = text("temperature"), text("top_p"), text("seed")
	view.fillTemplateSwitches(req["chat_template_kwargs"])
	view.MaxTokens = text("max_completion_tokens")
	if view.MaxTokens == "" {
		view.MaxTokens = text("max_tokens")
	}
	return nil
}

// indentJSON writes a JSON value for a text field, "" for none or null.
func indentJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// playgroundRun sends the request the playground's module composed (a JSON
// chat-completion body) through the gateway, traced into this project, and
// relays the answer as it comes: a stream when the request asks for one.
// The traced call's id is in the Weft-Call-Id header. Errors before anything
// is relayed answer {"error": {"message"}} with the API's status.
func (h *Handler) playgroundRun(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Chat == nil {
		playgroundError(w, weft.Errorf(errNoChat, "This server has no chat gateway."))
		return
	}
	ctx := r.Context()
	if err := h.cfg.Authorizer.Authorize(ctx, v.principal, projectID, true); err != nil {
		playgroundError(w, err)
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPlaygroundRequest))
	if err != nil {
		playgroundError(w, weft.Errorf(errBadView, "the request is larger than %d bytes", maxPlaygroundRequest))
		return
	}
	completion, err := h.cfg.Chat.Complete(ctx, projectID, raw)
	if err != nil {
		playgroundError(w, err)
		return
	}
	if err := h.cfg.Authorizer.ProjectWritten(ctx, v.principal, projectID); err != nil {
		// The run is under way and its call will be traced: the project is
		// recorded by its next write.
		h.cfg.Logger.WarnContext(ctx, "webui: recording the project", "project", projectID, "error", err)
	}
	if err := completion.Relay(w); err != nil {
		h.cfg.Logger.DebugContext(ctx, "webui: playground relay ended early", "error", err)
	}
}

// playgroundError answers a refused run as JSON, which the module shows.
func playgroundError(w http.ResponseWriter, err error) {
	status := httpapi.StatusOf(err)
	msg := err.Error()
	if status >= 500 && status != http.StatusBadGateway && status != http.StatusServiceUnavailable {
		msg = "Something went wrong on the server; it has been logged."
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": msg, "status": strconv.Itoa(status)}})
	_, _ = w.Write(b)
}

// fillTemplateSwitches sets the template switches from a request's
// chat_template_kwargs: enable_thinking (when a boolean) in its own field,
// the others as JSON.
func (view *playgroundView) fillTemplateSwitches(raw json.RawMessage) {
	var kwargs map[string]json.RawMessage
	if json.Unmarshal(raw, &kwargs) != nil || len(kwargs) == 0 {
		return
	}
	if on := string(kwargs["enable_thinking"]); on == "true" || on == "false" {
		view.EnableThinking = on
		delete(kwargs, "enable_thinking")
	}
	if len(kwargs) > 0 {
		b, _ := json.Marshal(kwargs)
		view.TemplateKwargs = indentJSON(b)
	}
}
