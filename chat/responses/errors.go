package responses

import "github.com/weftlabs/weft"

// Errors, each with OpenAI's error type; a "param" field names the request
// field at fault.
var (
	// ErrInvalid is a request that is not a valid Responses request, or asks
	// for something weft does not serve (hosted tools, background runs,
	// conversations): 400.
	ErrInvalid = weft.DefineError(weft.ErrInvalid, "invalid_request_error", "invalid request")
	// ErrNotFound is a response id that no stored response of the caller's
	// project has (whoever else's it may be): 404.
	ErrNotFound = weft.DefineError(weft.ErrNotFound, "invalid_request_error", "response not found")
)

// invalid returns an ErrInvalid about param.
func invalid(param, format string, args ...any) error {
	return weft.WithFields(ErrInvalid, map[string]any{"param": param}, format, args...)
}
