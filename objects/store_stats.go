package objects

import "context"

// StorageSizes is what a project's objects store, in bytes.
type StorageSizes struct {
	// Objects counts the JSON of every live object version; Tables every
	// distinct row; Files every distinct file.
	Objects, Tables, Files int64
}

// StorageSizes implements [Service].
func (s *Store) StorageSizes(ctx context.Context, projectID string) (*StorageSizes, error) {
	if err := checkProject(projectID); err != nil {
		return nil, err
	}
	var out StorageSizes
	for _, part := range []struct {
		table, live string
		into        *int64
	}{
		{"obj_versions", "deleted_at IS NULL", &out.Objects},
		{"obj_table_rows", "", &out.Tables},
		{"obj_files", "", &out.Files},
	} {
		q := s.db.NewSelect().TableExpr(part.table).ColumnExpr("coalesce(sum(size_bytes), 0)").Where("project_id = ?", projectID)
		if part.live != "" {
			q = q.Where(part.live)
		}
		if err := q.Scan(ctx, part.into); err != nil {
			return nil, err
		}
	}
	return &out, nil
}
