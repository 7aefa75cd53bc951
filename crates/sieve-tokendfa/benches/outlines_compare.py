#!/usr/bin/env python3
"""Cold compile of sieve's token-DFA backend beside outlines-core's `Index`, on the same
constraints and the same tokenizer (o200k_base by default); prints one table.

    python3 -m venv /tmp/ocvenv && /tmp/ocvenv/bin/pip install outlines-core
    cargo build --release -p sieve-tokendfa --example cold_compile
    /tmp/ocvenv/bin/python crates/sieve-tokendfa/benches/outlines_compare.py \
        [--shared /work/shared] [--tokenizer o200k_base] [--repeats 3]

outlines-core comes from PyPI and is used here only, as the anchor of issue 12: its `Index`
is the full state × token table, the same thing sieve's `TokenAutomaton` is.

Per constraint, both sides get the same regex text (a JSON Schema goes through
outlines-core's `build_regex_from_schema`, and sieve compiles that regex with sieve-regex;
a schema is also compiled by sieve's own JSON Schema front-end, row `…/sieve-schema`, whose
whitespace and escapes differ a little). Times are medians of --repeats cold compiles, in
milliseconds: outlines-core from the regex text to a finished `Index` (its `Vocabulary` is
built once beforehand), sieve from the front-end's input to a finished `TokenAutomaton`
(the vocabulary's trie is built once beforehand). `ratio` is sieve / outlines-core.
`start tokens` is the number of tokens each allows at the start (sieve/outlines-core, the
end-of-sequence token left out): a cross-check that both compiled the same language.
outlines-core's DFA is not minimal, so it has more states and transitions than sieve's;
sieve's edges leave out the tokens of a loop region (`free-text`).
"""

from __future__ import annotations

import argparse
import base64
import json
import pathlib
import statistics
import subprocess
import time

REPO = pathlib.Path(__file__).resolve().parents[3]

REGEXES = {
    "phone": r"[0-9]{3}-[0-9]{4}",
    "iso-date": r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])",
    "email": r"[a-z0-9._%+-]{1,20}@[a-z0-9.-]{1,20}\.[a-z]{2,6}",
    "json-number": r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    "sentence": r"[A-Z][a-z ,]{0,60}\.",
    "free-text": r"(?s:.*)\nEND",
    "bounded-text": r"[^\n]{0,80}\n",
}

SCHEMAS = {
    "schema-flat": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 20},
            "age": {"type": "integer"},
            "active": {"type": "boolean"},
        },
        "required": ["name", "age", "active"],
        "additionalProperties": False,
    },
    "schema-nested": {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 10}, "maxItems": 3},
            "point": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"],
                "additionalProperties": False,
            },
        },
        "required": ["id", "point"],
        "additionalProperties": False,
    },
    "schema-enum": {"enum": ["red", "green", "blue", "cyan", "magenta"]},
}


def load_vocabulary(shared: pathlib.Path, name: str):
    import outlines_core

    manifest = json.loads((shared / "tokenizers" / "manifest.json").read_text())
    entry = manifest[name]
    path = shared / "tokenizers" / entry["path"]
    tokens = {}
    for line in path.read_text().splitlines():
        if line.strip():
            text, rank = line.split()
            tokens.setdefault(base64.b64decode(text), []).append(int(rank))
    eos = entry["eos_token_ids"][0]
    return outlines_core.Vocabulary(eos, tokens)


def outlines_ms(regex: str, vocabulary, repeats: int):
    import outlines_core

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        index = outlines_core.Index(regex, vocabulary)
        times.append((time.perf_counter() - start) * 1e3)
    table = index.get_transitions()
    transitions = sum(len(row) for row in table.values())
    initial = index.get_initial_state()
    # Tokens allowed at the start, less the end-of-sequence token a final state allows.
    start_tokens = len(index.get_allowed_tokens(initial)) - int(index.is_final_state(initial))
    return statistics.median(times), transitions, start_tokens


def sieve_rows(constraints, shared: pathlib.Path, tokenizer: str, repeats: int):
    binary = REPO / "target" / "release" / "examples" / "cold_compile"
    lines = "".join(json.dumps(c) + "\n" for c in constraints)
    out = subprocess.run(
        [str(binary), "--manifest", str(shared / "tokenizers" / "manifest.json"),
         "--tokenizer", tokenizer, "--repeats", str(repeats)],
        input=lines, capture_output=True, text=True, check=True,
    )
    return {row["name"]: row for row in map(json.loads, out.stdout.splitlines())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=pathlib.Path, default=REPO.parent / "shared")
    parser.add_argument("--tokenizer", default="o200k_base")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from outlines_core.json_schema import build_regex_from_schema

    cases = dict(REGEXES)
    for name, schema in SCHEMAS.items():
        cases[name] = build_regex_from_schema(json.dumps(schema))
    constraints = [{"name": n, "kind": "regex", "text": r} for n, r in cases.items()]
    constraints += [
        {"name": n + "/sieve-schema", "kind": "schema", "text": json.dumps(s)}
        for n, s in SCHEMAS.items()
    ]
    sieve = sieve_rows(constraints, args.shared, args.tokenizer, args.repeats)
    vocabulary = load_vocabulary(args.shared, args.tokenizer)

    print(f"tokenizer {args.tokenizer}, median of {args.repeats} cold compiles, ms")
    header = (
        f"{'constraint':<26} {'outlines':>10} {'sieve':>10} {'ratio':>7} {'sieve DFA':>9} "
        f"{'sieve edges':>12} {'outl. trans':>12} {'start tokens':>13}"
    )
    print(header)
    print("-" * len(header))
    measured = {}
    for c in constraints:
        name = c["name"]
        row = sieve.get(name, {"error": "no output"})
        base = name.split("/")[0]
        if base not in measured:
            measured[base] = outlines_ms(cases[base], vocabulary, args.repeats)
        o_ms, o_trans, o_start = measured[base]
        if "error" in row:
            print(f"{name:<26} {o_ms:>10.1f} {'error':>10}   {row['error']}")
            continue
        print(
            f"{name:<26} {o_ms:>10.1f} {row['total_ms']:>10.2f} {row['total_ms'] / o_ms:>7.3f} "
            f"{row['dfa_states']:>9} {row['edges']:>12} {o_trans:>12} "
            f"{row['start_tokens']:>6}/{o_start:<6}"
        )

if __name__ == "__main__":
    main()
