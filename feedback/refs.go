package feedback

import (
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
