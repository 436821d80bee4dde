package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft/objects"
)

// The inputs of Weave's tag and alias routes, which name the object (and the
// version) in the path and the project in the body or the query.
type (
	objTagsInput struct {
		ObjectID string `path:"object_id"`
		Digest   string `path:"digest"`
		Body     objects.ObjTagsReq
	}
	objSetAliasesInput struct {
		ObjectID string `path:"object_id"`
		Body     objects.ObjSetAliasesReq
	}
	objRemoveAliasesInput struct {
		ObjectID string `path:"object_id"`
		Body     objects.ObjRemoveAliasesReq
	}
	projectQueryInput struct {
		ProjectID string `query:"project_id" required:"true" doc:"entity/project"`
	}
)

// registerObjectTags registers Weave's tag and alias routes of object
// versions.
func (h *Handler) registerObjectTags() {
	svc := h.cfg.Objects
	op := func(id, method, path, summary string) huma.Operation {
		return huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary, Tags: []string{"objects"}}
	}
	tags := func(_ context.Context, in *objTagsInput) (*objects.ObjTagsReq, []string, error) {
		in.Body.ObjectID, in.Body.Digest = in.ObjectID, in.Digest
		return &in.Body, one(in.Body.ProjectID), nil
	}
	route(h, op("obj-add-tags", http.MethodPut, "/objs/{object_id}/versions/{digest}/tags", "Tag a live object version"), true, tags, svc.ObjAddTags)
	route(h, op("obj-remove-tags", http.MethodPost, "/objs/{object_id}/versions/{digest}/tags/remove", "Remove tags of an object version"), true, tags, svc.ObjRemoveTags)
	route(h, op("obj-set-aliases", http.MethodPut, "/objs/{object_id}/aliases", "Point aliases of an object at one of its live versions"), true,
		func(_ context.Context, in *objSetAliasesInput) (*objects.ObjSetAliasesReq, []string, error) {
			in.Body.ObjectID = in.ObjectID
			return &in.Body, one(in.Body.ProjectID), nil
		}, svc.ObjSetAliases)
	route(h, op("obj-remove-aliases", http.MethodPost, "/objs/{object_id}/aliases/remove", "Remove aliases of an object"), true,
		func(_ context.Context, in *objRemoveAliasesInput) (*objects.ObjRemoveAliasesReq, []string, error) {
			in.Body.ObjectID = in.ObjectID
			return &in.Body, one(in.Body.ProjectID), nil
		}, svc.ObjRemoveAliases)
	project := func(_ context.Context, in *projectQueryInput) (string, []string, error) {
		return in.ProjectID, one(in.ProjectID), nil
	}
	route(h, op("tags-list", http.MethodGet, "/tags", "A project's tags"), false, project, svc.TagsList)
	route(h, op("aliases-list", http.MethodGet, "/aliases", "A project's aliases"), false, project, svc.AliasesList)
}
