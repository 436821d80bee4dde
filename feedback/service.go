package feedback

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
)

// Service stores feedback and annotation queues. Every method is scoped to the
// request's project; the acting user comes from the context (weft.UserID) and
// a user id in a request is ignored. A nil error means the change is committed.
type Service interface {
	// Create validates and stores one feedback row (see [Service.BatchCreate]
	// for the rules). It is not idempotent: sending it twice stores two rows
	// unless the request carries an id.
	Create(ctx context.Context, req CreateReq) (CreateRes, error)

	// BatchCreate validates every item first and then stores them all in one
	// transaction; answers are in request order. One invalid item fails the
	// whole batch with an error naming its index ("batch[3]: …") and nothing is
	// written. Rules, each an ErrInvalid (400) unless said otherwise:
	//   - trace_ref (or weave_ref) is a trace:/// or weave:/// ref of the same
	//     project, of any kind ("weave:///e/p/obj/123:abc" is fine); the call
	//     or object it names need not exist yet.
	//   - id, when given, is a UUID and unique within the batch; otherwise a
	//     UUIDv7 is generated. created_at is the server's clock.
	//   - reaction types: payload {"emoji": <exactly one emoji>}; the stored
	//     payload gains "alias", "detoned" and "detoned_alias".
	//   - note types: payload {"note": <1 to 1024 characters>}.
	//   - annotation types "<prefix>annotation.<name>": annotation_ref is an
	//     object ref with a digest, of the same project, named <name>; payload
	//     is {"value": …}. With Config.AnnotationSpecs set, the spec is read
	//     and the value must satisfy its schema (ErrInvalidAnnotationValue); a
	//     missing or deleted spec is ErrAnnotationSpec. Without it the spec is
	//     not read.
	//   - runnable types "<prefix>runnable.<name>": runnable_ref is an op or
	//     object ref with a digest, of the same project, named <name>; an op
	//     also needs call_ref (a call ref); trigger_ref, when given, is an
	//     object ref; payload is {"output": …}.
	//   - any other type carries none of annotation_ref, runnable_ref, call_ref,
	//     trigger_ref, nor scorer_* fields.
	//   - the stored payload is a JSON object (else ErrValidation, 422) of at
	//     most 1 MiB.
	//   - queue_id, when given, names a live queue of the same project.
	// <prefix> is "wandb." or "trace.".
	BatchCreate(ctx context.Context, req BatchCreateReq) (BatchCreateRes, error)

	// Replace validates the new row completely, then in one transaction deletes
	// the row req.FeedbackID (absent is fine) and stores the new one, which
	// gets a new id (req.ID when given) and a new created_at. When validation
	// or the write fails nothing changes.
	Replace(ctx context.Context, req ReplaceReq) (CreateRes, error)

	// Query lists feedback rows of the project. Filter operators: $eq, $gt,
	// $gte, $lt, $lte, $in, $and, $or, $not over {"$getField": column or
	// "payload.<path>"} and {"$literal": value}. Unknown fields and
	// operators, and NUL characters in literals, field names and paths, are
	// ErrInvalidQuery. A \u0000 inside a stored payload string compares as
	// U+FFFD on PostgreSQL. Sorted by sort_by (columns or payload paths),
	// then created_at and id ascending; limit/offset apply after sorting;
	// TotalCount counts every row the filter matches.
	Query(ctx context.Context, req QueryReq) (QueryRes, error)

	// Purge deletes the rows whose ids the query names; unknown ids are not
	// an error. Any other query, or an id holding NUL, is ErrInvalidQuery.
	Purge(ctx context.Context, req PurgeReq) (PurgeRes, error)

	QueueService
}

// CallLookup reads the fields of calls that annotation queue items cache. The
// trace store implements it; [Service.AddQueueItems] skips ids it does not
// return.
type CallLookup interface {
	// LookupCalls returns the live calls among ids, in any order.
	LookupCalls(ctx context.Context, projectID string, ids []string) ([]CallInfo, error)
}

// CallInfo is what a queue item keeps of its call.
type CallInfo struct {
	ID        string
	OpName    string
	TraceID   string
	StartedAt time.Time
	EndedAt   *time.Time
}

// Config configures [New].
type Config struct {
	// DB is the database, migrated with weft.Migrate. Required.
	DB bun.IDB
	// Calls looks up calls added to annotation queues. Without it adding items
	// answers ErrCallLookupUnavailable.
	Calls CallLookup
	// AnnotationSpecs reads the spec an annotation names, to check the
	// annotated value against its schema. Without it annotation values are
	// not checked against their spec (only the ref and payload shape are).
	AnnotationSpecs AnnotationSpecs
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

// Errors of this package. Each wraps a weft error class.
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

type service struct {
	db     bun.IDB
	calls  CallLookup
	specs  AnnotationSpecs
	now    func() time.Time
	emojis emojiAliases
}

// New returns the bun-backed Service.
func New(cfg Config) (Service, error) {
	if cfg.DB == nil {
		return nil, errors.New("feedback: Config.DB is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &service{db: cfg.DB, calls: cfg.Calls, specs: cfg.AnnotationSpecs, now: cfg.Now, emojis: loadEmojiAliases()}, nil
}

// clock returns the current time in UTC at the microsecond precision both
// databases keep, so that what is returned equals what is read back.
func (s *service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// actingUser returns the caller's user id.
func actingUser(ctx context.Context) (string, error) {
	if id := weft.UserID(ctx); id != "" {
		return id, nil
	}
	return "", ErrNoUser
}

func checkProject(projectID string) error {
	_, _, err := weft.ParseProjectID(projectID)
	return err
}
