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

// localEndpoints are what a model run in-process can serve (embedding
// models are served in-process by chat/embeddings: Config.Embeddings).
var localEndpoints = []string{EndpointChat, EndpointResponses}

// prepareEndpoints fills a route's endpoints and checks them.
func (route *Route) prepareEndpoints() error {
	if route.Endpoints == nil {
		route.Endpoints = slices.Clone(DefaultEndpoints)
		if route.Upstreams[0].Kind == KindLocal {
			route.Endpoints = slices.Clone(localEndpoints)
		}
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
		if route.Upstreams[0].Kind == KindLocal && !slices.Contains(localEndpoints, e) {
			return fmt.Errorf("model %q: a local model serves %s; embedding models run in-process are served with -embedding-model",
				route.Name, strings.Join(localEndpoints, ", "))
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
