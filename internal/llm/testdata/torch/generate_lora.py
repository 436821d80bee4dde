#!/usr/bin/python3
"""LoRA adapters over the tiny models of generate.py, and golden logits.

Run with Debian's python3 and python3-torch / python3-numpy, after
generate.py:

    /usr/bin/python3 internal/llm/testdata/torch/generate_lora.py

For each base model below it writes lora/<model>-ref/: an adapter in the
standard layout (adapter_config.json with the reference library's fields,
adapter_model.safetensors with its tensor names) of random factors, and
golden.json, the logits of the base model with that adapter applied (a
prompt, then greedy decode steps with a KV cache, as generate.py's).

It also reads lora/<model>-weft/, an adapter saved by weft's own writer
(written by the Go test with WEFT_WRITE_LORA_FIXTURES=1), and writes the
golden logits of the base model with it applied: an adapter written by
weft loads in the reference and means the same thing there.

The LoRA layer is the reference library's: base(x) + lora_B(lora_A(x)) *
scaling, scaling = lora_alpha / r, or lora_alpha / sqrt(r) with use_rslora.
"""

import json
import math
import os

import numpy as np
import torch

import generate

HERE = os.path.dirname(os.path.abspath(__file__))
LORA = os.path.join(HERE, "lora")

MODULES = {"q_proj": "self_attn", "k_proj": "self_attn", "v_proj": "self_attn", "o_proj": "self_attn",
           "gate_proj": "mlp", "up_proj": "mlp", "down_proj": "mlp"}


def read_safetensors(path):
    """The tensors of a safetensors file as float32 torch tensors."""
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    body = raw[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        data = body[begin:end]
        if e["dtype"] == "F32":
            a = np.frombuffer(data, dtype="<f4").astype(np.float32)
        elif e["dtype"] == "F16":
            a = np.frombuffer(data, dtype="<f2").astype(np.float32)
        elif e["dtype"] == "BF16":
            a = (np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(e["dtype"])
        out[name] = torch.from_numpy(a.reshape(e["shape"]).copy())
    return out


def dims(cfg):
    d, f = cfg["hidden_size"], cfg["intermediate_size"]
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or d // heads
    return {"q_proj": (d, heads * hd), "k_proj": (d, kv * hd), "v_proj": (d, kv * hd), "o_proj": (heads * hd, d),
            "gate_proj": (d, f), "up_proj": (d, f), "down_proj": (f, d)}


def key(layer, module, factor):
    return f"base_model.model.model.layers.{layer}.{MODULES[module]}.{module}.{factor}.weight"


def adapter_config(base, r, alpha, targets, rslora):
    """adapter_config.json as the reference library saves a LoraConfig."""
    return {
        "alpha_pattern": {}, "auto_mapping": None, "base_model_name_or_path": base, "bias": "none",
        "fan_in_fan_out": False, "inference_mode": True, "init_lora_weights": True, "layer_replication": None,
        "layers_pattern": None, "layers_to_transform": None, "loftq_config": {}, "lora_alpha": alpha,
        "lora_dropout": 0.05, "megatron_config": None, "megatron_core": "megatron.core", "modules_to_save": None,
        "peft_type": "LORA", "r": r, "rank_pattern": {}, "revision": None, "target_modules": sorted(targets),
        "task_type": "CAUSAL_LM", "use_dora": False, "use_rslora": rslora,
    }


def load_adapter(path, cfg):
    """The factors of an adapter directory keyed by projection prefix, and its scaling."""
    with open(os.path.join(path, "adapter_config.json")) as f:
        ac = json.load(f)
    t = read_safetensors(os.path.join(path, "adapter_model.safetensors"))
    factors = {}
    for layer in range(cfg["num_hidden_layers"]):
        for module in MODULES:
            a = t.pop(key(layer, module, "lora_A"), None)
            b = t.pop(key(layer, module, "lora_B"), None)
            assert (a is None) == (b is None), (layer, module)
            if a is not None:
                factors[f"model.layers.{layer}.{MODULES[module]}.{module}"] = (a, b)
    assert not t, sorted(t)
    r, alpha = ac["r"], ac["lora_alpha"]
    scaling = alpha / math.sqrt(r) if ac.get("use_rslora") else alpha / r
    return {"factors": factors, "scaling": scaling}


def write_reference_adapter(model, seed, r, alpha, targets, rslora, dtype):
    """A random adapter in the standard layout, written as the reference library lays it out."""
    with open(os.path.join(HERE, model, "config.json")) as f:
        cfg = json.load(f)
    gen = torch.Generator().manual_seed(seed)
    tensors = {}
    for layer in range(cfg["num_hidden_layers"]):
        for module in targets:
            fan_in, fan_out = dims(cfg)[module]
            bound = 1 / math.sqrt(fan_in)
            tensors[key(layer, module, "lora_A")] = (torch.rand(r, fan_in, generator=gen) * 2 - 1) * bound
            tensors[key(layer, module, "lora_B")] = 0.2 * torch.randn(fan_out, r, generator=gen)
    out = os.path.join(LORA, model + "-ref")
    os.makedirs(out, exist_ok=True)
    generate.write_safetensors(os.path.join(out, "adapter_model.safetensors"), tensors, dtype)
    with open(os.path.join(out, "adapter_config.json"), "w") as f:
        json.dump(adapter_config(model, r, alpha, targets, rslora), f, indent=2)
    return out


def write_golden(model, adapter_dir, seed, prompt_len=6, decode_steps=3):
    base = os.path.join(HERE, model)
    with open(os.path.join(base, "config.json")) as f:
        cfg = json.load(f)
    w = read_safetensors(os.path.join(base, "model.safetensors"))
    adapter = load_adapter(adapter_dir, cfg)
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, cfg["vocab_size"], (prompt_len,), generator=gen).tolist()
    cache = [None] * cfg["num_hidden_layers"]
    rotary = generate.Rotary(cfg)
    with torch.no_grad():
        prompt_logits = generate.forward(cfg, w, rotary, ids, 0, cache, adapter)
        base_logits = generate.forward(cfg, w, generate.Rotary(cfg), ids, 0, [None] * cfg["num_hidden_layers"])
        assert (prompt_logits - base_logits).abs().max() > 0.1, "the adapter changes nothing"
        steps, pos, token = [], prompt_len, int(prompt_logits[-1].argmax())
        for _ in range(decode_steps):
            logits = generate.forward(cfg, w, rotary, [token], pos, cache, adapter)[0]
            steps.append({"token": token, "position": pos, "logits": logits.tolist()})
            token, pos = int(logits.argmax()), pos + 1
    golden = {"prompt": ids, "prompt_logits": prompt_logits.tolist(), "decode": steps}
    with open(os.path.join(adapter_dir, "golden.json"), "w") as f:
        json.dump(golden, f, separators=(",", ":"))


# Each architecture with a different rank, scaling, target set and dtype.
REFERENCE = [
    ("llama3-rope", dict(seed=11, r=8, alpha=16, targets=list(MODULES), rslora=False, dtype="F32")),
    ("qwen2-bf16", dict(seed=12, r=4, alpha=8, targets=["q_proj", "v_proj", "down_proj"], rslora=True, dtype="BF16")),
    ("qwen3-f16", dict(seed=13, r=2, alpha=4, targets=["k_proj", "o_proj", "gate_proj", "up_proj"], rslora=False,
                       dtype="F16")),
]


def main():
    torch.manual_seed(0)
    for model, kw in REFERENCE:
        write_golden(model, write_reference_adapter(model, **kw), seed=kw["seed"])
        ours = os.path.join(LORA, model + "-weft")
        if os.path.exists(os.path.join(ours, "adapter_config.json")):
            write_golden(model, ours, seed=kw["seed"] + 100)
        else:
            print(f"{ours} missing: run the Go test with WEFT_WRITE_LORA_FIXTURES=1 first")


if __name__ == "__main__":
    main()
