package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

// errBadObjectsInput is a malformed objects request that huma's schema cannot
// catch (a multipart form without its fields, digests of the wrong type).
var errBadObjectsInput = weft.DefineError(weft.ErrValidation, "RequestValidationError", "invalid request")

// fileCreateInput is the multipart form of /file/create: project_id, file and
// an optional expected_digest.
type fileCreateInput struct {
	RawBody multipart.Form
}

// fileContentOutput is a file's raw bytes.
type fileContentOutput struct {
	ContentType string `header:"Content-Type"`
	Body        []byte
}

// tableQueryStatsBatchBody accepts digests as a list or as one bare string.
type tableQueryStatsBatchBody struct {
	ProjectID string `json:"project_id"`
	// Digests is a list of table digests, or a single digest string.
	Digests            json.RawMessage `json:"digests,omitempty" doc:"a list of table digests (a single string is accepted too)" example:"[\"oPrcaOPh5FEkXAOCYGY03OLoPU1pCGwD7HFYnsffCy4\"]"`
	IncludeStorageSize bool            `json:"include_storage_size,omitempty"`
}

func (h *Handler) registerObjects() {
	svc := h.cfg.Objects
	post := func(id, path, summary string) huma.Operation {
		return huma.Operation{OperationID: id, Method: http.MethodPost, Path: path, Summary: summary, Tags: []string{"objects"}}
	}
	route(h, post("obj-create", "/obj/create", "Publish a version of an object"), true,
		fromBody(func(r *objects.ObjCreateReq) string { return r.Obj.ProjectID }), svc.ObjCreate)
	route(h, post("obj-read", "/obj/read", "Read an object version by digest, latest or vN"), false,
		fromBody(func(r *objects.ObjReadReq) string { return r.ProjectID }), svc.ObjRead)
	route(h, post("objs-query", "/objs/query", "List live object versions"), false,
		fromBody(func(r *objects.ObjsQueryReq) string { return r.ProjectID }), svc.ObjsQuery)
	route(h, post("obj-delete", "/obj/delete", "Delete object versions"), true,
		fromBody(func(r *objects.ObjDeleteReq) string { return r.ProjectID }), svc.ObjDelete)
	h.registerObjectTags()
	route(h, post("files-query-stats", "/files/query_stats", "Total size of a project's files"), false,
		fromBody(func(r *objects.FilesQueryStatsReq) string { return r.ProjectID }), svc.FilesQueryStats)
	route(h, post("table-create", "/table/create", "Create a table"), true,
		fromBody(func(r *objects.TableCreateReq) string { return r.Table.ProjectID }), svc.TableCreate)
	route(h, post("table-update", "/table/update", "Derive a table by append, pop and insert"), true,
		fromBody(func(r *objects.TableUpdateReq) string { return r.ProjectID }), svc.TableUpdate)
	route(h, post("table-create-from-digests", "/table/create_from_digests", "Create a table from stored rows"), true,
		fromBody(func(r *objects.TableCreateFromDigestsReq) string { return r.ProjectID }), svc.TableCreateFromDigests)
	route(h, post("table-query", "/table/query", "Read rows of a table"), false,
		fromBody(func(r *objects.TableQueryReq) string { return r.ProjectID }), svc.TableQuery)
	tableStreamOp := post("table-query-stream", "/table/query_stream", "Read rows of a table; the answer is NDJSON, one row per line")
	tableStreamOp.Responses = h.errorResponses(styleWeave)
	tableStreamOp.Responses["200"] = &huma.Response{Description: "One row JSON object per line", Content: map[string]*huma.MediaType{"application/jsonl": {}}}
	routeOutput(h, tableStreamOp, false, fromBody(func(r *objects.TableQueryReq) string { return r.ProjectID }),
		func(ctx context.Context, req *objects.TableQueryReq) (*huma.StreamResponse, error) {
			// A bad request is answered with its status before the stream
			// starts: the rows are read first.
			res, err := svc.TableQuery(ctx, req)
			if err != nil {
				return nil, err
			}
			return &huma.StreamResponse{Body: func(hctx huma.Context) {
				out := newNDJSONStream(hctx)
				for i := 0; i < len(res.Rows) && err == nil; i++ {
					err = out.write(&res.Rows[i])
				}
				out.finish(ctx, err)
			}}, nil
		})
	route(h, post("table-query-stats", "/table/query_stats", "Row count of a table"), false,
		fromBody(func(r *objects.TableQueryStatsReq) string { return r.ProjectID }), svc.TableQueryStats)
	route(h, post("table-query-stats-batch", "/table/query_stats_batch", "Statistics of several tables"), false,
		func(_ context.Context, in *body[tableQueryStatsBatchBody]) (*objects.TableQueryStatsBatchReq, []string, error) {
			digests, err := digestList(in.Body.Digests)
			if err != nil {
				return nil, nil, err
			}
			return &objects.TableQueryStatsBatchReq{ProjectID: in.Body.ProjectID, Digests: digests, IncludeStorageSize: in.Body.IncludeStorageSize},
				one(in.Body.ProjectID), nil
		}, svc.TableQueryStatsBatch)
	route(h, post("refs-read-batch", "/refs/read_batch", "Read the values named by object and op refs"), false,
		func(_ context.Context, in *body[objects.RefsReadBatchReq]) (*objects.RefsReadBatchReq, []string, error) {
			projects := make([]string, len(in.Body.Refs))
			for i, s := range in.Body.Refs {
				r, err := objects.ParseObjectRef(s)
				if err != nil {
					return nil, nil, err
				}
				projects[i] = r.ProjectID()
			}
			return &in.Body, projects, nil
		}, svc.RefsReadBatch)
	// Weave's server registers the file routes under both spellings, and the
	// Python SDK uses /files/.
	for _, spelling := range []string{"file", "files"} {
		route(h, post(spelling+"-create", "/"+spelling+"/create", "Store a file (multipart form: project_id, file, optional expected_digest)"), true,
			func(_ context.Context, in *fileCreateInput) (*objects.FileCreateReq, []string, error) {
				req, err := fileCreateRequest(&in.RawBody)
				if err != nil {
					return nil, nil, err
				}
				return req, one(req.ProjectID), nil
			}, svc.FileCreate)
		routeOutput(h, post(spelling+"-content", "/"+spelling+"/content", "Read a file's bytes"), false,
			fromBody(func(r *objects.FileContentReq) string { return r.ProjectID }),
			func(ctx context.Context, req *objects.FileContentReq) (*fileContentOutput, error) {
				out, err := svc.FileContent(ctx, req)
				if err != nil {
					return nil, err
				}
				return &fileContentOutput{ContentType: "application/octet-stream", Body: out.Content}, nil
			})
	}

	for _, family := range objects.Families {
		h.registerV2Family(family)
	}
}

// digestList reads digests given as a list of strings, one bare string, or nothing.
func digestList(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, weft.Errorf(errBadObjectsInput, "digests must be a list of strings or a string")
	}
	return list, nil
}

func fileCreateRequest(form *multipart.Form) (*objects.FileCreateReq, error) {
	value := func(key string) string {
		if vs := form.Value[key]; len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	req := &objects.FileCreateReq{ProjectID: value("project_id"), ExpectedDigest: value("expected_digest")}
	if req.ProjectID == "" {
		return nil, weft.Errorf(errBadObjectsInput, "form field project_id is required")
	}
	files := form.File["file"]
	if len(files) != 1 {
		return nil, weft.Errorf(errBadObjectsInput, "form needs exactly one file field")
	}
	f, err := files[0].Open()
	if err != nil {
		return nil, weft.Errorf(errBadObjectsInput, "cannot read the file: %v", err)
	}
	defer f.Close()
	if req.Content, err = io.ReadAll(f); err != nil {
		return nil, weft.Errorf(errBadObjectsInput, "cannot read the file: %v", err)
	}
	req.Name = files[0].Filename
	return req, nil
}

// The v2 routes name the project in the path ({entity}/{project}).
type (
	// v2CreateInput is a creation body.
	v2CreateInput[T any] struct {
		Entity  string `path:"entity"`
		Project string `path:"project"`
		Body    T
	}
	// v2ListInput pages a listing.
	v2ListInput struct {
		Entity  string `path:"entity"`
		Project string `path:"project"`
		Limit   int    `query:"limit" minimum:"0" doc:"at most this many versions (0: no limit)"`
		Offset  int    `query:"offset" minimum:"0"`
	}
	// v2VersionInput names one version of an object.
	v2VersionInput struct {
		Entity   string `path:"entity"`
		Project  string `path:"project"`
		ObjectID string `path:"object_id"`
		Digest   string `path:"digest" doc:"a digest, latest or v<N>"`
	}
	// v2DeleteInput names the versions of an object to delete (all live
	// ones when no digests).
	v2DeleteInput struct {
		Entity   string   `path:"entity"`
		Project  string   `path:"project"`
		ObjectID string   `path:"object_id"`
		Digests  []string `query:"digests" doc:"repeat for several; none deletes every live version"`
	}
)

func (h *Handler) registerV2Family(family objects.Family) {
	svc := h.cfg.Objects
	base := "/v2/{entity}/{project}/" + string(family)
	op := func(id, method, path, summary string) huma.Operation {
		return huma.Operation{OperationID: string(family) + "-" + id, Method: method, Path: path, Summary: summary, Tags: []string{"v2 " + string(family)}}
	}
	create := op("create", http.MethodPost, base, "Create a version of "+string(family))
	switch family {
	case objects.FamilyOps:
		route(h, create, true, v2Body(func(r *objects.OpCreateReq) *string { return &r.ProjectID }), svc.OpCreate)
	case objects.FamilyEvaluations:
		route(h, create, true, v2Body(func(r *objects.EvaluationCreateReq) *string { return &r.ProjectID }), svc.EvaluationCreate)
	case objects.FamilyDatasets:
		route(h, create, true, v2Body(func(r *objects.DatasetCreateReq) *string { return &r.ProjectID }), svc.DatasetCreate)
	case objects.FamilyScorers:
		route(h, create, true, v2Body(func(r *objects.ScorerCreateReq) *string { return &r.ProjectID }), svc.ScorerCreate)
	case objects.FamilyModels:
		route(h, create, true, v2Body(func(r *objects.ModelCreateReq) *string { return &r.ProjectID }), svc.ModelCreate)
	}

	routeOutput(h, op("list", http.MethodGet, base, "List live versions of "+string(family)+" (JSON lines)"), false,
		func(_ context.Context, in *v2ListInput) (*objects.V2ListReq, []string, error) {
			req := &objects.V2ListReq{Family: family, ProjectID: projectOf(in.Entity, in.Project)}
			if in.Limit > 0 {
				req.Limit = &in.Limit
			}
			if in.Offset > 0 {
				req.Offset = &in.Offset
			}
			return req, one(req.ProjectID), nil
		},
		func(ctx context.Context, req *objects.V2ListReq) (*huma.StreamResponse, error) {
			items, err := svc.V2List(ctx, req)
			if err != nil {
				return nil, err
			}
			return &huma.StreamResponse{Body: func(hctx huma.Context) {
				_, w := humachi.Unwrap(hctx)
				w.Header().Set("Content-Type", "application/jsonl")
				enc := json.NewEncoder(w)
				for _, item := range items {
					if err := enc.Encode(item); err != nil {
						return
					}
				}
			}}, nil
		})
	route(h, op("read", http.MethodGet, base+"/{object_id}/versions/{digest}", "Read a version of one of the "+string(family)), false,
		func(_ context.Context, in *v2VersionInput) (*objects.V2ReadReq, []string, error) {
			project := projectOf(in.Entity, in.Project)
			return &objects.V2ReadReq{Family: family, ProjectID: project, ObjectID: in.ObjectID, Digest: in.Digest}, one(project), nil
		}, svc.V2Read)
	route(h, op("delete", http.MethodDelete, base+"/{object_id}", "Delete versions of one of the "+string(family)), true,
		func(_ context.Context, in *v2DeleteInput) (*objects.V2DeleteReq, []string, error) {
			project := projectOf(in.Entity, in.Project)
			return &objects.V2DeleteReq{Family: family, ProjectID: project, ObjectID: in.ObjectID, Digests: in.Digests}, one(project), nil
		}, svc.V2Delete)
}

// v2Body is the request step of a v2 creation route: the body is the service's
// request, and its project is the path's.
func v2Body[Req any](project func(*Req) *string) func(context.Context, *v2CreateInput[Req]) (*Req, []string, error) {
	return func(_ context.Context, in *v2CreateInput[Req]) (*Req, []string, error) {
		projectID := projectOf(in.Entity, in.Project)
		*project(&in.Body) = projectID
		return &in.Body, one(projectID), nil
	}
}
