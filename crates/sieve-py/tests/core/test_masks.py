"""Masks equal the brute-force oracles (tests/core/oracle.py) at every step of seeded
random walks through the allowed tokens, for grammars, regexes and JSON Schemas."""

import random

import numpy as np
import pytest

import sieve

from oracle import bits, bytewise_mask, finite_mask

# Finite languages, with every sentence listed.
FINITE = [
    ("grammar", 'root ::= "yes" | "no"', [b"yes", b"no"]),
    (
        "grammar",
        'root ::= "{\\"a\\":" [0-9] "}"',
        [b'{"a":%d}' % d for d in range(10)],
    ),
    ("regex", "(true|false|null)", [b"true", b"false", b"null"]),
    (
        "regex",
        "[ab]{1,3}",
        [bytes(s, "ascii") for s in ["a", "b"]]
        + [bytes(x + y, "ascii") for x in "ab" for y in "ab"]
        + [bytes(x + y + z, "ascii") for x in "ab" for y in "ab" for z in "ab"],
    ),
    ("schema", {"enum": ["red", "green", "blue"]}, [b'"red"', b'"green"', b'"blue"']),
    (
        "schema",
        {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
            "additionalProperties": False,
        },
        [b'{"ok":true}', b'{"ok":false}'],
    ),
    ("regex", "é|☃|😀", ["é".encode(), "☃".encode(), "😀".encode()]),
    (
        "lark",
        'start: ANSWER "!"?\nANSWER: "yes" | "no"',
        [b"yes", b"no", b"yes!", b"no!"],
    ),
    (
        "structural",
        {
            "type": "structural_tag",
            "format": {
                "type": "tag",
                "begin": "<r>",
                "content": {"type": "or", "elements": [
                    {"type": "const_string", "value": "yes"},
                    {"type": "regex", "pattern": "n[o0]"},
                ]},
                "end": ["</r>", "</answer>"],
            },
        },
        [b"<r>%s%s" % (v, e) for v in (b"yes", b"no", b"n0") for e in (b"</r>", b"</answer>")],
    ),
]

# Infinite languages, checked against the byte path of the recogniser.
OPEN = [
    (
        "schema",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": 12},
                "age": {"type": "integer", "minimum": 0},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "score": {"type": "number"},
            },
            "required": ["name", "age"],
        },
    ),
    ("schema", {"type": "array", "items": {"type": ["string", "null", "boolean"]}}),
    (
        "grammar",
        r"""
root   ::= value
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ( string ":" value ( "," string ":" value )* )? "}"
array  ::= "[" ( value ( "," value )* )? "]"
string ::= "\"" ( [^"\\] | "\\" ["\\/bfnrt] )* "\""
number ::= "-"? [0-9]+ ( "." [0-9]+ )?
""",
    ),
    ("regex", r"[a-z]+(\.[a-z]+)*@[a-z]+\.(com|org)"),
    (
        "lark",
        'start: item ("," item)*\nitem: NAME "=" %json {"type": "integer"}\nNAME: /[a-z]+/\n%ignore " "',
    ),
    ("regex", r"He said \"[^\"]{0,20}\"( and then.*)?"),
    (
        "structural",
        {
            "type": "structural_tag",
            "format": {
                "type": "triggered_tags",
                "triggers": ["<function="],
                "tags": [
                    {
                        "type": "tag",
                        "begin": "<function=f>",
                        "content": {"type": "json_schema", "json_schema": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                            "required": ["city"],
                        }},
                        "end": "</function>",
                    }
                ],
            },
        },
    ),
]


def compile_any(tok, kind, source, escapes="any", backend="earley"):
    if kind == "grammar":
        return sieve.compile_grammar(tok, source, backend=backend)
    if kind == "regex":
        return sieve.compile_regex(tok, source, backend=backend)
    if kind == "lark":
        return sieve.compile_lark(tok, source, backend=backend)
    if kind == "structural":
        return sieve.compile_structural_tag(tok, source, backend=backend)
    return sieve.compile_json_schema(tok, source, escapes=escapes, backend=backend)


def walks(tok, compiled, oracle, seeds, max_steps):
    """Random walks through allowed tokens, checking every mask against ``oracle``."""
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    checked = 0
    for seed in seeds:
        rng = random.Random(seed)
        matcher = sieve.Matcher(compiled)
        output = b""
        for _ in range(max_steps):
            matcher.fill_next_token_bitmask(bitmask)
            got = bits(bitmask[0], tok.vocab_size)
            expected = oracle(matcher, output)
            diff = [t for t in range(tok.vocab_size) if got[t] != expected[t]]
            assert not diff, (
                f"seed {seed}, after {output!r}: tokens {diff[:10]} differ "
                f"(sieve {[got[t] for t in diff[:10]]})"
            )
            checked += 1
            allowed = [t for t in range(tok.vocab_size) if got[t]]
            if not allowed:
                break
            token = rng.choice(allowed)
            assert matcher.accept_token(token)
            if matcher.is_terminated():
                break
            output += tok.token_bytes(token)
    return checked


@pytest.mark.parametrize("kind,source,sentences", FINITE, ids=lambda x: str(x)[:30])
def test_finite_languages_match_the_enumeration_oracle(tok, token_bytes, kind, source, sentences):
    # Canonical escapes: one spelling per string, so the listed sentences are all of them.
    compiled = compile_any(tok, kind, source, escapes="canonical")
    eos = tok.eos_token_ids

    def oracle(matcher, output):
        return finite_mask(output, sentences, token_bytes, eos)

    assert walks(tok, compiled, oracle, seeds=range(8), max_steps=40) >= 8


@pytest.mark.parametrize("backend", ["lr", "token-dfa", "auto"])
@pytest.mark.parametrize("kind,source,sentences", FINITE, ids=lambda x: str(x)[:30])
def test_every_backend_matches_the_enumeration_oracle(tok, token_bytes, kind, source, sentences, backend):
    # A finite language is regular, so the token DFA takes every one; the LR backend may
    # refuse one that is not LR(1) over bytes, and must say so.
    try:
        compiled = compile_any(tok, kind, source, escapes="canonical", backend=backend)
    except sieve.CompileError as e:
        assert backend == "lr" and "the lr backend refuses this grammar" in str(e), str(e)
        return
    assert compiled.backend in ("earley", "lr", "token-dfa")
    if backend != "auto":
        assert compiled.backend == backend
    eos = tok.eos_token_ids

    def oracle(matcher, output):
        return finite_mask(output, sentences, token_bytes, eos)

    assert walks(tok, compiled, oracle, seeds=range(4), max_steps=40) >= 4


@pytest.mark.parametrize("kind,source", OPEN, ids=lambda x: str(x)[:30])
def test_open_languages_match_the_bytewise_oracle(tok, token_bytes, kind, source):
    compiled = compile_any(tok, kind, source)
    eos = tok.eos_token_ids

    def oracle(matcher, output):
        return bytewise_mask(matcher, token_bytes, eos)

    assert walks(tok, compiled, oracle, seeds=range(6), max_steps=30) >= 6


def test_sampled_outputs_are_sentences(tok):
    """Every walk that terminates produced a sentence: the enumeration oracle's other half."""
    compiled = sieve.compile_regex(tok, "[ab]{1,3}")
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    finished = 0
    for seed in range(20):
        rng = random.Random(seed)
        matcher = sieve.Matcher(compiled)
        output = b""
        while not matcher.is_terminated():
            matcher.fill_next_token_bitmask(bitmask)
            allowed = [t for t, b in enumerate(bits(bitmask[0], tok.vocab_size)) if b]
            token = rng.choice(allowed)
            assert matcher.accept_token(token)
            output += tok.token_bytes(token)
        assert 1 <= len(output) <= 3 and set(output) <= set(b"ab"), output
        finished += 1
    assert finished == 20


def test_the_batch_fill_equals_single_fills_at_every_size(tok):
    """Rows of fill_next_token_bitmasks equal the matchers' own fills (threads from 16 on)."""
    compiled = compile_any(tok, *OPEN[0])
    for size in (1, 3, 16, 40):
        matchers = []
        for seed in range(size):
            rng = random.Random(seed)
            matcher = sieve.Matcher(compiled)
            row = sieve.allocate_token_bitmask(1, tok.vocab_size)
            for _ in range(rng.randrange(8)):
                matcher.fill_next_token_bitmask(row)
                allowed = [t for t, b in enumerate(bits(row[0], tok.vocab_size)) if b]
                matcher.accept_token(rng.choice(allowed))
            matchers.append(matcher)
        batch = sieve.allocate_token_bitmask(size, tok.vocab_size)
        sieve.fill_next_token_bitmasks(matchers, batch)
        single = sieve.allocate_token_bitmask(size, tok.vocab_size)
        for i, matcher in enumerate(matchers):
            matcher.fill_next_token_bitmask(single, i)
        np.testing.assert_array_equal(batch, single)
        # With indices (XGrammar's argument): matcher i fills row indices[i] of a taller
        # bitmask, and the other rows keep what they held.
        indices = [2 * (size - 1 - i) + 1 for i in range(size)]
        scattered = np.full((2 * size, batch.shape[1]), 7, dtype=np.int32)
        sieve.fill_next_token_bitmasks(matchers, scattered, indices=indices)
        for row in range(2 * size):
            if row in indices:
                np.testing.assert_array_equal(scattered[row], single[indices.index(row)])
            else:
                assert (scattered[row] == 7).all(), row
