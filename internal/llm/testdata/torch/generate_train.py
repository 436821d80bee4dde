#!/usr/bin/python3
"""Golden gradients and optimizer steps of LoRA training on the tiny models.

Run with Debian's python3 and python3-torch, after generate.py:

    /usr/bin/python3 internal/llm/testdata/torch/generate_train.py

For each tiny model of generate.py it draws a random LoRA adapter (every
attention and MLP projection, A and B both non-zero so that every factor has
a gradient), a batch of two sequences and writes train/<name>.json:

  - the log-probabilities of each sequence's next tokens at the positions
    the loss looks at (a random subset), and the entropy of the model's
    next-token distribution there (in float64, nats);
  - "sft": the gradients of the mean cross-entropy over those positions
    with respect to every A and B (PyTorch autograd through generate.py's
    reference forward pass, its linear layers given the LoRA delta
    scale·(x·Aᵀ)·Bᵀ);
  - "weighted": the gradients of Σ c·logprob for random per-position
    coefficients c (any loss that is a function of the log-probabilities
    composes with these);
  - "steps": two steps of torch.optim.AdamW, each after
    torch.nn.utils.clip_grad_norm_ (the pre-clip norm recorded): the first
    on the SFT gradients, the second on the weighted ones, and the factors
    after each.
"""

import json
import sys
import math
import os

import torch

import generate
import generate_lora

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["llama3-rope", "llama-linear-tied", "qwen2-bf16", "qwen3-f16", "mistral-swa", "gemma3-bf16", "gemma3-softcap"]
TARGETS = list(generate_lora.MODULES)
RANK, ALPHA = 4, 8.0
LENGTHS = [60, 9]  # past qwen2-bf16's max_position_embeddings (dynamic RoPE) and several blocks of attention's backward pass
ADAMW = {"lr": 0.01, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.1}


def load_model(name):
    d = os.path.join(HERE, name)
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    w = {}
    for file in sorted(os.listdir(d)):
        if file.endswith(".safetensors"):
            w.update(generate_lora.read_safetensors(os.path.join(d, file)))
    return cfg, w


def logprobs(cfg, w, adapter, seqs):
    """Per sequence, log p(target) at every position (0 where none)."""
    out = []
    for tokens, targets in seqs:
        cache = [None] * cfg["num_hidden_layers"]
        logits = generate.forward(cfg, w, generate.Rotary(cfg), tokens, 0, cache, adapter)
        lp = torch.log_softmax(logits, dim=-1)
        idx = torch.tensor([max(t, 0) for t in targets])
        mask = torch.tensor([t >= 0 for t in targets], dtype=torch.float32)
        out.append(lp.gather(1, idx[:, None])[:, 0] * mask)
    return out


def entropies(cfg, w, adapter, seqs):
    """Per sequence, the entropy of the next-token distribution at every
    position with a target (0 where none)."""
    out = []
    with torch.no_grad():
        for tokens, targets in seqs:
            cache = [None] * cfg["num_hidden_layers"]
            logits = generate.forward(cfg, w, generate.Rotary(cfg), tokens, 0, cache, adapter)
            lp = torch.log_softmax(logits.double(), dim=-1)
            mask = torch.tensor([t >= 0 for t in targets], dtype=torch.float64)
            out.append(-(lp.exp() * lp).sum(-1) * mask)
    return out


def grads_of(loss, params):
    for p in params:
        p.grad = None
    loss.backward()
    return [p.grad.clone() for p in params]


def write(name, seed):
    cfg, w = load_model(name)
    gen = torch.Generator().manual_seed(seed)
    shapes = generate_lora.dims(cfg)
    lora, params = {}, []
    for layer in range(cfg["num_hidden_layers"]):
        for t in TARGETS:
            inp, out = shapes[t]
            a = ((torch.rand(RANK, inp, generator=gen) * 2 - 1) / math.sqrt(inp)).requires_grad_()
            b = (torch.randn(out, RANK, generator=gen) * 0.2).requires_grad_()
            lora[f"model.layers.{layer}.{generate_lora.MODULES[t]}.{t}"] = (a, b)
            params += [a, b]
    adapter = {"factors": lora, "scaling": ALPHA / RANK}
    seqs = []
    for n in LENGTHS:
        tokens = torch.randint(0, cfg["vocab_size"], (n,), generator=gen).tolist()
        keep = torch.rand(n, generator=gen) < 0.6
        targets = [tokens[i + 1] if i + 1 < n and keep[i] else -1 for i in range(n)]
        seqs.append((tokens, targets))
    coefs = [torch.randn(n, generator=gen) for n in LENGTHS]

    lps = logprobs(cfg, w, adapter, seqs)
    count = sum(int((torch.tensor(t) >= 0).sum()) for _, t in seqs)
    sft = -sum(lp.sum() for lp in lps) / count
    sft_grads = grads_of(sft, params)
    weighted = sum((c * lp).sum() for c, lp in zip(coefs, logprobs(cfg, w, adapter, seqs)))
    weighted_grads = grads_of(weighted, params)

    def factors(values):
        out, i = {}, 0
        for layer in range(cfg["num_hidden_layers"]):
            for t in TARGETS:
                out[f"{layer}.{t}"] = {"A": values[i].flatten().tolist(), "B": values[i + 1].flatten().tolist()}
                i += 2
        return out

    golden = {
        "rank": RANK, "alpha": ALPHA,
        "sequences": [{"tokens": tok, "targets": tgt, "coefficients": c.tolist()} for (tok, tgt), c in zip(seqs, coefs)],
        "adapter": factors([p.detach() for p in params]),
        "logprobs": [lp.detach().tolist() for lp in lps],
        "entropies": [h.tolist() for h in entropies(cfg, w, adapter, seqs)],
        "sft_loss": float(sft),
        "sft": factors(sft_grads),
        "weighted": factors(weighted_grads),
    }
    # AdamW steps on copies of the factors, gradients clipped to half their
    # norm so that clipping changes them.
    opt_params = [p.detach().clone().requires_grad_() for p in params]
    opt = torch.optim.AdamW(opt_params, **ADAMW)
    steps = []
    for g in (sft_grads, weighted_grads):
        for p, gi in zip(opt_params, g):
            p.grad = gi.clone()
        norm = float(torch.sqrt(sum((gi.double() ** 2).sum() for gi in g)))
        max_norm = norm / 2
        pre = float(torch.nn.utils.clip_grad_norm_(opt_params, max_norm))
        opt.step()
        steps.append({"max_norm": max_norm, "grad_norm": pre, "factors": factors([p.detach() for p in opt_params])})
    golden["adamw"] = {"lr": ADAMW["lr"], "beta1": ADAMW["betas"][0], "beta2": ADAMW["betas"][1],
                       "eps": ADAMW["eps"], "weight_decay": ADAMW["weight_decay"]}
    golden["steps"] = steps
    os.makedirs(os.path.join(HERE, "train"), exist_ok=True)
    with open(os.path.join(HERE, "train", name + ".json"), "w") as out:
        json.dump(golden, out, separators=(",", ":"))


def main():
    # "generate_train.py NAME ..." writes only those goldens; each draws
    # from its own seed.
    only = set(sys.argv[1:])
    torch.manual_seed(0)
    for i, name in enumerate(MODELS):
        if not only or name in only:
            write(name, 100 + i)


if __name__ == "__main__":
    main()
