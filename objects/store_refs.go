package objects

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/objects/ref"
)

// MaxRefsPerBatch bounds one RefsReadBatch.
const MaxRefsPerBatch = 1000

var jsonNull = json.RawMessage("null")

func (s *Store) RefsReadBatch(ctx context.Context, req *RefsReadBatchReq) (*RefsReadBatchRes, error) {
	if len(req.Refs) > MaxRefsPerBatch {
		return nil, weft.Errorf(ErrInvalidRequest, "Too many refs: %d (at most %d)", len(req.Refs), MaxRefsPerBatch)
	}
	parsed := make([]ref.Ref, len(req.Refs))
	for i, s := range req.Refs {
		r, err := ParseObjectRef(s)
		if err != nil {
			return nil, err
		}
		parsed[i] = r
	}
	out := &RefsReadBatchRes{Vals: make([]json.RawMessage, len(parsed))}
	for i, r := range parsed {
		val, err := s.resolve(ctx, r)
		if err != nil {
			return nil, err
		}
		out.Vals[i] = val
	}
	return out, nil
}

// ParseObjectRef parses a ref that refs/read_batch can read: an object or op
// ref. Other kinds and malformed refs are ErrInvalidRequest (400).
func ParseObjectRef(s string) (ref.Ref, error) {
	r, err := ref.Parse(s)
	if err != nil {
		return ref.Ref{}, weft.Errorf(ErrInvalidRequest, "%v", err)
	}
	if r.Kind != ref.KindObject && r.Kind != ref.KindOp {
		return ref.Ref{}, weft.Errorf(ErrInvalidRequest, "%s refs cannot be read here: %s", r.Kind, s)
	}
	return r, nil
}

// resolve reads the value of an object ref and follows its extra path. An
// unknown object is ErrNotFound; a deleted one, or a path that leads nowhere, is null.
func (s *Store) resolve(ctx context.Context, r ref.Ref) (json.RawMessage, error) {
	row, err := s.readVersion(ctx, s.db, r.ProjectID(), r.Name, r.Version, true)
	if err != nil {
		return nil, err
	}
	if row.DeletedAt != nil {
		return jsonNull, nil
	}
	if len(r.Extra) == 0 {
		return json.RawMessage(row.Val), nil
	}
	v, err := digest.Parse([]byte(row.Val))
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(r.Extra); i += 2 {
		edge, arg := r.Extra[i], r.Extra[i+1]
		var ok bool
		if v.Kind == digest.String && ref.IsRef(v.Text) && edge != ref.EdgeID {
			// A value that is itself a ref stands for the object it names.
			if v, ok, err = s.followNested(ctx, r.ProjectID(), v.Text); err != nil || !ok {
				return jsonNull, err
			}
		}
		switch edge {
		case ref.EdgeKey, ref.EdgeAttr:
			v, ok = v.Get(arg)
		case ref.EdgeIndex:
			v, ok = element(v, arg)
		case ref.EdgeID:
			v, ok, err = s.tableRowOf(ctx, r.ProjectID(), v, arg)
			if err != nil {
				return nil, err
			}
		}
		if !ok {
			return jsonNull, nil
		}
	}
	return v.Compact(), nil
}

// followNested reads the object a nested ref names, within the same project.
func (s *Store) followNested(ctx context.Context, projectID, text string) (digest.Value, bool, error) {
	nested, err := ref.Parse(text)
	if err != nil || (nested.Kind != ref.KindObject && nested.Kind != ref.KindOp) || nested.ProjectID() != projectID || len(nested.Extra) > 0 {
		return digest.Value{}, false, nil
	}
	row, err := s.readVersion(ctx, s.db, projectID, nested.Name, nested.Version, true)
	if errors.Is(err, ErrNotFound) || (err == nil && row.DeletedAt != nil) {
		return digest.Value{}, false, nil
	}
	if err != nil {
		return digest.Value{}, false, err
	}
	v, err := digest.Parse([]byte(row.Val))
	return v, err == nil, err
}

// element indexes a list; negative indexes count from the end, as in Python.
func element(v digest.Value, arg string) (digest.Value, bool) {
	i, err := strconv.Atoi(arg)
	if err != nil || v.Kind != digest.Array {
		return digest.Value{}, false
	}
	if i < 0 {
		i += len(v.Items)
	}
	if i < 0 || i >= len(v.Items) {
		return digest.Value{}, false
	}
	return v.Items[i], true
}

// tableRowOf reads row rowDigest of the table that v (a table ref in the
// same project) names.
func (s *Store) tableRowOf(ctx context.Context, projectID string, v digest.Value, rowDigest string) (digest.Value, bool, error) {
	if v.Kind != digest.String {
		return digest.Value{}, false, nil
	}
	table, err := ref.Parse(v.Text)
	if err != nil || table.Kind != ref.KindTable || table.ProjectID() != projectID {
		return digest.Value{}, false, nil
	}
	var text string
	// Through the table's meta row: entries of a table still being written
	// (or whose writing failed) are not a table yet.
	err = s.db.NewSelect().TableExpr("obj_table_entries AS e").ColumnExpr("r.val").
		Join("JOIN obj_tables AS t ON t.project_id = e.project_id AND t.digest = e.table_digest").
		Join("JOIN obj_table_rows AS r ON r.project_id = e.project_id AND r.digest = e.row_digest").
		Where("e.project_id = ? AND e.table_digest = ? AND e.row_digest = ?", projectID, table.Digest, rowDigest).
		Limit(1).Scan(ctx, &text)
	if errors.Is(err, sql.ErrNoRows) {
		return digest.Value{}, false, nil
	}
	if err != nil {
		return digest.Value{}, false, err
	}
	row, err := digest.Parse([]byte(text))
	return row, err == nil, err
}
