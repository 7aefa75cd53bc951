"""Torch tensors wherever a bitmask or logits are: filled in place, applied with torch ops."""

import numpy as np
import pytest
import torch

import sieve


@pytest.fixture(scope="module")
def compiled(tok):
    return sieve.compile_regex(tok, "(yes|no)( thanks)?")


def test_a_cpu_tensor_bitmask_is_filled_in_place(tok, compiled):
    matcher = sieve.Matcher(compiled)
    expected = sieve.allocate_token_bitmask(2, tok.vocab_size)
    matcher.fill_next_token_bitmask(expected, 1)
    tensor = torch.full((2, 14), -1, dtype=torch.int32)
    matcher.fill_next_token_bitmask(tensor, 1)
    np.testing.assert_array_equal(tensor.numpy(), expected)
    batch = torch.zeros((3, 14), dtype=torch.int32)
    sieve.fill_next_token_bitmasks([matcher, matcher.fork(), matcher.fork()], batch)
    for row in range(3):
        np.testing.assert_array_equal(batch[row].numpy(), expected[1])


def test_a_tensor_of_the_wrong_dtype_is_refused(tok, compiled):
    with pytest.raises(TypeError, match="int32"):
        sieve.Matcher(compiled).fill_next_token_bitmask(torch.zeros((1, 14), dtype=torch.int64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_apply_on_torch_equals_apply_on_numpy(tok, compiled, dtype):
    matcher = sieve.Matcher(compiled)
    assert matcher.accept_string("ye")
    bitmask = sieve.allocate_token_bitmask(2, tok.vocab_size)
    matcher.fill_next_token_bitmask(bitmask, 0)
    scores = torch.randn((2, 460), generator=torch.Generator().manual_seed(0))
    logits = scores.to(dtype)
    sieve.apply_token_bitmask_inplace(logits, torch.from_numpy(bitmask))
    reference = scores.numpy().copy()
    sieve.apply_token_bitmask_inplace(reference, bitmask)
    np.testing.assert_array_equal(torch.isinf(logits).numpy(), np.isinf(reference))
    allowed = torch.nonzero(~torch.isinf(logits[0])).flatten().tolist()
    assert allowed == [t for t in range(tok.vocab_size) if tok.token_bytes(t)
                       and b"s thanks".startswith(tok.token_bytes(t))]
    # Row 1 allows everything its 14 words cover (448 ids); the columns past them are masked.
    assert not torch.isinf(logits[1, :448]).any() and torch.isinf(logits[1, 448:]).all()


def test_apply_with_indices_and_one_row(tok, compiled):
    matcher = sieve.Matcher(compiled)
    row = sieve.allocate_token_bitmask(1, tok.vocab_size)
    matcher.fill_next_token_bitmask(row)
    logits = torch.zeros((4, 423))
    sieve.apply_token_bitmask_inplace(logits, row, indices=[2])
    assert not torch.isinf(logits[[0, 1, 3]]).any()
    assert torch.isinf(logits[2]).sum() == 423 - len(
        [t for t in range(423) if tok.token_bytes(t) and (
            b"yes thanks".startswith(tok.token_bytes(t)) or b"no thanks".startswith(tok.token_bytes(t)))]
    )
    single = torch.zeros(423)
    sieve.apply_token_bitmask_inplace(single, torch.from_numpy(row[0]))
    assert torch.equal(torch.isinf(single), torch.isinf(logits[2]))
