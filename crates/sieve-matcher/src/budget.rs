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
        // Where a token terminal may follow, a token can have two accepted readings and is fed
        // as its encoding (`Matcher::feed`); the backend's decisions, made per token id, may
        // come from the other reading, so every reading is fed instead.
        let terminals_live = parser.allowed_bytes().contains(TOKEN_MARKER);
        if !terminals_live {
            parser.completion_decide(table, &memo, trie, limit, &mut self.fits, &mut self.exceeds);
        }
        self.pending.clear();
        for (w, word) in mask.iter_mut().enumerate() {
            *word &= !self.exceeds[w];
            let mut open = *word & !self.fits[w];
            while open != 0 {
                let id = w * 32 + open.trailing_zeros() as usize;
                open &= open - 1;
                let [text, encoding] = positions[id];
                let readings = if terminals_live {
                    &[text, encoding][..]
                } else {
                    &[text][..]
                };
                for &pos in readings.iter().filter(|&&p| p != u32::MAX) {
                    if terminals_live || self.caps[trie.bytes_at(pos as usize).len()] > limit {
                        self.pending.push(pos as usize);
                    }
                }
            }
        }
        self.pending.sort_unstable();
        // Each pending position's verdict: rejected, accepted but over the limit, or fits.
        self.verdicts.clear();
        let mut depth = 0usize;
        let mut previous: Option<usize> = None;
        let pending = &self.pending;
        let verdicts = &mut self.verdicts;
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
                verdicts.push(if !accepted {
                    Verdict::Rejected
                } else if fits(parser.completion_bound_from(table, &memo), remaining, 1) {
                    Verdict::Fits
                } else {
                    Verdict::Exceeds
                });
            }
            Ok(())
        })();
        parser.pop_bytes(depth);
        outcome?;
        let verdict = |pos: u32| match self.pending.binary_search(&(pos as usize)) {
            Ok(k) => Some(self.verdicts[k]),
            Err(_) => None,
        };
        for &pos in &self.pending {
            let id = trie.token(pos).index();
            let [text, encoding] = positions[id];
            // The reading `Matcher::feed` takes decides: the encoding when accepted.
            let decided = match verdict(encoding) {
                Some(v @ (Verdict::Fits | Verdict::Exceeds)) => v,
                _ => verdict(text).unwrap_or(Verdict::Rejected),
            };
            if decided != Verdict::Fits {
                clear(mask, id);
            }
        }
        Ok(())
    }
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
