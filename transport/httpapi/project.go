package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft"
)

// projectStatsReq is Weave's body of POST /project/stats; each part is
// counted unless its flag is false.
type projectStatsReq struct {
	ProjectID                string `json:"project_id"`
	IncludeTraceStorageSize  *bool  `json:"include_trace_storage_size,omitempty"`
	IncludeObjectStorageSize *bool  `json:"include_object_storage_size,omitempty"`
	IncludeTableStorageSize  *bool  `json:"include_table_storage_size,omitempty"`
	IncludeFileStorageSize   *bool  `json:"include_file_storage_size,omitempty"`
}

// projectStatsRes is Weave's answer; a part not asked for is 0.
type projectStatsRes struct {
	TraceStorageSizeBytes   int64 `json:"trace_storage_size_bytes"`
	ObjectsStorageSizeBytes int64 `json:"objects_storage_size_bytes"`
	TablesStorageSizeBytes  int64 `json:"tables_storage_size_bytes"`
	FilesStorageSizeBytes   int64 `json:"files_storage_size_bytes"`
}

// registerProjectStats registers Weave's POST /project/stats: the bytes a
// project stores in calls, object versions, table rows and files.
func (h *Handler) registerProjectStats() {
	route(h, huma.Operation{OperationID: "project-stats", Method: http.MethodPost, Path: "/project/stats", Tags: []string{"project"},
		Summary: "Storage used by a project's calls, objects, tables and files"}, false,
		fromBody(func(r *projectStatsReq) string { return r.ProjectID }),
		func(ctx context.Context, req *projectStatsReq) (*projectStatsRes, error) {
			wanted := func(flag *bool) bool { return flag == nil || *flag }
			var out projectStatsRes
			if wanted(req.IncludeTraceStorageSize) {
				size, err := h.cfg.Trace.StorageSize(ctx, req.ProjectID)
				if err != nil {
					return nil, err
				}
				out.TraceStorageSizeBytes = size
			}
			if wanted(req.IncludeObjectStorageSize) || wanted(req.IncludeTableStorageSize) || wanted(req.IncludeFileStorageSize) {
				sizes, err := h.cfg.Objects.StorageSizes(ctx, req.ProjectID)
				if err != nil {
					return nil, err
				}
				if wanted(req.IncludeObjectStorageSize) {
					out.ObjectsStorageSizeBytes = sizes.Objects
				}
				if wanted(req.IncludeTableStorageSize) {
					out.TablesStorageSizeBytes = sizes.Tables
				}
				if wanted(req.IncludeFileStorageSize) {
					out.FilesStorageSizeBytes = sizes.Files
				}
			}
			return &out, nil
		})
}

// ttlSettingsReadReq and ttlSettingsUpdateReq are Weave's bodies of POST
// /project/ttl_settings/read and /update; ttlSettingsRes is their answer.
type (
	ttlSettingsReadReq struct {
		ProjectID string `json:"project_id"`
	}
	ttlSettingsUpdateReq struct {
		ProjectID     string `json:"project_id"`
		RetentionDays *int   `json:"retention_days,omitempty" doc:"null keeps calls until they are deleted, the only setting this server has"`
		WbUserID      string `json:"wb_user_id,omitempty" doc:"ignored"`
	}
	ttlSettingsRes struct {
		RetentionDays *int `json:"retention_days"`
	}
)

// errRetentionUnsupported refuses a retention period: calls are kept until
// they are deleted (/calls/delete).
var errRetentionUnsupported = weft.DefineError(weft.ErrInvalid, "InvalidRequest",
	"retention_days is not supported by this server: calls are kept until deleted with /calls/delete; only null is accepted")

// registerTTLSettings registers Weave's project TTL settings routes. This
// server keeps calls until they are deleted, so the setting reads null and
// may only be set to null.
func (h *Handler) registerTTLSettings() {
	route(h, huma.Operation{OperationID: "project-ttl-settings-read", Method: http.MethodPost, Path: "/project/ttl_settings/read", Tags: []string{"project"},
		Summary: "A project's call retention: always null (calls are kept until deleted)"}, false,
		fromBody(func(r *ttlSettingsReadReq) string { return r.ProjectID }),
		func(context.Context, *ttlSettingsReadReq) (*ttlSettingsRes, error) { return &ttlSettingsRes{}, nil })
	route(h, huma.Operation{OperationID: "project-ttl-settings-update", Method: http.MethodPost, Path: "/project/ttl_settings/update", Tags: []string{"project"},
		Summary: "Set a project's call retention: null is accepted, a number of days is a 400"}, true,
		fromBody(func(r *ttlSettingsUpdateReq) string { return r.ProjectID }),
		func(_ context.Context, req *ttlSettingsUpdateReq) (*ttlSettingsRes, error) {
			if req.RetentionDays != nil {
				return nil, errRetentionUnsupported
			}
			return &ttlSettingsRes{}, nil
		})
}

// projectsInfoReq is Weave's body of POST /service/projects_info;
// projectInfo is one entry of its answer.
type (
	projectsInfoReq struct {
		ProjectIDs []string `json:"project_ids" maxItems:"1000" doc:"entity/project ids"`
	}
	projectInfo struct {
		ExternalProjectID string `json:"external_project_id"`
		InternalProjectID string `json:"internal_project_id" doc:"the same id: this server names a project by entity/project everywhere"`
	}
)

// registerProjectsInfo registers Weave's POST /service/projects_info, which
// maps the projects a client names to the server's own ids. This server
// has no ids of its own: each project maps to itself, once the caller may
// read every project named.
func (h *Handler) registerProjectsInfo() {
	route(h, huma.Operation{OperationID: "projects-info", Method: http.MethodPost, Path: "/service/projects_info", Tags: []string{"project"},
		Summary: "The server's ids of projects (each project's own entity/project)"}, false,
		func(_ context.Context, in *body[projectsInfoReq]) (*projectsInfoReq, []string, error) {
			return &in.Body, in.Body.ProjectIDs, nil
		},
		func(_ context.Context, req *projectsInfoReq) ([]projectInfo, error) {
			out := make([]projectInfo, len(req.ProjectIDs))
			for i, id := range req.ProjectIDs {
				out[i] = projectInfo{ExternalProjectID: id, InternalProjectID: id}
			}
			return out, nil
		})
}
