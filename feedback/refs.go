package feedback

import (
	"strings"

	"github.com/weftlabs/weft"
)

// Ref kinds that feedback rules distinguish.
const (
	refObject = "object"
	refOp     = "op"
	refCall   = "call"
)

// ref is a parsed trace:///… (or weave:///…) reference.
type ref struct {
	projectID string // "<entity>/<project>"
	kind      string // object, op, call, or whatever the client wrote
	name      string // object/op name, or the call id
	digest    string // "" for calls and refs without a version
}

// refSchemes are the accepted spellings; both parse to the same ref.
var refSchemes = []string{"trace:///", "weave:///"}

// parseRef splits "<scheme><entity>/<project>/<kind>/<name>[:<digest>][/<path>…]".
// It checks the shape only; the kind is returned as written.
func parseRef(s string) (ref, bool) {
	var rest string
	found := false
	for _, scheme := range refSchemes {
		if after, ok := strings.CutPrefix(s, scheme); ok {
			rest, found = after, true
			break
		}
	}
	if !found {
		return ref{}, false
	}
	parts := strings.SplitN(rest, "/", 5)
	if len(parts) < 4 || parts[2] == "" || parts[3] == "" {
		return ref{}, false
	}
	projectID := parts[0] + "/" + parts[1]
	if _, _, err := weft.ParseProjectID(projectID); err != nil {
		return ref{}, false
	}
	r := ref{projectID: projectID, kind: parts[2], name: parts[3]}
	if r.kind != refCall {
		r.name, r.digest, _ = strings.Cut(parts[3], ":")
		if r.name == "" {
			return ref{}, false
		}
	}
	return r, true
}
