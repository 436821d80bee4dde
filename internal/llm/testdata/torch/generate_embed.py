#!/usr/bin/python3
"""Tiny embedding models in the sentence-transformers layout, and golden
pooled vectors.

Run with Debian's python3 and python3-torch / python3-numpy:

    /usr/bin/python3 internal/llm/testdata/torch/generate_embed.py

Each model directory holds config.json, model.safetensors, modules.json
and 1_Pooling/config.json (and 2_Normalize when the model normalises), as
sentence-transformers saves a model, and golden.json: for a few token
sequences, the pooled vector of each, at the full size and at every
Matryoshka size the golden lists.

The decoder is generate.py's PyTorch forward pass (the final norm's output,
transformers' last_hidden_state). Pooling is sentence-transformers'
Pooling module over one unpadded sequence: the last token's state
(pooling_mode_lasttoken, as Qwen3-Embedding), or the mean of every token's
(pooling_mode_mean_tokens). A Matryoshka size keeps the first n elements;
torch.nn.functional.normalize(p=2) then scales the vector to unit length
when the model has a Normalize module (truncation first, as a server
truncates a normalising model's vectors).
"""

import json
import os

import torch

import generate as g

HERE = os.path.dirname(os.path.abspath(__file__))


def write_embedding_model(name, cfg, seed, mode, normalize, bare, dtype, lengths, sizes):
    gen = torch.Generator().manual_seed(seed)
    w = g.random_weights(cfg, gen)
    w.pop("lm_head.weight", None)  # a sentence-embedding checkpoint has no output projection
    w = {k: v.to(g.DTYPES[dtype]).to(torch.float32) for k, v in w.items()}
    out = os.path.join(HERE, name)
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    # Qwen3-Embedding's checkpoint is the bare decoder (Qwen3Model):
    # embed_tokens.weight, layers.0..., norm.weight.
    stored = {(k.removeprefix("model.") if bare else k): v for k, v in w.items()}
    g.write_safetensors(os.path.join(out, "model.safetensors"), stored, dtype)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
    with open(os.path.join(out, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    pooling = {"word_embedding_dimension": cfg["hidden_size"], "pooling_mode_cls_token": False,
               "pooling_mode_mean_tokens": mode == "mean", "pooling_mode_max_tokens": False,
               "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
               "pooling_mode_lasttoken": mode == "lasttoken", "include_prompt": True}
    with open(os.path.join(out, "1_Pooling", "config.json"), "w") as f:
        json.dump(pooling, f, indent=2)

    rotary = g.Rotary(cfg)
    inputs = [torch.randint(0, cfg["vocab_size"], (n,), generator=gen).tolist() for n in lengths]
    vectors = {str(n): [] for n in [0] + sizes}
    with torch.no_grad():
        for ids in inputs:
            h = g.forward(cfg, w, rotary, ids, 0, [None] * cfg["num_hidden_layers"], hidden=True)
            pooled = h[-1] if mode == "lasttoken" else h.mean(dim=0)
            for n in [0] + sizes:
                v = pooled[:n] if n else pooled
                if normalize:
                    v = torch.nn.functional.normalize(v, p=2, dim=-1)
                vectors[str(n)].append(v.tolist())
    with open(os.path.join(out, "golden.json"), "w") as f:
        json.dump({"inputs": inputs, "vectors": vectors}, f, separators=(",", ":"))


def main():
    # Qwen3-Embedding: last-token pooling, normalised, bf16, a bare
    # checkpoint, Matryoshka sizes listed.
    write_embedding_model("qwen3-embed", g.config("Qwen3ForCausalLM", head_dim=16, tie_word_embeddings=True,
                                                  rope_theta=1000000.0, torch_dtype="bfloat16",
                                                  matryoshka_dimensions=[8, 16, 32]),
                          seed=11, mode="lasttoken", normalize=True, bare=True, dtype="BF16",
                          lengths=[1, 5, 12, 7, 30], sizes=[8, 16])
    # A Llama decoder with mean pooling, not normalised, any Matryoshka size.
    write_embedding_model("llama-mean-embed", g.config("LlamaForCausalLM", is_matryoshka=True),
                          seed=12, mode="mean", normalize=False, bare=False, dtype="F32",
                          lengths=[3, 9, 1, 16], sizes=[12])


if __name__ == "__main__":
    main()
