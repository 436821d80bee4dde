// Package chatstore connects the chat gateway to weft's own stores: Recorder
// writes traced completions into the trace service, Files keeps generated
// images in the objects service.
package chatstore

import (
	"context"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// CallWriter is the part of trace.Service the recorder uses.
type CallWriter interface {
	CallsComplete(ctx context.Context, req *trace.CallsCompleteReq) (*trace.UpsertBatchRes, error)
}

// Recorder is a chat.CallRecorder over the trace service: each call is
// written as a completed call of its project, as the acting user of the
// completion.
type Recorder struct {
	Trace CallWriter
}

var _ chat.CallRecorder = Recorder{}

// RecordCalls writes calls, one batch per acting user (the trace service
// takes the user from the context). The first failing item's error is
// returned after every batch was tried.
func (r Recorder) RecordCalls(ctx context.Context, calls []chat.Call) error {
	byUser := map[string][]trace.CompletedCall{}
	var users []string
	for i := range calls {
		c := &calls[i]
		if _, seen := byUser[c.UserID]; !seen {
			users = append(users, c.UserID)
		}
		call := trace.CompletedCall{ProjectID: c.ProjectID, ID: c.ID, TraceID: c.TraceID, OpName: c.OpName,
			StartedAt: c.StartedAt, EndedAt: c.EndedAt, Inputs: c.Inputs, Attributes: c.Attributes, Output: c.Output, Summary: c.Summary}
		if c.ThreadID != "" {
			call.ThreadID, call.TurnID = &c.ThreadID, &c.TurnID
		}
		if c.Exception != "" {
			exception := c.Exception
			call.Exception = &exception
		}
		byUser[c.UserID] = append(byUser[c.UserID], call)
	}
	var firstErr error
	for _, user := range users {
		userCtx := weft.WithPrincipal(ctx, weft.Principal{UserID: user})
		res, err := r.Trace.CallsComplete(userCtx, &trace.CallsCompleteReq{Batch: byUser[user]})
		if err == nil {
			for _, item := range res.Res {
				if item.Err != nil {
					err = item.Err
					break
				}
			}
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// FileCreator is the part of objects.Service the file store uses.
type FileCreator interface {
	FileCreate(ctx context.Context, req *objects.FileCreateReq) (*objects.FileCreateRes, error)
}

// Files is a chat.FileStore over the objects service.
type Files struct {
	Objects FileCreator
}

var _ chat.FileStore = Files{}

// StoreFile stores content as a file of the project.
func (f Files) StoreFile(ctx context.Context, projectID, name string, content []byte) (string, error) {
	res, err := f.Objects.FileCreate(ctx, &objects.FileCreateReq{ProjectID: projectID, Name: name, Content: content})
	if err != nil {
		return "", err
	}
	return res.Digest, nil
}
