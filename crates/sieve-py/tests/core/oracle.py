"""The brute-force oracles the mask tests compare sieve's masks with.

- ``finite_mask``: for a grammar whose sentences are listed, token ``t`` is allowed iff the
  output so far followed by ``t``'s bytes is a prefix of a listed sentence; EOS iff the
  output is a sentence; no other special token ever. Pure Python, independent of sieve.
- ``bytewise_mask``: for any grammar, token ``t`` is allowed iff a fork of the matcher
  accepts ``t``'s bytes as a string (the recogniser's byte path, which never consults the
  token-mask cache, its trie walks or its classifications); EOS iff the matcher can
  terminate.
"""

from typing import List, Sequence

import numpy as np


def bits(mask_row: np.ndarray, vocab_size: int) -> List[bool]:
    """The bits of one int32 bitmask row, token by token."""
    unpacked = np.unpackbits(mask_row.astype("<i4").view(np.uint8), bitorder="little")
    return [bool(b) for b in unpacked[:vocab_size]]


def finite_mask(
    output: bytes, sentences: Sequence[bytes], token_bytes: Sequence[bytes], eos: Sequence[int]
) -> List[bool]:
    allowed = []
    for token, data in enumerate(token_bytes):
        if not data:
            allowed.append(token in eos and output in sentences)
        else:
            candidate = output + data
            allowed.append(any(s.startswith(candidate) for s in sentences))
    return allowed


def bytewise_mask(matcher, token_bytes: Sequence[bytes], eos: Sequence[int]) -> List[bool]:
    allowed = []
    for token, data in enumerate(token_bytes):
        if not data:
            allowed.append(token in eos and matcher.can_terminate())
        else:
            allowed.append(matcher.fork().accept_string(data))
    return allowed
