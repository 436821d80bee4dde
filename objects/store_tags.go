package objects

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
)

// tagRow is one tag of a version in obj_tags.
type tagRow struct {
	bun.BaseModel `bun:"table:obj_tags,alias:t"`

	ProjectID string    `bun:"project_id,pk"`
	ObjectID  string    `bun:"object_id,pk"`
	Digest    string    `bun:"digest,pk"`
	Tag       string    `bun:"tag,pk"`
	CreatedBy *string   `bun:"created_by"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

// aliasRow is one alias of an object in obj_aliases.
type aliasRow struct {
	bun.BaseModel `bun:"table:obj_aliases,alias:a"`

	ProjectID string    `bun:"project_id,pk"`
	ObjectID  string    `bun:"object_id,pk"`
	Alias     string    `bun:"alias,pk"`
	Digest    string    `bun:"digest,notnull"`
	CreatedBy *string   `bun:"created_by"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

// Limits of tags and aliases, as Weave's server sets them (in characters).
const (
	maxTagLength   = 256
	maxAliasLength = 128
	latestAlias    = "latest"
)

// tagPattern is Weave's tag shape, ^[-\w]+( [-\w]+)*$ with Python's Unicode
// \w.
var tagPattern = regexp.MustCompile(`^[-\p{L}\p{N}_]+( [-\p{L}\p{N}_]+)*$`)

func checkTags(tags []string) error {
	for _, tag := range tags {
		if utf8.RuneCountInString(tag) > maxTagLength || !tagPattern.MatchString(tag) {
			return weft.Errorf(ErrInvalidRequest, "invalid tag %q: a tag is words of letters, digits, '_' and '-' separated by single spaces, at most %d characters", clip(tag), maxTagLength)
		}
	}
	return nil
}

func checkAliases(aliases []string) error {
	for _, alias := range aliases {
		_, isVersion := versionNumber(alias)
		switch {
		case alias == "" || utf8.RuneCountInString(alias) > maxAliasLength:
			return weft.Errorf(ErrInvalidRequest, "invalid alias %q: an alias has 1 to %d characters", clip(alias), maxAliasLength)
		case strings.ContainsAny(alias, "/:"):
			return weft.Errorf(ErrInvalidRequest, "invalid alias %q: an alias may not contain '/' or ':'", clip(alias))
		case alias == latestAlias || isVersion || digest.IsContentHash(alias):
			return weft.Errorf(ErrInvalidRequest, "invalid alias %q: 'latest', 'v<N>' and digests name versions already", clip(alias))
		}
	}
	return nil
}

// clip shortens text quoted back in an error.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// checkLiveVersion fails with ErrNotFound unless the object has a live
// version with the digest.
func checkLiveVersion(ctx context.Context, db bun.IDB, projectID, objectID, d string) error {
	exists, err := db.NewSelect().Model((*objectRow)(nil)).
		Where("o.project_id = ? AND o.object_id = ? AND o.digest = ? AND o.deleted_at IS NULL", projectID, objectID, d).Exists(ctx)
	if err != nil {
		return err
	}
	if !exists {
		return weft.Errorf(ErrNotFound, "Object version %s:%s not found", objectID, d)
	}
	return nil
}

// writeTags runs write in a transaction holding the object's lock (deletes
// take it too, so a tag or alias never outlives its version).
func (s *Store) writeTags(ctx context.Context, projectID, objectID string, write func(tx bun.Tx) error) (*TagsAliasesRes, error) {
	if err := checkProject(projectID); err != nil {
		return nil, err
	}
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := s.lockObject(ctx, tx, projectID, objectID); err != nil {
			return err
		}
		return write(tx)
	})
	if err != nil {
		return nil, err
	}
	return &TagsAliasesRes{}, nil
}

func (s *Store) ObjAddTags(ctx context.Context, req *ObjTagsReq) (*TagsAliasesRes, error) {
	if err := checkTags(req.Tags); err != nil {
		return nil, err
	}
	return s.writeTags(ctx, req.ProjectID, req.ObjectID, func(tx bun.Tx) error {
		if err := checkLiveVersion(ctx, tx, req.ProjectID, req.ObjectID, req.Digest); err != nil || len(req.Tags) == 0 {
			return err
		}
		rows := make([]tagRow, 0, len(req.Tags))
		for _, tag := range slices.Compact(slices.Sorted(slices.Values(req.Tags))) {
			rows = append(rows, tagRow{ProjectID: req.ProjectID, ObjectID: req.ObjectID, Digest: req.Digest, Tag: tag,
				CreatedBy: nullable(weft.UserID(ctx)), CreatedAt: s.now()})
		}
		_, err := tx.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx)
		return err
	})
}

func (s *Store) ObjRemoveTags(ctx context.Context, req *ObjTagsReq) (*TagsAliasesRes, error) {
	return s.writeTags(ctx, req.ProjectID, req.ObjectID, func(tx bun.Tx) error {
		if len(req.Tags) == 0 {
			return nil
		}
		_, err := tx.NewDelete().Model((*tagRow)(nil)).
			Where("project_id = ? AND object_id = ? AND digest = ? AND tag IN (?)", req.ProjectID, req.ObjectID, req.Digest, bun.In(req.Tags)).Exec(ctx)
		return err
	})
}

func (s *Store) ObjSetAliases(ctx context.Context, req *ObjSetAliasesReq) (*TagsAliasesRes, error) {
	if err := checkAliases(req.Aliases); err != nil {
		return nil, err
	}
	return s.writeTags(ctx, req.ProjectID, req.ObjectID, func(tx bun.Tx) error {
		if err := checkLiveVersion(ctx, tx, req.ProjectID, req.ObjectID, req.Digest); err != nil || len(req.Aliases) == 0 {
			return err
		}
		rows := make([]aliasRow, 0, len(req.Aliases))
		for _, alias := range slices.Compact(slices.Sorted(slices.Values(req.Aliases))) {
			rows = append(rows, aliasRow{ProjectID: req.ProjectID, ObjectID: req.ObjectID, Alias: alias, Digest: req.Digest,
				CreatedBy: nullable(weft.UserID(ctx)), CreatedAt: s.now()})
		}
		_, err := tx.NewInsert().Model(&rows).On("CONFLICT (project_id, object_id, alias) DO UPDATE").
			Set("digest = EXCLUDED.digest").Set("created_by = EXCLUDED.created_by").Set("created_at = EXCLUDED.created_at").Exec(ctx)
		return err
	})
}

func (s *Store) ObjRemoveAliases(ctx context.Context, req *ObjRemoveAliasesReq) (*TagsAliasesRes, error) {
	return s.writeTags(ctx, req.ProjectID, req.ObjectID, func(tx bun.Tx) error {
		if len(req.Aliases) == 0 {
			return nil
		}
		_, err := tx.NewDelete().Model((*aliasRow)(nil)).
			Where("project_id = ? AND object_id = ? AND alias IN (?)", req.ProjectID, req.ObjectID, bun.In(req.Aliases)).Exec(ctx)
		return err
	})
}

func (s *Store) TagsList(ctx context.Context, projectID string) (*TagsListRes, error) {
	if err := checkProject(projectID); err != nil {
		return nil, err
	}
	var tags []string
	if err := s.db.NewSelect().Model((*tagRow)(nil)).ColumnExpr("DISTINCT t.tag").Where("t.project_id = ?", projectID).Scan(ctx, &tags); err != nil {
		return nil, err
	}
	slices.Sort(tags) // by code point, as Python sorts, whatever the database's collation
	return &TagsListRes{Tags: append([]string{}, tags...)}, nil
}

func (s *Store) AliasesList(ctx context.Context, projectID string) (*AliasesListRes, error) {
	if err := checkProject(projectID); err != nil {
		return nil, err
	}
	var aliases []string
	if err := s.db.NewSelect().Model((*aliasRow)(nil)).ColumnExpr("DISTINCT a.alias").Where("a.project_id = ?", projectID).Scan(ctx, &aliases); err != nil {
		return nil, err
	}
	live, err := s.db.NewSelect().Model((*objectRow)(nil)).Where("o.project_id = ? AND o.deleted_at IS NULL", projectID).Exists(ctx)
	if err != nil {
		return nil, err
	}
	if live {
		aliases = append(aliases, latestAlias)
	}
	slices.Sort(aliases)
	return &AliasesListRes{Aliases: append([]string{}, aliases...)}, nil
}

// resolveAlias turns an alias of the object into the digest it names; a
// version that is "latest", "v<N>", a digest's shape or no alias is returned
// as it is.
func (s *Store) resolveAlias(ctx context.Context, projectID, objectID, version string) (string, error) {
	if _, isVersion := versionNumber(version); version == latestAlias || isVersion || digest.IsContentHash(version) {
		return version, nil
	}
	var d string
	err := s.db.NewSelect().Model((*aliasRow)(nil)).Column("a.digest").
		Where("a.project_id = ? AND a.object_id = ? AND a.alias = ?", projectID, objectID, version).Scan(ctx, &d)
	if errors.Is(err, sql.ErrNoRows) {
		return version, nil
	}
	return d, err
}

// addTagsAndAliases sets the tags and aliases of objs, versions of
// projectID: sorted lists, "latest" among the aliases of the newest live
// version.
func (s *Store) addTagsAndAliases(ctx context.Context, projectID string, objs []ObjSchema) error {
	if len(objs) == 0 {
		return nil
	}
	var ids []string
	for _, o := range objs {
		if !slices.Contains(ids, o.ObjectID) {
			ids = append(ids, o.ObjectID)
		}
	}
	var tags []tagRow
	if err := s.db.NewSelect().Model(&tags).Column("object_id", "digest", "tag").
		Where("t.project_id = ? AND t.object_id IN (?)", projectID, bun.In(ids)).Scan(ctx); err != nil {
		return err
	}
	var aliases []aliasRow
	if err := s.db.NewSelect().Model(&aliases).Column("object_id", "digest", "alias").
		Where("a.project_id = ? AND a.object_id IN (?)", projectID, bun.In(ids)).Scan(ctx); err != nil {
		return err
	}
	key := func(objectID, d string) string { return fmt.Sprint(len(objectID), ":", objectID, d) }
	tagsOf, aliasesOf := map[string][]string{}, map[string][]string{}
	for _, t := range tags {
		tagsOf[key(t.ObjectID, t.Digest)] = append(tagsOf[key(t.ObjectID, t.Digest)], t.Tag)
	}
	for _, a := range aliases {
		aliasesOf[key(a.ObjectID, a.Digest)] = append(aliasesOf[key(a.ObjectID, a.Digest)], a.Alias)
	}
	for i := range objs {
		o := &objs[i]
		k := key(o.ObjectID, o.Digest)
		o.Tags = append([]string{}, tagsOf[k]...)
		o.Aliases = append([]string{}, aliasesOf[k]...)
		if o.IsLatest == 1 && o.DeletedAt == nil {
			o.Aliases = append(o.Aliases, latestAlias)
		}
		slices.Sort(o.Tags)
		slices.Sort(o.Aliases)
	}
	return nil
}

// filterTagsAndAliases adds the tags and aliases conditions of an objs/query
// filter to a query of projectID's versions (alias o). The project is named
// as a value so that on a distributed database the statement stays on one
// shard.
func filterTagsAndAliases(q *bun.SelectQuery, projectID string, f *ObjectVersionFilter) *bun.SelectQuery {
	if len(f.Tags) > 0 {
		q = q.Where(`EXISTS (SELECT 1 FROM obj_tags AS t WHERE t.project_id = ? AND t.object_id = o.object_id AND t.digest = o.digest AND t.tag IN (?))`,
			projectID, bun.In(f.Tags))
	}
	if len(f.Aliases) == 0 {
		return q
	}
	named := slices.DeleteFunc(slices.Clone(f.Aliases), func(a string) bool { return a == latestAlias })
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		if len(named) > 0 {
			q = q.WhereOr(`EXISTS (SELECT 1 FROM obj_aliases AS a WHERE a.project_id = ? AND a.object_id = o.object_id AND a.digest = o.digest AND a.alias IN (?))`,
				projectID, bun.In(named))
		}
		if len(named) < len(f.Aliases) {
			q = q.WhereOr(`o.version_index = (SELECT l.version_index FROM obj_versions AS l WHERE l.project_id = ? AND l.object_id = o.object_id
				ORDER BY (l.deleted_at IS NULL) DESC, l.version_index DESC LIMIT 1)`, projectID)
		}
		return q
	})
}

// removeTagsAndAliases drops the tags and aliases of deleted versions.
func removeTagsAndAliases(ctx context.Context, tx bun.Tx, projectID, objectID string, digests []string) error {
	if _, err := tx.NewDelete().Model((*tagRow)(nil)).
		Where("project_id = ? AND object_id = ? AND digest IN (?)", projectID, objectID, bun.In(digests)).Exec(ctx); err != nil {
		return err
	}
	_, err := tx.NewDelete().Model((*aliasRow)(nil)).
		Where("project_id = ? AND object_id = ? AND digest IN (?)", projectID, objectID, bun.In(digests)).Exec(ctx)
	return err
}
