package training

import (
	"fmt"

	"github.com/weftlabs/weft"
)

// Training sentinels.
var (
	ErrModelNotFound      = weft.DefineError(weft.ErrNotFound, "NotFoundError", "model not found")
	ErrJobNotFound        = weft.DefineError(weft.ErrNotFound, "NotFoundError", "training job not found")
	ErrCursorNotFound     = weft.DefineError(weft.ErrNotFound, "NotFoundError", "the item named by after was not found")
	ErrModelExists        = weft.DefineError(weft.ErrConflict, "Conflict", "a model with this name already exists in the project")
	ErrJobFinished        = weft.DefineError(weft.ErrConflict, "Conflict", "the training job has already finished")
	ErrInvalidRequest     = weft.DefineError(weft.ErrValidation, "InvalidFieldError", "invalid request")
	ErrCheckpointNotFound = weft.DefineError(weft.ErrNotFound, "NotFoundError", "checkpoint not found")
)

// FieldError is a request field that breaks a rule. It wraps weft.ErrValidation;
// transports render it like a schema violation at Path (dotted, with [i] for
// array indexes, e.g. "trajectory_groups[2].trajectories[0].reward").
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// Unwrap makes errors.Is(err, weft.ErrValidation) hold.
func (e *FieldError) Unwrap() error { return ErrInvalidRequest }

func fieldErrorf(path, format string, args ...any) error {
	return &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// ErrNoTrainer is wrapped by the failure of a job whose base model no
// configured trainer runs; it ends the job (training_failed), never a request.
var ErrNoTrainer = weft.DefineError(weft.ErrValidation, "InvalidFieldError", "no trainer runs the model's base model")

// ErrUntrainable is wrapped by a trainer's error about the job's own data or
// config (a conversation the model's template cannot render, a learning-rate
// schedule of the wrong length, ...): the job fails at once, since a retry
// would fail the same way.
var ErrUntrainable = weft.DefineError(weft.ErrValidation, "InvalidFieldError", "the job's data cannot be trained")
