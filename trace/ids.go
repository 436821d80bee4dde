package trace

import (
	"github.com/google/uuid"

	"github.com/weftlabs/weft"
)

// newID returns a lowercase UUIDv7, the form the Weave SDKs generate.
func newID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// validCallID accepts what Weave accepts for call and parent ids: a lowercase
// canonical UUID or a 16-character lowercase hex OTel span id.
func validCallID(id string) bool { return lowerUUID(id) || lowerHex(id, 16) }

// validTraceID accepts a lowercase canonical UUID or a 32-character lowercase
// hex OTel trace id.
func validTraceID(id string) bool { return lowerUUID(id) || lowerHex(id, 32) }

func lowerUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isLowerHex(c) {
				return false
			}
		}
	}
	return true
}

func lowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// checkCallID reports a malformed call id (what names it: "id", "parent_id").
func checkCallID(what, id string) error {
	if !validCallID(id) {
		return weft.WithFields(ErrInvalidID, map[string]any{"param": what},
			"%s %q must be a lowercase UUID or a 16-character lowercase hex span id", what, clip(id))
	}
	return nil
}

func checkTraceID(id string) error {
	if !validTraceID(id) {
		return weft.WithFields(ErrInvalidID, map[string]any{"param": "trace_id"},
			"trace_id %q must be a lowercase UUID or a 32-character lowercase hex trace id", clip(id))
	}
	return nil
}

// clip shortens user input quoted in error messages.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
