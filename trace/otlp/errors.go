package otlp

import "github.com/weftlabs/weft"

// Sentinel errors of a span that cannot become a call. The ingest reports
// them in the response's partial_success; the other spans are stored.
var (
	// ErrInvalidSpan: a span without ids or times (HTTP 400 class).
	ErrInvalidSpan = weft.DefineError(weft.ErrInvalid, "InvalidSpan", "invalid span")
	// ErrNoProject: neither the span's resource (wandb.entity and
	// wandb.project) nor the request names a project (HTTP 400 class).
	ErrNoProject = weft.DefineError(weft.ErrInvalid, "InvalidSpan", "no project")
)
