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
	UpsertBatch(ctx context.Context, req *trace.UpsertBatchReq) (*trace.UpsertBatchRes, error)
}

// Recorder is a chat.CallRecorder over the trace service: each call is
// written as a start and an end in one batch, as the acting user of the
// completion.
type Recorder struct {
	Trace CallWriter
}

var _ chat.CallRecorder = Recorder{}

// RecordCalls writes calls, one batch per acting user (the trace service
// takes the user from the context). The first failing item's error is
// returned after every batch was tried.
func (r Recorder) RecordCalls(ctx context.Context, calls []chat.Call) error {
	byUser := map[string][]trace.BatchItem{}
	var users []string
	for i := range calls {
		c := &calls[i]
		if _, seen := byUser[c.UserID]; !seen {
			users = append(users, c.UserID)
		}
		start := &trace.StartedCall{
			ProjectID: c.ProjectID, ID: c.ID, TraceID: c.TraceID, OpName: c.OpName,
			StartedAt: c.StartedAt, Inputs: c.Inputs, Attributes: c.Attributes,
		}
		if c.ThreadID != "" {
			start.ThreadID, start.TurnID = &c.ThreadID, &c.TurnID
		}
		end := &trace.EndedCall{ProjectID: c.ProjectID, ID: c.ID, EndedAt: c.EndedAt, Output: c.Output, Summary: c.Summary}
		if c.Exception != "" {
			exception := c.Exception
			end.Exception = &exception
		}
		byUser[c.UserID] = append(byUser[c.UserID],
			trace.BatchItem{Mode: trace.ModeStart, Start: start}, trace.BatchItem{Mode: trace.ModeEnd, End: end})
	}
	var firstErr error
	for _, user := range users {
		userCtx := weft.WithPrincipal(ctx, weft.Principal{UserID: user})
		res, err := r.Trace.UpsertBatch(userCtx, &trace.UpsertBatchReq{Batch: byUser[user]})
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
