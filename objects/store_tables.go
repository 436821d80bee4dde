package objects

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
)

type tableRowRow struct {
	bun.BaseModel `bun:"table:obj_table_rows"`

	ProjectID string `bun:"project_id,pk"`
	Digest    string `bun:"digest,pk"`
	Val       string `bun:"val,notnull"`
	SizeBytes int64  `bun:"size_bytes,notnull"`
}

type tableMeta struct {
	bun.BaseModel `bun:"table:obj_tables"`

	ProjectID        string    `bun:"project_id,pk"`
	Digest           string    `bun:"digest,pk"`
	RowCount         int64     `bun:"row_count,notnull"`
	StorageSizeBytes int64     `bun:"storage_size_bytes,notnull"`
	CreatedAt        time.Time `bun:"created_at,notnull"`
}

type tableEntry struct {
	bun.BaseModel `bun:"table:obj_table_entries"`

	ProjectID   string `bun:"project_id,pk"`
	TableDigest string `bun:"table_digest,pk"`
	Position    int    `bun:"position,pk"`
	RowDigest   string `bun:"row_digest,notnull"`
}

// insertBatch bounds the rows of one multi-row INSERT (SQLite allows 32766
// parameters per statement).
const insertBatch = 2000

// preparedRow is a row with its digest and the text to store.
type preparedRow struct {
	digest string
	text   string
}

// prepareRow checks that raw is a JSON object and computes its digest.
func prepareRow(raw json.RawMessage, index int) (preparedRow, error) {
	v, err := digest.Parse(raw)
	if err != nil {
		return preparedRow{}, weft.Errorf(ErrInvalidRequest, "row %d is not valid JSON: %v", index, err)
	}
	if v.Kind != digest.Object {
		return preparedRow{}, weft.Errorf(ErrInvalidRequest, "row %d must be a JSON object", index)
	}
	return preparedRow{digest: digest.Bytes(v.Canonical()), text: string(raw)}, nil
}

func (s *Store) TableCreate(ctx context.Context, req *TableCreateReq) (*TableCreateRes, error) {
	in := req.Table
	if err := checkProject(in.ProjectID); err != nil {
		return nil, err
	}
	rows := make([]preparedRow, len(in.Rows))
	rowDigests := make([]string, len(in.Rows))
	for i, raw := range in.Rows {
		r, err := prepareRow(raw, i)
		if err != nil {
			return nil, err
		}
		rows[i], rowDigests[i] = r, r.digest
	}
	tableDigest := digest.Table(rowDigests)
	if in.ExpectedDigest != nil && *in.ExpectedDigest != "" && *in.ExpectedDigest != tableDigest {
		return nil, weft.Errorf(ErrDigestMismatch, "expected digest %s but the server computed %s", *in.ExpectedDigest, tableDigest)
	}
	if err := s.writeTable(ctx, in.ProjectID, tableDigest, rows, rowDigests); err != nil {
		return nil, err
	}
	return &TableCreateRes{Digest: tableDigest, RowDigests: rowDigests}, nil
}

// writeTable stores the rows (those not stored yet) and the table over
// rowDigests, unless the table exists. Nothing of it is one long transaction:
// every statement writes at most insertBatch rows and commits on its own, so
// that a large table never holds the database's write lock (SQLite has one,
// for every tenant) for more than one statement's time; see storeTable for
// how the table still appears whole or not at all.
func (s *Store) writeTable(ctx context.Context, projectID, tableDigest string, rows []preparedRow, rowDigests []string) error {
	if exists, err := tableExists(ctx, s.db, projectID, tableDigest); err != nil || exists {
		return err
	}
	if err := insertRows(ctx, s.db, projectID, rows); err != nil {
		return err
	}
	return s.storeTable(ctx, s.db, projectID, tableDigest, rowDigests)
}

// tableExists reports whether the table's meta row is there: whether the
// table is.
func tableExists(ctx context.Context, db bun.IDB, projectID, tableDigest string) (bool, error) {
	return db.NewSelect().Model((*tableMeta)(nil)).Where("project_id = ? AND digest = ?", projectID, tableDigest).Exists(ctx)
}

// insertRows stores rows not yet stored in the project, insertBatch rows per
// statement (each its own transaction when db is not one). A stored row is
// only content under its digest: no table shows it before the table's meta
// row commits.
func insertRows(ctx context.Context, tx bun.IDB, projectID string, rows []preparedRow) error {
	seen := make(map[string]bool, len(rows))
	batch := make([]tableRowRow, 0, min(len(rows), insertBatch))
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := tx.NewInsert().Model(&batch).On("CONFLICT DO NOTHING").Exec(ctx)
		batch = batch[:0]
		return err
	}
	for _, r := range rows {
		if seen[r.digest] {
			continue
		}
		seen[r.digest] = true
		batch = append(batch, tableRowRow{ProjectID: projectID, Digest: r.digest, Val: r.text, SizeBytes: int64(len(r.text))})
		if len(batch) == insertBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// storeTable records a table over stored rows unless it exists already: its
// entries, insertBatch per statement, then its meta row. Every read of a
// table starts from the meta row, so the table appears whole when that last
// statement commits, and a request that fails before leaves no table, only
// entries nothing reads, which the next creation of the same (content-named)
// table completes.
func (s *Store) storeTable(ctx context.Context, tx bun.IDB, projectID, tableDigest string, rowDigests []string) error {
	if exists, err := tableExists(ctx, tx, projectID, tableDigest); err != nil || exists {
		return err
	}
	sizes, err := rowSizes(ctx, tx, projectID, rowDigests)
	if err != nil {
		return err
	}
	var total int64
	for _, d := range rowDigests {
		size, ok := sizes[d]
		if !ok {
			return weft.Errorf(ErrNotFound, "row %s not found", d)
		}
		total += size
	}
	entries := make([]tableEntry, 0, min(len(rowDigests), insertBatch))
	for i, d := range rowDigests {
		entries = append(entries, tableEntry{ProjectID: projectID, TableDigest: tableDigest, Position: i, RowDigest: d})
		if len(entries) == insertBatch || i == len(rowDigests)-1 {
			if _, err := tx.NewInsert().Model(&entries).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
				return err
			}
			entries = entries[:0]
		}
	}
	meta := &tableMeta{ProjectID: projectID, Digest: tableDigest, RowCount: int64(len(rowDigests)), StorageSizeBytes: total, CreatedAt: s.now()}
	_, err = tx.NewInsert().Model(meta).On("CONFLICT DO NOTHING").Exec(ctx)
	return err
}

// rowSizes returns the stored size of each distinct row digest that exists.
func rowSizes(ctx context.Context, db bun.IDB, projectID string, rowDigests []string) (map[string]int64, error) {
	distinct := slices.Compact(slices.Sorted(slices.Values(rowDigests)))
	sizes := make(map[string]int64, len(distinct))
	for chunk := range slices.Chunk(distinct, insertBatch) {
		var rows []tableRowRow
		err := db.NewSelect().Model(&rows).Column("digest", "size_bytes").
			Where("project_id = ? AND digest IN (?)", projectID, bun.In(chunk)).Scan(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			sizes[r.Digest] = r.SizeBytes
		}
	}
	return sizes, nil
}

// tableRowDigests loads the ordered row digests of a table.
func tableRowDigests(ctx context.Context, db bun.IDB, projectID, tableDigest string) ([]string, error) {
	exists, err := tableExists(ctx, db, projectID, tableDigest)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, weft.Errorf(ErrNotFound, "Table %s not found", tableDigest)
	}
	var digests []string
	err = db.NewSelect().Model((*tableEntry)(nil)).Column("row_digest").
		Where("project_id = ? AND table_digest = ?", projectID, tableDigest).Order("position").Scan(ctx, &digests)
	return digests, err
}

func (s *Store) TableUpdate(ctx context.Context, req *TableUpdateReq) (*TableUpdateRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	// The base table is immutable (named by its content): it is read, and
	// the new table written, as writeTable writes any table.
	digests, err := tableRowDigests(ctx, s.db, req.ProjectID, req.BaseDigest)
	if err != nil {
		return nil, err
	}
	var added []preparedRow
	res := &TableUpdateRes{UpdatedRowDigests: []string{}}
	for i, u := range req.Updates {
		switch {
		case u.Append != nil && u.Pop == nil && u.Insert == nil:
			r, err := prepareRow(u.Append.Row, i)
			if err != nil {
				return nil, err
			}
			added = append(added, r)
			digests = append(digests, r.digest)
			res.UpdatedRowDigests = append(res.UpdatedRowDigests, r.digest)
		case u.Pop != nil && u.Append == nil && u.Insert == nil:
			if u.Pop.Index < 0 || u.Pop.Index >= len(digests) {
				return nil, weft.Errorf(ErrInvalidRequest, "update %d: pop index %d out of range", i, u.Pop.Index)
			}
			digests = slices.Delete(digests, u.Pop.Index, u.Pop.Index+1)
		case u.Insert != nil && u.Append == nil && u.Pop == nil:
			if u.Insert.Index < 0 || u.Insert.Index > len(digests) {
				return nil, weft.Errorf(ErrInvalidRequest, "update %d: insert index %d out of range", i, u.Insert.Index)
			}
			r, err := prepareRow(u.Insert.Row, i)
			if err != nil {
				return nil, err
			}
			added = append(added, r)
			digests = slices.Insert(digests, u.Insert.Index, r.digest)
			res.UpdatedRowDigests = append(res.UpdatedRowDigests, r.digest)
		default:
			return nil, weft.Errorf(ErrInvalidRequest, "update %d must have exactly one of append, pop and insert", i)
		}
	}
	res.Digest = digest.Table(digests)
	if err := s.writeTable(ctx, req.ProjectID, res.Digest, added, digests); err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Store) TableCreateFromDigests(ctx context.Context, req *TableCreateFromDigestsReq) (*TableCreateFromDigestsRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	d := digest.Table(req.RowDigests)
	if err := s.writeTable(ctx, req.ProjectID, d, nil, req.RowDigests); err != nil {
		return nil, err
	}
	return &TableCreateFromDigestsRes{Digest: d}, nil
}

// joinedRow is an entry of a table joined with its row.
type joinedRow struct {
	Position  int    `bun:"position"`
	RowDigest string `bun:"row_digest"`
	Val       string `bun:"val"`
}

func (s *Store) TableQuery(ctx context.Context, req *TableQueryReq) (*TableQueryRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	if (req.Limit != nil && *req.Limit < 0) || (req.Offset != nil && *req.Offset < 0) {
		return nil, weft.Errorf(ErrInvalidRequest, "limit and offset must not be negative")
	}
	paths, err := sortPaths(req.SortBy)
	if err != nil {
		return nil, err
	}
	var rowCount int64
	err = s.db.NewSelect().Model((*tableMeta)(nil)).Column("row_count").Where("project_id = ? AND digest = ?", req.ProjectID, req.Digest).Scan(ctx, &rowCount)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.Errorf(ErrNotFound, "Table %s not found", req.Digest)
	}
	if err != nil {
		return nil, err
	}
	var rows []joinedRow
	if len(paths) > 0 {
		rows, err = s.sortedTableRows(ctx, req, paths, rowCount)
	} else {
		rows, err = s.tableRows(ctx, req)
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	out := &TableQueryRes{Rows: make([]TableRow, len(rows))}
	for i, r := range rows {
		out.Rows[i] = TableRow{Digest: r.RowDigest, Val: json.RawMessage(r.Val), OriginalIndex: r.Position}
	}
	return out, nil
}

// tableRows reads a page of a table's rows in table order.
func (s *Store) tableRows(ctx context.Context, req *TableQueryReq) ([]joinedRow, error) {
	q := s.db.NewSelect().TableExpr("obj_table_entries AS e").
		ColumnExpr("e.position, e.row_digest, r.val").
		Join("JOIN obj_table_rows AS r ON r.project_id = e.project_id AND r.digest = e.row_digest").
		Where("e.project_id = ? AND e.table_digest = ?", req.ProjectID, req.Digest).
		OrderExpr("e.position")
	filtered := req.Filter != nil && len(req.Filter.RowDigests) > 0
	if filtered {
		q = q.Where("e.row_digest IN (?)", bun.In(req.Filter.RowDigests))
	}
	if !filtered && req.Offset != nil && *req.Offset > 0 {
		// A table's positions are 0…n−1, so the rows after offset are those
		// from position offset on: the index leads straight there, where an
		// OFFSET would step over every row before it.
		q = limitOffset(q.Where("e.position >= ?", *req.Offset), req.Limit, nil)
	} else {
		q = limitOffset(q, req.Limit, req.Offset)
	}
	var rows []joinedRow
	err := q.Scan(ctx, &rows)
	return rows, err
}

func (s *Store) TableQueryStats(ctx context.Context, req *TableQueryStatsReq) (*TableQueryStatsRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	var count int64
	err := s.db.NewSelect().Model((*tableMeta)(nil)).Column("row_count").Where("project_id = ? AND digest = ?", req.ProjectID, req.Digest).Scan(ctx, &count)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.Errorf(ErrNotFound, "Table %s not found", req.Digest)
	}
	if err != nil {
		return nil, err
	}
	return &TableQueryStatsRes{Count: count}, nil
}

func (s *Store) TableQueryStatsBatch(ctx context.Context, req *TableQueryStatsBatchReq) (*TableQueryStatsBatchRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	out := &TableQueryStatsBatchRes{Tables: []TableStats{}}
	// A string that is not a digest names no table: it is left out
	// here rather than sent to the database, which could not take every
	// string (NUL) as a value.
	digests := slices.DeleteFunc(slices.Clone(req.Digests), func(d string) bool { return !digest.IsContentHash(d) })
	if len(digests) == 0 {
		return out, nil
	}
	var metas []tableMeta
	err := s.db.NewSelect().Model(&metas).Column("digest", "row_count", "storage_size_bytes").
		Where("project_id = ? AND digest IN (?)", req.ProjectID, bun.In(slices.Compact(slices.Sorted(slices.Values(digests))))).
		Order("digest").Scan(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range metas {
		stats := TableStats{Count: m.RowCount, Digest: m.Digest}
		if req.IncludeStorageSize {
			size := m.StorageSizeBytes
			stats.StorageSizeBytes = &size
		}
		out.Tables = append(out.Tables, stats)
	}
	return out, nil
}
