package training

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weftlabs/weft"
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

// ResolveAdapter resolves a chat completion's model name (see
// [weft.TrainedModel]) to a checkpoint. ok is false when the name does not
// have that form or names no model or checkpoint. It does not authorize:
// callers serving a caller check first that the caller may read the name's
// ProjectID.
// Path needs a blob store that is a blob.Locator: a checkpoint with files
// in any other store is an error.
func (s *Store) ResolveAdapter(ctx context.Context, model string) (Adapter, bool, error) {
	ref, ok := weft.ParseTrainedModel(model)
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
	a := Adapter{Name: weft.TrainedModel{ProjectID: ref.ProjectID, Name: row.Name, Step: cp.Step}.String(), BaseModel: row.Base, Step: cp.Step}
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
