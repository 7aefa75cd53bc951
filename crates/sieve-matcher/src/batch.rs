//! Batch mask filling: the masks of many matchers, across threads, each into its row of one
//! contiguous bitmask buffer (XGrammar's `BatchGrammarMatcher.batch_fill_next_token_bitmask`,
//! llguidance's `fill_next_token_bitmask_par`).
//!
//! # Invariants
//!
//! - Matcher `i` fills row `i`: words `i * words_per_row .. (i + 1) * words_per_row` of the
//!   buffer. Words past the last row are never touched. With [`fill_next_token_bitmasks_at`]
//!   matcher `i` fills row `rows[i]` instead (XGrammar's `indices`), the rows distinct, and
//!   no other row is touched.
//! - Each row holds exactly what [`Matcher::fill_next_token_bitmask`] would write into it:
//!   the batch changes where the work runs, never its result. The padding words of a row
//!   (past [`CompiledGrammar::bitmask_words`](crate::CompiledGrammar::bitmask_words), when
//!   `words_per_row` is larger) are zero.
//! - The batch is checked before anything is written. When it is refused ([`BatchError`]:
//!   matchers of different vocabulary sizes, rows too short for the vocabulary, a buffer
//!   shorter than the rows) the buffer and the matchers are untouched.
//! - Otherwise every row is filled, and each matcher's own failure (a recogniser limit) is
//!   reported in its slot of the returned vector, with its row all zero; the other rows are
//!   still filled. A terminated matcher's row is all zero and its slot `Ok`.
//! - Filling a mask leaves every matcher as it was, failing or not, so the matchers may be
//!   filled again or in any order.
//!
//! # Threads
//!
//! Small batches run in the caller's thread (below [`PARALLEL_MIN_BATCH`]), so the
//! single-matcher path pays nothing for the batch; larger ones on the rayon pool the call is
//! made in (the global one, or the caller's through `ThreadPool::install`), which keeps
//! rayon's types out of the API.
//!
//! Matchers of different grammars may share a batch. Each grammar's mask cache is shared by
//! the threads (a [`CompiledGrammar`](crate::CompiledGrammar) is `Sync`), so a state one
//! thread classifies serves the others.

use std::borrow::BorrowMut;

use rayon::prelude::*;

use crate::{Matcher, MatcherError};

/// Batches below this size run in the caller's thread.
///
/// Handing a batch to rayon from outside the pool costs 6–7 µs on idle cores (waking a
/// worker, then the caller; twice that on a loaded machine). With GPT-2 and
/// `llama.cpp/json.gbnf` a warm mask costs 1–2 µs (median: mostly zeroing and OR-ing
/// 1,571-word rows), so there threads break even somewhere between 16 and 64 matchers
/// (`threads-always` takes 16 µs for 8 masks the caller fills in 9 µs) and win above (1.5×
/// at 64, 2.2× at 1,024 on two cores). Masks whose tokens need the recogniser's walk cost
/// tens of µs to over a millisecond, and batches of those already ran 2.1× faster at 8
/// matchers. At 16, a batch of cheap masks loses about one dispatch at most and a batch of
/// expensive ones gets the second core. `cargo bench -p sieve-benches --bench batch`
/// compares `sequential`, `parallel` and `threads-always` (no threshold) per batch size.
pub const PARALLEL_MIN_BATCH: usize = 16;

/// Why a batch was refused. Nothing was written when it is returned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// The matchers' vocabularies differ in size, so their masks cannot share a buffer.
    #[error(
        "matcher {index} has a vocabulary of {n_vocab} tokens, matcher 0 one of {expected}: \
         the masks of one batch share a vocabulary size"
    )]
    VocabularyMismatch {
        /// The first matcher whose vocabulary size differs from matcher 0's.
        index: usize,
        /// Its vocabulary size.
        n_vocab: usize,
        /// Matcher 0's vocabulary size.
        expected: usize,
    },
    /// `words_per_row` is below what the vocabulary needs.
    #[error("rows of {words_per_row} words are too short: the vocabulary needs {needed}")]
    RowTooShort {
        /// The row length given.
        words_per_row: usize,
        /// Words needed: `ceil(n_vocab / 32)`.
        needed: usize,
    },
    /// [`fill_next_token_bitmasks_at`] was given a different number of rows than matchers.
    #[error("{matchers} matchers but {rows} rows: each matcher needs its row")]
    RowCount {
        /// The number of matchers.
        matchers: usize,
        /// The number of rows given.
        rows: usize,
    },
    /// [`fill_next_token_bitmasks_at`] was given a row twice.
    #[error("row {row} is given to two matchers")]
    RowRepeated {
        /// The row.
        row: usize,
    },
    /// [`fill_next_token_bitmasks_at`] was given a row past the end of the buffer.
    #[error("row {row} is past the bitmask's {rows} rows of {words_per_row} words")]
    RowOutOfRange {
        /// The row.
        row: usize,
        /// The rows the buffer holds.
        rows: usize,
        /// The row length given.
        words_per_row: usize,
    },
    /// The buffer is shorter than one row per matcher.
    #[error("bitmask has {given} words, {rows} rows of {words_per_row} words need {needed}")]
    BitmaskTooSmall {
        /// Words given.
        given: usize,
        /// Words needed: `rows * words_per_row` (saturating).
        needed: usize,
        /// The number of matchers.
        rows: usize,
        /// The row length given.
        words_per_row: usize,
    },
}

/// Fills row `i` of `bitmask` (rows of `words_per_row` words; bit `t` of a row is word
/// `t / 32`, bit `t % 32`) with the tokens `matchers[i]` allows next, exactly as
/// [`Matcher::fill_next_token_bitmask`] would.
///
/// `words_per_row` is normally [`CompiledGrammar::bitmask_words`]; it may be larger (a logits
/// tensor padded past the vocabulary), and the padding is zeroed. Takes `&mut [Matcher]`,
/// `&mut [&mut Matcher]` or a slice of any other owner of matchers.
///
/// Returns one result per matcher, in order; a failed matcher's row is all zero and the
/// others are still filled. The whole batch is refused, with nothing written, when the
/// matchers' vocabulary sizes differ, when `words_per_row` is too short, or when `bitmask` is
/// shorter than `matchers.len() * words_per_row` words. Words past the last row are never
/// touched.
///
/// # Threads
///
/// Batches of fewer than [`PARALLEL_MIN_BATCH`] matchers, and calls on a pool of one thread,
/// run in the caller's thread, so a batch of one costs what a single fill costs. Larger
/// batches run on the rayon pool the call is made in: the global pool, or your own with
/// `pool.install(|| fill_next_token_bitmasks(..))`. Rows are handed out by work stealing,
/// since a mask's cost varies widely with the matcher's state.
///
/// ```
/// use std::sync::Arc;
/// use sieve_matcher::{fill_next_token_bitmasks, CompiledGrammar, Matcher, Options, Tokenizer};
///
/// let vocab = Arc::new(sieve_vocab::Vocabulary::embedded_default().clone());
/// let tokenizer = Arc::new(Tokenizer::new(vocab));
/// let grammar = sieve_gbnf::compile(r#"root ::= "yes" | "no""#, &Default::default()).unwrap();
/// let compiled = Arc::new(CompiledGrammar::new(&grammar, tokenizer, &Options::default()).unwrap());
/// let mut matchers: Vec<Matcher> = (0..4).map(|_| Matcher::new(compiled.clone())).collect();
/// let words = compiled.bitmask_words();
/// let mut bitmask = vec![0u32; matchers.len() * words];
/// let results = fill_next_token_bitmasks(&mut matchers, &mut bitmask, words).unwrap();
/// assert!(results.iter().all(Result::is_ok));
/// assert_eq!(bitmask[..words], bitmask[words..2 * words]);
/// ```
///
/// [`CompiledGrammar::bitmask_words`]: crate::CompiledGrammar::bitmask_words
pub fn fill_next_token_bitmasks<M>(
    matchers: &mut [M],
    bitmask: &mut [u32],
    words_per_row: usize,
) -> Result<Vec<Result<(), MatcherError>>, BatchError>
where
    M: BorrowMut<Matcher> + Send,
{
    check_matchers(matchers, words_per_row)?;
    let needed = matchers.len().saturating_mul(words_per_row);
    if bitmask.len() < needed {
        return Err(BatchError::BitmaskTooSmall {
            given: bitmask.len(),
            needed,
            rows: matchers.len(),
            words_per_row,
        });
    }
    if matchers.is_empty() {
        return Ok(Vec::new());
    }
    let rows = bitmask[..needed].chunks_exact_mut(words_per_row).collect();
    Ok(fill_rows(matchers, rows))
}

/// [`fill_next_token_bitmasks`] with matcher `i` filling row `rows[i]` of `bitmask`
/// (XGrammar's `indices`): the rows must be distinct and inside the buffer, and no other row
/// is touched, so a server can fill the rows of the sequences that use a grammar and leave
/// the others' as they are.
///
/// # Errors
/// As [`fill_next_token_bitmasks`], and the batch is refused with nothing written when
/// `rows` does not have one row per matcher, repeats a row, or names a row past the buffer.
///
/// ```
/// use std::sync::Arc;
/// use sieve_matcher::{fill_next_token_bitmasks_at, CompiledGrammar, Matcher, Options, Tokenizer};
///
/// let vocab = Arc::new(sieve_vocab::Vocabulary::embedded_default().clone());
/// let tokenizer = Arc::new(Tokenizer::new(vocab));
/// let grammar = sieve_gbnf::compile(r#"root ::= "yes" | "no""#, &Default::default()).unwrap();
/// let compiled = Arc::new(CompiledGrammar::new(&grammar, tokenizer, &Options::default()).unwrap());
/// let mut matchers = vec![Matcher::new(compiled.clone()), Matcher::new(compiled.clone())];
/// let words = compiled.bitmask_words();
/// let mut bitmask = vec![u32::MAX; 4 * words];
/// fill_next_token_bitmasks_at(&mut matchers, &[3, 1], &mut bitmask, words).unwrap();
/// assert_eq!(bitmask[words..2 * words], bitmask[3 * words..]);
/// assert!(bitmask[..words].iter().all(|&w| w == u32::MAX), "row 0 untouched");
/// ```
pub fn fill_next_token_bitmasks_at<M>(
    matchers: &mut [M],
    rows: &[usize],
    bitmask: &mut [u32],
    words_per_row: usize,
) -> Result<Vec<Result<(), MatcherError>>, BatchError>
where
    M: BorrowMut<Matcher> + Send,
{
    if rows.len() != matchers.len() {
        return Err(BatchError::RowCount {
            matchers: matchers.len(),
            rows: rows.len(),
        });
    }
    check_matchers(matchers, words_per_row)?;
    if matchers.is_empty() {
        return Ok(Vec::new());
    }
    let available = bitmask.len() / words_per_row;
    let mut slots: Vec<Option<&mut [u32]>> =
        bitmask.chunks_exact_mut(words_per_row).map(Some).collect();
    let mut taken = vec![false; available];
    for &row in rows {
        if row >= available {
            return Err(BatchError::RowOutOfRange {
                row,
                rows: available,
                words_per_row,
            });
        }
        if std::mem::replace(&mut taken[row], true) {
            return Err(BatchError::RowRepeated { row });
        }
    }
    let targets = rows
        .iter()
        .map(|&row| slots[row].take().expect("rows are distinct and in range"))
        .collect();
    Ok(fill_rows(matchers, targets))
}

/// Fills `rows[i]` from `matchers[i]`, in the caller's thread or on rayon's (see
/// [`PARALLEL_MIN_BATCH`]).
fn fill_rows<M>(matchers: &mut [M], rows: Vec<&mut [u32]>) -> Vec<Result<(), MatcherError>>
where
    M: BorrowMut<Matcher> + Send,
{
    if matchers.len() < PARALLEL_MIN_BATCH || rayon::current_num_threads() < 2 {
        matchers
            .iter_mut()
            .zip(rows)
            .map(|(matcher, row)| fill_row(matcher.borrow_mut(), row))
            .collect()
    } else {
        matchers
            .par_iter_mut()
            .zip(rows)
            .map(|(matcher, row)| fill_row(matcher.borrow_mut(), row))
            .collect()
    }
}

/// Refuses a batch whose matchers cannot share rows of `words_per_row` words.
fn check_matchers<M: BorrowMut<Matcher>>(
    matchers: &[M],
    words_per_row: usize,
) -> Result<(), BatchError> {
    let Some(first) = matchers.first() else {
        return Ok(());
    };
    if let Some((index, n_vocab, expected)) = vocabulary_mismatch(matchers) {
        return Err(BatchError::VocabularyMismatch {
            index,
            n_vocab,
            expected,
        });
    }
    let needed = first.borrow().compiled().bitmask_words();
    if words_per_row < needed {
        return Err(BatchError::RowTooShort {
            words_per_row,
            needed,
        });
    }
    Ok(())
}

/// The first matcher whose vocabulary size differs from matcher 0's: `(index, its size,
/// matcher 0's size)`. The masks of one batch share a vocabulary size.
pub(crate) fn vocabulary_mismatch<M: BorrowMut<Matcher>>(
    matchers: &[M],
) -> Option<(usize, usize, usize)> {
    let expected = matchers.first()?.borrow().compiled().vocabulary().n_vocab();
    matchers
        .iter()
        .enumerate()
        .skip(1)
        .find_map(|(index, matcher)| {
            let n_vocab = matcher.borrow().compiled().vocabulary().n_vocab();
            (n_vocab != expected).then_some((index, n_vocab, expected))
        })
}

/// One row; all zero when the matcher fails.
fn fill_row(matcher: &mut Matcher, row: &mut [u32]) -> Result<(), MatcherError> {
    let filled = matcher.fill_next_token_bitmask(row);
    if filled.is_err() {
        row.fill(0);
    }
    filled
}
