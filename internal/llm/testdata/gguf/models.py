#!/usr/bin/python3
"""GGUF files of the tiny golden models, and the PyTorch reference logits of
each file's own weights.

Run with Debian's python3, python3-torch and python3-numpy from the project
root, with llama.cpp's gguf-py on the path and its tools beside the project
(LLAMACPP names another place):

    PYTHONPATH=../shared/llamacpp/gguf-py /usr/bin/python3 internal/llm/testdata/gguf/models.py

For each model of internal/llm/testdata/torch (written by generate.py) it
writes <name>.<type>.gguf the way llama.cpp's converter (convert_hf_to_gguf.py,
whose code needs transformers and is not used itself) writes that
architecture: general.architecture "llama", "qwen2" or "qwen3" and its
hyperparameter keys; the tensors under llama.cpp's names (token_embd,
blk.N.attn_q, ..., output_norm, output unless tied), matrices in the file's
type (F32, F16, BF16, or Q8_0 and Q4_0 blocks made by gguf-py's quantizers;
norms and biases in F32), or, for a llama.cpp file type such as Q4_K_M,
written in F16 and then quantized by llama-quantize, which picks each
tensor's type as it does for any model (Q4_K, Q6_K for the tied embedding
and the layers it gives more bits, Q5_0 or Q8_0 for rows that are not whole
super-blocks); Llama's query and key rows
permuted per head as the converter's LlamaModel.permute does, so that
llama.cpp's RoPE rotates adjacent pairs; Llama 3's rope scaling as the
rope_freqs tensor of factors it computes; linear and yarn scaling as
rope.scaling.* keys. Qwen2's dynamic scaling has no GGUF form, and the
converter drops it.

It then reads the file back with gguf.GGUFReader, dequantizes every tensor
to float32 (gguf.quants), undoes the permutation, and runs generate.py's
reference forward pass on those weights with the configuration the file's
metadata gives (inverse frequencies divided by rope_freqs where present),
writing <name>.<type>.golden.json: the logits of every prompt position and
of a few greedy decode steps.
"""

import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH = os.path.normpath(os.path.join(HERE, "..", "torch"))
sys.path.insert(0, TORCH)
import generate  # noqa: E402  (the reference forward pass)

_spec = importlib.util.spec_from_file_location("quant_goldens", os.path.join(HERE, "..", "quants", "generate.py"))
quant_goldens = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(quant_goldens)  # its library_dir and LLAMACPP

Q = gguf.GGMLQuantizationType
# The converter writes Mistral as Llama (LlamaModel), without its window.
ARCH = {"LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3", "MistralForCausalLM": "llama",
        generate.GEMMA3: "gemma3"}
HF_ARCH = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM", "gemma3": generate.GEMMA3}
# golden model: the type of its matrices in the GGUF file, or the file type
# llama-quantize makes of its F16 file
MODELS = [("llama3-rope", Q.F32), ("llama-linear-tied", Q.F16), ("qwen2-bf16", Q.BF16), ("qwen3-f16", Q.F16),
          ("mistral-swa", Q.F16), ("llama3-rope", Q.Q8_0), ("qwen3-f16", Q.Q4_0), ("llama-k256", "Q4_K_M"),
          ("gemma3-bf16", Q.F32)]
# Gemma 3's names of its four norms a block, looked up first in its files
# (gguf-py's tensor map).
GEMMA3_NAMES = [
    ("post_attention_layernorm.weight", "post_attention_norm.weight"), ("pre_feedforward_layernorm.weight", "ffn_norm.weight"),
    ("post_feedforward_layernorm.weight", "post_ffw_norm.weight"),
]
NAMES = [
    ("input_layernorm.weight", "attn_norm.weight"), ("post_attention_layernorm.weight", "ffn_norm.weight"),
    ("self_attn.q_proj.", "attn_q."), ("self_attn.k_proj.", "attn_k."), ("self_attn.v_proj.", "attn_v."),
    ("self_attn.o_proj.", "attn_output."), ("self_attn.q_norm.", "attn_q_norm."), ("self_attn.k_norm.", "attn_k_norm."),
    ("mlp.gate_proj.", "ffn_gate."), ("mlp.up_proj.", "ffn_up."), ("mlp.down_proj.", "ffn_down."),
]


def read_safetensors(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        raw = np.frombuffer(data[b:end], dtype={"F32": np.float32, "F16": np.float16, "BF16": np.uint16}[e["dtype"]])
        if e["dtype"] == "BF16":
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        out[name] = raw.astype(np.float32).reshape(e["shape"])
    return out


def gguf_name(name, arch="llama"):
    if name == "model.embed_tokens.weight":
        return "token_embd.weight"
    if name == "model.norm.weight":
        return "output_norm.weight"
    if name == "lm_head.weight":
        return "output.weight"
    layer, rest = name[len("model.layers."):].split(".", 1)
    for hf, gg in (GEMMA3_NAMES if arch == "gemma3" else []) + NAMES:
        if rest.startswith(hf):
            return f"blk.{layer}.{gg}{rest[len(hf):]}"
    raise KeyError(name)


def permute(w, n_head):
    # convert_hf_to_gguf.py's LlamaModel.permute.
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def unpermute(w, n_head):
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_factors(cfg, dim):
    # convert_hf_to_gguf.py's LlamaModel.generate_extra_tensors.
    rs = cfg["rope_scaling"]
    freqs = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor, low, high = rs.get("factor", 8.0), rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
    old = rs.get("original_max_position_embeddings", 8192)
    low_wavelen, high_wavelen = old / low, old / high
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(1)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def add_letters_vocab(g, n):
    """A SentencePiece vocabulary of n tokens for llama.cpp's tools: the
    control tokens, then "▁", the letters and "▁" + the letters, so that
    llama-completion can tokenize an English prompt with the tiny models'
    small vocabularies."""
    tokens = ["<pad>", "<eos>", "<bos>", "<unk>", "\u2581"]
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    tokens += letters
    tokens += ["\u2581" + c for c in letters][: n - len(tokens)]
    tokens += [f"<unused{i}>" for i in range(n - len(tokens))]
    g.add_tokenizer_model("llama")
    g.add_token_list(tokens)
    g.add_token_scores([0.0] * 5 + [-float(i) for i in range(n - 5)])
    g.add_token_types([gguf.TokenType.CONTROL] * 3 + [gguf.TokenType.UNKNOWN] + [gguf.TokenType.NORMAL] * (n - 4))
    g.add_bos_token_id(2)
    g.add_eos_token_id(1)
    g.add_unk_token_id(3)
    g.add_pad_token_id(0)
    g.add_add_bos_token(True)


def write_gguf(name, qtype):
    if isinstance(qtype, str):
        return llama_quantized(name, qtype)
    return write_gguf_as(name, qtype, os.path.join(HERE, f"{name}.{qtype.name.lower()}.gguf"))


def llama_quantized(name, ftype):
    """The model's F16 file quantized by llama-quantize to ftype."""
    path = os.path.join(HERE, f"{name}.{ftype.lower()}.gguf")
    with tempfile.TemporaryDirectory() as tmp:
        f16, cfg = write_gguf_as(name, Q.F16, os.path.join(tmp, "f16.gguf"))
        env = dict(os.environ, LD_LIBRARY_PATH=quant_goldens.library_dir(tmp))
        tool = os.path.join(quant_goldens.LLAMACPP, "bin", "llama-quantize")
        r = subprocess.run([tool, f16, path, ftype, "1"], env=env, capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.decode()[-3000:])
    return path, cfg


def write_gguf_as(name, qtype, path):
    src = os.path.join(TORCH, name)
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    w = read_safetensors(os.path.join(src, "model.safetensors"))
    arch = ARCH[cfg["architectures"][0]]
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or cfg["hidden_size"] // heads
    g = gguf.GGUFWriter(path, arch)
    g.add_name(name)
    g.add_context_length(cfg["max_position_embeddings"])
    g.add_embedding_length(cfg["hidden_size"])
    g.add_block_count(cfg["num_hidden_layers"])
    g.add_feed_forward_length(cfg["intermediate_size"])
    g.add_head_count(heads)
    g.add_head_count_kv(kv)
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    if "head_dim" in cfg:
        g.add_key_length(hd)
        g.add_value_length(hd)
    if arch == "gemma3":
        # Gemma3Model's keys: the window; llama.cpp fixes the rest (every
        # sixth layer global, the others at base 10000, scores by
        # 1/sqrt(head_dim)).
        g.add_sliding_window(cfg["sliding_window"])
        add_letters_vocab(g, cfg["vocab_size"])
    g.add_rope_dimension_count(hd)
    g.add_vocab_size(cfg["vocab_size"])
    g.add_file_type({Q.F32: 0, Q.F16: 1, Q.BF16: 32, Q.Q8_0: 7, Q.Q4_0: 2}[qtype])
    rs = cfg.get("rope_scaling") or {}
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear":
        g.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        g.add_rope_scaling_factor(rs["factor"])
    elif kind == "yarn":
        g.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        g.add_rope_scaling_factor(rs["factor"])
        g.add_rope_scaling_orig_ctx_len(rs["original_max_position_embeddings"])
    if kind == "llama3":
        g.add_tensor("rope_freqs.weight", llama3_rope_factors(cfg, hd))
    for hf in sorted(w, key=lambda n: (n != "model.embed_tokens.weight", n)):
        t = w[hf]
        if arch == "llama" and ".q_proj." in hf:
            t = permute(t, heads)
        if arch == "llama" and ".k_proj." in hf:
            t = permute(t, kv)
        if arch == "gemma3" and hf.endswith("norm.weight"):
            t = t + np.float32(1)  # Gemma3Model.norm_shift: the factors the norms multiply by
        if t.ndim == 2 and qtype != Q.F32:
            g.add_tensor(gguf_name(hf, arch), gguf.quants.quantize(t, qtype), raw_dtype=qtype)
        else:
            g.add_tensor(gguf_name(hf, arch), t.astype(np.float32))
    g.write_header_to_file()
    g.write_kv_data_to_file()
    g.write_tensors_to_file()
    g.close()
    return path, cfg


def reference(path, src_cfg):
    """The reference forward pass over the file's weights, dequantized, with
    the configuration its metadata gives."""
    r = gguf.GGUFReader(path)
    arch = str(bytes(r.fields["general.architecture"].parts[-1]), "utf-8")
    meta = {f.name: f.contents() for f in r.fields.values() if not f.name.startswith("GGUF.")}
    heads, kv = meta[f"{arch}.attention.head_count"], meta[f"{arch}.attention.head_count_kv"]
    cfg = {
        "architectures": [HF_ARCH[arch]],
        "vocab_size": meta[f"{arch}.vocab_size"], "hidden_size": meta[f"{arch}.embedding_length"],
        "intermediate_size": meta[f"{arch}.feed_forward_length"], "num_hidden_layers": meta[f"{arch}.block_count"],
        "num_attention_heads": heads, "num_key_value_heads": kv,
        "max_position_embeddings": meta[f"{arch}.context_length"],
        "rms_norm_eps": meta[f"{arch}.attention.layer_norm_rms_epsilon"],
        "rope_theta": meta[f"{arch}.rope.freq_base"],
    }
    if f"{arch}.attention.key_length" in meta:
        cfg["head_dim"] = meta[f"{arch}.attention.key_length"]
    if arch == "gemma3":
        # What llama.cpp makes of a Gemma 3 file's metadata (llama-model.cpp).
        cfg.update(sliding_window=meta["gemma3.attention.sliding_window"], sliding_window_pattern=6,
                   rope_local_base_freq=10000.0, query_pre_attn_scalar=cfg.get("head_dim") or cfg["hidden_size"] // heads,
                   torch_dtype="float32")
    if f"{arch}.rope.scaling.type" in meta:
        cfg["rope_scaling"] = {"rope_type": meta[f"{arch}.rope.scaling.type"], "factor": meta[f"{arch}.rope.scaling.factor"]}
        if f"{arch}.rope.scaling.original_context_length" in meta:
            cfg["rope_scaling"]["original_max_position_embeddings"] = meta[f"{arch}.rope.scaling.original_context_length"]
    names = {t.name: t for t in r.tensors}
    cfg["tie_word_embeddings"] = "output.weight" not in names
    w = {}
    for hf in ["model.embed_tokens.weight", "model.norm.weight"] + ([] if cfg["tie_word_embeddings"] else ["lm_head.weight"]):
        w[hf] = None
    for l in range(cfg["num_hidden_layers"]):
        for t in names:
            if t.startswith(f"blk.{l}."):
                rest = t[len(f"blk.{l}."):]
                for hf, gg in (GEMMA3_NAMES if arch == "gemma3" else []) + NAMES:
                    if rest.startswith(gg):
                        w[f"model.layers.{l}.{hf}{rest[len(gg):]}"] = None
                        break
    for hf in w:
        t = names[gguf_name(hf, arch)]
        x = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape([int(d) for d in reversed(t.shape)])
        if arch == "llama" and ".q_proj." in hf:
            x = unpermute(x, heads)
        if arch == "llama" and ".k_proj." in hf:
            x = unpermute(x, kv)
        if arch == "gemma3" and hf.endswith("norm.weight"):
            x = x - np.float32(1)  # the reference norm multiplies by 1 + w; exact for factors in [0.5, 2]
        w[hf] = torch.from_numpy(x.copy())
    cfg["attention_bias"] = any(".o_proj.bias" in n for n in w)
    rotary = generate.Rotary(cfg)
    if "rope_freqs.weight" in names:
        factors = torch.from_numpy(np.array(names["rope_freqs.weight"].data, dtype=np.float32))
        rotary.inv_freq = generate.default_inv_freq(cfg["rope_theta"], cfg.get("head_dim") or cfg["hidden_size"] // heads) / factors
    with open(os.path.join(TORCH, os.path.basename(path).split(".")[0], "golden.json")) as f:
        prompt = json.load(f)["prompt"]
    cache = [None] * cfg["num_hidden_layers"]
    steps, n = [], len(prompt)
    with torch.no_grad():
        prompt_logits = generate.forward(cfg, w, rotary, prompt, 0, cache)
        token, pos = int(prompt_logits[-1].argmax()), n
        while pos < cfg["max_position_embeddings"] and len(steps) < 4:
            logits = generate.forward(cfg, w, rotary, [token], pos, cache)[0]
            steps.append({"token": token, "position": pos, "logits": logits.tolist()})
            token, pos = int(logits.argmax()), pos + 1
    with open(path[: -len(".gguf")] + ".golden.json", "w") as f:
        json.dump({"prompt": prompt, "prompt_logits": prompt_logits.tolist(), "decode": steps}, f, separators=(",", ":"))


def main():
    # "models.py NAME ..." writes only those models' files.
    only = set(sys.argv[1:])
    for name, qtype in MODELS:
        if only and name not in only:
            continue
        path, cfg = write_gguf(name, qtype)
        reference(path, cfg)


if __name__ == "__main__":
    main()
