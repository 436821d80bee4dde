package chat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weftlabs/weft"
)

// Endpoints: the APIs a route may serve, named in a routing file's
// endpoints list and in GET /v1/models.
const (
	// EndpointChat is POST /v1/chat/completions.
	EndpointChat = "chat"
	// EndpointCompletions is POST /v1/completions (text completions).
	EndpointCompletions = "completions"
	// EndpointEmbeddings is POST /v1/embeddings.
	EndpointEmbeddings = "embeddings"
	// EndpointResponses is POST /v1/responses, answered through the
	// route's chat completions.
	EndpointResponses = "responses"
)

// endpointAPIs names each endpoint as an error names the API refused.
var endpointAPIs = map[string]string{
	EndpointChat:        "Chat Completions API (/v1/chat/completions)",
	EndpointCompletions: "Completions API (/v1/completions)",
	EndpointEmbeddings:  "Embeddings API (/v1/embeddings)",
	EndpointResponses:   "Responses API (/v1/responses)",
}

// DefaultEndpoints are what a route serves when the routing file names
// none: the generation APIs of an OpenAI-compatible server. A remote
// embedding model says endpoints: [embeddings].
var DefaultEndpoints = []string{EndpointChat, EndpointCompletions, EndpointResponses}

// prepareEndpoints fills a route's endpoints and checks them. An upstream
// kind's UpstreamKind.Prepare, run before, may have set the default of its
// routes or refused what they name.
func (route *Route) prepareEndpoints() error {
	if route.Endpoints == nil {
		route.Endpoints = slices.Clone(DefaultEndpoints)
		return nil
	}
	if len(route.Endpoints) == 0 {
		return fmt.Errorf("model %q: endpoints must name at least one of chat, completions, embeddings, responses", route.Name)
	}
	for i, e := range route.Endpoints {
		if _, ok := endpointAPIs[e]; !ok {
			return fmt.Errorf("model %q: endpoint %q must be chat, completions, embeddings or responses", route.Name, e)
		}
		if slices.Contains(route.Endpoints[:i], e) {
			return fmt.Errorf("model %q: endpoint %q is listed twice", route.Name, e)
		}
	}
	return nil
}

// serves reports whether the route serves endpoint. A route built for a
// trained model (no endpoints of its own) serves what its base serves, and
// generation only.
func (route *Route) serves(endpoint string) bool {
	if route.Endpoints == nil {
		return endpoint != EndpointEmbeddings
	}
	return slices.Contains(route.Endpoints, endpoint)
}

// checkEndpoint refuses a request for an endpoint the route does not
// serve, naming the endpoint and the ones it does, as vLLM refuses an API
// its model does not support (400).
func checkEndpoint(route *Route, endpoint string) error {
	if route.serves(endpoint) {
		return nil
	}
	return weft.WithFields(ErrUnsupportedEndpoint, map[string]any{"param": "model"},
		"The model `%s` does not support the %s; it serves: %s.", route.Name, endpointAPIs[endpoint], strings.Join(route.Endpoints, ", "))
}
