#!/usr/bin/python3
"""Throughput of one LoRA training step in PyTorch on the CPU, for comparison.

    /usr/bin/python3 internal/llm/testdata/torch/bench_train.py --threads 2 --seqs 4 --len 128 --steps 4

A Llama of the 15M configuration (hidden 288, 6 layers, 6 heads, MLP 768,
vocabulary 32000, output tied to the embedding) with random frozen
weights, a rank-8 LoRA (alpha 16) on q, k, v, o, gate, up and down, and a
batch of random sequences whose every position is trained on the next
token. A step is the forward pass, the mean cross-entropy, the backward
pass (gradients of the LoRA factors only), clip_grad_norm_ and an AdamW
step — what weft's LoRA trainer does per step. The batch runs as one
[seqs × len] tensor program (batched matrix products, eager causal
attention). Prints one JSON object: trained tokens per second over the
timed steps, the median step's seconds and the process's peak resident
memory.
"""

import argparse
import json
import math
import resource
import time

import torch

DIM, LAYERS, HEADS, FFN, VOCAB, EPS, THETA = 288, 6, 6, 768, 32000, 1e-5, 10000.0
RANK, ALPHA = 8, 16.0


def lora_pair(gen, inp, out):
    a = ((torch.rand(RANK, inp, generator=gen) * 2 - 1) / math.sqrt(inp)).requires_grad_()
    b = (torch.randn(out, RANK, generator=gen) * 0.01).requires_grad_()
    return a, b


def build(gen):
    w = {"embed": torch.randn(VOCAB, DIM, generator=gen) * 0.02, "norm": torch.ones(DIM), "layers": []}
    lora = []
    for _ in range(LAYERS):
        ly = {"in_norm": torch.ones(DIM), "post_norm": torch.ones(DIM)}
        for name, inp, out in (("q", DIM, DIM), ("k", DIM, DIM), ("v", DIM, DIM), ("o", DIM, DIM),
                               ("gate", DIM, FFN), ("up", DIM, FFN), ("down", FFN, DIM)):
            ly[name] = torch.randn(out, inp, generator=gen) / math.sqrt(inp)
            ly[name + "_lora"] = lora_pair(gen, inp, out)
            lora += list(ly[name + "_lora"])
        w["layers"].append(ly)
    return w, lora


def rms_norm(x, weight):
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS))


def proj(x, ly, name):
    a, b = ly[name + "_lora"]
    return x @ ly[name].t() + (ALPHA / RANK) * ((x @ a.t()) @ b.t())


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def forward(w, ids, cos, sin, mask):
    bsz, t = ids.shape
    hd = DIM // HEADS
    x = w["embed"][ids]
    for ly in w["layers"]:
        h = rms_norm(x, ly["in_norm"])
        q = proj(h, ly, "q").view(bsz, t, HEADS, hd).transpose(1, 2)
        k = proj(h, ly, "k").view(bsz, t, HEADS, hd).transpose(1, 2)
        v = proj(h, ly, "v").view(bsz, t, HEADS, hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        scores = (q @ k.transpose(2, 3)) * hd ** -0.5 + mask
        attn = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(bsz, t, DIM)
        x = x + proj(attn, ly, "o")
        h = rms_norm(x, ly["post_norm"])
        x = x + proj(torch.nn.functional.silu(proj(h, ly, "gate")) * proj(h, ly, "up"), ly, "down")
    return rms_norm(x, w["norm"]) @ w["embed"].t()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seqs", type=int, default=4)
    ap.add_argument("--len", type=int, default=128)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(1)
    w, lora = build(gen)
    opt = torch.optim.AdamW(lora, lr=1e-4, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
    ids = torch.randint(0, VOCAB, (args.seqs, args.len + 1), generator=gen)
    inputs, targets = ids[:, :-1], ids[:, 1:]
    hd = DIM // HEADS
    inv = 1.0 / (THETA ** (torch.arange(0, hd, 2).float() / hd))
    freqs = torch.outer(torch.arange(args.len).float(), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.full((args.len, args.len), float("-inf")).triu(1)

    def step():
        logits = forward(w, inputs, cos, sin, mask)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(lora, 0.1)
        opt.step()

    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    tokens = args.seqs * args.len
    print(json.dumps({
        "tokens_per_second": tokens * len(times) / sum(times),
        "median_step_seconds": sorted(times)[len(times) // 2],
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "threads": args.threads,
    }))


if __name__ == "__main__":
    main()
