#!/usr/bin/python3
"""A GGUF file of every metadata value type, written by llama.cpp's gguf-py.

Run with Debian's python3 and python3-numpy, with gguf-py on the path:

    PYTHONPATH=../shared/llamacpp/gguf-py /usr/bin/python3 internal/llm/testdata/gguf/valuetypes.py

It writes types.gguf with gguf.GGUFWriter (every scalar type, strings with
non-ASCII text, arrays of numbers, strings and arrays, a custom alignment,
and F32, F16, BF16 and Q8_0 tensors of several shapes), then reads it back
with gguf.GGUFReader and writes what the reference reader sees to
types.json: each key's type and value, each tensor's type, dimensions,
offset and bytes (hex). The Go reader's test compares with it.
"""

import json
import os

import numpy as np

import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
T = gguf.GGUFValueType


def main():
    path = os.path.join(HERE, "types.gguf")
    w = gguf.GGUFWriter(path, "llama")
    w.add_custom_alignment(64)
    w.add_uint8("t.uint8", 255)
    w.add_int8("t.int8", -128)
    w.add_uint16("t.uint16", 65535)
    w.add_int16("t.int16", -32768)
    w.add_uint32("t.uint32", 4294967295)
    w.add_int32("t.int32", -2147483648)
    w.add_uint64("t.uint64", 18446744073709551615)
    w.add_int64("t.int64", -9223372036854775808)
    w.add_float32("t.float32", 0.1)
    w.add_float64("t.float64", -1e300)
    w.add_bool("t.true", True)
    w.add_bool("t.false", False)
    w.add_string("t.string", "naïve ▁ 日本 🙂")
    w.add_string("t.empty", "")
    w.add_key_value("t.strings", ["a", "", "Ġhello", "<0x0A>"], T.ARRAY, T.STRING)
    w.add_key_value("t.int32s", [1, -2, 2147483647], T.ARRAY, T.INT32)
    w.add_key_value("t.float32s", [0.5, -1000.0, 3.25], T.ARRAY, T.FLOAT32)
    w.add_key_value("t.uint8s", [0, 7, 255], T.ARRAY, T.UINT8)
    w.add_key_value("t.bools", [True, False], T.ARRAY, T.BOOL)
    w.add_key_value("t.nested", [[1, 2], [3]], T.ARRAY, T.ARRAY)
    rng = np.random.default_rng(1)
    w.add_tensor("f32.matrix", rng.standard_normal((3, 5)).astype(np.float32))
    w.add_tensor("f32.vector", rng.standard_normal(7).astype(np.float32))
    w.add_tensor("f16.matrix", rng.standard_normal((2, 4)).astype(np.float16))
    bf16 = gguf.quants.quantize(rng.standard_normal((2, 8)).astype(np.float32), gguf.GGMLQuantizationType.BF16)
    w.add_tensor("bf16.matrix", bf16, raw_dtype=gguf.GGMLQuantizationType.BF16)
    q8 = gguf.quants.quantize(rng.standard_normal((2, 64)).astype(np.float32), gguf.GGMLQuantizationType.Q8_0)
    w.add_tensor("q8_0.matrix", q8, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    r = gguf.GGUFReader(path)
    kvs = []
    for field in r.fields.values():
        if field.name.startswith("GGUF."):
            continue
        kvs.append({"key": field.name, "type": [int(t) for t in field.types], "value": field_value(field)})
    tensors = [{
        "name": t.name, "type": int(t.tensor_type), "dims": [int(d) for d in t.shape],
        "offset": int(t.data_offset) - int(r.data_offset), "data": bytes(t.data.tobytes()).hex(),
    } for t in r.tensors]
    with open(os.path.join(HERE, "types.json"), "w") as f:
        json.dump({"version": 3, "alignment": int(r.alignment), "kv": kvs, "tensors": tensors}, f, indent=1)


def field_value(field):
    """A field's value as JSON: strings as text, floats as their float64
    values, nested arrays as lists of lists."""
    t = field.types[0]
    if t == T.STRING:
        return bytes(field.parts[field.data[0]]).decode()
    if t != T.ARRAY:
        return field.parts[field.data[0]].tolist()[0]
    if field.types[1] == T.STRING:
        return [bytes(field.parts[i]).decode() for i in field.data]
    if field.types[1] == T.ARRAY:
        return nested(field)
    return [field.parts[i].tolist()[0] for i in field.data]


def nested(field):
    # GGUFReader keeps a nested array's parts flat: for each inner array its
    # element type, its length and then its elements.
    out, parts = [], field.parts[field.data[0] - 2:]
    i = 0
    while i < len(parts):
        n = int(parts[i + 1][0])
        out.append([int(p[0]) for p in parts[i + 2:i + 2 + n]])
        i += 2 + n
    return out


if __name__ == "__main__":
    main()
