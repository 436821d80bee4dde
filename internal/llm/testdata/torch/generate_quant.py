#!/usr/bin/python3
"""Golden logits of the quantized weight types, from the PyTorch reference
forward pass over the dequantized weights.

Run with Debian's python3, python3-torch and python3-numpy from the project
root, after generate.py, with llama.cpp's tools and gguf-py beside the
project (LLAMACPP names another place):

    PYTHONPATH=../shared/llamacpp/gguf-py /usr/bin/python3 internal/llm/testdata/torch/generate_quant.py

It writes the tiny model llama-k256 (rows of 256, so that every K-quant
applies; f16 weights), and for each weight type golden-<type>.json beside
each model it covers: every linear layer and the output projection (the
embedding's copy, when tied) quantized as weft quantizes them at load —
gguf-py's quantize for Q8_0, Q4_0, Q5_0, Q5_1, F16 and BF16, llama-quantize
for Q4_K, Q5_K and Q6_K, with a row that is not a whole number of
super-blocks taking llama-quantize's fallback (Q5_0, Q5_1, Q8_0) — then
dequantized by gguf-py, and the prompt and greedy decode logits of
generate.py's forward pass over those weights, in float32. The activations
stay float32 here: the difference to weft's logits is the quantization of
each layer's input, which the Go test bounds per type.
"""

import importlib.util
import json
import os

import numpy as np
import torch
from gguf import GGMLQuantizationType as T
from gguf import quants

import generate as ref

HERE = os.path.dirname(os.path.abspath(__file__))

_spec = importlib.util.spec_from_file_location("quant_goldens", os.path.join(HERE, "..", "quants", "generate.py"))
quant_goldens = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(quant_goldens)

WEIGHT_TYPES = {"q8_0": T.Q8_0, "q4_0": T.Q4_0, "q4_k": T.Q4_K, "q5_k": T.Q5_K, "q6_k": T.Q6_K,
                "f16": T.F16, "bf16": T.BF16}
FALLBACK = {T.Q4_K: T.Q5_0, T.Q5_K: T.Q5_1, T.Q6_K: T.Q8_0}
LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def quantized(w, t):
    """w [out, in] as type t (or its fallback) and back, as float32."""
    block = quants.GGML_QUANT_SIZES[t][0]
    if w.shape[1] % block != 0:
        t = FALLBACK.get(t)
        if t is None or w.shape[1] % quants.GGML_QUANT_SIZES[t][0] != 0:
            return w
    x = w.numpy().astype(np.float32)
    if t in (T.Q4_K, T.Q5_K, T.Q6_K):
        # Super-blocks are quantized independently: the rows of 256.
        q = quant_goldens.llama_quantize(x.reshape(-1, 256), t)
    else:
        q = quants.quantize(x, t)
    return torch.from_numpy(quants.dequantize(q, t).reshape(x.shape).astype(np.float32))


def write_goldens(name, types, prompt_len=7, decode_steps=4):
    out = os.path.join(HERE, name)
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    w = load_safetensors(os.path.join(out, "model.safetensors"))
    gen = torch.Generator().manual_seed(31)
    ids = torch.randint(0, cfg["vocab_size"], (prompt_len,), generator=gen).tolist()
    for label in types:
        t = WEIGHT_TYPES[label]
        wq = dict(w)
        for layer in range(cfg["num_hidden_layers"]):
            for proj in LINEAR:
                part = "self_attn" if proj in LINEAR[:4] else "mlp"
                key = f"model.layers.{layer}.{part}.{proj}.weight"
                wq[key] = quantized(w[key], t)
        qcfg = dict(cfg, tie_word_embeddings=False)
        head = w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else w["lm_head.weight"]
        wq["lm_head.weight"] = quantized(head, t)
        cache = [None] * cfg["num_hidden_layers"]
        rotary = ref.Rotary(qcfg)
        with torch.no_grad():
            prompt_logits = ref.forward(qcfg, wq, rotary, ids, 0, cache)
            steps, pos, token = [], prompt_len, int(prompt_logits[-1].argmax())
            for _ in range(decode_steps):
                logits = ref.forward(qcfg, wq, rotary, [token], pos, cache)[0]
                steps.append({"token": token, "position": pos, "logits": logits.tolist()})
                token, pos = int(logits.argmax()), pos + 1
        golden = {"prompt": ids, "prompt_logits": prompt_logits.tolist(), "decode": steps}
        with open(os.path.join(out, f"golden-{label}.json"), "w") as f:
            json.dump(golden, f, separators=(",", ":"))
        print(f"{name}: golden-{label}.json")


def load_safetensors(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F32": np.float32, "F16": np.float16}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        a = np.frombuffer(data[lo:hi], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
        out[name] = torch.from_numpy(a.astype(np.float32))
    return out


def main():
    torch.manual_seed(0)
    ref.write_model("llama-k256", ref.config("LlamaForCausalLM", vocab_size=96, hidden_size=256,
                                             intermediate_size=256, num_hidden_layers=1,
                                             num_attention_heads=4, num_key_value_heads=2,
                                             tie_word_embeddings=True, torch_dtype="float16"),
                    seed=31, dtype="F16")
    write_goldens("llama-k256", WEIGHT_TYPES)
    # Rows of 32 and 64: the K-quants fall back to Q5_0, Q5_1 and Q8_0.
    write_goldens("llama3-rope", ["q4_k", "q5_k", "q6_k"])


if __name__ == "__main__":
    main()
