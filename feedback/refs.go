package feedback

import (
	"strings"

	"github.com/weftlabs/weft/objects/ref"
)

// Ref kinds that feedback rules distinguish.
const (
	refObject = string(ref.KindObject)
	refOp     = string(ref.KindOp)
	refCall   = string(ref.KindCall)
)

// parsedRef is what the feedback rules read of a trace:/// (or weave:///) ref.
type parsedRef struct {
	projectID string // "<entity>/<project>"
	kind      string // object, op, table or call
	name      string // object/op name, or the call id
	digest    string // version of an object or op
}

// parseRef parses s with the shared ref parser.
func parseRef(s string) (parsedRef, bool) {
	r, err := ref.Parse(s)
	if err != nil {
		return parsedRef{}, false
	}
	name := r.Name
	if r.Kind == ref.KindCall {
		name = r.ID
	}
	return parsedRef{projectID: r.ProjectID(), kind: string(r.Kind), name: name, digest: r.Version}, true
}

// anyRefProject returns the "<entity>/<project>" of a well-formed ref of any
// kind, "<scheme>:///<entity>/<project>/<kind>/<rest>": feedback may point at
// kinds this server does not know ("weave:///e/p/obj/123:abc"). A ref of a
// known kind must parse as that kind.
func anyRefProject(s string) (string, bool) {
	if r, ok := parseRef(s); ok {
		return r.projectID, true
	}
	if !ref.IsRef(s) {
		return "", false
	}
	_, rest, _ := strings.Cut(s, ":///")
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 4 || parts[0] == "" || parts[1] == "" || parts[2] == "" || parts[3] == "" {
		return "", false
	}
	switch ref.Kind(parts[2]) {
	case ref.KindObject, ref.KindOp, ref.KindTable, ref.KindCall:
		return "", false
	}
	return parts[0] + "/" + parts[1], true
}
