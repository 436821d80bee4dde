#!/usr/bin/python3
"""Golden blocks of GGUF's tensor formats from the reference implementation.

Run with Debian's python3 and python3-numpy, from the project root, with
llama.cpp's tools and gguf-py beside it (LLAMACPP names another place):

    PYTHONPATH=../shared/llamacpp/gguf-py /usr/bin/python3 internal/llm/testdata/quants/generate.py

The K-quants' quantization comes from llama-quantize --pure run on an F32
GGUF file written here with gguf-py: a one-layer Llama whose output.weight
holds the values, each row one super-block. The same run for Q8_0 and Q4_0
is checked against gguf-py's bytes.

For each type it writes <TYPE>.bin.gz (gzip, little-endian):

    "WQG1", u32 type number,
    u32 n, n blocks of the type's bytes, n·block_size float32: the blocks and
        gguf-py's dequantize of them;
    u32 m, m·block_size float32, m blocks of bytes: values and their
        quantization: gguf-py's quantize, or, for the K-quants (which gguf-py
        only dequantizes), llama-quantize's output.

The blocks to dequantize are random bytes, blocks quantized from random
values, and adversarial ones: every special half-precision scale (zeros of
both signs, subnormals, the largest finite values, infinities, NaNs) with
quant bytes all zero, all ones and alternating, and the sub-block scale
extremes of the K-quants. F16 and BF16 run every one of the 65,536 bit
patterns. The values to quantize are normal draws at scales from 1e-3 to
1e3 and blocks chosen for their edge cases: zeros of both signs, ties of
largest magnitude, values on rounding midpoints, scales that overflow or
underflow half precision. Values whose quantization would read a NaN or an
infinity (which the reference turns into integers with no defined result)
are left out.
"""

import gzip
import os
import struct
import subprocess
import tempfile

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import GGUFReader, GGUFWriter, quants
from gguf.constants import GGML_QUANT_SIZES

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(31)

SPECIAL_HALVES = [
    0x0000, 0x8000,  # ±0
    0x0001, 0x8001, 0x03FF, 0x83FF,  # subnormals
    0x0400, 0x3C00, 0xBC00,  # the smallest normal, ±1
    0x7BFF, 0xFBFF,  # ±65504
    0x7C00, 0xFC00,  # ±Inf
    0x7E00, 0xFE00, 0x7C01,  # NaNs (quiet, negative, signalling)
]

QUANT_FILLS = [0x00, 0xFF, 0x0F, 0xF0, 0x55, 0xAA]

TYPES = [T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q4_K, T.Q5_K, T.Q6_K]
QUANTIZERS = {T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1}
LLAMA_QUANTIZE = {T.Q4_K: "Q4_K", T.Q5_K: "Q5_K", T.Q6_K: "Q6_K", T.Q8_0: "Q8_0", T.Q4_0: "Q4_0"}
LLAMACPP = os.environ.get("LLAMACPP", os.path.join(os.getcwd(), "..", "shared", "llamacpp"))

# Byte offsets of the half-precision scales in a block, and of the bytes
# of sub-block scales (K-quants).
HALF_AT = {
    T.Q8_0: [0], T.Q4_0: [0], T.Q5_0: [0], T.Q4_1: [0, 2], T.Q5_1: [0, 2],
    T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
}
SCALE_BYTES = {T.Q4_K: (4, 16), T.Q5_K: (4, 16), T.Q6_K: (192, 208)}


def half_bytes(h):
    return struct.pack("<H", h)


def realistic_halves(n):
    """Scales as quantized weights have them: positive, 1e-4 to 1e-1."""
    v = (10.0 ** rng.uniform(-4, -1, n)).astype(np.float16)
    return v.view(np.uint16)


def dequant_blocks(t):
    block, size = GGML_QUANT_SIZES[t]
    if t in (T.F16, T.BF16):
        return np.arange(65536, dtype=np.uint16).view(np.uint8).reshape(-1, 2)
    if t == T.F32:
        bits = np.concatenate([
            rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32),
            np.array([0, 0x80000000, 1, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000], dtype=np.uint32),
        ])
        return bits.view(np.uint8).reshape(-1, 4)
    out = []
    # Random bytes: any scale, NaNs and infinities included.
    out.append(rng.integers(0, 256, (24, size), dtype=np.uint8))
    # Random bytes under realistic scales.
    b = rng.integers(0, 256, (24, size), dtype=np.uint8)
    for at in HALF_AT[t]:
        b[:, at:at + 2] = realistic_halves(len(b)).view(np.uint8).reshape(-1, 2)
    out.append(b)
    # Quantized from values, where gguf-py quantizes.
    if t in QUANTIZERS:
        x = (rng.standard_normal((24, block)) * 10.0 ** rng.uniform(-3, 3, (24, 1))).astype(np.float32)
        out.append(quants.quantize(x, t).reshape(-1, size))
    # Every special scale over each fill of the quants (and, for the
    # K-quants, over the extremes of the sub-block scales).
    for h in SPECIAL_HALVES:
        for fill in QUANT_FILLS:
            for which in range(len(HALF_AT[t])):
                # The special scale in one place, 1 in the other (d, m or
                # dmin).
                b = np.full(size, fill, dtype=np.uint8)
                for i, at in enumerate(HALF_AT[t]):
                    b[at:at + 2] = np.frombuffer(half_bytes(h if i == which else 0x3C00), dtype=np.uint8)
                out.append(b.reshape(1, -1))
    if t in SCALE_BYTES:
        lo, hi = SCALE_BYTES[t]
        for fill in (0x00, 0xFF, 0x80, 0x7F, 0x3F, 0xC0):
            b = rng.integers(0, 256, size, dtype=np.uint8)
            b[lo:hi] = fill
            for at in HALF_AT[t]:
                b[at:at + 2] = np.frombuffer(half_bytes(0x3C00), dtype=np.uint8)
            out.append(b.reshape(1, -1))
    return np.concatenate(out)


def scalar_values(t):
    """Values for F16 and BF16: draws at every scale, rounding midpoints,
    the edges of the half range, and random bit patterns (finite ones for
    F16, where numpy's NaN payloads are not the reference's contract)."""
    v = [rng.standard_normal(4096) * 10.0 ** rng.uniform(-30, 30, 4096)]
    v.append(np.array([0.0, -0.0, 1 + 2**-11, 1 + 3 * 2**-11, 1 - 2**-12, 65504.0, 65519.0, 65520.0, -65520.0,
                       2**-14, 2**-24, 2**-25, 2**-24 * 1.5, 2**-26, -2**-25, 1e-45, 3.4e38, 1 + 2**-8, 1 + 3 * 2**-8]))
    bits = rng.integers(0, 2**32, 8192, dtype=np.uint64).astype(np.uint32)
    v.append(bits.view(np.float32))
    with np.errstate(all="ignore"):
        x = np.concatenate([a.astype(np.float32) for a in v])
    if t == T.F16:
        x = x[np.isfinite(x)]
    else:
        x = np.concatenate([x, np.array([np.inf, -np.inf], dtype=np.float32),
                            np.array([0x7FC00000, 0xFF800001, 0x7F800001, 0x7FFFFFFF], dtype=np.uint32).view(np.float32)])
    return x.reshape(-1, 1)


def quant_values(t):
    block, _ = GGML_QUANT_SIZES[t]
    if block == 1:
        return scalar_values(t)
    f32 = np.float32
    cases = []
    for e in range(-3, 4):
        cases.append(rng.standard_normal((6, block)) * 10.0**e)
    cases.append(rng.uniform(-1, 1, (6, block)))
    cases.append(np.zeros((1, block)))
    cases.append(np.full((1, block), -0.0))
    cases.append(np.where(np.arange(block) % 2 == 0, 0.0, -0.0).reshape(1, -1))
    spike = np.zeros(block)
    spike[block // 3] = 1e4
    cases.append(spike.reshape(1, -1))
    cases.append(-spike.reshape(1, -1))
    # Largest magnitude reached twice with both signs: the first wins.
    for sign in (1, -1):
        tie = rng.uniform(-1, 1, block)
        tie[5], tie[20 % block] = 2.0 * sign, -2.0 * sign
        cases.append(tie.reshape(1, -1))
    cases.append(np.full((1, block), 0.75))
    cases.append(np.full((1, block), -3.5))
    # Rounding midpoints: halves of a step for each format's scale.
    steps = np.arange(block) - block // 2
    cases.append((steps + 0.5).reshape(1, -1))
    cases.append((steps * 0.25).reshape(1, -1))
    mid = np.linspace(-8, 8, block)
    mid[0] = 8.0
    cases.append(mid.reshape(1, -1))
    cases.append(np.linspace(-127, 127, block).reshape(1, -1) + 0.5)
    # Scales past half precision, and below it.
    for mag in (6e4, 1e6, 1e7, 3e38, 1e-5, 1e-8, 1e-30):
        cases.append(rng.uniform(-1, 1, (2, block)) * mag)
    x = np.concatenate([c.reshape(-1, block) for c in cases]).astype(f32)
    # Leave out what the reference cannot quantize with a defined result.
    keep = []
    for row in x:
        if not np.all(np.isfinite(row)):
            continue
        with np.errstate(all="ignore"):
            if t in (T.Q8_0,):
                d = np.abs(row).max() / f32(127)
                id = f32(0) if d == 0 else f32(1) / d
                v = row * id
            elif t in (T.Q4_0, T.Q5_0):
                m = row[np.abs(row).argmax()]
                d = m / f32(-8 if t == T.Q4_0 else -16)
                id = f32(0) if d == 0 else f32(1) / d
                v = row * id
            else:
                lo, hi = row.min(), row.max()
                d = (hi - lo) / f32(15 if t == T.Q4_1 else 31)
                id = f32(0) if d == 0 else f32(1) / d
                v = (row - lo) * id
        if np.all(np.isfinite(v)) and np.isfinite(id):
            keep.append(row)
    return np.array(keep, dtype=f32)


def library_dir(tmp):
    """The tools' libraries with their version links, in tmp: a copy of the
    tools may keep each link as a small file holding its target's name."""
    bin_dir = os.path.join(LLAMACPP, "bin")
    lib = os.path.join(tmp, "lib")
    os.makedirs(lib)
    for name in os.listdir(bin_dir):
        path = os.path.join(bin_dir, name)
        if ".so" in name and not os.path.islink(path) and os.path.getsize(path) < 256:
            with open(path) as f:
                os.symlink(os.path.join(bin_dir, f.read().strip()), os.path.join(lib, name))
    return lib


def k_rows():
    """Rows of 256 values (one super-block each) for llama-quantize."""
    n = 256
    rows = [rng.standard_normal(n) * 10.0**e for e in (-4, -2, -1, 0, 1, 3) for _ in range(4)]
    rows += [rng.uniform(-1, 1, n), rng.uniform(0, 1, n), rng.uniform(-1, 0, n), rng.laplace(0, 0.02, n)]
    rows.append(np.zeros(n))
    rows.append(np.full(n, -0.0))
    rows.append(np.full(n, 0.25))
    rows.append(np.full(n, -3.0))
    spike = np.zeros(n)
    spike[77] = 5.0
    rows += [spike, -spike]
    sparse = np.where(rng.uniform(0, 1, n) < 0.1, rng.standard_normal(n), 0.0)
    rows.append(sparse)
    # Sub-blocks of very different magnitudes, and one of zeros among others.
    mixed = rng.standard_normal(n) * np.repeat(10.0 ** np.arange(-4, 4), 32)
    rows.append(mixed)
    holes = rng.standard_normal(n)
    holes[32:64] = 0
    holes[128:144] = 0
    rows.append(holes)
    rows.append(rng.standard_normal(n) * 1e-20)
    rows.append(rng.standard_normal(n) * 1e4)
    rows.append(np.round(rng.standard_normal(n) * 4) / 4)
    rows.append(np.linspace(-1, 1, n))
    return np.array(rows, dtype=np.float32)


def llama_quantize(x, t):
    """llama-quantize's bytes for the rows x (256 values each) as type t."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "f32.gguf"), os.path.join(tmp, "q.gguf")
        w = GGUFWriter(src, "llama")
        n_embd, vocab = x.shape[1], x.shape[0]
        w.add_context_length(64)
        w.add_embedding_length(n_embd)
        w.add_block_count(1)
        w.add_feed_forward_length(n_embd)
        w.add_head_count(4)
        w.add_head_count_kv(4)
        w.add_rope_dimension_count(n_embd // 4)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_file_type(0)
        filler = rng.standard_normal((n_embd, n_embd)).astype(np.float32)
        w.add_tensor("token_embd.weight", np.resize(filler, (vocab, n_embd)))
        w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor("output.weight", x)
        for name in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"):
            w.add_tensor(f"blk.0.{name}.weight", filler)
        for name in ("attn_norm", "ffn_norm"):
            w.add_tensor(f"blk.0.{name}.weight", np.ones(n_embd, dtype=np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        env = dict(os.environ, LD_LIBRARY_PATH=library_dir(tmp))
        tool = os.path.join(LLAMACPP, "bin", "llama-quantize")
        r = subprocess.run([tool, "--pure", src, dst, LLAMA_QUANTIZE[t]], env=env, capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.decode()[-3000:])
        for tensor in GGUFReader(dst).tensors:
            if tensor.name == "output.weight":
                assert tensor.tensor_type == t, (tensor.tensor_type, t)
                return np.array(tensor.data, dtype=np.uint8).reshape(len(x), -1)
    raise RuntimeError("output.weight missing from llama-quantize's file")


def main():
    for t in TYPES:
        block, size = GGML_QUANT_SIZES[t]
        blocks = dequant_blocks(t)
        with np.errstate(all="ignore"):
            values = quants.dequantize(blocks, t).reshape(-1, block).astype(np.float32)
        out = bytearray(b"WQG1")
        out += struct.pack("<II", int(t), len(blocks))
        out += blocks.tobytes()
        out += values.tobytes()
        x, q = np.zeros((0, block), dtype=np.float32), np.zeros((0, size), dtype=np.uint8)
        if t in QUANTIZERS:
            x = quant_values(t)
            with np.errstate(all="ignore"):
                q = quants.quantize(x, t).reshape(-1, size)
            if t in LLAMA_QUANTIZE:
                # llama-quantize agrees, but for a block of zeros led by −0
                # (its C quantizer starts the search for the largest
                # magnitude from +0).
                # (It refuses scales that overflow half precision.)
                ok = np.abs(x).max(axis=1) < 1e4
                xs, qs = x[ok], q[ok]
                whole = len(xs) // 8 * 8
                ref = llama_quantize(xs[:whole].reshape(-1, 256), t).reshape(-1, size)
                signed = np.signbit(xs[:whole, 0]) & np.all(xs[:whole] == 0, axis=1)
                assert np.array_equal(ref[~signed], qs[:whole][~signed]), f"{t.name}: llama-quantize and gguf-py differ"
                print(f"{t.name}: llama-quantize gives gguf-py's bytes on {whole} blocks ({signed.sum()} of −0s set aside)")
        elif t in LLAMA_QUANTIZE:
            x = k_rows()
            q = llama_quantize(x, t)
        out += struct.pack("<I", len(x)) + x.tobytes() + q.tobytes()
        path = os.path.join(HERE, t.name + ".bin.gz")
        with open(path, "wb") as f:
            # mtime 0: the same inputs give the same file.
            with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as g:
                g.write(bytes(out))
        print(f"{t.name}: {len(blocks)} blocks to dequantize, {len(x)} to quantize")


if __name__ == "__main__":
    main()
