#!/usr/bin/env python3
"""Writes golden.json: digests computed by Python's own json and hashlib, the
reference that internal/digest must match byte for byte.

Run from this directory: python3 generate_golden.py > golden.json
"""
import base64
import hashlib
import json
import sys


def bytes_digest(b: bytes) -> str:
    encoded = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).decode()
    return encoded.replace("-", "X").replace("_", "Y").rstrip("=")


def json_digest(text: str):
    canonical = json.dumps(json.loads(text), sort_keys=True)
    return canonical, bytes_digest(canonical.encode())


# Inputs are JSON texts, so integer-versus-float identity comes from the text.
OBJECTS = [
    "null", "true", "false", "0", "-0", "1", "-17",
    "123456789012345678901234567890", "-98765432109876543210",
    "1.0", "-1.0", "0.0", "-0.0", "1e-05", "0.0001", "0.00012345", "1e16", "1E16", "1e15",
    "1.5e15", "9999999999999998.0", "1e22", "1.2345678901234568e+17", "0.30000000000000004",
    "0.1", "3.14159", "2.5e-10", "5e-324", "1.7976931348623157e308", "1e400", "-1e400",
    "1e-400", "100.0", "1234567.125", "6.02214076e23", "1E-7", "12e2", "0.5E+3",
    '""', '"plain ascii"', '"quote \\" backslash \\\\ slash /"', '"\\n\\r\\t\\b\\f"',
    '"\\u0000\\u0001\\u001f\\u007f"', '"caf\\u00e9 na\\u00efve"', '"caf\u00e9 \u65e5\u672c\u8a9e"',
    '"emoji \U0001F600 \U0001F3B1 \U0001F44D"', '"\\ud83d\\ude00"', '"\u2028\u2029"',
    '"\uffff\u0800"', '"tab\\there"',
    "[]", "{}", "[1, 1.0, \"1\", true, null]", '{"b": 1, "a": 2, "c": {"z": [], "y": {}}}',
    '{"\u00e9": 1, "e": 2, "\U0001F600": 3, "Z": 4, "a": 5, "_": 6, "": 7}',
    '{"a": 1, "a": 2}',
    '{"nested": {"deep": {"deeper": [1, [2, [3, {"x": 0.1}]]]}}}',
    '{"_type": "CustomWeaveType", "weave_type": {"type": "Op"}, "files": {"obj.py": "a1B2c3"}, "load_op": "NO_LOAD_OP"}',
    '{"_type": "Dataset", "_class_name": "Dataset", "_bases": ["Object", "BaseModel"], "name": "ds", "description": null, "rows": "weave:///e/p/table/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}',
    '{"model": "weave:///ent/proj/object/My%20Model:abc/attr/x/key/y%2Fz", "op": "trace:///e/p/op/f:v1", "call": "weave:///e/p/call/0192f0aa-0000-7000-8000-000000000000"}',
    '{"floats": [1.0, 1e-05, 1e16, 0.30000000000000004, 1e100, -2.5], "ints": [0, 9007199254740993, -1]}',
    ' { "spaces" :\t[ 1 , 2 ] } ',
]

TABLES = [
    [],
    ['{"a": 1}'],
    ['{"a": 1}', '{"a": 2}', '{"a": 1}'],
    ['{"input": "caf\u00e9", "expected": 0.5}', '{"input": "\U0001F600", "expected": 1e16}', '[1, 2]'],
]

BYTES = [
    b"",
    b"def func(*args, **kwargs):\n    pass\n",
    "print('\u65e5\u672c')\n".encode(),
    bytes(range(256)),
]


def main():
    objects = []
    for text in OBJECTS:
        canonical, digest = json_digest(text)
        objects.append({"input": text, "canonical": canonical, "digest": digest})
    tables = []
    for rows in TABLES:
        row_digests = [json_digest(r)[1] for r in rows]
        table_digest = hashlib.sha256("".join(row_digests).encode()).hexdigest()
        tables.append({"rows": rows, "row_digests": row_digests, "digest": table_digest})
    files = [{"hex": b.hex(), "digest": bytes_digest(b)} for b in BYTES]
    json.dump({"objects": objects, "tables": tables, "files": files}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
