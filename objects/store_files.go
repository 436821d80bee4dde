package objects

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
)

type fileRow struct {
	bun.BaseModel `bun:"table:obj_files"`

	ProjectID string    `bun:"project_id,pk"`
	Digest    string    `bun:"digest,pk"`
	Content   []byte    `bun:"content,notnull"`
	SizeBytes int64     `bun:"size_bytes,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

func (s *Store) FileCreate(ctx context.Context, req *FileCreateReq) (*FileCreateRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	if int64(len(req.Content)) > s.cfg.MaxFileBytes {
		return nil, weft.Errorf(ErrFileTooLarge, "file of %d bytes is larger than the limit of %d bytes", len(req.Content), s.cfg.MaxFileBytes)
	}
	d := digest.Bytes(req.Content)
	if req.ExpectedDigest != "" && req.ExpectedDigest != d {
		return nil, weft.Errorf(ErrDigestMismatch, "expected digest %s but the server computed %s", req.ExpectedDigest, d)
	}
	if err := s.storeFile(ctx, s.db, req.ProjectID, d, req.Content); err != nil {
		return nil, err
	}
	return &FileCreateRes{Digest: d}, nil
}

// storeFile inserts a file unless its digest is already stored.
func (s *Store) storeFile(ctx context.Context, db bun.IDB, projectID, d string, content []byte) error {
	if content == nil {
		content = []byte{}
	}
	_, err := db.NewInsert().Model(&fileRow{ProjectID: projectID, Digest: d, Content: content, SizeBytes: int64(len(content)), CreatedAt: s.now()}).
		On("CONFLICT DO NOTHING").Exec(ctx)
	return err
}

func (s *Store) FileContent(ctx context.Context, req *FileContentReq) (*FileContentRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	content, err := s.fileContent(ctx, s.db, req.ProjectID, req.Digest)
	if err != nil {
		return nil, err
	}
	return &FileContentRes{Content: content}, nil
}

func (s *Store) fileContent(ctx context.Context, db bun.IDB, projectID, d string) ([]byte, error) {
	var content []byte
	err := db.NewSelect().Model((*fileRow)(nil)).Column("content").Where("project_id = ? AND digest = ?", projectID, d).Scan(ctx, &content)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.Errorf(ErrNotFound, "File %s not found", d)
	}
	if content == nil && err == nil {
		content = []byte{}
	}
	return content, err
}

func (s *Store) FilesQueryStats(ctx context.Context, req *FilesQueryStatsReq) (*FilesQueryStatsRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	var total int64
	err := s.db.NewSelect().Model((*fileRow)(nil)).ColumnExpr("COALESCE(SUM(size_bytes), 0)").Where("project_id = ?", req.ProjectID).Scan(ctx, &total)
	if err != nil {
		return nil, err
	}
	return &FilesQueryStatsRes{TotalSizeBytes: total}, nil
}
