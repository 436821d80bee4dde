"""Renders the Jinja feature corpora with Python's Jinja2 configured as
transformers' apply_chat_template configures it (the environment vLLM
renders chat templates in) and writes
internal/llm/chattemplate/testdata/python-features.golden.json.

    python3 internal/llm/testdata/oracle/gen-template-python-golden.py

Needs Jinja2 (Debian: python3-jinja2). The corpora are features.txt (also
rendered by @huggingface/jinja) and python-features.txt (constructs that
@huggingface/jinja lacks or renders differently from Python).
"""

import datetime
import json
import os
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "chattemplate", "testdata")
# strftime_now reads the clock; the Go tests use the same instant.
FROZEN = datetime.datetime(2024, 7, 5, 9, 3, 0)


class AssistantTracker(Extension):
    """transformers' {% generation %} tag, without the token mask it records."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: FROZEN.strftime(fmt)
    return env


def cases(path):
    with open(path, encoding="utf-8") as f:
        blocks = f.read().split("\n====\n")
    for block in blocks:
        variables, expect_error = {}, False
        while True:
            if block.startswith("VARS "):
                line, block = block.split("\n", 1)
                variables = json.loads(line[5:])
            elif block.startswith("ERROR\n"):
                expect_error, block = True, block[6:]
            else:
                break
        yield block, variables, expect_error


def main():
    env = environment()
    out = []
    for corpus in ("features.txt", "python-features.txt"):
        for i, (src, variables, expect_error) in enumerate(cases(os.path.join(OUT, corpus))):
            case = {"corpus": corpus, "index": i, "src": src, "vars": variables}
            try:
                case["output"] = env.from_string(src).render(**variables)
                if expect_error:
                    sys.exit(f"{corpus} case {i} should fail but rendered {case['output']!r}")
            except Exception as e:  # noqa: BLE001 - every failure is recorded
                case["error"] = f"{type(e).__name__}: {e}"
            out.append(case)
    golden = {"generator": f"internal/llm/testdata/oracle/gen-template-python-golden.py with Jinja2 {jinja2.__version__}", "cases": out}
    with open(os.path.join(OUT, "python-features.golden.json"), "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"python features: {len(out)} cases")


if __name__ == "__main__":
    main()
