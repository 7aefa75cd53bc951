"""Shared fixtures: the small byte-level BPE tokenizer shipped in tests/data (423 ids, EOS
``<|endoftext|>`` = 0, ``<|pad|>`` = 1) and its tokens' bytes."""

import pathlib

import pytest

import sieve

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def tok() -> sieve.Tokenizer:
    return sieve.Tokenizer.from_file(DATA / "tokenizer.json")


@pytest.fixture(scope="session")
def token_bytes(tok):
    """Every id's bytes (``b""`` for special tokens)."""
    return [tok.token_bytes(i) for i in range(tok.vocab_size)]
