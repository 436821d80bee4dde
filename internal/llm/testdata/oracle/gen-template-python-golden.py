"""Renders the Jinja feature corpora with Python's Jinja2 configured as
transformers' apply_chat_template configures it (the environment vLLM
renders chat templates in) and writes
internal/llm/chattemplate/testdata/python-features.golden.json, plus
python-random.golden.json: templates drawn at random (fixed seed) from the
constructs chat templates use, rendered the same way.

    python3 internal/llm/testdata/oracle/gen-template-python-golden.py

Needs Jinja2 (Debian: python3-jinja2). The corpora are features.txt (also
rendered by @huggingface/jinja) and python-features.txt (constructs that
@huggingface/jinja lacks or renders differently from Python).
"""

import copy
import datetime
import json
import os
import random
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


# Random corpus: a small grammar over the constructs chat templates use. The
# variables look like a chat request's.
RANDOM_VARS = {
    "messages": [
        {"role": "system", "content": " Sys\n"},
        {"role": "user", "content": "Hé <tool_response>x</tool_response>"},
        {"role": "assistant", "content": "<think>\nr\n</think>\n\nok",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1, "b": [1.5, "x"]}}}]},
        {"role": "tool", "content": ""},
    ],
    "tools": [{"type": "function", "function": {"name": "f", "description": "D",
                                                "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}],
    "n": 3, "f": 2.5, "s": "  Hello, World  ", "e": "", "l": [3, 1, 2], "d": {"b": 1, "a": "z"},
    "t": True, "no": None, "bos_token": "<s>",
}
STRS = ["'a'", '"b c"', "'\\n'", "''", "'Hé'", "' x '", "'<think>'", "'a,b'"]
NUMS = ["0", "1", "2", "-1", "3", "1.5", "10"]
NAMES = ["n", "f", "s", "e", "l", "d", "t", "no", "messages", "tools", "undefined_x", "x", "y", "ns", "loop", "bos_token"]
FILTERS0 = ["length", "trim", "upper", "lower", "title", "capitalize", "first", "last", "list", "string", "int", "float",
            "abs", "tojson", "items", "reverse", "sort", "unique", "join", "dictsort", "safe", "count", "sum", "min", "max",
            "wordcount", "indent", "round"]
OPS = ["+", "-", "*", "/", "//", "%", "~", "==", "!=", "<", ">", "<=", ">=", "and", "or", "in", "not in"]
TESTS = ["defined", "undefined", "none", "string", "number", "mapping", "iterable", "sequence", "integer", "float",
         "boolean", "true", "false", "odd", "even", "lower", "upper", "callable"]
METHODS = ["strip()", "strip('\\n ')", "lstrip()", "rstrip('d')", "split()", "split(',')", "split(' ', 1)", "upper()",
           "lower()", "title()", "startswith('H')", "endswith(('d', ' '))", "replace('l', 'L')", "find('o')", "count('l')",
           "items()", "keys()", "values()", "get('a')", "get('q', 5)", "splitlines()", "capitalize()", "format(1)",
           "isdigit()", "zfill(4)", "index(1)"]


def random_templates(seed, count):
    r = random.Random(seed)
    filters1 = [
        ("default", lambda d: expr(d)), ("join", lambda d: r.choice(STRS)),
        ("replace", lambda d: r.choice(STRS) + ", " + r.choice(STRS)), ("indent", lambda d: r.choice(["2", "'> '", "1, true"])),
        ("map", lambda d: r.choice(["attribute='role'", "'upper'", "'length'", "attribute='content'"])),
        ("selectattr", lambda d: r.choice(["'role'", "'role', 'equalto', 'user'", "'content'"])),
        ("rejectattr", lambda d: r.choice(["'role'", "'role', 'equalto', 'user'"])),
        ("select", lambda d: r.choice(["'odd'", "'string'", "'defined'", "'equalto', 1"])),
        ("reject", lambda d: r.choice(["'even'", "'none'"])),
        ("tojson", lambda d: r.choice(["indent=2", "sort_keys=true", "ensure_ascii=true"])),
        ("sort", lambda d: "reverse=true"), ("batch", lambda d: "2"), ("truncate", lambda d: "5, true, '.', 0"),
        ("center", lambda d: "7"), ("format", lambda d: expr(d)), ("round", lambda d: "1"),
    ]

    def expr(d=0):
        k = r.randrange(12 if d < 3 else 3)
        if k == 0:
            return r.choice(STRS)
        if k == 1:
            return r.choice(NUMS)
        if k == 2:
            return r.choice(NAMES + ["true", "false", "none"])
        if k == 3:
            return expr(d + 1) + " " + r.choice(OPS) + " " + expr(d + 1)
        if k == 4:
            return expr(d + 1) + " | " + r.choice(FILTERS0)
        if k == 5:
            name, args = r.choice(filters1)
            return expr(d + 1) + " | " + name + "(" + args(d + 1) + ")"
        if k == 6:
            return expr(d + 1) + " is " + r.choice(["", "not "]) + r.choice(TESTS)
        if k == 7:
            return r.choice(NAMES) + "." + r.choice(METHODS)
        if k == 8:
            return r.choice(["messages", "l", "s", "d", "tools"]) + r.choice(
                ["[0]", "[-1]", "[1:]", "[::-1]", "[:2]", "['role']", ".content", "[0].role", "[5]", "[0]['tool_calls']"])
        if k == 9:
            return "(" + expr(d + 1) + " if " + expr(d + 1) + " else " + expr(d + 1) + ")"
        if k == 10:
            return "[" + ", ".join(expr(d + 1) for _ in range(r.randrange(3))) + "]"
        return "not " + expr(d + 1)

    def ws(tag):
        tag = tag.replace("{%", r.choice(["{%", "{%-", "{%+"])).replace("%}", r.choice(["%}", "-%}", "+%}"]))
        return tag.replace("{{", r.choice(["{{", "{{-"])).replace("}}", r.choice(["}}", "-}}"]))

    def stmt(d=0):
        k = r.randrange(9 if d < 2 else 3)
        pad = r.choice(["", "\n", "  ", "\n  ", " x "])
        if k == 0:
            return pad + "text" + r.choice(["", "\n", " "])
        if k == 1:
            return pad + ws("{{ ") + expr() + ws(" }}")
        if k == 2:
            return pad + ws("{% set " + r.choice(["x", "y", "ns.v"]) + " = ") + expr() + ws(" %}")
        if k == 3:
            other = ws("{% else %}") + body(d + 1) if r.random() < .5 else ""
            return pad + ws("{% if ") + expr() + ws(" %}") + body(d + 1) + other + ws("{% endif %}")
        if k == 4:
            cond = " if " + expr() if r.random() < .3 else ""
            seq = r.choice(["messages", "l", "s", "d", "range(3)", "tools", "undefined_x", "n"])
            return (pad + ws("{% for x in ") + seq + cond + ws(" %}") +
                    r.choice(["{{ loop.index }}", "{{ loop.first }}", "{{ x }}", ""]) + body(d + 1) + ws("{% endfor %}"))
        if k == 5:
            pairs = r.choice(["d.items()", "d|items", "d|dictsort", "messages[0]|items"])
            return pad + ws("{% for k, v in ") + pairs + ws(" %}") + "{{ k }}={{ v }}" + body(d + 1) + ws("{% endfor %}")
        if k == 6:
            return pad + "{% macro m(a, b=1) %}[{{ a }}{{ b }}]" + body(d + 1) + "{% endmacro %}{{ m(" + expr() + ") }}"
        if k == 7:
            return pad + ws("{% set ns = namespace(v=0) %}") + body(d + 1)
        return pad + "{# c #}" + r.choice(["", "\n"])

    def body(d):
        return "".join(stmt(d) for _ in range(r.randrange(1, 3)))

    return ["{% set ns = namespace(v=1) %}" + body(0) for _ in range(count)]


def render(env, src, variables):
    try:
        return {"output": env.from_string(src).render(**variables)}
    except Exception as e:  # noqa: BLE001 - every failure is recorded
        return {"error": f"{type(e).__name__}: {e}"}


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

    random_cases = []
    for i, src in enumerate(random_templates(seed=1, count=1500)):
        # Each render gets its own copy: some filters modify their input
        # (indent on a list extends it).
        result = render(env, src, copy.deepcopy(RANDOM_VARS))
        if " at 0x" in result.get("output", ""):
            continue  # prints an object's address
        random_cases.append({"index": i, "src": src, **result})
    golden = {"generator": f"internal/llm/testdata/oracle/gen-template-python-golden.py with Jinja2 {jinja2.__version__}",
              "vars": RANDOM_VARS, "cases": random_cases}
    with open(os.path.join(OUT, "python-random.golden.json"), "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print(f"python random: {len(random_cases)} cases")


if __name__ == "__main__":
    main()
