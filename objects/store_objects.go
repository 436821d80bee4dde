package objects

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/internal/digest"
)

// objectRow is one version in obj_versions.
type objectRow struct {
	bun.BaseModel `bun:"table:obj_versions,alias:o"`

	ProjectID       string     `bun:"project_id,pk"`
	ObjectID        string     `bun:"object_id,pk"`
	Digest          string     `bun:"digest,pk"`
	VersionIndex    int        `bun:"version_index,notnull"`
	Kind            string     `bun:"kind,notnull"`
	BaseObjectClass *string    `bun:"base_object_class"`
	LeafObjectClass *string    `bun:"leaf_object_class"`
	Val             string     `bun:"val,notnull"`
	SizeBytes       int64      `bun:"size_bytes,notnull"`
	PfUserID        *string    `bun:"pf_user_id"`
	CreatedAt       time.Time  `bun:"created_at,notnull"`
	DeletedAt       *time.Time `bun:"deleted_at"`
	IsLatest        int        `bun:"is_latest,scanonly"`
}

// isLatestColumn computes is_latest: the highest version_index among the live
// versions of the object (or among all versions when every one is deleted).
// The subquery names the project as a value, not as the outer row's column, so
// that on a distributed database the whole statement runs on one shard.
const isLatestColumn = `CASE WHEN o.version_index = (SELECT l.version_index FROM obj_versions AS l
	WHERE l.project_id = ? AND l.object_id = o.object_id
	ORDER BY (l.deleted_at IS NULL) DESC, l.version_index DESC LIMIT 1) THEN 1 ELSE 0 END AS is_latest`

func (r *objectRow) schema(metadataOnly, withSize bool) ObjSchema {
	s := ObjSchema{
		ProjectID: r.ProjectID, ObjectID: r.ObjectID, CreatedAt: r.CreatedAt.UTC(), Digest: r.Digest,
		VersionIndex: r.VersionIndex, IsLatest: r.IsLatest, Kind: r.Kind,
		BaseObjectClass: r.BaseObjectClass, LeafObjectClass: r.LeafObjectClass,
		Val: json.RawMessage(r.Val), PfUserID: r.PfUserID,
	}
	if r.DeletedAt != nil {
		t := r.DeletedAt.UTC()
		s.DeletedAt = &t
	}
	if metadataOnly {
		s.Val = json.RawMessage(`{}`)
	}
	if withSize {
		size := r.SizeBytes
		s.SizeBytes = &size
	}
	return s
}

func checkProject(projectID string) error {
	_, _, err := weft.ParseProjectID(projectID)
	return err
}

// lockObject serialises publishers of one object id: a transaction-scoped
// advisory lock on PostgreSQL. SQLite transactions start IMMEDIATE, which
// already serialises writers.
func (s *Store) lockObject(ctx context.Context, tx bun.Tx, projectID, objectID string) error {
	if !database.DialectOf(s.db).Has(database.AdvisoryLocks) {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "obj\x1f"+projectID+"\x1f"+objectID)
	return err
}

func (s *Store) ObjCreate(ctx context.Context, req *ObjCreateReq) (*ObjCreateRes, error) {
	in := req.Obj
	if err := checkProject(in.ProjectID); err != nil {
		return nil, err
	}
	if err := checkObjectID(in.ObjectID); err != nil {
		return nil, err
	}
	builtin := in.BuiltinObjectClass
	if builtin == nil {
		builtin = in.SetBaseObjectClass
	}
	p, err := processVal(in.Val, builtin)
	if err != nil {
		return nil, err
	}
	d := digest.Bytes(p.canonical)
	if in.ExpectedDigest != nil && *in.ExpectedDigest != "" && *in.ExpectedDigest != d {
		return nil, weft.Errorf(ErrDigestMismatch, "expected digest %s but the server computed %s", *in.ExpectedDigest, d)
	}
	watched := s.watched(p.base)
	if watched {
		if err := s.cfg.Hook.CheckPublish(ctx, in.ProjectID, in.ObjectID, in.Val); err != nil {
			return nil, err
		}
	}
	var res *ObjCreateRes
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if res, err = s.publish(ctx, tx, in.ProjectID, in.ObjectID, d, p); err != nil || !watched {
			return err
		}
		return s.objectChanged(ctx, tx, in.ProjectID, in.ObjectID, res.Digest)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// publish stores one version inside tx (see ObjCreate for the rules).
func (s *Store) publish(ctx context.Context, tx bun.Tx, projectID, objectID, d string, p processedVal) (*ObjCreateRes, error) {
	if err := s.lockObject(ctx, tx, projectID, objectID); err != nil {
		return nil, err
	}
	var live []objectRow
	if err := tx.NewSelect().Model(&live).Column("digest", "version_index", "kind", "base_object_class", "deleted_at").
		Where("project_id = ? AND object_id = ?", projectID, objectID).Scan(ctx); err != nil {
		return nil, err
	}
	next := 0
	var existing *objectRow
	for i := range live {
		row := &live[i]
		next = max(next, row.VersionIndex+1)
		if row.Digest == d {
			existing = row
		}
	}
	if existing != nil && existing.DeletedAt == nil {
		return &ObjCreateRes{Digest: d, ObjectID: objectID, VersionIndex: existing.VersionIndex}, nil
	}
	for _, row := range live {
		if row.DeletedAt == nil && (row.Kind != p.kind || deref(row.BaseObjectClass) != deref(p.base)) {
			return nil, weft.Errorf(ErrNameTypeCollision,
				"Cannot publish %q as %s: that name is already used by %s in this project", objectID, describe(p.kind, p.base), describe(row.Kind, row.BaseObjectClass))
		}
	}
	userID := nullable(weft.UserID(ctx))
	if existing != nil {
		// A deleted digest comes back with its first-seen version_index.
		_, err := tx.NewUpdate().Model((*objectRow)(nil)).
			Set("deleted_at = NULL").Set("created_at = ?", s.now()).Set("pf_user_id = ?", userID).
			Where("project_id = ? AND object_id = ? AND digest = ?", projectID, objectID, d).Exec(ctx)
		if err != nil {
			return nil, err
		}
		return &ObjCreateRes{Digest: d, ObjectID: objectID, VersionIndex: existing.VersionIndex}, nil
	}
	row := &objectRow{
		ProjectID: projectID, ObjectID: objectID, Digest: d, VersionIndex: next, Kind: p.kind,
		BaseObjectClass: p.base, LeafObjectClass: p.leaf, Val: string(p.stored), SizeBytes: int64(len(p.stored)),
		PfUserID: userID, CreatedAt: s.now(),
	}
	if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
		return nil, err
	}
	return &ObjCreateRes{Digest: d, ObjectID: objectID, VersionIndex: next}, nil
}

func describe(kind string, base *string) string {
	if base != nil {
		return fmt.Sprintf("%s %s", kind, *base)
	}
	return "a plain " + kind
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// versionSelector narrows a query on obj_versions (alias o) to one version
// named by a digest, "latest" or "v<N>". liveOnly restricts "latest" to live
// versions (deletes); reads resolve "latest" to the newest live version but
// fall back to the newest deleted one so that they can report the deletion.
func versionSelector(q *bun.SelectQuery, version string, liveOnly bool) *bun.SelectQuery {
	if version == "latest" {
		if liveOnly {
			q = q.Where("o.deleted_at IS NULL")
		}
		return q.OrderExpr("(o.deleted_at IS NULL) DESC, o.version_index DESC").Limit(1)
	}
	if n, ok := versionNumber(version); ok {
		return q.Where("o.version_index = ?", n)
	}
	return q.Where("o.digest = ?", version)
}

// versionNumber parses "v<digits>".
func versionNumber(version string) (int, bool) {
	rest, ok := strings.CutPrefix(version, "v")
	if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

// readVersion loads one version with is_latest, deleted or not.
func (s *Store) readVersion(ctx context.Context, db bun.IDB, projectID, objectID, version string, withVal bool) (*objectRow, error) {
	row := new(objectRow)
	q := db.NewSelect().Model(row).
		Column("project_id", "object_id", "digest", "version_index", "kind", "base_object_class", "leaf_object_class",
			"size_bytes", "pf_user_id", "created_at", "deleted_at").
		ColumnExpr(isLatestColumn, projectID).
		Where("o.project_id = ? AND o.object_id = ?", projectID, objectID)
	if withVal {
		q = q.Column("val")
	}
	err := versionSelector(q, version, false).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.Errorf(ErrNotFound, "Obj %s:%s not found", objectID, version)
	}
	if err != nil {
		return nil, err
	}
	return row, nil
}

// deletedError reports a read of a deleted version.
func deletedError(row *objectRow) error {
	at := row.DeletedAt.UTC().Format(time.RFC3339Nano)
	return weft.WithFields(ErrObjectDeleted, map[string]any{"deleted_at": at},
		"%s:v%d was deleted at %s", row.ObjectID, row.VersionIndex, at)
}

func (s *Store) ObjRead(ctx context.Context, req *ObjReadReq) (*ObjReadRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	version, err := s.resolveAlias(ctx, req.ProjectID, req.ObjectID, req.Digest)
	if err != nil {
		return nil, err
	}
	row, err := s.readVersion(ctx, s.db, req.ProjectID, req.ObjectID, version, !req.MetadataOnly)
	if err != nil {
		return nil, err
	}
	if row.DeletedAt != nil {
		return nil, deletedError(row)
	}
	res := &ObjReadRes{Obj: row.schema(req.MetadataOnly, true)}
	if req.IncludeTagsAndAliases {
		objs := []ObjSchema{res.Obj}
		if err := s.addTagsAndAliases(ctx, req.ProjectID, objs); err != nil {
			return nil, err
		}
		res.Obj = objs[0]
	}
	return res, nil
}

func (s *Store) ObjsQuery(ctx context.Context, req *ObjsQueryReq) (*ObjsQueryRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	var rows []objectRow
	q := s.db.NewSelect().Model(&rows).
		Column("project_id", "object_id", "digest", "version_index", "kind", "base_object_class", "leaf_object_class",
			"size_bytes", "pf_user_id", "created_at", "deleted_at").
		ColumnExpr(isLatestColumn, req.ProjectID).
		Where("o.project_id = ? AND o.deleted_at IS NULL", req.ProjectID)
	if !req.MetadataOnly {
		q = q.Column("val")
	}
	q = filterVersions(q, req.ProjectID, req.Filter)
	sorted := false
	for _, sb := range req.SortBy {
		dir := "ASC"
		if strings.EqualFold(sb.Direction, "desc") {
			dir = "DESC"
		}
		switch sb.Field {
		case "object_id", "created_at":
			q = q.OrderExpr("o." + sb.Field + " " + dir)
			sorted = true
		}
	}
	if !sorted {
		q = q.OrderExpr("o.created_at ASC")
	}
	q = q.OrderExpr("o.object_id ASC, o.version_index ASC")
	q = limitOffset(q, req.Limit, req.Offset)
	if err := q.Scan(ctx); err != nil {
		return nil, err
	}
	out := &ObjsQueryRes{Objs: make([]ObjSchema, len(rows))}
	for i := range rows {
		out.Objs[i] = rows[i].schema(req.MetadataOnly, req.IncludeStorageSize)
	}
	if req.IncludeTagsAndAliases {
		if err := s.addTagsAndAliases(ctx, req.ProjectID, out.Objs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// filterVersions adds f's conditions to a query of projectID's versions (alias o).
func filterVersions(q *bun.SelectQuery, projectID string, f *ObjectVersionFilter) *bun.SelectQuery {
	if f == nil {
		return q
	}
	if len(f.ObjectIDs) > 0 {
		q = q.Where("o.object_id IN (?)", bun.In(f.ObjectIDs))
	}
	if len(f.BaseObjectClasses) > 0 {
		q = q.Where("o.base_object_class IN (?)", bun.In(f.BaseObjectClasses))
	}
	if len(f.ExcludeBaseObjectClasses) > 0 {
		q = q.Where("(o.base_object_class IS NULL OR o.base_object_class NOT IN (?))", bun.In(f.ExcludeBaseObjectClasses))
	}
	if len(f.LeafObjectClasses) > 0 {
		q = q.Where("o.leaf_object_class IN (?)", bun.In(f.LeafObjectClasses))
	}
	if f.IsOp != nil {
		if *f.IsOp {
			q = q.Where("o.kind = ?", kindOp)
		} else {
			q = q.Where("o.kind = ?", kindObject)
		}
	}
	q = filterTagsAndAliases(q, projectID, f)
	if f.LatestOnly != nil && *f.LatestOnly {
		q = q.Where(`o.version_index = (SELECT MAX(l.version_index) FROM obj_versions AS l
			WHERE l.project_id = ? AND l.object_id = o.object_id AND l.deleted_at IS NULL)`, projectID)
	}
	return q
}

// maxDeleteDigests bounds one obj/delete.
const maxDeleteDigests = 100

func (s *Store) ObjDelete(ctx context.Context, req *ObjDeleteReq) (*ObjDeleteRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	if len(req.Digests) > maxDeleteDigests {
		return nil, weft.Errorf(ErrInvalidRequest, "Please delete %d or fewer digests", maxDeleteDigests)
	}
	var res *ObjDeleteRes
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		res, err = s.deleteVersions(ctx, tx, req)
		return err
	})
	return res, err
}

func (s *Store) deleteVersions(ctx context.Context, tx bun.Tx, req *ObjDeleteReq) (*ObjDeleteRes, error) {
	if err := s.lockObject(ctx, tx, req.ProjectID, req.ObjectID); err != nil {
		return nil, err
	}
	live := func() *bun.SelectQuery {
		return tx.NewSelect().Model((*objectRow)(nil)).Column("digest").
			Where("o.project_id = ? AND o.object_id = ? AND o.deleted_at IS NULL", req.ProjectID, req.ObjectID)
	}
	var digests []string
	if len(req.Digests) == 0 {
		if err := live().Scan(ctx, &digests); err != nil {
			return nil, err
		}
		if len(digests) == 0 {
			return nil, weft.Errorf(ErrNotFound, "Object %s not found", req.ObjectID)
		}
	} else {
		seen := map[string]bool{}
		for _, version := range req.Digests {
			var d string
			err := versionSelector(live(), version, true).Limit(1).Scan(ctx, &d)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if !seen[d] {
				seen[d] = true
				digests = append(digests, d)
			}
		}
		if len(digests) == 0 {
			return nil, weft.Errorf(ErrNotFound, "Object %s not found", req.ObjectID)
		}
		if len(digests) < len(req.Digests) {
			return nil, weft.Errorf(ErrNotFound, "Delete request contains %d digests, but found %d objects to delete", len(req.Digests), len(digests))
		}
	}
	_, err := tx.NewUpdate().Model((*objectRow)(nil)).Set("deleted_at = ?", s.now()).
		Where("project_id = ? AND object_id = ? AND digest IN (?) AND deleted_at IS NULL", req.ProjectID, req.ObjectID, bun.In(digests)).
		Exec(ctx)
	if err != nil {
		return nil, err
	}
	if err := removeTagsAndAliases(ctx, tx, req.ProjectID, req.ObjectID, digests); err != nil {
		return nil, err
	}
	if err := s.deletedChanged(ctx, tx, req.ProjectID, req.ObjectID); err != nil {
		return nil, err
	}
	return &ObjDeleteRes{NumDeleted: len(digests)}, nil
}

// limitOffset pages a query. SQLite needs a LIMIT before an OFFSET, so an
// offset alone comes with an unreachable limit.
func limitOffset(q *bun.SelectQuery, limit, offset *int) *bun.SelectQuery {
	if limit != nil {
		q = q.Limit(int64(*limit))
	}
	if offset != nil {
		if limit == nil {
			q = q.Limit(math.MaxInt64)
		}
		q = q.Offset(int64(*offset))
	}
	return q
}
