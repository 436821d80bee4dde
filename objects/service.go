package objects

import (
	"context"
)

// Service stores versioned objects and ops, tables, files, and the v2 object
// family built on them. Every method is scoped to one project
// ("<entity>/<project>"); the acting user comes from the context
// ([weft.UserID]). Every write is one transaction: when a method returns
// without error, the data is committed.
type Service interface {
	// ObjCreate publishes a version of an object. The digest is computed over
	// the canonical JSON of the value (Python json.dumps(sort_keys=True)).
	// Publishing a digest that is already live is a no-op returning the same
	// digest and version_index; a deleted digest comes back to life with its
	// original version_index; a new digest gets the next version_index in
	// first-seen order. Safe under concurrent publishers on one database.
	// Errors: ErrInvalidObjectID (422), ErrDigestMismatch (409),
	// ErrNameTypeCollision and ErrInvalidRequest (400).
	ObjCreate(ctx context.Context, req *ObjCreateReq) (*ObjCreateRes, error)
	// ObjRead reads one version by digest, "latest" (the newest live version)
	// or "v<N>". Unknown → ErrNotFound; deleted → ErrObjectDeleted with deleted_at.
	// MetadataOnly returns every field but val ({}).
	ObjRead(ctx context.Context, req *ObjReadReq) (*ObjReadRes, error)
	// ObjsQuery lists live versions, ordered by created_at ascending unless
	// SortBy names object_id or created_at (ties by object_id, version_index).
	ObjsQuery(ctx context.Context, req *ObjsQueryReq) (*ObjsQueryRes, error)
	// ObjDelete soft-deletes live versions (see ObjDeleteReq). No live match, or
	// fewer matches than digests given → ErrNotFound. More than 100 digests → 400.
	ObjDelete(ctx context.Context, req *ObjDeleteReq) (*ObjDeleteRes, error)
	// ObjAddTags tags a live version (named by its digest); tags it already
	// has stay. ObjRemoveTags removes tags (absent ones are no error). A
	// tag is words of letters, digits, '_' and '-' separated by single
	// spaces, at most 256 characters; another is ErrInvalidRequest. No
	// live version with the digest → ErrNotFound.
	ObjAddTags(ctx context.Context, req *ObjTagsReq) (*TagsAliasesRes, error)
	ObjRemoveTags(ctx context.Context, req *ObjTagsReq) (*TagsAliasesRes, error)
	// ObjSetAliases points each alias at a live version, moving it from any
	// other version of the object; ObjReadReq.Digest may then name it. An
	// alias has at most 128 characters, no '/' or ':', and is neither
	// "latest" nor "v<N>" nor a digest's shape (ErrInvalidRequest).
	// ObjRemoveAliases removes aliases of the object. Deleting a version
	// removes its tags and aliases.
	ObjSetAliases(ctx context.Context, req *ObjSetAliasesReq) (*TagsAliasesRes, error)
	ObjRemoveAliases(ctx context.Context, req *ObjRemoveAliasesReq) (*TagsAliasesRes, error)
	// TagsList and AliasesList list a project's distinct tags and aliases;
	// the aliases include "latest" when the project has a live version.
	TagsList(ctx context.Context, projectID string) (*TagsListRes, error)
	AliasesList(ctx context.Context, projectID string) (*AliasesListRes, error)

	// RefsReadBatch resolves object and op refs, following their extra path
	// (key, attr, index; id reads a table row). Table and call refs, malformed
	// refs and more than 1000 refs → 400; an unknown object → ErrNotFound; a
	// deleted one → null.
	RefsReadBatch(ctx context.Context, req *RefsReadBatchReq) (*RefsReadBatchRes, error)

	// FileCreate stores a file under its content digest; storing the same bytes
	// again is a no-op. Larger than Config.MaxFileBytes → ErrFileTooLarge (413).
	FileCreate(ctx context.Context, req *FileCreateReq) (*FileCreateRes, error)
	// FileContent returns a file's bytes; unknown digest → ErrNotFound.
	FileContent(ctx context.Context, req *FileContentReq) (*FileContentRes, error)
	// FilesQueryStats sums the sizes of the project's distinct files.
	FilesQueryStats(ctx context.Context, req *FilesQueryStatsReq) (*FilesQueryStatsRes, error)
	// StorageSizes sums the stored sizes of the project's live object
	// versions, its table rows and its files, the object parts of Weave's
	// /project/stats.
	StorageSizes(ctx context.Context, projectID string) (*StorageSizes, error)

	// TableCreate stores a table: each row once per project and row digest,
	// the table as the ordered list of row digests. Creating the same table
	// again is a no-op returning the same digest.
	TableCreate(ctx context.Context, req *TableCreateReq) (*TableCreateRes, error)
	// TableUpdate applies append/pop/insert to a copy of the base table and
	// stores the result. Unknown base → ErrNotFound; index out of range → 400.
	TableUpdate(ctx context.Context, req *TableUpdateReq) (*TableUpdateRes, error)
	// TableCreateFromDigests makes a table of stored rows; an unknown row
	// digest → ErrNotFound.
	TableCreateFromDigests(ctx context.Context, req *TableCreateFromDigestsReq) (*TableCreateFromDigestsRes, error)
	// TableQuery returns rows in table order, or sorted by dotted member paths
	// in the database: per key numbers, strings, booleans, objects and arrays,
	// then missing values (that type order in either direction), each type by
	// value in the key's direction; ties in table order. The row-digest filter
	// applies first, then offset and limit. Unknown table → ErrNotFound; a
	// malformed sort path or a negative offset or limit → 400.
	TableQuery(ctx context.Context, req *TableQueryReq) (*TableQueryRes, error)
	// TableQueryStats returns a table's row count; unknown table → ErrNotFound.
	TableQueryStats(ctx context.Context, req *TableQueryStatsReq) (*TableQueryStatsRes, error)
	// TableQueryStatsBatch returns one entry per found table (unknown digests
	// and strings that are not digests are left out, duplicates collapse),
	// ordered by digest. StorageSizeBytes (the byte length of the stored JSON
	// of every row, duplicates counted each time) is set only when
	// IncludeStorageSize is true.
	TableQueryStatsBatch(ctx context.Context, req *TableQueryStatsBatchReq) (*TableQueryStatsBatchRes, error)

	V2
}

// V2 is the RESTful object family of /v2/{entity}/{project}/: ops,
// evaluations, datasets, scorers and models, each a plain object version (with
// files and tables) built the way the official clients build them, so that
// versioning, reads and deletes follow the ObjCreate/ObjRead/ObjDelete rules.
type V2 interface {
	// OpCreate stores the source as file obj.py and publishes the op
	// {_type: CustomWeaveType, weave_type: {type: Op}, files: {obj.py: <digest>}}
	// under MakeObjectID(name, "Op"). Missing source → a placeholder.
	OpCreate(ctx context.Context, req *OpCreateReq) (*V2CreateRes, error)
	// EvaluationCreate publishes three placeholder ops (<id>.evaluate,
	// <id>.predict_and_score, <id>.summarize) and the Evaluation object that
	// holds their digests, and returns its ref.
	EvaluationCreate(ctx context.Context, req *EvaluationCreateReq) (*EvaluationCreateRes, error)
	// DatasetCreate stores the rows as a table and publishes a Dataset object
	// whose rows field is the table ref.
	DatasetCreate(ctx context.Context, req *DatasetCreateReq) (*V2CreateRes, error)
	// ScorerCreate publishes <id>.score and <id>.summarize ops and a Scorer object referring to them.
	ScorerCreate(ctx context.Context, req *ScorerCreateReq) (*V2CreateRes, error)
	// ModelCreate stores the source as file obj.py and publishes a Model object
	// with the attributes merged into it.
	ModelCreate(ctx context.Context, req *ModelCreateReq) (*V2CreateRes, error)
	// V2Read reads one version of an object of the family (digest, "latest" or
	// "v<N>"). Unknown or of another family → ErrNotFound; deleted → ErrObjectDeleted.
	V2Read(ctx context.Context, req *V2ReadReq) (*V2Object, error)
	// V2List lists live versions of the family, by object_id ascending then
	// version_index descending, after offset and limit.
	V2List(ctx context.Context, req *V2ListReq) ([]V2Object, error)
	// V2Delete deletes versions of an object of the family, with ObjDelete's rules.
	V2Delete(ctx context.Context, req *V2DeleteReq) (*ObjDeleteRes, error)
}
