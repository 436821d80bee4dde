package training

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/weftlabs/weft/training/blob"
)

// Adapter is a checkpoint ready to be served: a LoRA adapter over BaseModel.
type Adapter struct {
	// Name identifies the checkpoint to the inference server:
	// "<entity>/<project>/<name>:step<N>".
	Name string
	// Path is the adapter directory on this machine, or "" when the checkpoint
	// has no files (the untrained step 0: serve the base model).
	Path      string
	BaseModel string
	Step      int64
}

// ModelRef is a trained model's name as a chat completion spells it, read
// by [ParseModelRef].
type ModelRef struct {
	// ProjectID is the model's project, "<entity>/<project>": whoever may
	// read it may be served the model.
	ProjectID string
	Name      string
	// Step is the checkpoint named, -1 for the latest.
	Step int64
}

// ParseModelRef reads a trained model's name: "<entity>/<project>/<name>"
// (latest step), "…:step<N>" or "…:latest", each also prefixed with
// "wandb-artifact:///" (or "wandb-artifact://"). ok is false for a name of
// any other form.
func ParseModelRef(model string) (ref ModelRef, ok bool) {
	name := model
	for _, prefix := range []string{"wandb-artifact:///", "wandb-artifact://"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			name = rest
			break
		}
	}
	name, version, _ := strings.Cut(name, ":")
	parts := strings.Split(name, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return ModelRef{}, false
	}
	ref = ModelRef{ProjectID: parts[0] + "/" + parts[1], Name: parts[2], Step: -1}
	switch {
	case version == "" || version == "latest":
	case strings.HasPrefix(version, "step"):
		n, err := strconv.ParseInt(strings.TrimPrefix(version, "step"), 10, 64)
		if err != nil || n < 0 {
			return ModelRef{}, false
		}
		ref.Step = n
	default:
		return ModelRef{}, false
	}
	return ref, true
}

// ResolveAdapter resolves a chat completion's model name (see
// [ParseModelRef]) to a checkpoint. ok is false when the name does not have
// that form or names no model or checkpoint. It does not authorize: callers
// serving a caller check first that the caller may read ModelRef.ProjectID.
// Path needs a blob store that is a blob.Locator: a checkpoint with files
// in any other store is an error.
func (s *Store) ResolveAdapter(ctx context.Context, model string) (Adapter, bool, error) {
	ref, ok := ParseModelRef(model)
	if !ok {
		return Adapter{}, false, nil
	}
	var row modelRow
	err := s.db.NewSelect().Model(&row).Where("project_id = ? AND name = ?", ref.ProjectID, ref.Name).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Adapter{}, false, nil
	}
	if err != nil {
		return Adapter{}, false, err
	}
	var cp checkpointRow
	q := s.db.NewSelect().Model(&cp).Where("project_id = ? AND model_id = ?", ref.ProjectID, row.ID)
	if ref.Step >= 0 {
		q = q.Where("step = ?", ref.Step)
	} else {
		q = q.Order("step DESC").Limit(1)
	}
	if err := q.Scan(ctx); errors.Is(err, sql.ErrNoRows) {
		return Adapter{}, false, nil
	} else if err != nil {
		return Adapter{}, false, err
	}
	a := Adapter{Name: fmt.Sprintf("%s/%s:step%d", ref.ProjectID, row.Name, cp.Step), BaseModel: row.Base, Step: cp.Step}
	if cp.BlobPrefix != "" {
		locator, ok := s.cfg.Blobs.(blob.Locator)
		if !ok {
			// Serving the base model instead would answer silently with the wrong weights.
			return Adapter{}, false, fmt.Errorf("training: checkpoint %s is in a blob store without local paths", a.Name)
		}
		a.Path = locator.LocalPath(cp.BlobPrefix)
	}
	return a, true, nil
}
