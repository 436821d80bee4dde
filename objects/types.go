package objects

import (
	"encoding/json"
	"time"
)

// ObjSchema is a stored object version, as obj/read and objs/query return it.
type ObjSchema struct {
	ProjectID       string     `json:"project_id"`
	ObjectID        string     `json:"object_id"`
	CreatedAt       time.Time  `json:"created_at"`
	DeletedAt       *time.Time `json:"deleted_at"`
	Digest          string     `json:"digest"`
	VersionIndex    int        `json:"version_index"`
	IsLatest        int        `json:"is_latest"`
	Kind            string     `json:"kind" enum:"op,object"`
	BaseObjectClass *string    `json:"base_object_class"`
	LeafObjectClass *string    `json:"leaf_object_class"`
	// Val is the stored value, exactly as it was sent ({} with MetadataOnly).
	Val       json.RawMessage `json:"val"`
	PfUserID  *string         `json:"pf_user_id"`
	SizeBytes *int64          `json:"size_bytes"`
	// Tags (sorted) and Aliases (sorted, "latest" on the newest live
	// version) are set when the request asks for them; null otherwise.
	Tags    []string `json:"tags" nullable:"true"`
	Aliases []string `json:"aliases" nullable:"true"`
}

// ObjCreateReq publishes a version of an object.
type ObjCreateReq struct {
	Obj ObjSchemaForInsert `json:"obj"`
}

// ObjSchemaForInsert is the object to publish.
type ObjSchemaForInsert struct {
	_         struct{} `additionalProperties:"true"`
	ProjectID string   `json:"project_id"`
	ObjectID  string   `json:"object_id"`
	// Val is any JSON value; its digest is computed over its canonical form.
	Val json.RawMessage `json:"val"`
	// BuiltinObjectClass names a server-known class the value must be (or be
	// converted to). SetBaseObjectClass is its deprecated alias.
	BuiltinObjectClass *string `json:"builtin_object_class,omitempty"`
	SetBaseObjectClass *string `json:"set_base_object_class,omitempty"`
	// ExpectedDigest, when set, must equal the digest the server computes.
	ExpectedDigest *string `json:"expected_digest,omitempty"`
}

// ObjCreateRes names the version stored.
type ObjCreateRes struct {
	Digest       string `json:"digest"`
	ObjectID     string `json:"object_id"`
	VersionIndex int    `json:"version_index"`
}

// ObjReadReq reads one version. Digest is a digest, "latest" or "v<N>".
type ObjReadReq struct {
	ProjectID    string `json:"project_id"`
	ObjectID     string `json:"object_id"`
	Digest       string `json:"digest"`
	MetadataOnly bool   `json:"metadata_only,omitempty"`
	// IncludeTagsAndAliases sets the version's tags and aliases. Digest may
	// also be an alias of the object.
	IncludeTagsAndAliases bool `json:"include_tags_and_aliases,omitempty"`
}

// ObjReadRes is the version read.
type ObjReadRes struct {
	Obj ObjSchema `json:"obj"`
}

// ObjectVersionFilter selects versions for ObjsQuery.
type ObjectVersionFilter struct {
	_                        struct{} `additionalProperties:"true"`
	BaseObjectClasses        []string `json:"base_object_classes,omitempty"`
	ExcludeBaseObjectClasses []string `json:"exclude_base_object_classes,omitempty"`
	LeafObjectClasses        []string `json:"leaf_object_classes,omitempty"`
	ObjectIDs                []string `json:"object_ids,omitempty"`
	IsOp                     *bool    `json:"is_op,omitempty"`
	LatestOnly               *bool    `json:"latest_only,omitempty"`
	// Tags keeps versions that carry any of them; Aliases keeps versions
	// that any of them names ("latest": the newest live version).
	Tags    []string `json:"tags,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
}

// SortBy is one sort key: a field and "asc" or "desc".
type SortBy struct {
	Field     string `json:"field"`
	Direction string `json:"direction,omitempty" enum:"asc,desc,ASC,DESC"`
}

// ObjsQueryReq lists live object versions.
type ObjsQueryReq struct {
	ProjectID string               `json:"project_id"`
	Filter    *ObjectVersionFilter `json:"filter,omitempty"`
	Limit     *int                 `json:"limit,omitempty" minimum:"0"`
	Offset    *int                 `json:"offset,omitempty" minimum:"0"`
	// SortBy may name object_id and created_at; other fields are ignored.
	SortBy             []SortBy `json:"sort_by,omitempty"`
	MetadataOnly       bool     `json:"metadata_only,omitempty"`
	IncludeStorageSize bool     `json:"include_storage_size,omitempty"`
	// IncludeTagsAndAliases sets each version's tags and aliases.
	IncludeTagsAndAliases bool `json:"include_tags_and_aliases,omitempty"`
}

// ObjsQueryRes is the page of versions.
type ObjsQueryRes struct {
	Objs []ObjSchema `json:"objs"`
}

// ObjDeleteReq soft-deletes versions: the given digests (digest, "latest" or
// "v<N>" forms; at most 100), or every live version when Digests is empty.
type ObjDeleteReq struct {
	ProjectID string   `json:"project_id"`
	ObjectID  string   `json:"object_id"`
	Digests   []string `json:"digests,omitempty"`
}

// ObjDeleteRes counts the versions deleted.
type ObjDeleteRes struct {
	NumDeleted int `json:"num_deleted"`
}

// RefsReadBatchReq reads the values named by refs (at most 1000).
type RefsReadBatchReq struct {
	Refs []string `json:"refs"`
}

// RefsReadBatchRes holds one value per ref, in order; null for a deleted object
// or a path that leads nowhere.
type RefsReadBatchRes struct {
	Vals []json.RawMessage `json:"vals"`
}

// FileCreateReq stores a file.
type FileCreateReq struct {
	ProjectID string
	// Name is the client's file name; the file is addressed by its digest only.
	Name           string
	Content        []byte
	ExpectedDigest string
}

// FileCreateRes is the file's digest.
type FileCreateRes struct {
	Digest string `json:"digest"`
}

// FileContentReq reads a file.
type FileContentReq struct {
	ProjectID string `json:"project_id"`
	Digest    string `json:"digest"`
}

// FileContentRes is the file's bytes.
type FileContentRes struct {
	Content []byte
}

// FilesQueryStatsReq asks for the storage used by a project's files.
type FilesQueryStatsReq struct {
	ProjectID string `json:"project_id"`
}

// FilesQueryStatsRes is the total size of the project's distinct files.
type FilesQueryStatsRes struct {
	TotalSizeBytes int64 `json:"total_size_bytes"`
}

// TableCreateReq creates a table.
type TableCreateReq struct {
	Table TableSchemaForInsert `json:"table"`
}

// TableSchemaForInsert is a table's rows; each row is a JSON object.
type TableSchemaForInsert struct {
	_              struct{}          `additionalProperties:"true"`
	ProjectID      string            `json:"project_id"`
	Rows           []json.RawMessage `json:"rows" type:"object"`
	ExpectedDigest *string           `json:"expected_digest,omitempty"`
}

// TableCreateRes names the table and its rows.
type TableCreateRes struct {
	Digest     string   `json:"digest"`
	RowDigests []string `json:"row_digests"`
}

// TableUpdateReq derives a new table from BaseDigest.
type TableUpdateReq struct {
	ProjectID  string            `json:"project_id"`
	BaseDigest string            `json:"base_digest"`
	Updates    []TableUpdateSpec `json:"updates"`
}

// TableUpdateSpec is exactly one of Append, Pop and Insert.
type TableUpdateSpec struct {
	Append *TableAppend `json:"append,omitempty"`
	Pop    *TablePop    `json:"pop,omitempty"`
	Insert *TableInsert `json:"insert,omitempty"`
}

// TableAppend adds a row at the end.
type TableAppend struct {
	Row json.RawMessage `json:"row" type:"object"`
}

// TablePop removes the row at Index.
type TablePop struct {
	Index int `json:"index"`
}

// TableInsert inserts a row before Index (Index = length appends).
type TableInsert struct {
	Index int             `json:"index"`
	Row   json.RawMessage `json:"row" type:"object"`
}

// TableUpdateRes names the new table and the rows the update added.
type TableUpdateRes struct {
	Digest            string   `json:"digest"`
	UpdatedRowDigests []string `json:"updated_row_digests"`
}

// TableCreateFromDigestsReq creates a table from rows already stored.
type TableCreateFromDigestsReq struct {
	ProjectID  string   `json:"project_id"`
	RowDigests []string `json:"row_digests"`
}

// TableCreateFromDigestsRes names the table.
type TableCreateFromDigestsRes struct {
	Digest string `json:"digest"`
}

// TableRowFilter restricts table/query to some row digests.
type TableRowFilter struct {
	RowDigests []string `json:"row_digests,omitempty"`
}

// TableQueryReq reads rows of a table.
type TableQueryReq struct {
	ProjectID string          `json:"project_id"`
	Digest    string          `json:"digest"`
	Filter    *TableRowFilter `json:"filter,omitempty"`
	Limit     *int            `json:"limit,omitempty" minimum:"0"`
	Offset    *int            `json:"offset,omitempty" minimum:"0"`
	// SortBy fields are dotted paths into the row (e.g. "input.score").
	SortBy []SortBy `json:"sort_by,omitempty"`
}

// TableRow is one row with its position in the table.
type TableRow struct {
	Digest        string          `json:"digest"`
	Val           json.RawMessage `json:"val"`
	OriginalIndex int             `json:"original_index"`
}

// TableQueryRes is the page of rows.
type TableQueryRes struct {
	Rows []TableRow `json:"rows"`
}

// TableQueryStatsReq asks for one table's row count.
type TableQueryStatsReq struct {
	ProjectID string `json:"project_id"`
	Digest    string `json:"digest"`
}

// TableQueryStatsRes is the row count.
type TableQueryStatsRes struct {
	Count int64 `json:"count"`
}

// TableQueryStatsBatchReq asks for statistics of several tables.
type TableQueryStatsBatchReq struct {
	ProjectID          string
	Digests            []string
	IncludeStorageSize bool
}

// TableStats is one table's statistics.
type TableStats struct {
	Count  int64  `json:"count"`
	Digest string `json:"digest"`
	// StorageSizeBytes is set only when asked for.
	StorageSizeBytes *int64 `json:"storage_size_bytes,omitempty"`
}

// TableQueryStatsBatchRes holds one entry per table found.
type TableQueryStatsBatchRes struct {
	Tables []TableStats `json:"tables"`
}

// Family names one kind of v2 object.
type Family string

// The v2 families (their path segment).
const (
	FamilyOps         Family = "ops"
	FamilyEvaluations Family = "evaluations"
	FamilyDatasets    Family = "datasets"
	FamilyScorers     Family = "scorers"
	FamilyModels      Family = "models"
)

// Families lists every v2 family.
var Families = []Family{FamilyOps, FamilyEvaluations, FamilyDatasets, FamilyScorers, FamilyModels}

// className is the base class of the family's objects ("" for ops, which are kind op).
func (f Family) className() string {
	switch f {
	case FamilyEvaluations:
		return "Evaluation"
	case FamilyDatasets:
		return "Dataset"
	case FamilyScorers:
		return "Scorer"
	case FamilyModels:
		return "Model"
	}
	return ""
}

// OpCreateReq creates an op version.
type OpCreateReq struct {
	ProjectID  string  `json:"-"`
	Name       *string `json:"name,omitempty"`
	SourceCode *string `json:"source_code,omitempty"`
}

// V2CreateRes names the version stored.
type V2CreateRes struct {
	Digest       string `json:"digest"`
	ObjectID     string `json:"object_id"`
	VersionIndex int    `json:"version_index"`
}

// EvaluationCreateReq creates an evaluation version.
type EvaluationCreateReq struct {
	ProjectID   string  `json:"-"`
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
	// Dataset is a dataset ref.
	Dataset string `json:"dataset"`
	// Scorers are scorer refs.
	Scorers        []string        `json:"scorers,omitempty"`
	Trials         *int            `json:"trials,omitempty" minimum:"1"`
	EvaluationName *string         `json:"evaluation_name,omitempty"`
	EvalAttributes json.RawMessage `json:"eval_attributes,omitempty" type:"object" nullable:"true"`
}

// EvaluationCreateRes names the version stored and gives its ref.
type EvaluationCreateRes struct {
	Digest        string `json:"digest"`
	ObjectID      string `json:"object_id"`
	VersionIndex  int    `json:"version_index"`
	EvaluationRef string `json:"evaluation_ref"`
}

// DatasetCreateReq creates a dataset version.
type DatasetCreateReq struct {
	ProjectID   string            `json:"-"`
	Name        string            `json:"name"`
	Description *string           `json:"description,omitempty"`
	Rows        []json.RawMessage `json:"rows" type:"object"`
}

// ScorerCreateReq creates a scorer version.
type ScorerCreateReq struct {
	ProjectID    string  `json:"-"`
	Name         string  `json:"name"`
	Description  *string `json:"description,omitempty"`
	OpSourceCode *string `json:"op_source_code,omitempty"`
}

// ModelCreateReq creates a model version.
type ModelCreateReq struct {
	ProjectID   string          `json:"-"`
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	SourceCode  *string         `json:"source_code,omitempty"`
	Attributes  json.RawMessage `json:"attributes,omitempty" type:"object" nullable:"true"`
}

// V2ReadReq reads one version.
type V2ReadReq struct {
	Family    Family
	ProjectID string
	ObjectID  string
	Digest    string
}

// V2ListReq lists versions.
type V2ListReq struct {
	Family    Family
	ProjectID string
	Limit     *int
	Offset    *int
}

// V2DeleteReq deletes versions (all live ones when Digests is empty).
type V2DeleteReq struct {
	Family    Family
	ProjectID string
	ObjectID  string
	Digests   []string
}

// V2Object is one version as the v2 routes show it: the common fields, plus
// the fields of its family (the others are left out).
type V2Object struct {
	ObjectID     string    `json:"object_id"`
	Digest       string    `json:"digest"`
	VersionIndex int       `json:"version_index"`
	CreatedAt    time.Time `json:"created_at"`
	// Code is an op's source ("" when the file cannot be read).
	Code *string `json:"code,omitempty"`
	// Name and Description of evaluations, datasets, scorers and models.
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
	// Evaluation fields.
	Dataset           *string  `json:"dataset,omitempty"`
	Scorers           []string `json:"scorers,omitempty"`
	Trials            *int     `json:"trials,omitempty"`
	EvaluationName    *string  `json:"evaluation_name,omitempty"`
	EvaluateOp        *string  `json:"evaluate_op,omitempty"`
	PredictAndScoreOp *string  `json:"predict_and_score_op,omitempty"`
	SummarizeOp       *string  `json:"summarize_op,omitempty"`
	// Rows is a dataset's table ref.
	Rows *string `json:"rows,omitempty"`
	// ScoreOp is a scorer's score op ref (SummarizeOp its summarize op).
	ScoreOp *string `json:"score_op,omitempty"`
	// SourceCode and Attributes of a model.
	SourceCode *string         `json:"source_code,omitempty"`
	Attributes json.RawMessage `json:"attributes,omitempty"`
}

// ObjTagsReq adds tags to one live version, or removes them from it: Weave's
// body of PUT /objs/{object_id}/versions/{digest}/tags and of POST
// …/tags/remove, with the path's object id and digest.
type ObjTagsReq struct {
	ProjectID string   `json:"project_id"`
	ObjectID  string   `json:"-"`
	Digest    string   `json:"-"`
	Tags      []string `json:"tags"`
}

// ObjSetAliasesReq points aliases of an object at one of its live versions:
// Weave's body of PUT /objs/{object_id}/aliases.
type ObjSetAliasesReq struct {
	ProjectID string   `json:"project_id"`
	ObjectID  string   `json:"-"`
	Digest    string   `json:"digest"`
	Aliases   []string `json:"aliases"`
}

// ObjRemoveAliasesReq removes aliases of an object: Weave's body of POST
// /objs/{object_id}/aliases/remove.
type ObjRemoveAliasesReq struct {
	ProjectID string   `json:"project_id"`
	ObjectID  string   `json:"-"`
	Aliases   []string `json:"aliases"`
}

// TagsAliasesRes is the empty answer of the tag and alias writes.
type TagsAliasesRes struct{}

// TagsListRes lists a project's distinct tags, sorted.
type TagsListRes struct {
	Tags []string `json:"tags"`
}

// AliasesListRes lists a project's distinct aliases, sorted.
type AliasesListRes struct {
	Aliases []string `json:"aliases"`
}
