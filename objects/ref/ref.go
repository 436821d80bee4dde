// Package ref parses and renders reference strings: the URIs that name a
// stored object or op version, a table, or a call, optionally followed by a
// path into the value.
//
//	trace:///<entity>/<project>/object/<name>:<digest>[/<edge>/<value>...]
//	trace:///<entity>/<project>/op/<name>:<digest>[/<edge>/<value>...]
//	trace:///<entity>/<project>/table/<digest>
//	trace:///<entity>/<project>/call/<call_id>
//
// The official Weave clients write weave:/// instead of trace:///; both
// schemes parse to the same [Ref], and rendering keeps the scheme that was
// parsed. The package depends on nothing else in weft, so every domain can use it.
package ref

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Schemes.
const (
	// SchemeTrace is the spec's scheme.
	SchemeTrace = "trace"
	// SchemeWeave is the scheme the official Weave clients send.
	SchemeWeave = "weave"
)

// Kind is what a ref points at.
type Kind string

// The ref kinds.
const (
	KindObject Kind = "object"
	KindOp     Kind = "op"
	KindTable  Kind = "table"
	KindCall   Kind = "call"
)

// Edges of an extra path.
const (
	EdgeKey   = "key"   // a member of a dict
	EdgeAttr  = "attr"  // an attribute of an object (a member of its dict)
	EdgeIndex = "index" // an element of a list; the value is an integer
	EdgeID    = "id"    // a row of a table, by row digest
)

// ErrInvalid is wrapped by every parse error.
var ErrInvalid = errors.New("invalid ref")

// Ref is a parsed reference.
type Ref struct {
	// Scheme is SchemeTrace or SchemeWeave; empty renders as SchemeTrace.
	Scheme  string
	Entity  string
	Project string
	Kind    Kind
	// Name and Version (a digest, "latest" or "v<N>") of an object or op.
	Name    string
	Version string
	// Digest of a table; ID of a call.
	Digest string
	ID     string
	// Extra is a path into the value: edge, value, edge, value, … (decoded).
	Extra []string
}

// ProjectID is "<entity>/<project>".
func (r Ref) ProjectID() string { return r.Entity + "/" + r.Project }

// IsRef reports whether s would be interpreted as a ref: it starts with
// trace:/// or weave:///.
func IsRef(s string) bool {
	return strings.HasPrefix(s, SchemeTrace+":///") || strings.HasPrefix(s, SchemeWeave+":///")
}

// Object returns the ref of an object version; Op likewise for an op.
func Object(projectID, name, version string) Ref {
	return versioned(KindObject, projectID, name, version)
}

// Op returns the ref of an op version.
func Op(projectID, name, version string) Ref { return versioned(KindOp, projectID, name, version) }

// Table returns the ref of a table.
func Table(projectID, digest string) Ref {
	entity, project, _ := strings.Cut(projectID, "/")
	return Ref{Entity: entity, Project: project, Kind: KindTable, Digest: digest}
}

// Call returns the ref of a call.
func Call(projectID, callID string) Ref {
	entity, project, _ := strings.Cut(projectID, "/")
	return Ref{Entity: entity, Project: project, Kind: KindCall, ID: callID}
}

func versioned(kind Kind, projectID, name, version string) Ref {
	entity, project, _ := strings.Cut(projectID, "/")
	return Ref{Entity: entity, Project: project, Kind: kind, Name: name, Version: version}
}

// WithScheme returns r rendered with scheme.
func (r Ref) WithScheme(scheme string) Ref { r.Scheme = scheme; return r }

// Parse parses a ref string of either scheme.
func Parse(s string) (Ref, error) {
	var r Ref
	var rest string
	switch {
	case strings.HasPrefix(s, SchemeTrace+":///"):
		r.Scheme, rest = SchemeTrace, s[len(SchemeTrace)+4:]
	case strings.HasPrefix(s, SchemeWeave+":///"):
		r.Scheme, rest = SchemeWeave, s[len(SchemeWeave)+4:]
	default:
		return Ref{}, invalid(s, "it must start with trace:/// or weave:///")
	}
	parts := strings.Split(rest, "/")
	if len(parts) > 0 && parts[len(parts)-1] == "" && len(parts) > 4 {
		parts = parts[:len(parts)-1] // one trailing slash means no extra path
	}
	if len(parts) < 4 {
		return Ref{}, invalid(s, "it needs <entity>/<project>/<kind>/<name>")
	}
	r.Entity, r.Project, r.Kind = parts[0], parts[1], Kind(parts[2])
	if r.Entity == "" || r.Project == "" {
		return Ref{}, invalid(s, "entity and project must not be empty")
	}
	tail := parts[3:]
	switch r.Kind {
	case KindObject, KindOp:
		name, version, ok := strings.Cut(tail[0], ":")
		if !ok || name == "" || version == "" || strings.Contains(version, ":") {
			return Ref{}, invalid(s, "an object or op ref needs exactly one <name>:<version>")
		}
		r.Name, r.Version = name, version
		extra := tail[1:]
		if len(extra)%2 != 0 {
			return Ref{}, invalid(s, "the extra path must be edge/value pairs")
		}
		for i, part := range extra {
			decoded, err := url.PathUnescape(part)
			if err != nil {
				return Ref{}, invalid(s, "bad percent-encoding")
			}
			if decoded == "" {
				// An empty value could not be told from the trailing slash
				// that means "no extra path" once rendered.
				return Ref{}, invalid(s, "extra path elements must not be empty")
			}
			if i%2 == 0 {
				if err := checkEdge(decoded); err != nil {
					return Ref{}, invalid(s, err.Error())
				}
			} else if extra[i-1] == EdgeIndex {
				if _, err := strconv.Atoi(decoded); err != nil {
					return Ref{}, invalid(s, "an index edge needs an integer")
				}
			}
			r.Extra = append(r.Extra, decoded)
		}
	case KindTable:
		if len(tail) != 1 || tail[0] == "" {
			return Ref{}, invalid(s, "a table ref is <entity>/<project>/table/<digest>")
		}
		r.Digest = tail[0]
	case KindCall:
		if len(tail) != 1 || tail[0] == "" {
			return Ref{}, invalid(s, "a call ref is <entity>/<project>/call/<id>")
		}
		r.ID = tail[0]
	default:
		return Ref{}, invalid(s, "unknown kind "+strconv.Quote(string(r.Kind)))
	}
	return r, nil
}

func checkEdge(edge string) error {
	switch edge {
	case EdgeKey, EdgeAttr, EdgeIndex, EdgeID:
		return nil
	}
	return fmt.Errorf("unknown edge %q", edge)
}

func invalid(s, why string) error {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Errorf("%w %q: %s", ErrInvalid, s, why)
}

// String renders the ref. Extra path elements are percent-encoded with only
// A–Z a–z 0–9 _ . - ~ left as they are.
func (r Ref) String() string {
	scheme := r.Scheme
	if scheme == "" {
		scheme = SchemeTrace
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString(":///")
	b.WriteString(r.Entity)
	b.WriteByte('/')
	b.WriteString(r.Project)
	b.WriteByte('/')
	b.WriteString(string(r.Kind))
	b.WriteByte('/')
	switch r.Kind {
	case KindTable:
		b.WriteString(r.Digest)
	case KindCall:
		b.WriteString(r.ID)
	default:
		b.WriteString(r.Name)
		b.WriteByte(':')
		b.WriteString(r.Version)
		for _, e := range r.Extra {
			b.WriteByte('/')
			b.WriteString(Escape(e))
		}
	}
	return b.String()
}

// Escape percent-encodes every byte except A–Z a–z 0–9 _ . - ~ (Python's
// urllib.parse.quote with safe="").
func Escape(s string) string {
	const upperhex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperhex[c>>4])
		b.WriteByte(upperhex[c&15])
	}
	return b.String()
}
