package feedback

import "github.com/weftlabs/weft"

// Sentinel errors. Each wraps a weft error class, which decides its HTTP
// status (transport/httpapi maps the classes in one table).
var (
	// ErrInvalidFeedback: a feedback row breaks a rule of its type.
	ErrInvalidFeedback = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid feedback")
	// ErrAnnotationSpec: the annotation spec a row names is missing, deleted
	// or has a schema that cannot be used.
	ErrAnnotationSpec = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "annotation spec not found or has been deleted")
	// ErrInvalidAnnotationValue: an annotation's value breaks its spec's schema.
	ErrInvalidAnnotationValue = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "annotation value does not satisfy its spec")
	// ErrPayloadTooLarge: the processed payload is over 1 MiB.
	ErrPayloadTooLarge = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "Feedback payload too large")
	// ErrBadPayload: a JSON field has the wrong shape.
	ErrBadPayload = weft.DefineError(weft.ErrValidation, "InvalidFieldError", "payload must be a JSON object")
	// ErrUnknownQueue: a feedback row names a queue that does not exist here.
	ErrUnknownQueue = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "queue not found or has been deleted")
	// ErrInvalidQuery: a filter, sort or field list that cannot be run.
	ErrInvalidQuery = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid query")
	// ErrQueueNotFound: the annotation queue does not exist or was deleted.
	ErrQueueNotFound = weft.DefineError(weft.ErrNotFound, "NotFoundError", "annotation queue not found")
	// ErrInvalidProgress: a progress update the item's state does not allow,
	// or for an item not in the queue.
	ErrInvalidProgress = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid annotation progress")
	// ErrNoUser: the context carries no acting user.
	ErrNoUser = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "pf_user_id cannot be None")
	// ErrCallLookupUnavailable: the service was built without a CallLookup.
	ErrCallLookupUnavailable = weft.DefineError(weft.ErrUnavailable, "ServiceUnavailable", "call lookup is not configured")
)
