package httpapi

import (
	"context"
	"slices"

	"github.com/danielgtaylor/huma/v2"
)

// body is an operation input or output that is just a JSON body.
type body[T any] struct {
	Body T
}

// route registers one operation of the trace, feedback, objects and training
// families, whose handlers all take the same steps, written here once:
//
//  1. huma decodes the input I and validates it against its schema; a
//     malformed request never reaches the handler;
//  2. request turns the input into the service's request Req and names the
//     projects it touches, from its body, its path or a stored resource it
//     names (training looks the model or job up);
//  3. each project named is authorized, for writing when write is set;
//  4. run calls the service, and its answer is the response body; a write
//     that succeeded records its projects (one refused creates none).
//
// An error of any step is rendered by the one mapping in errors.go, in the
// Weave style of these families.
func route[I, Req, Res any](h *Handler, op huma.Operation, write bool,
	request func(context.Context, *I) (Req, []string, error), run func(context.Context, Req) (Res, error)) {
	routeOutput(h, op, write, request, func(ctx context.Context, req Req) (*body[Res], error) {
		res, err := run(ctx, req)
		if err != nil {
			return nil, err
		}
		return &body[Res]{Body: res}, nil
	})
}

// routeOutput is route for an answer that is not a JSON body: run returns the
// whole huma output (a stream, or bytes with their headers).
func routeOutput[I, Req, O any](h *Handler, op huma.Operation, write bool,
	request func(context.Context, *I) (Req, []string, error), run func(context.Context, Req) (*O, error)) {
	huma.Register(h.api, *h.operation(styleWeave, op), func(ctx context.Context, in *I) (*O, error) {
		req, projects, err := request(ctx, in)
		if err != nil {
			return nil, err
		}
		var distinct []string
		for _, projectID := range projects {
			if slices.Contains(distinct, projectID) {
				continue
			}
			if err := h.authorize(ctx, projectID, write); err != nil {
				return nil, err
			}
			distinct = append(distinct, projectID)
		}
		out, err := run(ctx, req)
		if err != nil || !write {
			return out, err
		}
		return out, h.written(ctx, distinct...)
	})
}

// fromBody is the request step of a route whose JSON body is the service's
// request and names the one project it touches.
func fromBody[Req any](project func(*Req) string) func(context.Context, *body[Req]) (*Req, []string, error) {
	return func(_ context.Context, in *body[Req]) (*Req, []string, error) {
		return &in.Body, []string{project(&in.Body)}, nil
	}
}

// byValue adapts a service method that takes its request by value to the run
// step of a route.
func byValue[Req, Res any](call func(context.Context, Req) (Res, error)) func(context.Context, *Req) (Res, error) {
	return func(ctx context.Context, req *Req) (Res, error) { return call(ctx, *req) }
}

// found is the run step of a route whose request step already read the
// answer (to learn its project).
func found[T any](_ context.Context, v T) (T, error) { return v, nil }

// one names the single project of a request.
func one(projectID string) []string { return []string{projectID} }
