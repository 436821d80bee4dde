package objects

import "github.com/weftlabs/weft"

// Sentinel errors. Each wraps a weft error class, which fixes its HTTP status.
var (
	// ErrNotFound: no such object version, table, row or file (404).
	ErrNotFound = weft.DefineError(weft.ErrNotFound, "NotFoundError", "not found")
	// ErrObjectDeleted: the version asked for was deleted; the error carries deleted_at (404).
	ErrObjectDeleted = weft.DefineError(weft.ErrNotFound, "ObjectDeletedError", "object was deleted")
	// ErrDigestMismatch: the client's expected_digest differs from the server's (409).
	ErrDigestMismatch = weft.DefineError(weft.ErrConflict, "DigestMismatchError", "digest mismatch")
	// ErrInvalidObjectID: an object id is empty, too long or has characters
	// outside letters, digits, '_', '.' and '-' (422).
	ErrInvalidObjectID = weft.DefineError(weft.ErrValidation, "InvalidFieldError", "invalid object id")
	// ErrNameTypeCollision: the object id is already used by a different kind or
	// base class in the project (400).
	ErrNameTypeCollision = weft.DefineError(weft.ErrInvalid, "ObjectNameTypeCollision", "object name already used by another type")
	// ErrInvalidRequest: the request breaks a rule (400).
	ErrInvalidRequest = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid request")
	// ErrFileTooLarge: a file is larger than Config.MaxFileBytes (413).
	ErrFileTooLarge = weft.DefineError(weft.ErrTooLarge, "InsertTooLarge", "file too large")
)
