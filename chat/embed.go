package chat

import (
	"bytes"
	"context"
	"encoding/json"
)

// Embed answers a raw POST /v1/embeddings request, checked against
// Config.Embeddings' limits: by an embedding model run in-process, or
// forwarded to the upstreams of the model's route (which must serve
// EndpointEmbeddings) with its retries and fallbacks, the model renamed to
// the upstream's and everything else as sent. projectID is where the call
// is traced: its inputs, its usage, and its output without the vectors.
// Errors come before anything is relayed, as Complete's do.
func (s *Gateway) Embed(ctx context.Context, projectID string, raw []byte) (*Completion, error) {
	req, inputs, err := s.cfg.Embeddings.Parse(raw)
	if err != nil {
		return nil, err
	}
	var route *Route
	if !s.cfg.Embeddings.Serves(req.Model) {
		if route, err = s.resolve(ctx, req.Model); err != nil {
			return nil, err
		}
		if err := checkEndpoint(route, EndpointEmbeddings); err != nil {
			return nil, err
		}
	}
	c := s.newCompletion(ctx, projectID, OpEmbeddings, raw, req.Model)
	c.pending.output = embeddingsOutput
	if route == nil {
		res, err := s.cfg.Embeddings.EmbedInputs(ctx, req, inputs)
		if err != nil {
			c.fail(err.Error())
			return nil, err
		}
		body, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		c.take(&Answer{Status: 200, Body: body})
		return c, nil
	}
	members, _ := topLevelMembers(raw)
	err = s.forward(ctx, route, EndpointEmbeddings, c, func(_ Backend, t Target) (*Answer, error) {
		// Routes serving embeddings are remote (Route.prepareEndpoints).
		model, _ := json.Marshal(t.Upstream.Model)
		return s.remote.post(ctx, t, "/embeddings", patchObject(raw, members, map[string]json.RawMessage{"model": model}), false)
	})
	return c.answered(err)
}

// newCompletion is the answer to come of a request for model, traced into
// projectID as op with the request as its inputs.
func (s *Gateway) newCompletion(ctx context.Context, projectID, op string, raw []byte, model string) *Completion {
	c := &Completion{queue: s.queue, now: s.now}
	if s.queue != nil {
		c.pending = pendingCall{call: s.newCall(ctx, projectID, op, bytes.Clone(raw)), model: model}
	}
	return c
}

// embeddingsOutput is an embeddings answer as its call records it: each
// vector by its length (dimensions), not its values, which would make the
// trace of one request of 2,048 inputs tens of megabytes.
func embeddingsOutput(output json.RawMessage) json.RawMessage {
	var res struct {
		Object string `json:"object"`
		Model  string `json:"model"`
		Data   []struct {
			Object    string          `json:"object"`
			Index     int             `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage json.RawMessage `json:"usage,omitempty"`
	}
	if json.Unmarshal(output, &res) != nil {
		return output
	}
	type recorded struct {
		Object     string `json:"object"`
		Index      int    `json:"index"`
		Dimensions int    `json:"dimensions"`
	}
	data := make([]recorded, len(res.Data))
	for i, d := range res.Data {
		data[i] = recorded{Object: d.Object, Index: d.Index, Dimensions: vectorLength(d.Embedding)}
	}
	out, err := json.Marshal(struct {
		Object string          `json:"object"`
		Model  string          `json:"model"`
		Data   []recorded      `json:"data"`
		Usage  json.RawMessage `json:"usage,omitempty"`
	}{res.Object, res.Model, data, res.Usage})
	if err != nil {
		return output
	}
	return out
}

// vectorLength is the number of elements of an embedding as a list of
// numbers or as base64 (four bytes each).
func vectorLength(v json.RawMessage) int {
	var b64 string
	if json.Unmarshal(v, &b64) == nil {
		return len(b64) / 4 * 3 / 4
	}
	var values []json.RawMessage
	_ = json.Unmarshal(v, &values)
	return len(values)
}
