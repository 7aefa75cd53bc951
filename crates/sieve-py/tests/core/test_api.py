"""The API end to end, as an XGrammar or llguidance user would call it."""

import base64
import json
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import numpy as np
import pytest

import sieve

from oracle import bits

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "ok": {"type": "boolean"},
    },
    "required": ["name", "ok"],
    "additionalProperties": False,
}


def allowed(tok, bitmask, row=0):
    return [t for t, b in enumerate(bits(bitmask[row], tok.vocab_size)) if b]


def encode(tok, text: bytes):
    """Greedy longest-match token ids for ``text`` (enough to feed a matcher)."""
    by_bytes = {}
    for i in range(tok.vocab_size):
        data = tok.token_bytes(i)
        if data:
            by_bytes.setdefault(data, i)
    ids, i = [], 0
    while i < len(text):
        for j in range(len(text), i, -1):
            if text[i:j] in by_bytes:
                ids.append(by_bytes[text[i:j]])
                i = j
                break
        else:
            raise AssertionError(f"no token for {text[i:]!r}")
    return ids


def assert_same_masks(tok, first, second, text: bytes):
    """Matchers of the two compiled grammars give equal masks at every token of ``text``."""
    a, b = sieve.Matcher(first), sieve.Matcher(second)
    ma = sieve.allocate_token_bitmask(1, tok.vocab_size)
    mb = sieve.allocate_token_bitmask(1, tok.vocab_size)
    for token in encode(tok, text):
        a.fill_next_token_bitmask(ma)
        b.fill_next_token_bitmask(mb)
        np.testing.assert_array_equal(ma, mb)
        assert a.accept_token(token) and b.accept_token(token)


def test_tokenizer_from_tokenizer_json(tok):
    assert tok.vocab_size == 423
    assert tok.eos_token_ids == [0]
    assert tok.is_special(0) and tok.is_special(1)
    assert tok.token_bytes(0) == b""
    assert tok.token_bytes(3) == b'"'
    assert "vocab_size=423" in repr(tok)


def test_tokenizer_overrides(tok):
    from conftest import DATA

    wide = sieve.Tokenizer.from_file(DATA / "tokenizer.json", vocab_size=500, stop_token_ids=[1])
    assert wide.vocab_size == 500
    assert wide.eos_token_ids == [1]
    assert wide.is_special(499) and wide.token_bytes(499) == b""
    compiled = sieve.compile_regex(wide, "yes")
    matcher = sieve.Matcher(compiled)
    assert matcher.accept_string("yes")
    bitmask = sieve.allocate_token_bitmask(1, wide.vocab_size)
    assert bitmask.shape == (1, 16)
    matcher.fill_next_token_bitmask(bitmask)
    assert allowed(wide, bitmask) == [1]


def test_tokenizer_from_tiktoken_and_plain_files(tmp_path):
    tiktoken = tmp_path / "tiny.tiktoken"
    pieces = [b"a", b"b", b"ab", b"yes", b"no", b" "]
    tiktoken.write_text(
        "".join(f"{base64.b64encode(p).decode()} {i}\n" for i, p in enumerate(pieces))
    )
    tok = sieve.Tokenizer.from_file(tiktoken, vocab_size=8, stop_token_ids=[7])
    assert tok.vocab_size == 8 and tok.eos_token_ids == [7]
    assert [tok.token_bytes(i) for i in range(6)] == pieces

    plain = tmp_path / "tiny.txt"
    plain.write_text('"yes"\n"no"\n"y"\n"e"\n"s"\nspecial:"<eos>"\n')
    tok = sieve.Tokenizer.from_file(plain, stop_token_ids=[5])
    assert tok.vocab_size == 6 and tok.eos_token_ids == [5]
    matcher = sieve.Matcher(sieve.compile_grammar(tok, 'root ::= "yes" | "no"'))
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    matcher.fill_next_token_bitmask(bitmask)
    assert allowed(tok, bitmask) == [0, 1, 2]
    assert matcher.accept_token(2) and matcher.accept_token(3) and matcher.accept_token(4)
    matcher.fill_next_token_bitmask(bitmask)
    assert allowed(tok, bitmask) == [5]
    assert matcher.accept_token(5) and matcher.is_terminated()


def test_fresh_caches_keep_the_vocabulary_and_the_masks(tok):
    fresh = tok.with_fresh_caches()
    assert isinstance(fresh, sieve.Tokenizer)
    assert fresh.vocab_size == tok.vocab_size
    assert fresh.eos_token_ids == tok.eos_token_ids
    assert [fresh.token_bytes(i) for i in range(tok.vocab_size)] == [
        tok.token_bytes(i) for i in range(tok.vocab_size)
    ]
    assert_same_masks(
        tok,
        sieve.compile_json_schema(tok, PERSON),
        sieve.compile_json_schema(fresh, PERSON),
        b'{"name":"Ada","ok":true}',
    )


def test_schema_as_dict_or_string_compiles_the_same_language(tok):
    for schema in (PERSON, json.dumps(PERSON)):
        matcher = sieve.Matcher(sieve.compile_json_schema(tok, schema))
        assert matcher.accept_string('{"name":"Ada","ok":true}')
        assert matcher.can_terminate()


def test_schema_options(tok):
    flexible = sieve.Matcher(sieve.compile_json_schema(tok, PERSON, whitespace="flexible"))
    assert flexible.accept_string('{ "name": "Ada", "ok": true }')
    compact = sieve.Matcher(sieve.compile_json_schema(tok, PERSON))
    assert not compact.accept_string('{ "name"')
    any_order = sieve.Matcher(sieve.compile_json_schema(tok, PERSON, order="any"))
    assert any_order.accept_string('{"ok":false,"name":"Bo"}')
    # Property names are spelled one way by default; values accept every escape.
    default = sieve.Matcher(sieve.compile_json_schema(tok, PERSON))
    assert not default.accept_string('{"\\u006eame"')
    assert default.accept_string('{"name":"\\u0041da"')
    canonical = sieve.Matcher(sieve.compile_json_schema(tok, PERSON, escapes="canonical"))
    assert not canonical.accept_string('{"name":"\\u0041da"')
    escaped = sieve.Matcher(sieve.compile_json_schema(tok, PERSON, key_escapes="any"))
    assert escaped.accept_string('{"\\u006eame"')
    with pytest.raises(ValueError, match="key_escapes"):
        sieve.compile_json_schema(tok, PERSON, key_escapes="raw")
    # Listed values too, unless asked otherwise.
    listed = {"enum": ["ok", "no"]}
    one_way = sieve.Matcher(sieve.compile_json_schema(tok, listed))
    assert not one_way.accept_string('"\\u006fk"')
    assert one_way.accept_string('"ok"')
    every_way = sieve.Matcher(sieve.compile_json_schema(tok, listed, literal_escapes="any"))
    assert every_way.accept_string('"\\u006fk"')
    with pytest.raises(ValueError, match="literal_escapes"):
        sieve.compile_json_schema(tok, listed, literal_escapes="raw")


def test_lenient_mode_lists_what_it_dropped(tok):
    schema = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    with pytest.raises(sieve.CompileError, match="uniqueItems"):
        sieve.compile_json_schema(tok, schema)
    compiled = sieve.compile_json_schema(tok, schema, lenient=True)
    assert len(compiled.warnings) == 1 and "uniqueItems" in compiled.warnings[0]
    assert sieve.compile_json_schema(tok, PERSON).warnings == []


def test_ahead_of_time_gives_the_same_masks(tok):
    lazy = sieve.compile_json_schema(tok, PERSON)
    for ahead in (True, 0.5, False):
        eager = sieve.compile_json_schema(tok, PERSON, ahead_of_time=ahead)
        assert_same_masks(tok, lazy, eager, b'{"name":"Ada","ok":true}')


def test_matcher_lifecycle(tok):
    compiled = sieve.compile_json_schema(tok, PERSON)
    matcher = sieve.Matcher(compiled)
    ids = encode(tok, b'{"name":"Ada","ok":true}')
    assert matcher.validate_tokens(ids + [0]) == len(ids) + 1
    assert not matcher.is_terminated()
    for token in ids:
        assert not matcher.can_terminate()
        assert matcher.accept_token(token)
    assert matcher.can_terminate()
    assert not matcher.accept_token(encode(tok, b"x")[0])
    assert matcher.accept_token(0)
    assert matcher.is_terminated() and not matcher.can_terminate()
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    matcher.fill_next_token_bitmask(bitmask)
    assert allowed(tok, bitmask) == []
    assert not matcher.accept_token(3)
    matcher.rollback(1)
    assert not matcher.is_terminated() and matcher.can_terminate()
    matcher.rollback(len(ids))
    assert not matcher.can_terminate()
    assert matcher.validate_tokens(ids) == len(ids)
    assert matcher.accept_string('{"name":"')
    matcher.reset()
    assert matcher.accept_string('{"name":"Ada"')
    assert "steps=1" in repr(matcher)


def test_fork_is_independent(tok):
    matcher = sieve.Matcher(sieve.compile_regex(tok, "(yes|no)!"))
    assert matcher.accept_string("ye")
    fork = matcher.fork()
    assert fork.accept_string("s!") and fork.can_terminate()
    assert not matcher.can_terminate()
    assert not matcher.accept_string("o")
    assert matcher.accept_string("s")


def test_jump_forward_string(tok):
    # Canonical escapes: `\` cannot start a key, so `name` is forced.
    matcher = sieve.Matcher(sieve.compile_json_schema(tok, PERSON, escapes="canonical"))
    assert matcher.find_jump_forward_string() == '{"name":"'
    assert matcher.accept_string('{"name":"Ada"')
    assert matcher.find_jump_forward_string() == ',"ok":'
    assert matcher.accept_string(',"ok":')
    assert matcher.find_jump_forward_string() == ""
    snowman = sieve.Matcher(sieve.compile_regex(tok, "a☃b"))
    assert snowman.find_jump_forward_string() == "a☃b"
    assert snowman.accept_string(b"a\xe2")
    # Forced bytes that end inside a character are cut to whole characters.
    assert snowman.find_jump_forward_string() == ""


def test_bitmask_layout_and_torch_free_apply(tok):
    bitmask = sieve.allocate_token_bitmask(2, tok.vocab_size)
    assert bitmask.dtype == np.int32 and bitmask.shape == (2, 14)
    assert (bitmask == -1).all()
    matcher = sieve.Matcher(sieve.compile_regex(tok, "yes|no"))
    matcher.fill_next_token_bitmask(bitmask, 1)
    assert (bitmask[0] == -1).all()
    expected = [t for t in range(tok.vocab_size) if tok.token_bytes(t) and (
        b"yes".startswith(tok.token_bytes(t)) or b"no".startswith(tok.token_bytes(t)))]
    assert allowed(tok, bitmask, 1) == expected
    logits = np.zeros((2, 430), dtype=np.float32)
    sieve.apply_token_bitmask_inplace(logits, bitmask)
    assert np.isfinite(logits[0, :423]).all() and np.isinf(logits[0, 448 - 18:]).all()
    assert [t for t in range(430) if np.isfinite(logits[1, t])] == expected
    one_row = np.zeros(423, dtype=np.float32)
    sieve.apply_token_bitmask_inplace(one_row, bitmask[1])
    assert [t for t in range(423) if np.isfinite(one_row[t])] == expected
    picked = np.zeros((3, 423), dtype=np.float32)
    sieve.apply_token_bitmask_inplace(picked, bitmask[1:], indices=[2])
    assert np.isfinite(picked[:2]).all()
    assert [t for t in range(423) if np.isfinite(picked[2, t])] == expected


def test_a_one_dimensional_bitmask_is_one_row(tok):
    matcher = sieve.Matcher(sieve.compile_regex(tok, "no"))
    row = np.zeros(14, dtype=np.int32)
    matcher.fill_next_token_bitmask(row)
    assert row.any()
    padded = np.full((1, 20), -1, dtype=np.int32)
    matcher.fill_next_token_bitmask(padded)
    assert (padded[0, 14:] == 0).all()
    np.testing.assert_array_equal(padded[0, :14], row)


def test_compiled_grammars_are_shared_across_threads_and_not_picklable(tok):
    compiled = sieve.compile_json_schema(tok, PERSON)
    ids = encode(tok, b'{"name":"Ada","ok":true}')
    masks = {}
    lock = threading.Lock()

    def run(worker):
        matcher = sieve.Matcher(compiled)
        bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
        rows = []
        for token in ids:
            matcher.fill_next_token_bitmask(bitmask)
            rows.append(bitmask.copy())
            assert matcher.accept_token(token)
        with lock:
            masks[worker] = rows

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(run, range(8)))
    for rows in masks.values():
        for a, b in zip(rows, masks[0]):
            np.testing.assert_array_equal(a, b)
    for value in (compiled, tok):
        with pytest.raises(TypeError, match="not picklable"):
            pickle.dumps(value)


def test_generated_json_validates(tok):
    """Sampling uniformly among allowed tokens until EOS gives schema-valid JSON."""
    import random

    compiled = sieve.compile_json_schema(tok, PERSON)
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    for seed in range(10):
        rng = random.Random(seed)
        matcher, out = sieve.Matcher(compiled), b""
        while not matcher.is_terminated():
            # Past 60 tokens, take the jump-forward string or close the string quickly.
            matcher.fill_next_token_bitmask(bitmask)
            choices = allowed(tok, bitmask)
            if 0 in choices or len(out) > 40:
                closing = [t for t in choices if t == 0 or tok.token_bytes(t)[:1] in (b'"', b"}", b",", b"t", b"f")]
                choices = closing or choices
            token = rng.choice(choices)
            assert matcher.accept_token(token)
            out += tok.token_bytes(token)
        jsonschema.validate(json.loads(out), PERSON)


def test_a_token_budget_ends_every_walk_in_time(tok):
    """With max_tokens, uniform sampling among allowed tokens of an unbounded schema always
    ends with EOS on valid JSON within the budget."""
    import random

    schema = {
        "type": "object",
        "properties": {"note": {"type": "string"}, "xs": {"type": "array"}},
        "required": ["note", "xs"],
    }
    compiled = sieve.compile_json_schema(tok, schema)
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    for seed in range(10):
        rng = random.Random(seed)
        matcher, out, used = sieve.Matcher(compiled, max_tokens=30), b"", 0
        assert matcher.remaining_tokens == 30
        while not matcher.is_terminated():
            matcher.fill_next_token_bitmask(bitmask)
            token = rng.choice(allowed(tok, bitmask))
            assert matcher.accept_token(token)
            used += 1
            out += tok.token_bytes(token)
        assert used <= 30 and matcher.remaining_tokens == 30 - used
        jsonschema.validate(json.loads(out), schema)
    assert sieve.Matcher(compiled).remaining_tokens is None
    with pytest.raises(ValueError, match="budget of 3 tokens"):
        sieve.Matcher(compiled, max_tokens=3)
    with pytest.raises(ValueError, match="budget of 3 tokens"):
        sieve.LogitsProcessor(compiled, max_tokens=3)
    tight = sieve.Matcher(sieve.compile_regex(tok, "a+"), max_tokens=2)
    assert tight.accept_string("aaa")
    assert tight.accept_token(encode(tok, b"a")[0])
    # One token left: only EOS fits.
    assert not tight.accept_token(encode(tok, b"a")[0])
    assert tight.accept_token(0)


def test_structural_tag_as_dict_or_string(tok):
    tag = {
        "type": "structural_tag",
        "format": {"type": "tag", "begin": "<r>",
                   "content": {"type": "json_schema", "json_schema": {"type": "integer"}},
                   "end": "</r>"},
    }
    for source in (tag, json.dumps(tag)):
        matcher = sieve.Matcher(sieve.compile_structural_tag(tok, source))
        assert matcher.accept_string("<r>-12</r>") and matcher.can_terminate()
        assert not sieve.Matcher(sieve.compile_structural_tag(tok, source)).accept_string("<r>x")


def test_per_rule_token_limits_close_every_region_in_time(tok):
    """A rule with its own max_tokens (GBNF's `name[max_tokens=N]`, `any_text`'s field) is
    spelled within that many tokens by any sampler, with and without a budget, on every
    backend: the tokens that hold a byte between the brackets are never more than the
    limit."""
    import random

    grammar = 'root ::= "<" w ">"\nw[max_tokens=3] ::= [a-z]+ (" " [a-z]+)*'
    tag = {
        "type": "structural_tag",
        "format": {"type": "tag", "begin": "<",
                   "content": {"type": "any_text", "max_tokens": 3}, "end": ">"},
    }
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    longest = 0
    backends = ("earley", "lr", "token-dfa")
    compiled_all = [sieve.compile_grammar(tok, grammar, backend=b) for b in backends]
    compiled_all += [sieve.compile_structural_tag(tok, tag, backend=b) for b in backends]
    for compiled in compiled_all:
        for seed in range(8):
            for budget in (None, 12):
                rng = random.Random(seed)
                matcher, pieces = sieve.Matcher(compiled, max_tokens=budget), []
                while not matcher.is_terminated():
                    matcher.fill_next_token_bitmask(bitmask)
                    token = rng.choice(allowed(tok, bitmask))
                    assert matcher.accept_token(token)
                    if not matcher.is_terminated():
                        pieces.append(tok.token_bytes(token))
                    assert len(pieces) < 100
                out = b"".join(pieces)
                assert out.startswith(b"<") and out.endswith(b">")
                start, end, at, holding = 1, len(out) - 1, 0, 0
                for piece in pieces:
                    if at < end and at + len(piece) > start:
                        holding += 1
                    at += len(piece)
                assert holding <= 3, out
                longest = max(longest, holding)
    assert longest == 3
    with pytest.raises(ValueError, match="max_tokens=1 is too small"):
        sieve.compile_grammar(tok, 'root ::= "<" w ">"\nw[max_tokens=1] ::= [a-z]+', backend="lr")
