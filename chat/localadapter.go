package chat

// localAdapter is a trained checkpoint of a local model: its adapter
// directory ("" for the untrained step 0, which the base model serves) and
// the route whose engine applies it.
type localAdapter struct {
	path, base string
}

// localAdapterRoute routes a trained checkpoint over a local base model to
// that model's engine, which applies the adapter per request: every
// checkpoint of every model trained on it shares the engine's weights and
// forward passes.
func localAdapterRoute(base *Route, adapter LoRAAdapter) *Route {
	u := base.Upstreams[0]
	u.localAdapter = &localAdapter{path: adapter.Path, base: base.Name}
	r := *base
	r.Name, r.Upstreams, r.Fallbacks, r.metricsLabel = adapter.Name, []Upstream{u}, nil, base.Name
	return &r
}

// modelOf is the local model serving route r: its own, or its base model's
// for a trained checkpoint.
func (s *localServer) modelOf(r *Route) *localModel {
	if a := r.Upstreams[0].localAdapter; a != nil {
		return s.models[a.base]
	}
	return s.models[r.Name]
}
