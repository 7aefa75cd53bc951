"""Speculative decoding: draft masks (chains, XGrammar's ``traverse_draft_tree`` layout and
parent indices) equal the masks a fork gives after accepting each node's path and the
byte-path oracle; the matcher is left as it was; bad input raises before anything is
written; the batch calls equal one matcher at a time."""

import random

import numpy as np
import pytest

import sieve

from oracle import bits, bytewise_mask

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 6},
        "tags": {"type": "array", "items": {"type": "integer"}, "maxItems": 3},
    },
    "required": ["name"],
}

SENTINEL = np.int32(-559038737)  # 0xDEADBEEF


def state(matcher, words):
    """Everything observable about a matcher, its mask included."""
    mask = np.zeros(words, dtype=np.int32)
    matcher.fill_next_token_bitmask(mask)
    return (
        repr(matcher),
        matcher.is_terminated(),
        matcher.can_terminate(),
        matcher.remaining_tokens,
        mask.tobytes(),
    )


def mask_after(matcher, path, words):
    """The mask of a fork that accepted ``path``, or None when a token is refused."""
    fork = matcher.fork()
    for token in path:
        if not fork.accept_token(token):
            return None
    mask = np.zeros(words, dtype=np.int32)
    fork.fill_next_token_bitmask(mask)
    return mask, fork


def random_tree(matcher, tok, nodes, rng):
    """Parents and tokens of a random draft tree: mostly allowed tokens, sometimes EOS or
    any id."""
    words = (tok.vocab_size + 31) // 32
    forks = [matcher.fork()]
    tokens, parents = [0], [-1]
    for node in range(1, nodes):
        parent = rng.randrange(node) if rng.random() < 0.3 else max(0, node - 1 - rng.randrange(2))
        fork = forks[parent]
        roll = rng.random()
        if roll < 0.1 or fork is None:
            token = rng.randrange(tok.vocab_size)
        elif roll < 0.2:
            token = tok.eos_token_ids[0]
        else:
            mask = np.zeros(words, dtype=np.int32)
            fork.fill_next_token_bitmask(mask)
            allowed = [t for t, b in enumerate(bits(mask, tok.vocab_size)) if b]
            token = rng.choice(allowed) if allowed else rng.randrange(tok.vocab_size)
        child = None
        if fork is not None:
            child = fork.fork()
            if not child.accept_token(token):
                child = None
        forks.append(child)
        tokens.append(token)
        parents.append(parent)
    return tokens, parents


def links(parents):
    """XGrammar's first-child and next-sibling arrays for a tree given by parents."""
    n = len(parents)
    next_token, next_sibling = [-1] * n, [-1] * n
    last_child = [-1] * n
    for node in range(1, n):
        p = parents[node]
        if last_child[p] == -1:
            next_token[p] = node
        else:
            next_sibling[last_child[p]] = node
        last_child[p] = node
    return next_token, next_sibling


def path_of(parents, tokens, node):
    path = []
    while parents[node] != -1:
        path.append(tokens[node])
        node = parents[node]
    return path[::-1]


@pytest.mark.parametrize("max_tokens", [None, 14])
@pytest.mark.parametrize("seed", range(4))
def test_tree_rows_equal_forks_that_accepted_the_path(tok, token_bytes, max_tokens, seed):
    rng = random.Random(seed)
    compiled = sieve.compile_json_schema(tok, SCHEMA)
    matcher = sieve.Matcher(compiled, max_tokens=max_tokens)
    words = (tok.vocab_size + 31) // 32
    eos = tok.eos_token_ids
    for _ in range(3):
        tokens, parents = random_tree(matcher, tok, 18, rng)
        before = state(matcher, words)
        by_parents = np.full((len(tokens) + 1, words), SENTINEL, dtype=np.int32)
        tree = sieve.DraftTree(tokens, parents)
        assert len(tree) == len(tokens)
        accepted = matcher.fill_draft_tree_bitmasks(tree, by_parents)
        assert state(matcher, words) == before
        assert (by_parents[-1] == SENTINEL).all(), "rows past the tree are untouched"
        by_links = np.zeros((len(tokens), words), dtype=np.int32)
        next_token, next_sibling = links(parents)
        assert matcher.traverse_draft_tree(next_token, next_sibling, tokens, by_links) == accepted
        assert (by_links == by_parents[:-1]).all()
        assert state(matcher, words) == before
        for node in range(len(tokens)):
            expected = mask_after(matcher, path_of(parents, tokens, node), words)
            assert accepted[node] == (expected is not None), node
            if node:
                parent_row = bits(by_parents[parents[node]], tok.vocab_size)
                assert accepted[node] == (accepted[parents[node]] and parent_row[tokens[node]])
            if expected is None:
                assert not by_parents[node].any()
                continue
            mask, fork = expected
            assert (by_parents[node] == mask).all(), node
            if node % 5 == 0 and max_tokens is None:
                assert bits(mask, tok.vocab_size) == bytewise_mask(fork, token_bytes, eos)
        # Walk on: accept an allowed token of the root's mask, if there is one.
        allowed = [t for t, b in enumerate(bits(by_parents[0], tok.vocab_size)) if b and t not in eos]
        if not allowed:
            break
        assert matcher.accept_token(rng.choice(allowed))


def test_a_chain_stops_at_the_first_refused_token(tok):
    compiled = sieve.compile_grammar(tok, 'root ::= "yes" | "no"')
    matcher = sieve.Matcher(compiled)
    words = (tok.vocab_size + 31) // 32
    ids = {tok.token_bytes(i): i for i in range(tok.vocab_size)}
    y, e, s, n = ids[b"y"], ids[b"e"], ids[b"s"], ids[b"n"]
    eos = tok.eos_token_ids[0]
    rows = np.full((6, words), SENTINEL, dtype=np.int32)
    assert matcher.fill_draft_bitmasks([y, e, s, eos, n], rows) == 4
    for i, path in enumerate([[], [y], [y, e], [y, e, s]]):
        assert (rows[i] == mask_after(matcher, path, words)[0]).all(), i
    assert not rows[4:].any(), "after EOS: zero, and the refused token's row too"
    after_yes = rows[3].copy()
    assert matcher.fill_draft_bitmasks([n, n], rows) == 1
    assert not rows[2].any()
    assert (rows[3] == after_yes).all(), "rows past the draft's are untouched"
    assert matcher.validate_tokens([y, e, s, eos, n]) == 4
    assert repr(matcher) == "sieve.Matcher(output_bytes=0, steps=0, terminated=false)"


def test_a_budget_is_spent_along_the_draft(tok):
    compiled = sieve.compile_regex(tok, "[a-z]+")
    ids = {tok.token_bytes(i): i for i in range(tok.vocab_size)}
    a = ids[b"a"]
    matcher = sieve.Matcher(compiled, max_tokens=3)
    words = (tok.vocab_size + 31) // 32
    rows = np.zeros((4, words), dtype=np.int32)
    assert matcher.fill_draft_bitmasks([a, a, a], rows) == 2
    assert bits(rows[2], tok.vocab_size).count(True) == 1, "only EOS fits after two tokens"
    assert matcher.remaining_tokens == 3


def test_bad_drafts_raise_and_write_nothing(tok):
    compiled = sieve.compile_json_schema(tok, SCHEMA)
    matcher = sieve.Matcher(compiled)
    matcher.accept_string('{"name":')
    words = (tok.vocab_size + 31) // 32
    before = state(matcher, words)
    rows = np.full((4, words), SENTINEL, dtype=np.int32)
    with pytest.raises(ValueError, match="unknown token id 9999"):
        matcher.fill_draft_bitmasks([3, 9999], rows)
    with pytest.raises(ValueError, match="not a token id"):
        matcher.fill_draft_bitmasks([-5], rows)
    with pytest.raises(ValueError, match="need"):
        matcher.fill_draft_bitmasks([3, 3, 3, 3], rows)
    with pytest.raises(ValueError, match="parent comes before"):
        sieve.DraftTree([0, 3, 3], [-1, 2, 0])
    with pytest.raises(ValueError, match="no parent"):
        sieve.DraftTree([0, 3, 3], [-1, 0, -1])
    with pytest.raises(ValueError, match="node index or -1"):
        sieve.DraftTree([0, 3], [-1, -7])
    with pytest.raises(ValueError, match="unknown token id 9999"):
        matcher.fill_draft_tree_bitmasks(sieve.DraftTree([0, 3, 9999], [-1, 0, 0]), rows)
    with pytest.raises(ValueError, match="reached twice"):
        matcher.traverse_draft_tree([1, 2, 1], [-1, -1, -1], [0, 3, 3], rows)
    with pytest.raises(ValueError, match="not reached"):
        matcher.traverse_draft_tree([1, -1, -1], [-1, -1, -1], [0, 3, 3], rows)
    with pytest.raises(ValueError, match="too short"):
        matcher.fill_draft_bitmasks([3], np.zeros((2, words - 1), dtype=np.int32))
    with pytest.raises(TypeError):
        matcher.fill_draft_bitmasks([3], np.zeros((2, words), dtype=np.int64))
    assert (rows == SENTINEL).all()
    assert state(matcher, words) == before


def test_validate_tokens_batch_equals_one_at_a_time(tok):
    compiled = sieve.compile_json_schema(tok, SCHEMA)
    rng = random.Random(3)
    matchers, drafts = [], []
    for i in range(40):
        matcher = sieve.Matcher(compiled)
        tokens, parents = random_tree(matcher, tok, 8, rng)
        matchers.append(matcher)
        drafts.append(path_of(parents, tokens, len(tokens) - 1))
    expected = [m.validate_tokens(d) for m, d in zip(matchers, drafts)]
    assert sieve.validate_tokens_batch(matchers, drafts) == expected
    assert sieve.validate_tokens_batch(matchers[:3], drafts[:3]) == expected[:3]
    assert any(0 < e for e in expected)
    with pytest.raises(ValueError, match="drafts"):
        sieve.validate_tokens_batch(matchers, drafts[:2])
    with pytest.raises(ValueError, match="unknown token id"):
        sieve.validate_tokens_batch(matchers[:1], [[10**6]])


def test_batch_trees_equal_one_matcher_at_a_time(tok):
    compiled = sieve.compile_json_schema(tok, SCHEMA)
    other = sieve.compile_regex(tok, "[a-z]{2,9}")
    words = (tok.vocab_size + 31) // 32
    rng = random.Random(11)
    for count in (1, 5, 24):
        matchers, trees = [], []
        for i in range(count):
            matcher = sieve.Matcher(compiled if i % 2 else other)
            tokens, parents = random_tree(matcher, tok, 1 + rng.randrange(9), rng)
            matchers.append(matcher)
            trees.append(sieve.DraftTree(tokens, parents))
        rows = sum(len(t) for t in trees)
        expected = np.zeros((rows, words), dtype=np.int32)
        accepted, at = [], 0
        for matcher, tree in zip(matchers, trees):
            accepted.append(matcher.fill_draft_tree_bitmasks(tree, expected[at : at + len(tree)]))
            at += len(tree)
        bitmask = np.full((rows + 1, words), SENTINEL, dtype=np.int32)
        assert sieve.fill_draft_tree_bitmasks_batch(matchers, trees, bitmask) == accepted
        assert (bitmask[:rows] == expected).all()
        assert (bitmask[rows] == SENTINEL).all()
    chain = sieve.DraftTree.chain([3, 4])
    assert len(chain) == 3
    with pytest.raises(ValueError, match="drafts"):
        sieve.fill_draft_tree_bitmasks_batch(matchers, trees[:1], bitmask)
    with pytest.raises(ValueError, match="need"):
        sieve.fill_draft_tree_bitmasks_batch(matchers, trees, bitmask[:2])
