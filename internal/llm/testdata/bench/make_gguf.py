#!/usr/bin/python3
"""GGUF files of a benchmark shape for llama.cpp's tools: a Llama of random
weights written as F32 with gguf-py, then quantized by llama-quantize.

    PYTHONPATH=<llama.cpp>/gguf-py /usr/bin/python3 make_gguf.py OUT_DIR NAME \\
        VOCAB HIDDEN INTERMEDIATE LAYERS HEADS KV_HEADS TIED TYPE...

writes OUT_DIR/NAME.F32.gguf and OUT_DIR/NAME.<TYPE>.gguf for each TYPE
that llama-quantize takes (Q8_0, Q4_0, Q4_K_M, ...), with the LLAMACPP
environment variable naming llama.cpp's directory (bin/ and
ggml-vocab-llama-spm.gguf, whose vocabulary the files take: the shapes
have its 32,000 tokens). The engine's benchmarks run it when the files are
missing; the weights' values do not matter for speed. gguf-py, and this
script, need numpy (Debian's python3-numpy).
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter


def library_dir(llamacpp, tmp):
    """The tools' libraries with their version links (a copy of the tools
    may keep each link as a small file holding its target's name)."""
    bin_dir = os.path.join(llamacpp, "bin")
    lib = os.path.join(tmp, "lib")
    os.makedirs(lib, exist_ok=True)
    for name in os.listdir(bin_dir):
        path = os.path.join(bin_dir, name)
        if ".so" in name and not os.path.islink(path) and os.path.getsize(path) < 256:
            with open(path) as f:
                os.symlink(os.path.join(bin_dir, f.read().strip()), os.path.join(lib, name))
    return lib


def copy_vocab(writer, vocab_path):
    """The tokenizer keys of llama.cpp's SentencePiece vocabulary file."""
    r = GGUFReader(vocab_path)
    for field in r.fields.values():
        if not field.name.startswith("tokenizer."):
            continue
        vtype = field.types[0]
        if vtype == GGUFValueType.ARRAY:
            sub = field.types[1]
            if sub == GGUFValueType.STRING:
                values = [bytes(field.parts[i]).decode("utf-8") for i in field.data]
            else:
                values = [field.parts[i].tolist()[0] for i in field.data]
            writer.add_array(field.name, values)
        elif vtype == GGUFValueType.STRING:
            writer.add_string(field.name, bytes(field.parts[field.data[0]]).decode("utf-8"))
        else:
            writer.add_key_value(field.name, field.parts[field.data[0]].tolist()[0], vtype)


def main():
    out, name = sys.argv[1], sys.argv[2]
    vocab, hidden, inter, layers, heads, kv, tied = (int(v) for v in sys.argv[3:10])
    types = sys.argv[10:]
    llamacpp = os.environ["LLAMACPP"]
    os.makedirs(out, exist_ok=True)
    f32 = os.path.join(out, name + ".F32.gguf")
    rng = np.random.default_rng(0)
    hd = hidden // heads

    def mat(rows, cols):
        return (rng.standard_normal((rows, cols), dtype=np.float32) / np.float32(np.sqrt(cols)))

    if not os.path.exists(f32):
        tmp = f32 + ".tmp"
        w = GGUFWriter(tmp, "llama")
        w.add_context_length(2048)
        w.add_embedding_length(hidden)
        w.add_block_count(layers)
        w.add_feed_forward_length(inter)
        w.add_head_count(heads)
        w.add_head_count_kv(kv)
        w.add_rope_dimension_count(hd)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_file_type(0)
        copy_vocab(w, os.path.join(llamacpp, "ggml-vocab-llama-spm.gguf"))
        w.add_tensor("token_embd.weight", rng.standard_normal((vocab, hidden), dtype=np.float32))
        for i in range(layers):
            p = f"blk.{i}."
            w.add_tensor(p + "attn_norm.weight", np.ones(hidden, dtype=np.float32))
            w.add_tensor(p + "attn_q.weight", mat(heads * hd, hidden))
            w.add_tensor(p + "attn_k.weight", mat(kv * hd, hidden))
            w.add_tensor(p + "attn_v.weight", mat(kv * hd, hidden))
            w.add_tensor(p + "attn_output.weight", mat(hidden, heads * hd))
            w.add_tensor(p + "ffn_norm.weight", np.ones(hidden, dtype=np.float32))
            w.add_tensor(p + "ffn_gate.weight", mat(inter, hidden))
            w.add_tensor(p + "ffn_up.weight", mat(inter, hidden))
            w.add_tensor(p + "ffn_down.weight", mat(hidden, inter))
        w.add_tensor("output_norm.weight", np.ones(hidden, dtype=np.float32))
        if not tied:
            w.add_tensor("output.weight", mat(vocab, hidden))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        os.rename(tmp, f32)
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, LD_LIBRARY_PATH=library_dir(llamacpp, tmp))
        for t in types:
            dst = os.path.join(out, f"{name}.{t}.gguf")
            if os.path.exists(dst):
                continue
            subprocess.run([os.path.join(llamacpp, "bin", "llama-quantize"), f32, dst + ".tmp", t, "2"],
                           env=env, check=True, capture_output=True)
            os.rename(dst + ".tmp", dst)


if __name__ == "__main__":
    main()
