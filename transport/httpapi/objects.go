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

// objectsRoute registers one POST operation whose JSON body is a service
// request naming its project: authorize (write for writes), then call run.
func objectsRoute[Req, Res any](h *Handler, op huma.Operation, write bool, project func(*Req) string, run func(context.Context, *Req) (*Res, error)) {
	op.Method, op.Tags = http.MethodPost, []string{"objects"}
	huma.Register(h.api, *h.operation(styleWeave, op), func(ctx context.Context, in *body[Req]) (*body[Res], error) {
		if err := h.authorize(ctx, project(&in.Body), write); err != nil {
			return nil, err
		}
		out, err := run(ctx, &in.Body)
		if err != nil {
			return nil, err
		}
		return &body[Res]{Body: *out}, nil
	})
}

// FileCreateInput is the multipart form of /file/create: project_id, file and
// an optional expected_digest.
type FileCreateInput struct {
	RawBody multipart.Form
}

// FileContentOutput is a file's raw bytes.
type FileContentOutput struct {
	ContentType string `header:"Content-Type"`
	Body        []byte
}

// TableQueryStatsBatchBody accepts digests as a list or as one bare string.
type TableQueryStatsBatchBody struct {
	ProjectID string `json:"project_id"`
	// Digests is a list of table digests, or a single digest string.
	Digests            json.RawMessage `json:"digests,omitempty" doc:"a list of table digests (a single string is accepted too)" example:"[\"oPrcaOPh5FEkXAOCYGY03OLoPU1pCGwD7HFYnsffCy4\"]"`
	IncludeStorageSize bool            `json:"include_storage_size,omitempty"`
}

func (h *Handler) registerObjects() {
	svc := h.cfg.Objects
	post := func(id, path, summary string) huma.Operation {
		return huma.Operation{OperationID: id, Path: path, Summary: summary}
	}
	objectsRoute(h, post("obj-create", "/obj/create", "Publish a version of an object"), true,
		func(r *objects.ObjCreateReq) string { return r.Obj.ProjectID }, svc.ObjCreate)
	objectsRoute(h, post("obj-read", "/obj/read", "Read an object version by digest, latest or vN"), false,
		func(r *objects.ObjReadReq) string { return r.ProjectID }, svc.ObjRead)
	objectsRoute(h, post("objs-query", "/objs/query", "List live object versions"), false,
		func(r *objects.ObjsQueryReq) string { return r.ProjectID }, svc.ObjsQuery)
	objectsRoute(h, post("obj-delete", "/obj/delete", "Delete object versions"), true,
		func(r *objects.ObjDeleteReq) string { return r.ProjectID }, svc.ObjDelete)
	objectsRoute(h, post("files-query-stats", "/files/query_stats", "Total size of a project's files"), false,
		func(r *objects.FilesQueryStatsReq) string { return r.ProjectID }, svc.FilesQueryStats)
	objectsRoute(h, post("table-create", "/table/create", "Create a table"), true,
		func(r *objects.TableCreateReq) string { return r.Table.ProjectID }, svc.TableCreate)
	objectsRoute(h, post("table-update", "/table/update", "Derive a table by append, pop and insert"), true,
		func(r *objects.TableUpdateReq) string { return r.ProjectID }, svc.TableUpdate)
	objectsRoute(h, post("table-create-from-digests", "/table/create_from_digests", "Create a table from stored rows"), true,
		func(r *objects.TableCreateFromDigestsReq) string { return r.ProjectID }, svc.TableCreateFromDigests)
	objectsRoute(h, post("table-query", "/table/query", "Read rows of a table"), false,
		func(r *objects.TableQueryReq) string { return r.ProjectID }, svc.TableQuery)
	objectsRoute(h, post("table-query-stats", "/table/query_stats", "Row count of a table"), false,
		func(r *objects.TableQueryStatsReq) string { return r.ProjectID }, svc.TableQueryStats)
	objectsRoute(h, post("table-query-stats-batch", "/table/query_stats_batch", "Statistics of several tables"), false,
		func(r *TableQueryStatsBatchBody) string { return r.ProjectID },
		func(ctx context.Context, r *TableQueryStatsBatchBody) (*objects.TableQueryStatsBatchRes, error) {
			digests, err := digestList(r.Digests)
			if err != nil {
				return nil, err
			}
			return svc.TableQueryStatsBatch(ctx, &objects.TableQueryStatsBatchReq{ProjectID: r.ProjectID, Digests: digests, IncludeStorageSize: r.IncludeStorageSize})
		})

	huma.Register(h.api, *h.operation(styleWeave, huma.Operation{
		OperationID: "refs-read-batch", Method: http.MethodPost, Path: "/refs/read_batch", Tags: []string{"objects"},
		Summary: "Read the values named by object and op refs",
	}), func(ctx context.Context, in *body[objects.RefsReadBatchReq]) (*body[objects.RefsReadBatchRes], error) {
		seen := map[string]bool{}
		for _, s := range in.Body.Refs {
			r, err := objects.ParseObjectRef(s)
			if err != nil {
				return nil, err
			}
			if !seen[r.ProjectID()] {
				seen[r.ProjectID()] = true
				if err := h.authorize(ctx, r.ProjectID(), false); err != nil {
					return nil, err
				}
			}
		}
		out, err := svc.RefsReadBatch(ctx, &in.Body)
		if err != nil {
			return nil, err
		}
		return &body[objects.RefsReadBatchRes]{Body: *out}, nil
	})

	huma.Register(h.api, *h.operation(styleWeave, huma.Operation{
		OperationID: "file-create", Method: http.MethodPost, Path: "/file/create", Tags: []string{"objects"},
		Summary: "Store a file (multipart form: project_id, file, optional expected_digest)",
	}), func(ctx context.Context, in *FileCreateInput) (*body[objects.FileCreateRes], error) {
		req, err := fileCreateRequest(&in.RawBody)
		if err != nil {
			return nil, err
		}
		if err := h.authorize(ctx, req.ProjectID, true); err != nil {
			return nil, err
		}
		out, err := svc.FileCreate(ctx, req)
		if err != nil {
			return nil, err
		}
		return &body[objects.FileCreateRes]{Body: *out}, nil
	})

	huma.Register(h.api, *h.operation(styleWeave, huma.Operation{
		OperationID: "file-content", Method: http.MethodPost, Path: "/file/content", Tags: []string{"objects"},
		Summary: "Read a file's bytes",
	}), func(ctx context.Context, in *body[objects.FileContentReq]) (*FileContentOutput, error) {
		if err := h.authorize(ctx, in.Body.ProjectID, false); err != nil {
			return nil, err
		}
		out, err := svc.FileContent(ctx, &in.Body)
		if err != nil {
			return nil, err
		}
		return &FileContentOutput{ContentType: "application/octet-stream", Body: out.Content}, nil
	})

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

// V2ProjectInput names the project in the path of the v2 routes.
type V2ProjectInput struct {
	Entity  string `path:"entity"`
	Project string `path:"project"`
}

// V2CreateInput is a creation body for the project in the path.
type V2CreateInput[T any] struct {
	V2ProjectInput
	Body T
}

// V2ListInput pages a v2 listing.
type V2ListInput struct {
	V2ProjectInput
	Limit  int `query:"limit" minimum:"0" doc:"at most this many versions (0: no limit)"`
	Offset int `query:"offset" minimum:"0"`
}

// V2ObjectInput names one object (and a version) in the path.
type V2ObjectInput struct {
	V2ProjectInput
	ObjectID string `path:"object_id"`
}

// V2VersionInput names one version in the path.
type V2VersionInput struct {
	V2ObjectInput
	Digest string `path:"digest" doc:"a digest, latest or v<N>"`
}

// V2DeleteInput names the versions to delete (all live ones when no digests).
type V2DeleteInput struct {
	V2ObjectInput
	Digests []string `query:"digests" doc:"repeat for several; none deletes every live version"`
}

func (h *Handler) registerV2Family(family objects.Family) {
	svc := h.cfg.Objects
	base := "/v2/{entity}/{project}/" + string(family)
	tags := []string{"v2 " + string(family)}
	op := func(id, method, path, summary string) huma.Operation {
		return *h.operation(styleWeave, huma.Operation{OperationID: string(family) + "-" + id, Method: method, Path: path, Summary: summary, Tags: tags})
	}
	create := op("create", http.MethodPost, base, "Create a version of "+string(family))
	switch family {
	case objects.FamilyOps:
		v2Create(h, create, func(ctx context.Context, project string, r *objects.OpCreateReq) (*objects.V2CreateRes, error) {
			r.ProjectID = project
			return svc.OpCreate(ctx, r)
		})
	case objects.FamilyEvaluations:
		v2Create(h, create, func(ctx context.Context, project string, r *objects.EvaluationCreateReq) (*objects.EvaluationCreateRes, error) {
			r.ProjectID = project
			return svc.EvaluationCreate(ctx, r)
		})
	case objects.FamilyDatasets:
		v2Create(h, create, func(ctx context.Context, project string, r *objects.DatasetCreateReq) (*objects.V2CreateRes, error) {
			r.ProjectID = project
			return svc.DatasetCreate(ctx, r)
		})
	case objects.FamilyScorers:
		v2Create(h, create, func(ctx context.Context, project string, r *objects.ScorerCreateReq) (*objects.V2CreateRes, error) {
			r.ProjectID = project
			return svc.ScorerCreate(ctx, r)
		})
	case objects.FamilyModels:
		v2Create(h, create, func(ctx context.Context, project string, r *objects.ModelCreateReq) (*objects.V2CreateRes, error) {
			r.ProjectID = project
			return svc.ModelCreate(ctx, r)
		})
	}

	huma.Register(h.api, op("list", http.MethodGet, base, "List live versions of "+string(family)+" (JSON lines)"),
		func(ctx context.Context, in *V2ListInput) (*huma.StreamResponse, error) {
			project := projectOf(in.Entity, in.Project)
			if err := h.authorize(ctx, project, false); err != nil {
				return nil, err
			}
			req := &objects.V2ListReq{Family: family, ProjectID: project}
			if in.Limit > 0 {
				req.Limit = &in.Limit
			}
			if in.Offset > 0 {
				req.Offset = &in.Offset
			}
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

	huma.Register(h.api, op("read", http.MethodGet, base+"/{object_id}/versions/{digest}", "Read a version of one of the "+string(family)),
		func(ctx context.Context, in *V2VersionInput) (*body[objects.V2Object], error) {
			project := projectOf(in.Entity, in.Project)
			if err := h.authorize(ctx, project, false); err != nil {
				return nil, err
			}
			out, err := svc.V2Read(ctx, &objects.V2ReadReq{Family: family, ProjectID: project, ObjectID: in.ObjectID, Digest: in.Digest})
			if err != nil {
				return nil, err
			}
			return &body[objects.V2Object]{Body: *out}, nil
		})

	huma.Register(h.api, op("delete", http.MethodDelete, base+"/{object_id}", "Delete versions of one of the "+string(family)),
		func(ctx context.Context, in *V2DeleteInput) (*body[objects.ObjDeleteRes], error) {
			project := projectOf(in.Entity, in.Project)
			if err := h.authorize(ctx, project, true); err != nil {
				return nil, err
			}
			out, err := svc.V2Delete(ctx, &objects.V2DeleteReq{Family: family, ProjectID: project, ObjectID: in.ObjectID, Digests: in.Digests})
			if err != nil {
				return nil, err
			}
			return &body[objects.ObjDeleteRes]{Body: *out}, nil
		})
}

// v2Create registers a v2 creation route for body type Req.
func v2Create[Req, Res any](h *Handler, op huma.Operation, run func(ctx context.Context, project string, r *Req) (*Res, error)) {
	huma.Register(h.api, op, func(ctx context.Context, in *V2CreateInput[Req]) (*body[Res], error) {
		project := projectOf(in.Entity, in.Project)
		if err := h.authorize(ctx, project, true); err != nil {
			return nil, err
		}
		out, err := run(ctx, project, &in.Body)
		if err != nil {
			return nil, err
		}
		return &body[Res]{Body: *out}, nil
	})
}
