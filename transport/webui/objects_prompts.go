package webui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

// Prompts are Weave's Prompt objects as the SDKs publish them
// (StringPrompt: a content text; MessagesPrompt: chat messages). Their
// version history (objects_versions.go) labels a version with an alias
// ("production") that moves when set on another, and opens any version in
// the playground, its messages as the form.

// promptClasses are the object classes that are prompts (the "prompts" tab
// of the object list).
var promptClasses = objectKinds[slices.IndexFunc(objectKinds, func(k objectKind) bool { return k.Name == "prompts" })].classes

// maxAliasForm bounds the body of the alias form.
const maxAliasForm = 4 << 10

// aliasPattern is an alias a person may set: Weave's aliases are names like
// "production" or "staging-2"; "latest" is computed, never set.
var aliasPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// errBadAlias: an alias form field that cannot be read (HTTP 400).
var errBadAlias = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid alias")

// isPrompt reports whether an object version is a prompt.
func isPrompt(o objects.ObjSchema) bool {
	return o.BaseObjectClass != nil && slices.Contains(promptClasses, *o.BaseObjectClass) ||
		o.LeafObjectClass != nil && slices.Contains(promptClasses, *o.LeafObjectClass)
}

// promptPlaygroundPath opens version digest of prompt name in the playground.
func promptPlaygroundPath(projectID, name, digest string) string {
	return withQuery(projectPath(projectID, "playground"), url.Values{"prompt": {name}, "version": {digest}})
}

// setAlias answers POST …/objects/{name}/aliases: the form's alias names
// the form's version of the object from now on, moved from any other
// version it named; the answer goes back to the version history.
func (h *Handler) setAlias(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Objects == nil {
		h.refuse(w, r, weft.Errorf(errNoObjects, "This server has no objects service."))
		return
	}
	if err := h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxAliasForm)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, r, weft.Errorf(errBadAlias, "the form could not be read"))
		return
	}
	name := r.PathValue("name")
	alias, digest := strings.TrimSpace(r.PostFormValue("alias")), r.PostFormValue("digest")
	switch {
	case len(name) > maxObjectNameLength:
		h.refuse(w, r, weft.Errorf(errBadView, "object name: at most %d characters", maxObjectNameLength))
		return
	case alias == "latest" || !aliasPattern.MatchString(alias):
		h.refuse(w, r, weft.Errorf(errBadAlias, "alias: letters, digits, '.', '_' and '-', up to 128, not \"latest\""))
		return
	case digest == "" || len(digest) > maxIDLength:
		h.refuse(w, r, weft.Errorf(errBadAlias, "digest: the version to label"))
		return
	}
	_, err := h.cfg.Objects.ObjSetAliases(r.Context(), &objects.ObjSetAliasesReq{ProjectID: projectID, ObjectID: name, Digest: digest, Aliases: []string{alias}})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, objectHistoryPath(projectID, name), http.StatusSeeOther)
}

// fillFromPrompt sets the playground's messages from a prompt version: a
// MessagesPrompt's messages, or a StringPrompt's content as the system
// message (Weave's examples use it so).
func (h *Handler) fillFromPrompt(r *http.Request, projectID string, view *playgroundView) error {
	q := r.URL.Query()
	name, version := q.Get("prompt"), q.Get("version")
	if version == "" {
		version = "latest"
	}
	if len(name) > maxObjectNameLength || len(version) > maxIDLength {
		return weft.Errorf(errBadView, "prompt: a name of at most %d characters and a version", maxObjectNameLength)
	}
	if h.cfg.Objects == nil {
		return weft.Errorf(errNoObjects, "This server has no objects service.")
	}
	res, err := h.cfg.Objects.ObjRead(r.Context(), &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: version})
	if err != nil {
		return err
	}
	if !isPrompt(res.Obj) {
		return weft.Errorf(errNoCall, "This project has no prompt %q.", truncate(name, 80))
	}
	var prompt struct {
		Content  *string           `json:"content"`
		Messages []json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(res.Obj.Val, &prompt) != nil {
		return weft.Errorf(errBadView, "The prompt %q holds no messages.", truncate(name, 80))
	}
	switch {
	case len(prompt.Messages) > 0:
		inputs, _ := json.Marshal(map[string]any{"messages": prompt.Messages})
		if err := view.fill(inputs); err != nil {
			return err
		}
	case prompt.Content != nil:
		view.Messages = []playgroundMessage{{Role: "system", Content: *prompt.Content}, {Role: "user"}}
	default:
		return weft.Errorf(errBadView, "The prompt %q holds no messages.", truncate(name, 80))
	}
	view.Prompt = &playgroundPrompt{Name: name, Version: res.Obj.VersionIndex, History: objectHistoryPath(projectID, name)}
	return nil
}

// playgroundPrompt is the prompt version a playground was opened from.
type playgroundPrompt struct {
	Name    string
	Version int
	History string
}
