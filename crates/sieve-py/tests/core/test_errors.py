"""Bad input raises a clear Python exception, never a crash, and leaves the matcher as it
was."""


import numpy as np
import pytest

import sieve


@pytest.fixture(scope="module")
def compiled(tok):
    return sieve.compile_json_schema(tok, {"type": "array", "items": {"type": "integer"}})


@pytest.fixture
def matcher(compiled):
    m = sieve.Matcher(compiled)
    assert m.accept_string("[1")
    return m


def unchanged(matcher):
    """The matcher still holds `[1` and nothing after it."""
    fork = matcher.fork()
    assert fork.accept_string("2,3]") and fork.can_terminate()


@pytest.mark.parametrize("bad", [-1, 423, 2**32, 2**40])
def test_unknown_token_ids(tok, matcher, bad):
    with pytest.raises(ValueError, match=f"unknown token id {bad}"):
        matcher.accept_token(bad)
    with pytest.raises(ValueError, match="unknown token id"):
        matcher.validate_tokens([3, bad])
    with pytest.raises(ValueError, match="unknown token id"):
        tok.token_bytes(bad)
    unchanged(matcher)


def test_wrong_bitmasks(tok, matcher):
    with pytest.raises(ValueError, match="bitmask has 13 words, the vocabulary needs 14"):
        matcher.fill_next_token_bitmask(np.zeros((1, 13), dtype=np.int32))
    with pytest.raises(TypeError, match="dtype int32, this one int64"):
        matcher.fill_next_token_bitmask(np.zeros((1, 14), dtype=np.int64))
    with pytest.raises(ValueError, match="C-contiguous"):
        matcher.fill_next_token_bitmask(np.zeros((1, 28), dtype=np.int32)[:, ::2])
    with pytest.raises(ValueError, match="shape"):
        matcher.fill_next_token_bitmask(np.zeros((1, 1, 14), dtype=np.int32))
    with pytest.raises(IndexError, match="row 2 of a bitmask of 2 rows"):
        matcher.fill_next_token_bitmask(np.zeros((2, 14), dtype=np.int32), 2)
    with pytest.raises(TypeError, match="int32 numpy array or torch tensor"):
        matcher.fill_next_token_bitmask([0] * 14)
    readonly = np.zeros((1, 14), dtype=np.int32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="cannot be written"):
        matcher.fill_next_token_bitmask(readonly)
    unchanged(matcher)


def test_wrong_batches(tok, compiled, matcher):
    other_tok = sieve.Tokenizer.from_file(
        __import__("conftest").DATA / "tokenizer.json", vocab_size=500
    )
    other = sieve.Matcher(sieve.compile_regex(other_tok, "x"))
    with pytest.raises(ValueError, match="vocabulary of 500 tokens"):
        sieve.fill_next_token_bitmasks([matcher, other], np.zeros((2, 16), dtype=np.int32))
    with pytest.raises(ValueError, match="2 matchers"):
        sieve.fill_next_token_bitmasks([matcher, matcher.fork()], np.zeros((1, 14), np.int32))
    with pytest.raises(RuntimeError):
        sieve.fill_next_token_bitmasks([matcher, matcher], np.zeros((2, 14), np.int32))
    with pytest.raises(TypeError):
        sieve.fill_next_token_bitmasks([matcher, "x"], np.zeros((2, 14), np.int32))
    sieve.fill_next_token_bitmasks([], np.zeros((0, 14), np.int32))
    untouched = np.full((3, 14), 5, np.int32)
    for indices, message in [([0], "2 matchers but 1 rows"), ([1, 1], "row 1 is given to two"),
                             ([0, 3], "row 3 is past")]:
        with pytest.raises(ValueError, match=message):
            sieve.fill_next_token_bitmasks([matcher, matcher.fork()], untouched, indices=indices)
        assert (untouched == 5).all()
    unchanged(matcher)


def test_rollback_past_the_start(matcher):
    with pytest.raises(ValueError, match="cannot roll back 2 steps: only 1"):
        matcher.rollback(2)
    unchanged(matcher)
    with pytest.raises(OverflowError):
        matcher.rollback(-1)


def test_apply_checks_its_arguments(tok):
    bitmask = sieve.allocate_token_bitmask(2, tok.vocab_size)
    with pytest.raises(ValueError, match="2 rows, the logits 3"):
        sieve.apply_token_bitmask_inplace(np.zeros((3, 423), np.float32), bitmask)
    with pytest.raises(TypeError, match="dtype int32"):
        sieve.apply_token_bitmask_inplace(np.zeros((2, 423), np.float32), bitmask.astype(np.int64))
    with pytest.raises(TypeError, match="torch tensor or a numpy array"):
        sieve.apply_token_bitmask_inplace([[0.0] * 423] * 2, bitmask)
    with pytest.raises(IndexError):
        sieve.apply_token_bitmask_inplace(np.zeros((2, 423), np.float32), bitmask, indices=[0, 5])
    with pytest.raises(ValueError):
        sieve.allocate_token_bitmask(-1, 10)


@pytest.mark.parametrize(
    "schema,message",
    [
        ('{"type": "object",', r"<schema>:1:\d+: not JSON"),
        ({"type": "strin"}, r"<schema>: /type: `type`: .*strin"),
        ({"properties": {"a": {"minimum": "x"}}}, r"/properties/a/minimum: `minimum`"),
        ({"$ref": "#/definitions/missing"}, r"/\$ref: `\$ref`"),
        ({"type": "integer", "minimum": 5, "maximum": 1}, r"<schema>: "),
        ({"type": "array", "uniqueItems": True}, r"/uniqueItems: `uniqueItems`"),
    ],
)
def test_malformed_schemas(tok, schema, message):
    with pytest.raises(sieve.CompileError, match=message):
        sieve.compile_json_schema(tok, schema)


def test_schema_not_serialisable(tok):
    with pytest.raises(TypeError, match="json.dumps"):
        sieve.compile_json_schema(tok, {"type": object()})


def test_grammar_errors_are_located(tok):
    with pytest.raises(sieve.CompileError) as error:
        sieve.compile_grammar(tok, 'root ::= "a" undefined\n')
    text = str(error.value)
    assert "<grammar>:1:" in text and "undefined" in text and "^" in text
    with pytest.raises(sieve.CompileError, match="<grammar>:2:"):
        sieve.compile_grammar(tok, 'root ::= "a"\nx ::= ( "b"\n')
    with pytest.raises(sieve.CompileError, match="start"):
        sieve.compile_grammar(tok, 'root ::= "a"', root_rule="start")
    assert issubclass(sieve.CompileError, ValueError)


def test_regex_errors_are_located(tok):
    with pytest.raises(sieve.CompileError, match=r"<regex>:1:\d+:"):
        sieve.compile_regex(tok, "a(b")
    with pytest.raises(sieve.CompileError):
        sieve.compile_regex(tok, r"(a)\1")


@pytest.mark.parametrize(
    "option,value", [("whitespace", "wide"), ("order", "random"), ("escapes", "none")]
)
def test_bad_options(tok, option, value):
    with pytest.raises(ValueError, match=f"{option}=\"{value}\""):
        sieve.compile_json_schema(tok, {}, **{option: value})


def test_bad_ahead_of_time(tok):
    with pytest.raises(ValueError, match="seconds"):
        sieve.compile_regex(tok, "a", ahead_of_time=-1.0)
    with pytest.raises(TypeError, match="ahead_of_time"):
        sieve.compile_regex(tok, "a", ahead_of_time="yes")


def test_bad_tokenizer_files(tmp_path):
    broken = tmp_path / "tokenizer.json"
    broken.write_text('{"model": {"type": "BPE", "vocab": {"a": 0, ')
    with pytest.raises(ValueError, match="tokenizer.json"):
        sieve.Tokenizer.from_file(broken)
    with pytest.raises(ValueError, match="missing.tiktoken"):
        sieve.Tokenizer.from_file(tmp_path / "missing.tiktoken")
    plain = tmp_path / "list.txt"
    plain.write_text('"a"\nnot a token\n')
    with pytest.raises(ValueError, match="line 2"):
        sieve.Tokenizer.from_file(plain)
    good = tmp_path / "ok.txt"
    good.write_text('"a"\n"b"\n')
    with pytest.raises(ValueError, match="EOS id"):
        sieve.Tokenizer.from_file(good, stop_token_ids=[9])
    with pytest.raises(TypeError, match="fast tokenizer"):
        sieve.Tokenizer.from_huggingface(object())
    with pytest.raises(TypeError):
        sieve.LogitsProcessor("not compiled")


def test_structural_tag_errors_are_located(tok):
    with pytest.raises(sieve.CompileError, match=r"<structural tag>: /format"):
        sieve.compile_structural_tag(tok, {"type": "structural_tag", "format": {"type": "nope"}})
    with pytest.raises(sieve.CompileError, match=r"<structural tag>: .*not JSON"):
        sieve.compile_structural_tag(tok, '{"type": ')
    with pytest.raises(TypeError, match="json.dumps"):
        sieve.compile_structural_tag(tok, {"format": object()})


def test_lark_errors_are_located(tok):
    with pytest.raises(sieve.CompileError) as error:
        sieve.compile_lark(tok, 'start: "a" missing\n')
    text = str(error.value)
    assert "<lark>:1:" in text and "missing" in text and "^" in text


def test_backends_are_chosen_by_name_and_refusals_say_why(tok):
    assert sieve.compile_regex(tok, "[0-9]+").backend == "earley"
    assert sieve.compile_regex(tok, "[0-9]+", backend="token-dfa").backend == "token-dfa"
    # auto: Earley just in time; the token DFA for a small regular constraint ahead of time.
    assert sieve.compile_regex(tok, "[0-9]+", backend="auto").backend == "earley"
    ahead = sieve.compile_regex(tok, "[0-9]+", backend="auto", ahead_of_time=True)
    assert ahead.backend == "token-dfa"
    recursive = 'root ::= "(" root ")" | "x"'
    assert sieve.compile_grammar(tok, recursive, backend="auto", ahead_of_time=True).backend == "earley"
    with pytest.raises(sieve.CompileError, match="the grammar is recursive"):
        sieve.compile_grammar(tok, recursive, backend="token-dfa")
    with pytest.raises(sieve.CompileError, match="is not LR\\(1\\)"):
        sieve.compile_grammar(tok, 'root ::= root root | "a"', backend="lr")
    with pytest.raises(ValueError, match="unknown backend \"lalr\""):
        sieve.compile_regex(tok, "a", backend="lalr")
