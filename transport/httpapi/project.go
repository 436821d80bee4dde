package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
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
