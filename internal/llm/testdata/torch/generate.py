#!/usr/bin/python3
"""Tiny random-weight models in the Hugging Face layout, and golden logits.

Run with Debian's python3 and python3-torch / python3-numpy:

    /usr/bin/python3 internal/llm/testdata/torch/generate.py

For each model below it writes <name>/config.json, the weights
(model.safetensors, or shards and model.safetensors.index.json) and
<name>/golden.json: the logits of every position of a prompt, then the
logits of a few greedy decode steps run with a KV cache.

The reference forward pass is plain PyTorch written after the Llama, Qwen2,
Qwen3, Mistral and Gemma 3 modeling code of Hugging Face transformers and
its rope utilities: RMSNorm in float32 with the weight multiplied last,
rotate_half RoPE from inv_freq @ position_ids, repeat_kv, eager causal
attention with the softmax in float32, the SwiGLU MLP. Gemma 3
(modeling_gemma3.py) normalises by (1 + weight) in float32, scales the
embedding rows by sqrt(hidden_size) in the embedding's dtype, gates its MLP
with gelu(approximate="tanh"), normalises the attention's and the MLP's
outputs before their residual sums, scales scores by
query_pre_attn_scalar**-0.5, caps scores and logits with tanh when asked,
and alternates sliding-window layers (rope_local_base_freq, no scaling) with
global ones (rope_theta and rope_scaling). Safetensors files are written by
hand (an 8-byte header length, the JSON header, the raw little-endian
bytes).
"""

import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------- RoPE


def default_inv_freq(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def rope_parameters(cfg, seq_len=None):
    """(inv_freq, attention_scaling) as transformers' ROPE_INIT_FUNCTIONS."""
    base = cfg["rope_theta"]
    dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    rs = cfg.get("rope_scaling")
    kind = (rs or {}).get("rope_type", (rs or {}).get("type", "default"))
    if kind == "default":
        return default_inv_freq(base, dim), 1.0
    if kind == "linear":
        return default_inv_freq(base, dim) / rs["factor"], 1.0
    if kind == "dynamic":
        max_pos = cfg["max_position_embeddings"]
        factor = rs["factor"]
        if seq_len is not None and seq_len > max_pos:
            seq_len = torch.tensor(seq_len)
            base = base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
        return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)), 1.0
    if kind == "llama3":
        inv_freq = default_inv_freq(base, dim)
        factor = rs["factor"]
        low_freq_factor = rs["low_freq_factor"]
        high_freq_factor = rs["high_freq_factor"]
        old_context_len = rs["original_max_position_embeddings"]
        low_freq_wavelen = old_context_len / low_freq_factor
        high_freq_wavelen = old_context_len / high_freq_factor
        wavelen = 2 * math.pi / inv_freq
        inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
        is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        return torch.where(is_medium, smoothed, inv_freq_llama), 1.0
    if kind == "yarn":
        factor = rs.get("factor")
        original = rs.get("original_max_position_embeddings") or cfg["max_position_embeddings"]
        if factor is None:
            factor = cfg["max_position_embeddings"] / original

        def get_mscale(scale, mscale=1):
            return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

        attention_factor = rs.get("attention_factor")
        if attention_factor is None:
            if rs.get("mscale") and rs.get("mscale_all_dim"):
                attention_factor = float(get_mscale(factor, rs["mscale"]) / get_mscale(factor, rs["mscale_all_dim"]))
            else:
                attention_factor = get_mscale(factor)
        beta_fast = rs.get("beta_fast") or 32
        beta_slow = rs.get("beta_slow") or 1

        def correction_dim(rot):
            return (dim * math.log(original / (rot * 2 * math.pi))) / (2 * math.log(base))

        low, high = correction_dim(beta_fast), correction_dim(beta_slow)
        if rs.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
        extrapolation = 1.0 / pos_freqs
        interpolation = 1.0 / (factor * pos_freqs)
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        extra_factor = 1 - ramp
        inv_freq = interpolation * (1 - extra_factor) + extrapolation * extra_factor
        return inv_freq, attention_factor
    raise ValueError(kind)


class Rotary:
    """LlamaRotaryEmbedding with dynamic_rope_update's growth of inv_freq."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.inv_freq, self.scaling = rope_parameters(cfg)
        rs = cfg.get("rope_scaling") or {}
        self.dynamic = rs.get("rope_type", rs.get("type")) == "dynamic"
        self.max_seq_len_cached = cfg["max_position_embeddings"]

    def __call__(self, position_ids):
        if self.dynamic:
            seq_len = int(torch.max(position_ids)) + 1
            if seq_len > self.max_seq_len_cached:
                self.inv_freq, self.scaling = rope_parameters(self.cfg, seq_len)
                self.max_seq_len_cached = seq_len
        inv = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        pos = position_ids[:, None, :].float()
        freqs = (inv.float() @ pos.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos() * self.scaling, emb.sin() * self.scaling


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


# ---------------------------------------------------------------- model


def rms_norm(x, weight, eps):
    dtype = x.dtype
    x = x.to(torch.float32)
    variance = x.pow(2).mean(-1, keepdim=True)
    x = x * torch.rsqrt(variance + eps)
    return weight * x.to(dtype)


def gemma_rms_norm(x, weight, eps):
    # Gemma3RMSNorm: (x * rsqrt(mean(x^2) + eps)) * (1 + w), in float32.
    out = x.float()
    out = out * torch.rsqrt(out.pow(2).mean(-1, keepdim=True) + eps)
    return (out * (1.0 + weight.float())).type_as(x)


GEMMA3 = "Gemma3ForCausalLM"


def sliding_layers(cfg):
    """Which layers have a sliding window: Mistral's every layer, Gemma 3's
    layer_types (or every sliding_window_pattern-th layer global)."""
    arch, n = cfg["architectures"][0], cfg["num_hidden_layers"]
    if arch == "MistralForCausalLM":
        return [True] * n
    if arch != GEMMA3:
        return [False] * n
    if cfg.get("layer_types"):
        return [t == "sliding_attention" for t in cfg["layer_types"]]
    pattern = cfg.get("sliding_window_pattern", 6)
    return [bool((i + 1) % pattern) for i in range(n)]


def local_rope_config(cfg):
    """The configuration Gemma 3's sliding layers rotate by: the default
    scheme at rope_local_base_freq (None for other models)."""
    if cfg["architectures"][0] != GEMMA3:
        return None
    local = dict(cfg)
    local["rope_theta"] = cfg.get("rope_local_base_freq", 10000.0)
    local["rope_scaling"] = None
    return local


def softcap(x, cap):
    return torch.tanh(x / cap) * cap if cap else x


def linear(x, w, prefix, adapter=None):
    y = torch.nn.functional.linear(x, w[prefix + ".weight"], w.get(prefix + ".bias"))
    if adapter is not None and prefix in adapter["factors"]:
        # A LoRA layer as the reference library computes it (no dropout at
        # inference): base(x) + lora_B(lora_A(x)) * scaling.
        a, b = adapter["factors"][prefix]
        y = y + torch.nn.functional.linear(torch.nn.functional.linear(x, a), b) * adapter["scaling"]
    return y


def repeat_kv(x, n_rep):
    b, h, t, d = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, h, n_rep, t, d).reshape(b, h * n_rep, t, d)


def forward(cfg, w, rotary, ids, start, cache, adapter=None, local_rotary=None, hidden=False):
    """Logits of every new token; cache is a list of (k, v) per layer.
    With hidden, the final norm's output of every new token instead (the
    decoder's last_hidden_state, which embedding models pool).

    adapter, if given, is {"factors": {projection prefix: (A, B)},
    "scaling": float}, a LoRA adapter applied to those projections.
    local_rotary, for Gemma 3, rotates the sliding-window layers (default:
    Rotary(local_rope_config(cfg)))."""
    arch = cfg["architectures"][0]
    gemma = arch == GEMMA3
    eps = cfg["rms_norm_eps"]
    norm = gemma_rms_norm if gemma else rms_norm
    heads, kv_heads = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or cfg["hidden_size"] // heads
    t = len(ids)
    position_ids = torch.arange(start, start + t)[None, :]
    cos, sin = rotary(position_ids)
    if gemma:
        local_rotary = local_rotary or Rotary(local_rope_config(cfg))
        local_cos, local_sin = local_rotary(position_ids)
    x = w["model.embed_tokens.weight"][torch.tensor(ids)][None]
    if gemma:
        # Gemma3TextScaledWordEmbedding: the scale in the embedding's dtype.
        dtype = DTYPES[{"float32": "F32", "float16": "F16", "bfloat16": "BF16"}[cfg.get("torch_dtype", "float32")]]
        x = x * torch.tensor(cfg["hidden_size"] ** 0.5).to(dtype).float()
    total = start + t
    # The sliding window: a query sees its own position and the
    # sliding_window - 1 before it (transformers' sliding_window_overlay:
    # kv_idx > q_idx - sliding_window).
    masks = {}
    for sliding in (False, True):
        window = cfg.get("sliding_window") if sliding else None
        mask = torch.full((t, total), torch.finfo(torch.float32).min)
        for i in range(t):
            lo = max(0, start + i + 1 - window) if window else 0
            mask[i, lo: start + i + 1] = 0
        masks[sliding] = mask
    slides = sliding_layers(cfg)
    scaling = cfg["query_pre_attn_scalar"] ** -0.5 if gemma else hd ** -0.5
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        residual = x
        h = norm(x, w[p + "input_layernorm.weight"], eps)
        q = linear(h, w, p + "self_attn.q_proj", adapter).view(1, t, heads, hd)
        k = linear(h, w, p + "self_attn.k_proj", adapter).view(1, t, kv_heads, hd)
        v = linear(h, w, p + "self_attn.v_proj", adapter).view(1, t, kv_heads, hd)
        if arch == "Qwen3ForCausalLM" or gemma:
            q = norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        if gemma and slides[layer]:
            q, k = apply_rotary(q, k, local_cos, local_sin)
        else:
            q, k = apply_rotary(q, k, cos, sin)
        if cache[layer] is not None:
            k = torch.cat((cache[layer][0], k), dim=2)
            v = torch.cat((cache[layer][1], v), dim=2)
        cache[layer] = (k, v)
        k, v = repeat_kv(k, heads // kv_heads), repeat_kv(v, heads // kv_heads)
        scores = torch.matmul(q, k.transpose(2, 3)) * scaling
        scores = softcap(scores, cfg.get("attn_logit_softcapping"))
        scores = scores + masks[slides[layer]]
        probs = torch.nn.functional.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        attn = torch.matmul(probs, v).transpose(1, 2).reshape(1, t, heads * hd)
        out = linear(attn, w, p + "self_attn.o_proj", adapter)
        if gemma:
            out = norm(out, w[p + "post_attention_layernorm.weight"], eps)
            x = residual + out
            residual = x
            h = norm(x, w[p + "pre_feedforward_layernorm.weight"], eps)
        else:
            x = residual + out
            residual = x
            h = norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = linear(h, w, p + "mlp.gate_proj", adapter)
        up = linear(h, w, p + "mlp.up_proj", adapter)
        act = torch.nn.functional.gelu(gate, approximate="tanh") if gemma else torch.nn.functional.silu(gate)
        out = linear(act * up, w, p + "mlp.down_proj", adapter)
        if gemma:
            out = norm(out, w[p + "post_feedforward_layernorm.weight"], eps)
        x = residual + out
    x = norm(x, w["model.norm.weight"], eps)
    if hidden:
        return x[0]
    head = w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else w["lm_head.weight"]
    return softcap(torch.nn.functional.linear(x, head)[0], cfg.get("final_logit_softcapping"))


# ---------------------------------------------------------------- weights


def random_weights(cfg, gen):
    d, f = cfg["hidden_size"], cfg["intermediate_size"]
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or d // heads
    arch = cfg["architectures"][0]
    qkv_bias = arch == "Qwen2ForCausalLM" or cfg.get("attention_bias", False)
    w = {}

    def mat(name, out, inp):
        w[name] = torch.randn(out, inp, generator=gen) / math.sqrt(inp)

    def vec(name, n, mean=0.0, std=0.1):
        w[name] = mean + std * torch.randn(n, generator=gen)

    # Gemma 3's norms store offsets from 1 (its RMSNorm multiplies by 1 + w),
    # and its embedding rows are scaled by sqrt(hidden_size) on input: drawn
    # at 1/sqrt(hidden_size), they enter the layers at unit scale, and the
    # tied output's logits stay as peaked as a real model's.
    gemma = arch == GEMMA3
    norm_mean = 0.0 if gemma else 1.0
    w["model.embed_tokens.weight"] = torch.randn(cfg["vocab_size"], d, generator=gen) / (math.sqrt(d) if gemma else 1)
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        vec(p + "input_layernorm.weight", d, norm_mean)
        vec(p + "post_attention_layernorm.weight", d, norm_mean)
        if gemma:
            vec(p + "pre_feedforward_layernorm.weight", d, norm_mean)
            vec(p + "post_feedforward_layernorm.weight", d, norm_mean)
        for name, out in (("q_proj", heads * hd), ("k_proj", kv * hd), ("v_proj", kv * hd)):
            mat(p + "self_attn." + name + ".weight", out, d)
            if qkv_bias:
                vec(p + "self_attn." + name + ".bias", out)
        mat(p + "self_attn.o_proj.weight", d, heads * hd)
        if cfg.get("attention_bias", False):
            vec(p + "self_attn.o_proj.bias", d)
        if arch == "Qwen3ForCausalLM" or gemma:
            vec(p + "self_attn.q_norm.weight", hd, norm_mean)
            vec(p + "self_attn.k_norm.weight", hd, norm_mean)
        mat(p + "mlp.gate_proj.weight", f, d)
        mat(p + "mlp.up_proj.weight", f, d)
        mat(p + "mlp.down_proj.weight", d, f)
    vec("model.norm.weight", d, norm_mean)
    if not cfg.get("tie_word_embeddings"):
        mat("lm_head.weight", cfg["vocab_size"], d)
    return w


DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def tensor_bytes(t):
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().astype("<i2").tobytes()
    return t.contiguous().numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def write_safetensors(path, tensors, dtype):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        data = tensor_bytes(tensors[name].to(DTYPES[dtype]))
        header[name] = {"dtype": dtype, "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little"))
        f.write(raw)
        for b in blobs:
            f.write(b)
    return offset


def write_model(name, cfg, seed, dtype="F32", shards=1, prompt_len=7, decode_steps=4):
    gen = torch.Generator().manual_seed(seed)
    w = random_weights(cfg, gen)
    # The reference runs on the stored values: rounded to the dtype, widened.
    w = {k: v.to(DTYPES[dtype]).to(torch.float32) for k, v in w.items()}
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    names = sorted(w)
    if shards == 1:
        write_safetensors(os.path.join(out, "model.safetensors"), w, dtype)
    else:
        weight_map, total = {}, 0
        for s in range(shards):
            file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            part = {n: w[n] for n in names[s::shards]}
            total += write_safetensors(os.path.join(out, file), part, dtype)
            weight_map.update({n: file for n in part})
        with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)

    ids = torch.randint(0, cfg["vocab_size"], (prompt_len,), generator=gen).tolist()
    cache = [None] * cfg["num_hidden_layers"]
    rotary = Rotary(cfg)
    with torch.no_grad():
        prompt_logits = forward(cfg, w, rotary, ids, 0, cache)
        steps, pos, token = [], prompt_len, int(prompt_logits[-1].argmax())
        for _ in range(decode_steps):
            logits = forward(cfg, w, rotary, [token], pos, cache)[0]
            steps.append({"token": token, "position": pos, "logits": logits.tolist()})
            token, pos = int(logits.argmax()), pos + 1
    golden = {"prompt": ids, "prompt_logits": prompt_logits.tolist(), "decode": steps}
    with open(os.path.join(out, "golden.json"), "w") as f:
        json.dump(golden, f, separators=(",", ":"))


def config(arch, **kw):
    cfg = {
        "architectures": [arch],
        "model_type": {"LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
                       "MistralForCausalLM": "mistral", GEMMA3: "gemma3_text"}[arch],
        "vocab_size": 96,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 64,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    }
    if arch == GEMMA3:
        del cfg["hidden_act"]
        cfg["hidden_activation"] = "gelu_pytorch_tanh"
    cfg.update(kw)
    return cfg


LLAMA3_SCALING = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 8192}


def main():
    # "generate.py NAME ..." writes only those models; each draws from its
    # own generator, so the others stay as they are.
    only = set(sys.argv[1:])

    def write(name, *args, **kw):
        if not only or name in only:
            write_model(name, *args, **kw)

    torch.manual_seed(0)
    write("llama3-rope", config("LlamaForCausalLM", rope_theta=500000.0, rope_scaling=LLAMA3_SCALING), seed=1)
    write("llama3-rope-sharded", config("LlamaForCausalLM", rope_theta=500000.0, rope_scaling=LLAMA3_SCALING),
          seed=1, shards=2)
    write("llama-linear-tied", config("LlamaForCausalLM", head_dim=16, attention_bias=True,
                                      rope_scaling={"type": "linear", "factor": 2.0},
                                      tie_word_embeddings=True), seed=2)
    write("qwen2-bf16", config("Qwen2ForCausalLM", max_position_embeddings=16, torch_dtype="bfloat16",
                               rope_scaling={"rope_type": "dynamic", "factor": 2.0}),
          seed=3, dtype="BF16", prompt_len=12, decode_steps=6)
    write("qwen3-f16", config("Qwen3ForCausalLM", head_dim=16, max_position_embeddings=128, rope_theta=1000000.0,
                              torch_dtype="float16", tie_word_embeddings=True,
                              rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                            "original_max_position_embeddings": 32}),
          seed=4, dtype="F16")
    write("mistral-swa", config("MistralForCausalLM", sliding_window=4), seed=5, prompt_len=9, decode_steps=4)
    # Gemma 3: two sliding-window layers of 4 positions and a global one
    # with linear scaling, queries scaled by 1/sqrt(24) (not head_dim 16),
    # bf16 weights (so the embedding scale sqrt(32) is rounded to bf16).
    write("gemma3-bf16", config(GEMMA3, num_hidden_layers=3, head_dim=16, sliding_window=4,
                                sliding_window_pattern=3, query_pre_attn_scalar=24, rope_theta=1000000.0,
                                rope_local_base_freq=10000.0, rope_scaling={"rope_type": "linear", "factor": 2.0},
                                tie_word_embeddings=True, torch_dtype="bfloat16"),
          seed=6, dtype="BF16", prompt_len=9, decode_steps=4)
    # Gemma 3 with tanh softcapping of scores and logits (tight enough to
    # bind), layer_types spelled out, and untied output.
    write("gemma3-softcap", config(GEMMA3, num_hidden_layers=2, head_dim=16, sliding_window=3,
                                   layer_types=["full_attention", "sliding_attention"], query_pre_attn_scalar=16,
                                   rope_local_base_freq=100.0, attn_logit_softcapping=1.5,
                                   final_logit_softcapping=2.5, tie_word_embeddings=False),
          seed=7, prompt_len=9, decode_steps=4)


if __name__ == "__main__":
    main()
