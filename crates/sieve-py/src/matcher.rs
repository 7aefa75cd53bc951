//! `sieve.Matcher`: one request's state against a `CompiledGrammar`.
//!
//! Calls map one to one onto `sieve_matcher::Matcher`. A refusal that generation meets in
//! normal use (a token or string the grammar does not allow, input after EOS) returns
//! `False` (over the token budget included); a caller's mistake (an id outside the vocabulary, a bitmask too small, a rollback
//! past the start) raises `ValueError`; a recogniser limit raises `LimitError`. Either way
//! the matcher is unchanged.

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use sieve_matcher::MatcherError;

use crate::bitmask::with_rows;
use crate::compile::CompiledGrammar;
use crate::speculative::{accepted_nodes, draft_error, draft_ids, DraftTree};
use crate::LimitError;

/// The most bytes ``find_jump_forward_string`` returns.
const JUMP_FORWARD_LIMIT: usize = 4096;

/// The output of one request, checked token by token against a compiled grammar.
///
/// Cheap to create (one per request) and to ``fork``; owned by one thread at a time.
#[pyclass(module = "sieve")]
pub struct Matcher {
    pub(crate) inner: sieve_matcher::Matcher,
}

/// The Python exception for a refused call.
pub(crate) fn matcher_error(error: MatcherError) -> PyErr {
    match error {
        MatcherError::Limit(limit) => LimitError::new_err(limit.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// `Ok(true)` for an accepted step, `Ok(false)` for a refusal generation meets in normal
/// use, an exception for the rest.
fn accepted(result: Result<(), MatcherError>) -> PyResult<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(
            MatcherError::TokenNotAllowed { .. }
            | MatcherError::SpecialNotAllowed { .. }
            | MatcherError::BytesRejected { .. }
            | MatcherError::OverBudget { .. }
            | MatcherError::Terminated,
        ) => Ok(false),
        Err(other) => Err(matcher_error(other)),
    }
}

/// `id` if it is below `n_vocab`.
fn checked_id(id: i64, n_vocab: usize) -> PyResult<u32> {
    u32::try_from(id)
        .ok()
        .filter(|&id| (id as usize) < n_vocab)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown token id {id}: the vocabulary has {n_vocab} ids"
            ))
        })
}

#[pymethods]
impl Matcher {
    /// A matcher at the start of the output of ``compiled``.
    ///
    /// With ``max_tokens``, the output is complete within that many tokens, EOS included: a
    /// token is allowed only if a complete output still fits after it, so a sampler that
    /// follows the masks ends with EOS in time. Raises ``ValueError`` when no complete output
    /// is guaranteed to fit in ``max_tokens``.
    #[new]
    #[pyo3(signature = (compiled, max_tokens=None))]
    fn new(compiled: &CompiledGrammar, max_tokens: Option<u32>) -> PyResult<Matcher> {
        let shared = compiled.inner.clone();
        let inner = match max_tokens {
            None => sieve_matcher::Matcher::new(shared),
            Some(max_tokens) => {
                sieve_matcher::Matcher::with_budget(shared, max_tokens).map_err(matcher_error)?
            }
        };
        Ok(Matcher { inner })
    }

    /// The tokens left of ``max_tokens`` (EOS included), or ``None`` without a budget.
    #[getter]
    fn remaining_tokens(&self) -> Option<u32> {
        self.inner.remaining_tokens()
    }

    /// Fills row ``index`` of ``bitmask`` (an int32 array of shape ``(words,)`` or
    /// ``(batch, words)``, NumPy or torch) with the tokens allowed next: bit ``t % 32`` of
    /// word ``t // 32`` is set iff token ``t`` may follow. After EOS nothing is allowed.
    #[pyo3(signature = (bitmask, index=0))]
    fn fill_next_token_bitmask(
        &mut self,
        py: Python<'_>,
        bitmask: &Bound<'_, PyAny>,
        index: usize,
    ) -> PyResult<()> {
        let inner = &mut self.inner;
        with_rows(bitmask, |words, rows, words_per_row| {
            if index >= rows {
                return Err(PyIndexError::new_err(format!(
                    "row {index} of a bitmask of {rows} rows"
                )));
            }
            let row = &mut words[index * words_per_row..(index + 1) * words_per_row];
            py.detach(|| inner.fill_next_token_bitmask(row))
                .map_err(matcher_error)
        })
    }

    /// Accepts the sampled token ``token_id``: ``True`` if the grammar allows it (an EOS
    /// token terminates the matcher), ``False`` (matcher unchanged) if not. Raises
    /// ``ValueError`` for an id outside the vocabulary.
    fn accept_token(&mut self, token_id: i64) -> PyResult<bool> {
        let n_vocab = self.inner.compiled().vocabulary().n_vocab();
        let id = checked_id(token_id, n_vocab)?;
        accepted(self.inner.accept_token(id))
    }

    /// Accepts ``text`` (``str``, UTF-8 encoded, or ``bytes``) as one step: ``True`` if the
    /// output stays a prefix of a sentence, ``False`` (matcher unchanged) if not.
    fn accept_string(&mut self, text: &Bound<'_, PyAny>) -> PyResult<bool> {
        let bytes: Vec<u8> = match text.extract::<String>() {
            Ok(text) => text.into_bytes(),
            Err(_) => text.extract::<Vec<u8>>()?,
        };
        accepted(self.inner.accept_bytes(&bytes))
    }

    /// Undoes the last ``num_steps`` steps (accepted tokens, EOS included, and
    /// ``accept_string`` calls). Raises ``ValueError`` past the start.
    #[pyo3(signature = (num_steps=1))]
    fn rollback(&mut self, num_steps: usize) -> PyResult<()> {
        self.inner.rollback(num_steps).map_err(matcher_error)
    }

    /// Back to the start of the output.
    fn reset(&mut self) {
        self.inner.reset();
    }

    /// Whether EOS was accepted.
    fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }

    /// Whether the output so far is a complete sentence (EOS allowed now).
    fn can_terminate(&self) -> bool {
        self.inner.can_terminate()
    }

    /// An independent copy of this matcher, at the same point of the output.
    fn fork(&self) -> Matcher {
        Matcher {
            inner: self.inner.clone(),
        }
    }

    /// How many leading tokens of ``token_ids`` would be accepted one after another,
    /// without changing the matcher (for speculative decoding).
    fn validate_tokens(&mut self, token_ids: Vec<i64>) -> PyResult<usize> {
        let n_vocab = self.inner.compiled().vocabulary().n_vocab();
        let ids = token_ids
            .into_iter()
            .map(|id| checked_id(id, n_vocab))
            .collect::<PyResult<Vec<u32>>>()?;
        self.inner.validate_tokens(&ids).map_err(matcher_error)
    }

    /// Fills row ``i`` of ``bitmask`` (2-D, at least ``len(draft_tokens) + 1`` rows) with
    /// the mask after the first ``i`` tokens of ``draft_tokens``, without changing the
    /// matcher, stopping at the first token the matcher refuses (the rows after it are
    /// zero). Returns how many leading draft tokens were accepted.
    fn fill_draft_bitmasks(
        &mut self,
        py: Python<'_>,
        draft_tokens: Vec<i64>,
        bitmask: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let draft = draft_ids(&draft_tokens, 0)?;
        let inner = &mut self.inner;
        with_rows(bitmask, |words, _, words_per_row| {
            let outcome = py
                .detach(|| inner.fill_draft_bitmasks(&draft, words, words_per_row))
                .map_err(draft_error)?;
            Ok(outcome.accepted)
        })
    }

    /// XGrammar's ``traverse_draft_tree``: node ``i`` of a draft tree has token
    /// ``draft_tokens[i]``, first child ``retrieve_next_token[i]`` and next sibling
    /// ``retrieve_next_sibling[i]`` (``-1`` for none); node 0 is the root, the matcher as it
    /// is (its token is not read). Fills row ``i`` of ``bitmask`` with node ``i``'s mask
    /// (the mask after the path from the root; zero when the path is refused) without
    /// changing the matcher, and returns which nodes were accepted.
    fn traverse_draft_tree(
        &mut self,
        py: Python<'_>,
        retrieve_next_token: Vec<i64>,
        retrieve_next_sibling: Vec<i64>,
        draft_tokens: Vec<i64>,
        bitmask: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<bool>> {
        let tree = DraftTree::from_links(retrieve_next_token, retrieve_next_sibling, draft_tokens)?;
        self.fill_tree(py, &tree.inner, bitmask)
    }

    /// The masks of ``tree`` (a ``sieve.DraftTree``), as ``traverse_draft_tree``: row ``i``
    /// of ``bitmask`` is node ``i``'s mask; returns which nodes were accepted.
    fn fill_draft_tree_bitmasks(
        &mut self,
        py: Python<'_>,
        tree: &DraftTree,
        bitmask: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<bool>> {
        self.fill_tree(py, &tree.inner, bitmask)
    }

    /// The longest string every continuation of the output starts with (for jump-forward
    /// decoding; at most 4,096 bytes, cut to whole UTF-8 characters): empty when the output
    /// may end here or more than one byte may follow.
    fn find_jump_forward_string(&mut self) -> PyResult<String> {
        let bytes = self
            .inner
            .forced_bytes(JUMP_FORWARD_LIMIT)
            .map_err(matcher_error)?;
        let valid = match std::str::from_utf8(&bytes) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
        };
        Ok(valid.to_owned())
    }

    fn __repr__(&self) -> String {
        format!(
            "sieve.Matcher(output_bytes={}, steps={}, terminated={})",
            self.inner.output_len(),
            self.inner.steps(),
            self.inner.is_terminated()
        )
    }
}

impl Matcher {
    /// `tree`'s masks into the rows of `bitmask`; which nodes were accepted.
    fn fill_tree(
        &mut self,
        py: Python<'_>,
        tree: &sieve_matcher::DraftTree,
        bitmask: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<bool>> {
        let inner = &mut self.inner;
        with_rows(bitmask, |words, _, words_per_row| {
            let outcome = py
                .detach(|| inner.fill_draft_tree_bitmasks(tree, words, words_per_row))
                .map_err(draft_error)?;
            Ok(accepted_nodes(&outcome))
        })
    }
}
