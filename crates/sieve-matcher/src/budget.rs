//! Token budgets: masks that leave room for a complete output.
//!
//! # The rule
//!
//! A budget of `N` tokens counts every accepted token, EOS included (as a serving engine's
//! `max_tokens` does); [`crate::Matcher::accept_bytes`] spends none. With `r` tokens left, a
//! text token is allowed iff the grammar allows it and the backend's completion bound after
//! it (`Recognizer::completion_bound`) is at most `r - 2`: the token itself, the tokens of a
//! shortest completion, and EOS. EOS is allowed iff the output is a sentence (and `r ≥ 1`).
//!
//! # Invariants
//!
//! - After every accepted step, `bound + 1 ≤ r` (it holds at creation, which fails
//!   otherwise, and every allowed token keeps it).
//! - So the budgeted mask is never empty before EOS: at bound 0 the output is a sentence and
//!   EOS fits; at bound `u > 0` the descent contract of the seam gives a token leaving at
//!   most `u - 1 ≤ r - 2`. Any sampler therefore ends with EOS on a complete output within
//!   `N` tokens.
//! - The unbudgeted path does none of this work: a matcher without a budget never reaches
//!   this module.

use sieve_backend::{LimitError, Recognizer};
use sieve_ir::token::TOKEN_MARKER;
use sieve_vocab::TokenTrie;

use crate::engine::{EngineCompletion, EngineRecognizer};

/// The budget of one matcher and the scratch its mask filter reuses.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    /// The tokens allowed in all, EOS included.
    pub(crate) max_tokens: u32,
    /// `caps[d]`: a bound on the completion bound after any `d` more bytes.
    caps: Vec<u32>,
    /// Tokens the backend decided (bitmasks by id), and the trie positions left to feed.
    fits: Vec<u32>,
    exceeds: Vec<u32>,
    pending: Vec<usize>,
    verdicts: Vec<Verdict>,
    /// The tokens (bitmask by id) the parser reads by their encoding now.
    by_encoding: Vec<u32>,
}

impl Budget {
    pub(crate) fn new(max_tokens: u32) -> Budget {
        Budget {
            max_tokens,
            caps: Vec::new(),
            fits: Vec::new(),
            exceeds: Vec::new(),
            pending: Vec::new(),
            verdicts: Vec::new(),
            by_encoding: Vec::new(),
        }
    }
}

/// Whether a state whose completion bound is `bound`, reached by spending `spent` more tokens
/// from `remaining`, keeps the invariant `bound + 1 ≤ remaining - spent`.
pub(crate) fn fits(bound: Option<u32>, remaining: u32, spent: u32) -> bool {
    match bound {
        Some(bound) => u64::from(bound) + 1 + u64::from(spent) <= u64::from(remaining),
        None => false,
    }
}

fn clear(mask: &mut [u32], id: usize) {
    mask[id / 32] &= !(1 << (id % 32));
}

impl Budget {
    /// Clears from `mask` (the grammar's mask) every token after which no complete output
    /// fits in `remaining` tokens; `positions[id]` is token `id`'s `[text, encoding]`
    /// positions in `trie`. Leaves `parser` as it found it.
    pub(crate) fn restrict(
        &mut self,
        parser: &mut EngineRecognizer,
        table: &EngineCompletion,
        trie: &TokenTrie,
        positions: &[[u32; 2]],
        remaining: u32,
        mask: &mut [u32],
    ) -> Result<(), LimitError> {
        let Some(limit) = remaining.checked_sub(2) else {
            for i in 0..trie.len() {
                clear(mask, trie.token(i).index());
            }
            return Ok(());
        };
        // The skip: `caps[d]` bounds the completion bound after any string of at most `d`
        // bytes the parser accepts (the seam's contract), and every allowed token is such a
        // string with `d` its length. So a token with `caps[len] ≤ limit` satisfies the rule
        // without being fed, and when `caps[max_token_len] ≤ limit` every token does: the
        // filter then costs one caps computation.
        self.caps.resize(trie.max_token_len() + 1, 0);
        parser.completion_caps(table, &mut self.caps);
        if self.caps[trie.max_token_len()] <= limit {
            return Ok(());
        }
        let memo = parser.completion_memo(table);
        let words = mask.len();
        self.fits.clear();
        self.fits.resize(words, 0);
        self.exceeds.clear();
        self.exceeds.resize(words, 0);
        // Where a token terminal may follow, a token may be read by its encoding, and
        // `Matcher::feed` then takes that reading. Those tokens are decided first, by feeding
        // their encodings; the backend's decisions (per token id, possibly from the text
        // reading) and the text walk below skip them.
        self.by_encoding.clear();
        self.by_encoding.resize(words, 0);
        let feeder = Feeder {
            table,
            memo: &memo,
            trie,
            remaining,
        };
        if parser.allowed_bytes().contains(TOKEN_MARKER) {
            self.pending.clear();
            self.pending.extend(
                set_bits(mask.iter().copied())
                    .map(|id| positions[id][1])
                    .filter(|&pos| pos != u32::MAX)
                    .map(|pos| pos as usize),
            );
            feeder.feed(parser, &self.pending, &mut self.verdicts)?;
            for (&pos, &verdict) in self.pending.iter().zip(&self.verdicts) {
                let id = trie.token(pos).index();
                match verdict {
                    Verdict::Rejected => continue,
                    Verdict::Exceeds => clear(mask, id),
                    Verdict::Fits => {}
                }
                self.by_encoding[id / 32] |= 1 << (id % 32);
            }
        }
        parser.completion_decide(table, &memo, trie, limit, &mut self.fits, &mut self.exceeds);
        for (w, word) in mask.iter_mut().enumerate() {
            *word &= !(self.exceeds[w] & !self.by_encoding[w]);
        }
        // Left to feed: text readings neither the backend nor the caps decide. A token with no
        // text reading is allowed only by its encoding, decided above.
        self.pending.clear();
        let undecided = mask
            .iter()
            .zip(&self.fits)
            .zip(&self.by_encoding)
            .map(|((word, fits), encoded)| word & !fits & !encoded);
        for id in set_bits(undecided) {
            let text = positions[id][0];
            if text != u32::MAX && self.caps[trie.bytes_at(text as usize).len()] > limit {
                self.pending.push(text as usize);
            }
        }
        self.pending.sort_unstable();
        feeder.feed(parser, &self.pending, &mut self.verdicts)?;
        for (&pos, &verdict) in self.pending.iter().zip(&self.verdicts) {
            if verdict != Verdict::Fits {
                clear(mask, trie.token(pos).index());
            }
        }
        Ok(())
    }
}

/// What feeding a token's reading reads besides the parser: the completion tables, the memo
/// of the parser's bytes, the trie and the tokens left.
struct Feeder<'a> {
    table: &'a EngineCompletion,
    memo: &'a <EngineRecognizer as Recognizer>::CompletionMemo,
    trie: &'a TokenTrie,
    remaining: u32,
}

impl Feeder<'_> {
    /// Feeds the readings at trie positions `pending` (sorted) one by one from the parser's
    /// bytes, sharing common prefixes as the mask walk does, and sets `verdicts[k]` for
    /// `pending[k]`. Leaves `parser` as it found it.
    fn feed(
        &self,
        parser: &mut EngineRecognizer,
        pending: &[usize],
        verdicts: &mut Vec<Verdict>,
    ) -> Result<(), LimitError> {
        let trie = self.trie;
        verdicts.clear();
        let mut depth = 0usize;
        let mut previous: Option<usize> = None;
        let outcome = (|| -> Result<(), LimitError> {
            for &i in pending {
                let bytes = trie.bytes_at(i);
                let common = match previous {
                    Some(p) => common_prefix(trie.bytes_at(p), bytes),
                    None => 0,
                };
                let keep = depth.min(common);
                parser.pop_bytes(depth - keep);
                depth = keep;
                previous = Some(i);
                let mut accepted = true;
                while depth < bytes.len() {
                    if parser.push_byte(bytes[depth])? {
                        depth += 1;
                    } else {
                        accepted = false;
                        break;
                    }
                }
                if !accepted {
                    verdicts.push(Verdict::Rejected);
                    continue;
                }
                // The bound is read after the token's end, as `Matcher::accept_token` reads
                // it: the end drops the items of limited rules the token takes past their
                // limits. Ending a token cannot be undone in place, so its last byte is
                // popped after and pushed again by a longer token that shares it.
                parser.end_token();
                let bound = parser.completion_bound_from(self.table, self.memo);
                verdicts.push(if fits(bound, self.remaining, 1) {
                    Verdict::Fits
                } else {
                    Verdict::Exceeds
                });
                parser.pop_bytes(1);
                depth -= 1;
            }
            Ok(())
        })();
        parser.pop_bytes(depth);
        outcome
    }
}

/// The ids whose bits are set in the words of `words`, in order.
fn set_bits(words: impl Iterator<Item = u32>) -> impl Iterator<Item = usize> {
    words.enumerate().flat_map(|(w, mut open)| {
        std::iter::from_fn(move || {
            (open != 0).then(|| {
                let bit = open.trailing_zeros() as usize;
                open &= open - 1;
                w * 32 + bit
            })
        })
    })
}

/// What feeding one reading of a token showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Rejected,
    Exceeds,
    Fits,
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
