//! Speculative decoding from Python: `sieve.DraftTree` and the batch calls over many
//! matchers (`fill_draft_tree_bitmasks_batch`, `validate_tokens_batch`); the per-matcher
//! calls are `Matcher`'s methods (`fill_draft_bitmasks`, `traverse_draft_tree`,
//! `fill_draft_tree_bitmasks`).
//!
//! # Invariants
//!
//! - Every call maps onto `sieve_matcher`'s draft API (`sieve_matcher::speculative`), so the
//!   rows are exactly the Rust ones and every matcher is left as it was.
//! - Ids that are not token ids (negative, past `u32`) raise `ValueError` here; ids past the
//!   vocabulary raise `ValueError` from the matcher, naming the node. A root's token (node 0
//!   of a tree) is never read, so any integer is taken there.
//! - The batch calls run with the GIL released, across threads like
//!   `fill_next_token_bitmasks`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sieve_matcher::{DraftError, DraftTreeMasks, NodeState};

use crate::bitmask::with_rows;
use crate::matcher::{matcher_error, Matcher};

/// A tree of draft tokens for ``Matcher.fill_draft_tree_bitmasks`` and
/// ``fill_draft_tree_bitmasks_batch``: node 0 is the root (the matcher as it is; its token
/// is not read), every other node a draft token following its parent.
///
/// ``DraftTree(draft_tokens, parents)`` takes each node's parent (``parents[0] == -1``, and
/// every other node's parent before it); ``DraftTree.from_links`` XGrammar's first-child and
/// next-sibling arrays; ``DraftTree.chain`` a chain. Immutable.
#[pyclass(module = "sieve", frozen)]
pub struct DraftTree {
    pub(crate) inner: sieve_matcher::DraftTree,
}

#[pymethods]
impl DraftTree {
    /// A tree from each node's token and parent (``-1`` for the root, node 0).
    #[new]
    fn new(draft_tokens: Vec<i64>, parents: Vec<i64>) -> PyResult<DraftTree> {
        let tokens = draft_ids(&draft_tokens, 1)?;
        let parents = parents
            .iter()
            .map(|&p| match p {
                -1 => Ok(None),
                p => usize::try_from(p)
                    .map(Some)
                    .map_err(|_| PyValueError::new_err(format!("parent {p}: a node index or -1"))),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let inner =
            sieve_matcher::DraftTree::from_parents(&tokens, &parents).map_err(tree_error)?;
        Ok(DraftTree { inner })
    }

    /// A tree in XGrammar's and SGLang's layout: node ``i``'s first child is
    /// ``retrieve_next_token[i]`` and its next sibling ``retrieve_next_sibling[i]`` (``-1``
    /// for none), its token ``draft_tokens[i]``.
    #[staticmethod]
    pub(crate) fn from_links(
        retrieve_next_token: Vec<i64>,
        retrieve_next_sibling: Vec<i64>,
        draft_tokens: Vec<i64>,
    ) -> PyResult<DraftTree> {
        let tokens = draft_ids(&draft_tokens, 1)?;
        let inner = sieve_matcher::DraftTree::from_next_token_and_sibling(
            &tokens,
            &retrieve_next_token,
            &retrieve_next_sibling,
        )
        .map_err(tree_error)?;
        Ok(DraftTree { inner })
    }

    /// The chain root → ``draft_tokens[0]`` → ``draft_tokens[1]`` → …
    #[staticmethod]
    fn chain(draft_tokens: Vec<i64>) -> PyResult<DraftTree> {
        let tokens = draft_ids(&draft_tokens, 0)?;
        Ok(DraftTree {
            inner: sieve_matcher::DraftTree::chain(&tokens),
        })
    }

    /// The number of nodes, the root included: the rows its masks take.
    fn __len__(&self) -> usize {
        self.inner.nodes()
    }

    fn __repr__(&self) -> String {
        format!("sieve.DraftTree(nodes={})", self.inner.nodes())
    }
}

/// Fills, for every ``i``, ``len(trees[i])`` rows of ``bitmask`` with the masks of
/// ``trees[i]`` from ``matchers[i]`` (as ``matchers[i].fill_draft_tree_bitmasks``), matcher
/// ``i``'s rows right after matcher ``i - 1``'s, across threads with the GIL released; the
/// matchers are left as they were. Returns, per matcher, which nodes were accepted.
///
/// Raises ``ValueError`` (nothing written) when the lengths differ, the matchers'
/// vocabulary sizes differ, the rows are too short or too few, or an id is outside the
/// vocabulary; ``LimitError`` when a matcher hit a recogniser limit (its rows are then zero,
/// the others filled); ``RuntimeError`` when a matcher appears twice.
#[pyfunction]
pub fn fill_draft_tree_bitmasks_batch(
    py: Python<'_>,
    matchers: Vec<PyRefMut<'_, Matcher>>,
    trees: Vec<PyRef<'_, DraftTree>>,
    bitmask: &Bound<'_, PyAny>,
) -> PyResult<Vec<Vec<bool>>> {
    let mut matchers = matchers;
    let mut inner: Vec<&mut sieve_matcher::Matcher> =
        matchers.iter_mut().map(|m| &mut m.inner).collect();
    let trees: Vec<sieve_matcher::DraftTree> = trees.iter().map(|t| t.inner.clone()).collect();
    with_rows(bitmask, |words, _, words_per_row| {
        let results = py
            .detach(|| {
                sieve_matcher::fill_draft_tree_bitmasks_batch(
                    &mut inner,
                    &trees,
                    words,
                    words_per_row,
                )
            })
            .map_err(draft_error)?;
        results
            .into_iter()
            .enumerate()
            .map(|(index, result)| {
                result
                    .map(|outcome| accepted_nodes(&outcome))
                    .map_err(|e| in_matcher(py, index, draft_error(e)))
            })
            .collect()
    })
}

/// ``matchers[i].validate_tokens(drafts[i])`` for every ``i``, across threads (from 16
/// matchers on) with the GIL released: how many leading tokens of each draft its matcher
/// would accept, the matchers unchanged. Raises ``ValueError`` when the lengths differ or an
/// id is outside the vocabulary, ``LimitError`` on a recogniser limit, ``RuntimeError`` when
/// a matcher appears twice.
#[pyfunction]
pub fn validate_tokens_batch(
    py: Python<'_>,
    matchers: Vec<PyRefMut<'_, Matcher>>,
    drafts: Vec<Vec<i64>>,
) -> PyResult<Vec<usize>> {
    let mut matchers = matchers;
    let drafts = drafts
        .iter()
        .map(|draft| draft_ids(draft, 0))
        .collect::<PyResult<Vec<_>>>()?;
    let mut inner: Vec<&mut sieve_matcher::Matcher> =
        matchers.iter_mut().map(|m| &mut m.inner).collect();
    let results = py
        .detach(|| sieve_matcher::validate_tokens_batch(&mut inner, &drafts))
        .map_err(draft_error)?;
    results
        .into_iter()
        .enumerate()
        .map(|(index, result)| result.map_err(|e| in_matcher(py, index, matcher_error(e))))
        .collect()
}

/// `error`, its message prefixed with the matcher it came from.
fn in_matcher(py: Python<'_>, index: usize, error: PyErr) -> PyErr {
    let message = format!("matcher {index}: {}", error.value(py));
    PyErr::from_type(error.get_type(py), message)
}

/// Which nodes were accepted.
pub(crate) fn accepted_nodes(outcome: &DraftTreeMasks) -> Vec<bool> {
    outcome
        .states()
        .iter()
        .map(|&s| s == NodeState::Accepted)
        .collect()
}

/// Draft token ids as the matcher takes them: the first `skip` (a tree's root, whose token is
/// never read) as they come, the others checked to be ids (the matcher checks them against
/// the vocabulary and names the node).
pub(crate) fn draft_ids(ids: &[i64], skip: usize) -> PyResult<Vec<u32>> {
    ids.iter()
        .enumerate()
        .map(|(index, &id)| match u32::try_from(id) {
            Ok(id) => Ok(id),
            Err(_) if index < skip => Ok(0),
            Err(_) => Err(PyValueError::new_err(format!(
                "draft token {index} is {id}: not a token id"
            ))),
        })
        .collect()
}

/// The Python exception for refused draft masks.
pub(crate) fn draft_error(error: DraftError) -> PyErr {
    match error {
        DraftError::Matcher(error) => matcher_error(error),
        other => PyValueError::new_err(other.to_string()),
    }
}

fn tree_error(error: sieve_matcher::DraftTreeError) -> PyErr {
    PyValueError::new_err(error.to_string())
}
