package chat

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/weftlabs/weft"
)

// FileStore stores the content of a file in a project and returns its digest.
type FileStore interface {
	StoreFile(ctx context.Context, projectID, name string, content []byte) (digest string, err error)
}

const maxImageBytes = 64 << 20

// CreateImage generates images with the upstream routed for inputs.model
// (POST <url>/images/generations), stores each returned image (downloaded
// from its URL or decoded from base64) as a file in the project and replaces
// it by a reference to that file, and records a call when asked. Errors of the
// provider or of the request's inputs are returned inside the response; a
// model whose backend generates no images (not an [ImageGenerator]) is
// refused before any call, with ErrUnsupportedEndpoint.
func (s *Gateway) CreateImage(ctx context.Context, req ImageRequest) (ImageResult, error) {
	if err := s.checkGeneratesImages(ctx, req.Inputs); err != nil {
		return ImageResult{}, err
	}
	var call Call
	track := req.TrackLLMCall == nil || *req.TrackLLMCall
	if track && s.queue != nil {
		call = s.newCall(ctx, req.ProjectID, OpImageCreate, req.Inputs)
	}
	var inputs map[string]json.RawMessage
	var model, prompt string
	response, err := func() (json.RawMessage, error) {
		if err := json.Unmarshal(req.Inputs, &inputs); err != nil || inputs == nil {
			return nil, fmt.Errorf("inputs must be an object")
		}
		_ = json.Unmarshal(inputs["model"], &model)
		_ = json.Unmarshal(inputs["prompt"], &prompt)
		if model == "" || prompt == "" {
			return nil, fmt.Errorf("inputs.model and inputs.prompt are required")
		}
		return s.generateImages(ctx, req.ProjectID, model, inputs)
	}()
	if err != nil {
		msg, _ := json.Marshal(map[string]string{"error": err.Error()})
		response = msg
	}
	result := ImageResult{Response: response}
	if track && s.queue != nil {
		call.EndedAt = s.now()
		if err != nil {
			call.Exception = err.Error()
		}
		s.queue.enqueue(pendingCall{call: call, model: model, body: response})
		result.TraceCallID = &call.ID
	}
	return result, nil
}

// ImageGenerator is a [Backend] whose models generate images. The
// gateway's relay to remote servers is one: it forwards POST
// /images/generations. /image/create naming a model of a backend that is
// not one is refused with a 400.
type ImageGenerator interface {
	// GenerateImages sends an images/generations body (the model already
	// the upstream's) and returns the answer as it came.
	GenerateImages(ctx context.Context, t Target, body []byte) (*http.Response, error)
}

// GenerateImages forwards an images/generations request to the upstream.
func (rl relay) GenerateImages(ctx context.Context, t Target, body []byte) (*http.Response, error) {
	return rl.s.send(ctx, t.Upstream, "/images/generations", body)
}

// checkGeneratesImages refuses inputs naming a model whose backend
// generates no images. Inputs that name no model, or one not routed, are
// answered inside the response as before.
func (s *Gateway) checkGeneratesImages(ctx context.Context, inputs json.RawMessage) error {
	var head struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(inputs, &head) != nil || head.Model == "" {
		return nil
	}
	route, err := s.resolve(ctx, head.Model)
	if err != nil {
		return nil
	}
	if _, ok := s.backendOf(route.Upstreams[0]).(ImageGenerator); !ok {
		return weft.WithFields(ErrUnsupportedEndpoint, map[string]any{"param": "model"},
			"The model `%s` does not generate images: it serves text only.", route.Name)
	}
	return nil
}

func (s *Gateway) generateImages(ctx context.Context, projectID, model string, inputs map[string]json.RawMessage) (json.RawMessage, error) {
	route, err := s.resolve(ctx, model)
	if err != nil {
		return nil, err
	}
	u := route.Upstreams[pickUpstream(route.Upstreams, nil)]
	body := make(map[string]json.RawMessage, len(inputs)+1)
	for k, v := range inputs {
		body[k] = v
	}
	body["model"], _ = json.Marshal(u.Model)
	if _, ok := body["size"]; !ok {
		body["size"] = json.RawMessage(`"1024x1024"`)
	}
	raw, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, route.Timeout)
	defer cancel()
	gen, ok := s.backendOf(u).(ImageGenerator)
	if !ok {
		return nil, fmt.Errorf("the model %s does not generate images", model)
	}
	res, err := gen.GenerateImages(ctx, Target{Route: route, Upstream: u}, raw)
	if err != nil {
		return nil, fmt.Errorf("image provider unreachable: %v", err)
	}
	text, err := readAll(res.Body, s.cfg.MaxResponseBytes)
	res.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the image provider's answer: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(text, &out); err != nil {
		return nil, fmt.Errorf("image provider answered %d: %s", res.StatusCode, truncateBytes(text, 500))
	}
	if res.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s", providerMessage(out, res.StatusCode))
	}
	out["model"] = model
	out["usage"] = normaliseUsage(out["usage"])
	if data, ok := out["data"].([]any); ok && s.cfg.Files != nil {
		for i, item := range data {
			image, ok := item.(map[string]any)
			if !ok {
				continue
			}
			if err := s.storeImage(ctx, projectID, i, image); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(out)
}

// providerMessage extracts the provider's error text.
func providerMessage(out map[string]any, status int) string {
	if e, ok := out["error"].(map[string]any); ok {
		if msg, ok := e["message"].(string); ok {
			return msg
		}
	}
	if msg, ok := out["error"].(string); ok {
		return msg
	}
	return fmt.Sprintf("image provider answered %d", status)
}

// normaliseUsage maps the providers' token counts onto prompt_tokens,
// completion_tokens and total_tokens.
func normaliseUsage(v any) any {
	usage, ok := v.(map[string]any)
	if !ok {
		return v
	}
	first := func(keys ...string) float64 {
		for _, k := range keys {
			if n, ok := usage[k].(float64); ok {
				return n
			}
		}
		return 0
	}
	prompt := first("prompt_tokens", "input_tokens")
	completion := first("completion_tokens", "output_tokens")
	total := first("total_tokens")
	if total == 0 {
		total = prompt + completion
	}
	if completion == 0 {
		completion = total - prompt
	}
	return map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}
}

// storeImage replaces the url or b64_json of one image by a reference to the
// file holding its bytes.
func (s *Gateway) storeImage(ctx context.Context, projectID string, i int, image map[string]any) error {
	var content []byte
	mimetype := "image/png"
	switch {
	case image["b64_json"] != nil:
		encoded, _ := image["b64_json"].(string)
		decoded, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return fmt.Errorf("image %d: invalid base64 from the provider", i)
		}
		content = decoded
		delete(image, "b64_json")
	case image["url"] != nil:
		url, _ := image["url"].(string)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("image %d: bad url from the provider", i)
		}
		res, err := s.cfg.Client.Do(req)
		if err != nil {
			return fmt.Errorf("image %d: downloading: %v", i, err)
		}
		content, err = readAll(res.Body, maxImageBytes)
		res.Body.Close()
		if err != nil || res.StatusCode/100 != 2 {
			return fmt.Errorf("image %d: downloading answered %d", i, res.StatusCode)
		}
		if ct := res.Header.Get("Content-Type"); strings.HasPrefix(ct, "image/") {
			mimetype = ct
		}
		delete(image, "url")
	default:
		return nil
	}
	name := fmt.Sprintf("image-%d.%s", i, strings.TrimPrefix(mimetype, "image/"))
	digest, err := s.cfg.Files.StoreFile(ctx, projectID, name, content)
	if err != nil {
		return fmt.Errorf("image %d: storing: %v", i, err)
	}
	image["content"] = map[string]any{
		"_type": "CustomWeaveType", "weave_type": map[string]any{"type": "weave.type_wrappers.Content.content.Content"},
		"files": map[string]any{name: digest}, "mimetype": mimetype, "size": len(content),
	}
	return nil
}
