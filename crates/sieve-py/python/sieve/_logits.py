"""``LogitsProcessor``: a compiled grammar inside transformers' ``generate()``."""

from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from ._bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from ._sieve import CompiledGrammar, Matcher, fill_next_token_bitmasks


class LogitsProcessor:
    """Constrains every sequence of a ``generate()`` batch to ``compiled``.

    Pass it as ``model.generate(..., logits_processor=[sieve.LogitsProcessor(compiled)])``.
    On the first call it starts one ``Matcher`` per row of the batch (the prompt is not
    matched: the grammar covers the generated text only); on every later call it accepts each
    row's last token, then fills the batch's masks across threads and applies them. A row
    whose matcher accepted EOS is left unmasked (transformers pads it from then on).

    With ``max_tokens`` (at most ``generate()``'s ``max_new_tokens``), every row ends with
    EOS on a complete output within that many new tokens (see ``Matcher``).

    A new ``generate()`` call (an input not one token longer than the last) starts new
    matchers. Beam search reorders rows between steps and is not supported (use greedy
    search or sampling).
    """

    def __init__(self, compiled: CompiledGrammar, max_tokens: Optional[int] = None) -> None:
        if not isinstance(compiled, CompiledGrammar):
            raise TypeError(
                f"LogitsProcessor takes a sieve.CompiledGrammar, not {type(compiled).__name__}"
            )
        self.compiled = compiled
        self.max_tokens = max_tokens
        # Fails now, not inside generate(), when the budget cannot fit a complete output.
        Matcher(compiled, max_tokens)
        self.matchers: List[Matcher] = []
        self._bitmask: np.ndarray = allocate_token_bitmask(0, compiled.vocab_size)
        self._length = -1

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        batch, length = int(input_ids.shape[0]), int(input_ids.shape[1])
        if length != self._length + 1 or batch != len(self.matchers):
            self.matchers = [Matcher(self.compiled, self.max_tokens) for _ in range(batch)]
            self._bitmask = allocate_token_bitmask(batch, self.compiled.vocab_size)
        else:
            for row, (matcher, token) in enumerate(
                zip(self.matchers, input_ids[:, -1].tolist())
            ):
                if not matcher.is_terminated() and not matcher.accept_token(token):
                    raise RuntimeError(
                        f"row {row}: the grammar does not allow token {token}; were the "
                        "scores changed after this processor masked them?"
                    )
        self._length = length
        fill_next_token_bitmasks(self.matchers, self._bitmask)
        for row, matcher in enumerate(self.matchers):
            if matcher.is_terminated():
                self._bitmask[row] = -1
        apply_token_bitmask_inplace(scores, self._bitmask)
        return scores
