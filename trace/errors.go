package trace

import "github.com/weftlabs/weft"

// Sentinel errors. Each wraps a weft error class, which decides its HTTP
// status (transport/httpapi maps the classes in one table).
var (
	// ErrInvalidID: a call, parent or trace id that is neither a lowercase UUID
	// nor an OTel hex id (HTTP 400).
	ErrInvalidID = weft.DefineError(weft.ErrInvalid, "InvalidIdFormat", "invalid id")
	// ErrInvalidCall: a start, end or update that breaks a rule (HTTP 400).
	ErrInvalidCall = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid call")
	// ErrInvalidText: a free-form member (inputs, output, …) holding invalid
	// UTF-8 or a lone surrogate escape, which no database keeps (HTTP 422).
	ErrInvalidText = weft.DefineError(weft.ErrValidation, "InvalidFieldError", "invalid JSON text")
	// ErrInvalidQuery: an unknown filter, sort field or query form (HTTP 400).
	ErrInvalidQuery = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid query")
	// ErrTooManyIDs: a delete of more than MaxDeleteIDs ids (HTTP 413).
	ErrTooManyIDs = weft.DefineError(weft.ErrTooLarge, "RequestTooLarge", "Request too large")
	// ErrTraceTooLarge: usage of a single trace with more calls than the
	// request's limit; partial numbers are never returned (HTTP 413).
	ErrTraceTooLarge = weft.DefineError(weft.ErrTooLarge, "RequestTooLarge", "a single trace exceeds the call aggregation limit")
)
