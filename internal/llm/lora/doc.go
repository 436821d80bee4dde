// Package lora holds low-rank adapters (LoRA) of a decoder's linear
// projections: their configuration, their weights, the delta they add to a
// projection's output, and the standard adapter directory layout
// (adapter_config.json + adapter_model.safetensors with the tensor names
// other trainers and servers use), so an adapter trained here is served
// elsewhere and one trained elsewhere is served here.
//
// A target projection y = x·Wᵀ (+ b), W [out × in], gains two factors, A
// [r × in] and B [out × r], and becomes
//
//	y = x·Wᵀ (+ b) + scale · (x·Aᵀ)·Bᵀ
//
// with scale = alpha / r, or alpha / √r under rank-stabilised LoRA. A new
// adapter starts with A drawn uniformly from ±1/√in (Kaiming-uniform with
// a = √5, as the reference initialises a linear layer) and B zero, so it
// changes nothing until trained. Dropout, when configured, applies to x on
// the adapter's path during training only.
//
// The forward delta is two small products: Down computes the rank-r
// activations x·Aᵀ, Up adds scale · (x·Aᵀ)·Bᵀ. A backward pass reuses the
// same two steps: given the projection's input (which the model's recorded
// activations hold), Down recomputes x·Aᵀ, whose values the gradient of B
// needs.
package lora
