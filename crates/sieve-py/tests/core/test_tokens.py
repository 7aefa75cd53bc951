"""Token terminals through Python: a grammar names a special token of the tokenizer
(``<|pad|>`` is id 1 in the test tokenizer), and masks allow it exactly where the grammar
takes it (docs/token-terminals.md)."""

import pytest

import sieve

from oracle import bits


def allowed(tok, matcher):
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    matcher.fill_next_token_bitmask(bitmask)
    return [t for t, b in enumerate(bits(bitmask[0], tok.vocab_size)) if b]


def first_text_token(tok, data: bytes) -> int:
    return next(i for i in range(tok.vocab_size) if tok.token_bytes(i) == data)


@pytest.mark.parametrize("kind", ["gbnf", "lark"])
def test_a_special_token_is_allowed_exactly_where_the_grammar_names_it(tok, kind):
    if kind == "gbnf":
        compiled = sieve.compile_grammar(tok, 'root ::= "a" <|pad|> "b"')
    else:
        compiled = sieve.compile_lark(tok, 'start: "a" <|pad|> "b"')
    matcher = sieve.Matcher(compiled)
    a, b = first_text_token(tok, b"a"), first_text_token(tok, b"b")
    assert allowed(tok, matcher) == [a]
    assert matcher.accept_token(a)
    assert allowed(tok, matcher) == [1]
    assert matcher.accept_token(1)
    assert allowed(tok, matcher) == [b]
    assert matcher.accept_token(b)
    assert allowed(tok, matcher) == [0]


def test_by_id_and_negated_sets(tok):
    compiled = sieve.compile_grammar(tok, "root ::= <[1]> <[^1]>")
    matcher = sieve.Matcher(compiled)
    assert allowed(tok, matcher) == [1]
    assert matcher.accept_token(1)
    after = allowed(tok, matcher)
    # Every token but <|pad|> and the EOS id 0 (a negated set never holds EOS).
    assert after == list(range(2, tok.vocab_size))


def test_an_unknown_special_token_is_a_located_error(tok):
    with pytest.raises(sieve.CompileError, match=r"1:10.*<\|nope\|>"):
        sieve.compile_grammar(tok, "root ::= <|nope|>")
