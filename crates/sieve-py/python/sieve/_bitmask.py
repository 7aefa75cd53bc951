"""Allocating bitmasks and applying them to logits (NumPy, or torch on any device).

A bitmask row is ``ceil(vocab_size / 32)`` int32 words; bit ``t % 32`` of word ``t // 32``
is set iff token ``t`` is allowed (XGrammar's and llguidance's layout). Applying a row sets
the logits of the tokens it does not allow to ``-inf``; logits past the bitmask's
``32 * words`` columns are disallowed too.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """An int32 array of shape ``(batch_size, ceil(vocab_size / 32))`` with every token
    allowed (all bits set), ready for ``Matcher.fill_next_token_bitmask``."""
    if batch_size < 0 or vocab_size < 0:
        raise ValueError(
            f"batch_size and vocab_size are at least 0, got {batch_size} and {vocab_size}"
        )
    return np.full((batch_size, (vocab_size + 31) // 32), -1, dtype=np.int32)


def apply_token_bitmask_inplace(
    logits: Any,
    bitmask: Any,
    *,
    indices: Optional[Sequence[int]] = None,
) -> None:
    """Sets ``logits[i, t]`` to ``-inf`` for every token ``t`` that row ``i`` of
    ``bitmask`` does not allow.

    ``logits`` is a torch tensor (on any device: the masking is done with torch ops on that
    device) or a NumPy float array, of shape ``(batch, vocab)`` or ``(vocab,)``; ``bitmask``
    an int32 NumPy array or torch tensor of shape ``(batch, words)`` or ``(words,)``.
    ``indices`` names the rows of ``logits`` to mask, row ``k`` of the bitmask going to row
    ``indices[k]``; by default row ``i`` goes to row ``i``.
    """
    if _is_torch(logits):
        _apply_torch(logits, bitmask, indices)
    elif isinstance(logits, np.ndarray):
        _apply_numpy(logits, np.asarray(_to_numpy(bitmask)), indices)
    else:
        raise TypeError(
            f"logits are a torch tensor or a numpy array, not {type(logits).__name__}"
        )


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "device")


def _to_numpy(bitmask: Any) -> Any:
    if _is_torch(bitmask):
        return bitmask.detach().cpu().numpy()
    return bitmask


def _rows(logits_rows: int, mask_rows: int, indices: Optional[Sequence[int]]) -> list:
    rows = list(range(mask_rows)) if indices is None else [int(i) for i in indices]
    if indices is not None and len(rows) != mask_rows:
        raise ValueError(f"{len(rows)} indices for a bitmask of {mask_rows} rows")
    if indices is None and mask_rows != logits_rows:
        raise ValueError(
            f"the bitmask has {mask_rows} rows, the logits {logits_rows}: give indices="
        )
    for row in rows:
        if not 0 <= row < logits_rows:
            raise IndexError(f"row {row} of logits with {logits_rows} rows")
    return rows


def _check_bitmask(shape: tuple, dtype: Any) -> None:
    if len(shape) not in (1, 2):
        raise ValueError(f"a bitmask has shape (words,) or (batch, words), not {shape}")
    if str(dtype) not in ("int32", "torch.int32"):
        raise TypeError(f"a bitmask has dtype int32, this one {dtype}")


def _apply_numpy(logits: np.ndarray, bitmask: np.ndarray, indices) -> None:
    _check_bitmask(bitmask.shape, bitmask.dtype)
    if logits.ndim == 1 and bitmask.ndim == 1:
        _apply_numpy(logits[None, :], bitmask[None, :], indices)
        return
    if logits.ndim != 2:
        raise ValueError(f"logits have shape (batch, vocab) or (vocab,), not {logits.shape}")
    bitmask = bitmask.reshape(-1, bitmask.shape[-1])
    rows = _rows(logits.shape[0], bitmask.shape[0], indices)
    width = logits.shape[1]
    words = np.ascontiguousarray(bitmask).astype("<i4", copy=False)
    allowed = np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little").astype(bool)
    covered = min(width, allowed.shape[1])
    for k, row in enumerate(rows):
        logits[row, :covered][~allowed[k, :covered]] = -np.inf
        logits[row, covered:] = -np.inf


def _apply_torch(logits: Any, bitmask: Any, indices) -> None:
    import torch

    if not _is_torch(bitmask):
        bitmask = torch.from_numpy(np.asarray(bitmask))
    _check_bitmask(tuple(bitmask.shape), bitmask.dtype)
    if logits.dim() == 1 and bitmask.dim() == 1:
        _apply_torch(logits.unsqueeze(0), bitmask.unsqueeze(0), indices)
        return
    if logits.dim() != 2:
        raise ValueError(
            f"logits have shape (batch, vocab) or (vocab,), not {tuple(logits.shape)}"
        )
    bitmask = bitmask.reshape(-1, bitmask.shape[-1]).to(logits.device, non_blocking=True)
    rows = _rows(logits.shape[0], bitmask.shape[0], indices)
    width = logits.shape[1]
    shifts = torch.arange(32, device=logits.device, dtype=torch.int32)
    allowed = ((bitmask.unsqueeze(-1) >> shifts) & 1).bool().reshape(bitmask.shape[0], -1)
    covered = min(width, allowed.shape[1])
    disallowed = torch.ones(
        (bitmask.shape[0], width), dtype=torch.bool, device=logits.device
    )
    disallowed[:, :covered] = ~allowed[:, :covered]
    if indices is None:
        logits.masked_fill_(disallowed, float("-inf"))
    else:
        index = torch.tensor(rows, device=logits.device)
        logits[index] = logits[index].masked_fill(disallowed, float("-inf"))
