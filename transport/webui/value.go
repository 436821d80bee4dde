package webui

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects/ref"
)

// valueLinks says where the parts of a drawn value lead: refs to the object
// version pages of their project, weave images to the file route, and cut
// values to a "show all" URL built from ShowAllBase.
type valueLinks struct {
	// ShowAllBase is the URL that serves one member of the value in full,
	// without its "path" query parameter; "" when the value has no such URL.
	ShowAllBase string
	// Project is the project whose files an image's digest names.
	Project string
}

// decorate walks a drawn value and fills in each node's JSON pointer, the
// link of a ref, the picture of an image and the "show all" URL of what was
// cut. prefix is the pointer of n itself.
func decorate(n *jsonNode, prefix string, links valueLinks) {
	if n == nil {
		return
	}
	n.Path = prefix
	switch n.Kind {
	case "string":
		n.Href = refHref(n.Text)
		if n.Omitted == 0 && strings.HasPrefix(n.Text, "data:image/") {
			n.Image = imageOfURL(n.Text)
		}
		if n.Omitted > 0 && links.ShowAllBase != "" {
			n.ShowAll = links.ShowAllBase + "&path=" + url.QueryEscape(prefix)
		}
	case "object", "array":
		if n.Kind == "object" {
			n.Image = weaveImage(n, links.Project)
		}
		for _, c := range n.Children {
			if c.Kind == "more" {
				if links.ShowAllBase != "" {
					c.ShowAll = links.ShowAllBase + "&path=" + url.QueryEscape(prefix) + "&from=" + strconv.Itoa(c.From)
				}
				continue
			}
			decorate(c, prefix+"/"+escapePointer(c.Key), links)
		}
	}
}

// escapePointer escapes one JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// refHref is the page a ref string links to: an object or op version, or a
// call; "" when s is no ref or a kind without a page.
func refHref(s string) string {
	if !ref.IsRef(s) {
		return ""
	}
	r, err := ref.Parse(s)
	if err != nil {
		return ""
	}
	switch r.Kind {
	case ref.KindObject, ref.KindOp:
		return objectVersionPath(r.ProjectID(), r.Name, r.Version)
	case ref.KindCall:
		return projectPath(r.ProjectID(), "calls/", pathSegment(r.ID))
	case ref.KindTable:
		if len(r.Extra) == 0 {
			return tablePath(r.ProjectID(), r.Digest, tableView{})
		}
	}
	return ""
}

// objectVersionPath is the page of one object (or op) version.
func objectVersionPath(projectID, name, version string) string {
	return projectPath(projectID, "objects/", pathSegment(name), "/versions/", pathSegment(version))
}

// weaveFileTypes are the weave_type names of values the SDKs store as files
// beside a small object: images, drawn, and content of any other type,
// linked.
var weaveFileTypes = map[string]bool{"PIL.Image.Image": true, "weave.type_wrappers.Content.content.Content": true}

// imageExtensions name the files of a weave object drawn as pictures.
var imageExtensions = []string{".png", ".jpg", ".jpeg", ".gif", ".webp"}

// weaveImage is the picture of a weave image object ({"_type":
// "CustomWeaveType", "weave_type": {"type": "PIL.Image.Image"}, "files":
// {"image.png": <digest>}}), served by the project's file route, or a link to
// the file of other stored content; nil for any other object.
func weaveImage(n *jsonNode, projectID string) *imageSource {
	var isCustom, isFile bool
	var files *jsonNode
	for _, c := range n.Children {
		switch c.Key {
		case "_type":
			isCustom = c.Kind == "string" && c.Text == "CustomWeaveType"
		case "weave_type":
			for _, t := range c.Children {
				if t.Key == "type" && weaveFileTypes[t.Text] {
					isFile = true
				}
			}
		case "files":
			files = c
		}
	}
	if !isCustom || !isFile || files == nil || projectID == "" {
		return nil
	}
	for _, f := range files.Children {
		name := strings.ToLower(f.Key)
		if f.Kind != "string" || f.Text == "" || name == "metadata.json" {
			continue
		}
		// A path of this server, authorized like the page.
		src := template.URL(projectPath(projectID, "files/", pathSegment(f.Text))) //nolint:gosec // see above
		for _, ext := range imageExtensions {
			if strings.HasSuffix(name, ext) {
				return &imageSource{Src: src}
			}
		}
		return &imageSource{File: src, Note: f.Key}
	}
	return nil
}

// valueParts are the members of a call a "show all" request may name.
var valueParts = map[string]bool{"inputs": true, "output": true, "attributes": true, "summary": true}

// valueMember is the data of the fragment that draws one member in full.
type valueMember struct {
	Node *jsonNode
	// Key is the member's name (or index), drawn before a string.
	Key string
	// Text is a string member in full (Node is nil then).
	Text     string
	IsString bool
	// Members draws the members of a container from index "from" on, as
	// list items that take the place of the "more" line.
	Members bool
}

// maxShowAllChars bounds a string drawn by "show all".
const maxShowAllChars = 1 << 20

// callValue answers "show all" for a member of a call's inputs, output,
// attributes or summary: GET …/calls/{callID}/value?part=inputs&path=/a/0,
// with from=N to draw a container's members from the N-th on.
func (h *Handler) callValue(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	q := r.URL.Query()
	callID, part, pointer := r.PathValue("callID"), q.Get("part"), q.Get("path")
	if len(callID) > maxIDLength {
		h.refuse(w, r, weft.Errorf(errBadView, "call id: at most %d characters", maxIDLength))
		return
	}
	if !valueParts[part] {
		h.refuse(w, r, weft.Errorf(errBadView, "part: one of inputs, output, attributes, summary"))
		return
	}
	from := 0
	if s := q.Get("from"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			h.refuse(w, r, weft.Errorf(errBadView, "from: must be a whole number"))
			return
		}
		from = n
	}
	c, err := h.readCall(r.Context(), projectID, callID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	raw := map[string]json.RawMessage{"inputs": c.Inputs, "output": c.Output, "attributes": c.Attributes, "summary": c.Summary}[part]
	member, err := jsonPointer(raw, pointer)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	data := valueMember{Members: q.Has("from")}
	if i := strings.LastIndex(pointer, "/"); i >= 0 {
		data.Key = strings.ReplaceAll(strings.ReplaceAll(pointer[i+1:], "~1", "/"), "~0", "~")
	}
	if s, ok := jsonString(member); ok && !data.Members {
		data.IsString = true
		data.Text = s
		if utf8.RuneCountInString(s) > maxShowAllChars {
			data.Text = string([]rune(s)[:maxShowAllChars])
		}
	} else {
		node := jsonTree(member)
		if data.Members {
			node = jsonTreeFrom(member, from)
		}
		if data.Members && node.Kind != "object" && node.Kind != "array" {
			h.refuse(w, r, weft.Errorf(errBadView, "from: the path names no object or array"))
			return
		}
		decorate(node, pointer, valueLinks{ShowAllBase: callValueBase(projectID, callID, part), Project: projectID})
		data.Node = node
	}
	h.renderFragment(w, r, "trace", "value_member", data)
}

// callValueBase is the "show all" URL of a part of a call, without the path.
func callValueBase(projectID, callID, part string) string {
	return projectPath(projectID, "calls/", pathSegment(callID), "/value?part=", part)
}

// errNoMember: a JSON pointer that names nothing in the value (HTTP 404).
var errNoMember = weft.DefineError(weft.ErrNotFound, "NotFoundError", "no such member")

// jsonPointer returns the member of raw that pointer (RFC 6901) names,
// exactly as stored.
func jsonPointer(raw json.RawMessage, pointer string) (json.RawMessage, error) {
	if pointer == "" {
		return raw, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, weft.Errorf(errBadView, "path: a JSON pointer starts with /")
	}
	cur := raw
	for _, token := range strings.Split(pointer[1:], "/") {
		token = strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
		switch trimmed := bytes.TrimSpace(cur); {
		case len(trimmed) > 0 && trimmed[0] == '{':
			next, ok := objectMember(trimmed, token)
			if !ok {
				return nil, weft.Errorf(errNoMember, "no member %q", truncate(token, 40))
			}
			cur = next
		case len(trimmed) > 0 && trimmed[0] == '[':
			var items []json.RawMessage
			i, err := strconv.Atoi(token)
			if json.Unmarshal(trimmed, &items) != nil || err != nil || i < 0 || i >= len(items) {
				return nil, weft.Errorf(errNoMember, "no element %q", truncate(token, 40))
			}
			cur = items[i]
		default:
			return nil, weft.Errorf(errNoMember, "no member %q", truncate(token, 40))
		}
	}
	return cur, nil
}

// objectMember finds the last member named key in a JSON object (the one
// a JSON parser keeps when a name repeats), keeping its text.
func objectMember(obj json.RawMessage, key string) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var found json.RawMessage
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if k == key {
			found = v
		}
	}
	return found, found != nil
}

// jsonTreeFrom draws raw, or for a container only its members from index
// from on (the rest of a container cut by the node budget).
func jsonTreeFrom(raw json.RawMessage, from int) *jsonNode {
	n := jsonTree(raw)
	if from >= 0 && (n.Kind == "object" || n.Kind == "array") {
		// Draw the members after from with a fresh budget: re-encode only them.
		var members []json.RawMessage
		var keys []string
		if n.Kind == "array" {
			_ = json.Unmarshal(raw, &members)
			for i := range members {
				keys = append(keys, strconv.Itoa(i))
			}
		} else {
			dec := json.NewDecoder(bytes.NewReader(raw))
			_, _ = dec.Token()
			for dec.More() {
				k, _ := dec.Token()
				var v json.RawMessage
				if dec.Decode(&v) != nil {
					break
				}
				key, _ := k.(string)
				keys, members = append(keys, key), append(members, v)
			}
		}
		out := &jsonNode{Kind: n.Kind, Open: true}
		budget := treeBuilder{}
		for i := from; i < len(members); i++ {
			if budget.nodes >= maxJSONNodes {
				out.Children = append(out.Children, &jsonNode{Kind: "more", Text: strconv.Itoa(len(members)-i) + " more not shown", From: i})
				break
			}
			child := jsonTree(members[i])
			child.Key = keys[i]
			budget.nodes += countNodes(child)
			out.Children = append(out.Children, child)
		}
		return out
	}
	return n
}

func countNodes(n *jsonNode) int {
	total := 1
	for _, c := range n.Children {
		total += countNodes(c)
	}
	return total
}

// decorateMessages decorates the JSON trees inside chat messages (tool
// arguments and results, parts of shapes not drawn), so refs in them link.
func decorateMessages(msgs []chatMessage, projectID string) {
	var parts func([]chatPart)
	parts = func(ps []chatPart) {
		for i := range ps {
			decorate(ps[i].Data, "", valueLinks{Project: projectID})
			parts(ps[i].Result)
		}
	}
	for _, m := range msgs {
		parts(m.Parts)
	}
}

// closeMembers draws the named members of an object closed.
func closeMembers(n *jsonNode, names ...string) {
	for _, c := range n.Children {
		for _, name := range names {
			if c.Key == name {
				c.Open = false
			}
		}
	}
}
