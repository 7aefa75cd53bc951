//! [`Matcher`]: the per-request state machine of the runtime.

use std::sync::Arc;

use sieve_backend::Recognizer;
use sieve_ir::token::TOKEN_MARKER;
use sieve_vocab::{TokenId, Vocabulary};

use crate::budget::{self, Budget};
use crate::engine::EngineRecognizer;
use crate::error::escape;
use crate::{CompiledGrammar, MatcherError};

/// One accepted step, kept so [`Matcher::rollback`] can undo it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    /// Output bytes before the step.
    start: usize,
    /// Whether the step was an EOS token (which terminates the matcher).
    eos: bool,
    /// Whether the step was a token (EOS included), which a budget counts.
    token: bool,
}

/// Per-request state: the output so far against one [`CompiledGrammar`].
///
/// Every method that can fail leaves the matcher unchanged when it does. A *step* is one
/// accepted token (EOS included) or one [`Matcher::accept_bytes`] call; [`Matcher::rollback`]
/// undoes steps.
///
/// A matcher made by [`Matcher::with_budget`] also keeps a complete output within its token
/// budget (see [`Matcher::with_budget`]).
#[derive(Clone, Debug)]
pub struct Matcher {
    compiled: Arc<CompiledGrammar>,
    parser: EngineRecognizer,
    steps: Vec<Step>,
    terminated: bool,
    /// The token budget, if any, and the tokens spent against it.
    budget: Option<Budget>,
    tokens: u32,
}

impl Matcher {
    /// A matcher at the start of the output.
    pub fn new(compiled: Arc<CompiledGrammar>) -> Matcher {
        let parser = compiled.engine().start();
        Matcher {
            compiled,
            parser,
            steps: Vec::new(),
            terminated: false,
            budget: None,
            tokens: 0,
        }
    }

    /// A matcher whose output is complete within `max_tokens` tokens, EOS included: a text
    /// token is allowed only if the grammar allows it and a complete output still fits after
    /// it — the token, a completion of at most the backend's bound
    /// (`Recognizer::completion_bound`), and EOS — in what is left. So any sampler that
    /// follows the masks ends with EOS on a complete output within `max_tokens`.
    /// [`Matcher::accept_bytes`] spends no token but is refused when no completion would fit
    /// after the bytes; [`Matcher::rollback`] gives back the tokens of the undone steps.
    ///
    /// # Errors
    /// [`MatcherError::BudgetTooSmall`] when no complete output is guaranteed to fit from the
    /// start.
    pub fn with_budget(
        compiled: Arc<CompiledGrammar>,
        max_tokens: u32,
    ) -> Result<Matcher, MatcherError> {
        let mut matcher = Matcher::new(compiled);
        let bound = matcher
            .parser
            .completion_bound(matcher.compiled.completion());
        if !budget::fits(bound, max_tokens, 0) {
            return Err(MatcherError::BudgetTooSmall {
                max_tokens,
                needed: bound.map(|b| b.saturating_add(1)),
            });
        }
        matcher.budget = Some(Budget::new(max_tokens));
        Ok(matcher)
    }

    /// The tokens left of the budget (EOS included), or `None` without a budget.
    pub fn remaining_tokens(&self) -> Option<u32> {
        self.budget
            .as_ref()
            .map(|b| b.max_tokens.saturating_sub(self.tokens))
    }

    /// The backend's bound on the text tokens that complete the output from here (without
    /// EOS; see `Recognizer::completion_bound`), or `None` when it cannot bound it. Builds
    /// the grammar's completion table on first use.
    pub fn completion_bound(&self) -> Option<u32> {
        self.parser.completion_bound(self.compiled.completion())
    }

    /// The compiled grammar this matcher runs.
    pub fn compiled(&self) -> &Arc<CompiledGrammar> {
        &self.compiled
    }

    /// Fills `bitmask` (at least [`CompiledGrammar::bitmask_words`] words; bit `t` is word
    /// `t / 32`, bit `t % 32`) with the tokens allowed next. After termination nothing is
    /// allowed.
    pub fn fill_next_token_bitmask(&mut self, bitmask: &mut [u32]) -> Result<(), MatcherError> {
        let needed = self.compiled.bitmask_words();
        if bitmask.len() < needed {
            return Err(MatcherError::BitmaskTooSmall {
                given: bitmask.len(),
                needed,
            });
        }
        bitmask.fill(0);
        if self.terminated {
            return Ok(());
        }
        let compiled = self.compiled.clone();
        let filled = compiled.cache().fill_text_tokens(
            &**compiled.engine(),
            &mut self.parser,
            compiled.trie(),
            bitmask,
        );
        if let Err(limit) = filled {
            bitmask.fill(0);
            return Err(limit.into());
        }
        let remaining = self.remaining_tokens();
        if let (Some(budget), Some(remaining)) = (self.budget.as_mut(), remaining) {
            let restricted = budget.restrict(
                &mut self.parser,
                compiled.completion(),
                compiled.trie(),
                compiled.trie_positions(),
                remaining,
                bitmask,
            );
            if let Err(limit) = restricted {
                bitmask.fill(0);
                return Err(limit.into());
            }
            if remaining == 0 {
                return Ok(());
            }
        }
        if self.parser.can_finish() {
            for eos in compiled.vocabulary().eos_ids() {
                bitmask[eos.index() / 32] |= 1 << (eos.index() % 32);
            }
        }
        Ok(())
    }

    fn token(&self, id: u32) -> Result<TokenId, MatcherError> {
        self.compiled
            .vocabulary()
            .token(id)
            .ok_or(MatcherError::UnknownToken {
                id,
                n_vocab: self.compiled.vocabulary().n_vocab(),
            })
    }

    /// Pushes `bytes`; on rejection pops them again and returns the offset of the first
    /// rejected byte.
    fn push_all(&mut self, bytes: &[u8]) -> Result<Result<(), usize>, MatcherError> {
        for (offset, &byte) in bytes.iter().enumerate() {
            match self.parser.push_byte(byte) {
                Ok(true) => {}
                Ok(false) => {
                    self.parser.pop_bytes(offset);
                    return Ok(Err(offset));
                }
                Err(limit) => {
                    self.parser.pop_bytes(offset);
                    return Err(limit.into());
                }
            }
        }
        Ok(Ok(()))
    }

    /// Feeds `token` the way the grammar reads it here (see `sieve_ir::token`): as a token
    /// terminal (its encoding) when the grammar takes it so, else as its text, else — for an
    /// EOS id on a complete output — as the end. Pushes nothing unless it returns `Pushed`.
    fn feed(&mut self, token: TokenId, vocab: &Vocabulary) -> Result<Fed, MatcherError> {
        if vocab.is_defined(token) {
            let encoding = sieve_ir::token::encode(token.index() as u32);
            if self.push_token(&encoding)? {
                return Ok(Fed::Pushed);
            }
        }
        if vocab.is_eos(token) && self.parser.can_finish() {
            return Ok(Fed::Eos);
        }
        if vocab.is_text_readable(token) && self.push_token(vocab.bytes(token))? {
            return Ok(Fed::Pushed);
        }
        Ok(Fed::Rejected)
    }

    /// Pushes the bytes of one reading of a token and checks that the token can end there
    /// (`Recognizer::can_end_token`: token limits); on either rejection pops them again.
    fn push_token(&mut self, bytes: &[u8]) -> Result<bool, MatcherError> {
        let start = self.parser.len();
        if self.push_all(bytes)?.is_err() {
            return Ok(false);
        }
        if self.parser.can_end_token() {
            Ok(true)
        } else {
            self.parser.pop_bytes(self.parser.len() - start);
            Ok(false)
        }
    }

    /// Accepts the sampled token `id`: it extends the output (as text, or as a token terminal
    /// the grammar names), or, for an EOS token allowed now, the matcher terminates.
    pub fn accept_token(&mut self, id: u32) -> Result<(), MatcherError> {
        if self.terminated {
            return Err(MatcherError::Terminated);
        }
        let token = self.token(id)?;
        let vocab = self.compiled.vocabulary().clone();
        let start = self.parser.len();
        match self.feed(token, &vocab)? {
            Fed::Eos => {
                if self.remaining_tokens() == Some(0) {
                    return Err(self.over_budget(format!("EOS token {id}")));
                }
                self.steps.push(Step {
                    start,
                    eos: true,
                    token: true,
                });
                self.tokens += 1;
                self.terminated = true;
                Ok(())
            }
            Fed::Pushed => {
                self.parser.end_token();
                if !self.fits_after(1) {
                    self.parser.pop_bytes(self.parser.len() - start);
                    let text = describe(&vocab, token);
                    return Err(self.over_budget(format!("token {id} ({text})")));
                }
                self.steps.push(Step {
                    start,
                    eos: false,
                    token: true,
                });
                self.tokens += 1;
                Ok(())
            }
            Fed::Rejected if vocab.is_special(token) => Err(MatcherError::SpecialNotAllowed { id }),
            Fed::Rejected => Err(MatcherError::TokenNotAllowed {
                id,
                text: describe(&vocab, token),
                offset: start,
            }),
        }
    }

    /// Accepts raw bytes as one step (e.g. a prompt prefix, or forced bytes).
    pub fn accept_bytes(&mut self, bytes: &[u8]) -> Result<(), MatcherError> {
        if self.terminated {
            return Err(MatcherError::Terminated);
        }
        let start = self.parser.len();
        match self.push_all(bytes)? {
            Ok(()) if !self.parser.can_end_token() => {
                self.parser.pop_bytes(self.parser.len() - start);
                Err(MatcherError::BytesRejected {
                    offset: bytes.len(),
                })
            }
            Ok(()) => {
                // The bytes of one call count as one token for token limits.
                self.parser.end_token();
                if !self.fits_after(0) {
                    self.parser.pop_bytes(self.parser.len() - start);
                    return Err(self.over_budget("the given bytes".to_owned()));
                }
                self.steps.push(Step {
                    start,
                    eos: false,
                    token: false,
                });
                Ok(())
            }
            Err(offset) => Err(MatcherError::BytesRejected { offset }),
        }
    }

    /// Whether, after spending `spent` more tokens on the bytes just pushed, a complete
    /// output still fits in the budget (always true without one).
    fn fits_after(&self, spent: u32) -> bool {
        match self.remaining_tokens() {
            None => true,
            Some(remaining) => budget::fits(
                self.parser.completion_bound(self.compiled.completion()),
                remaining,
                spent,
            ),
        }
    }

    fn over_budget(&self, what: String) -> MatcherError {
        MatcherError::OverBudget {
            what,
            remaining: self.remaining_tokens().unwrap_or(u32::MAX),
        }
    }

    /// Undoes the last `n` steps (tokens, EOS included, or `accept_bytes` calls).
    pub fn rollback(&mut self, n: usize) -> Result<(), MatcherError> {
        if n > self.steps.len() {
            return Err(MatcherError::RollbackTooFar {
                requested: n,
                available: self.steps.len(),
            });
        }
        if n == 0 {
            return Ok(());
        }
        let first_undone = self.steps[self.steps.len() - n];
        let undone_tokens = self.steps[self.steps.len() - n..]
            .iter()
            .filter(|step| step.token)
            .count();
        self.tokens -= undone_tokens as u32;
        self.steps.truncate(self.steps.len() - n);
        self.parser
            .pop_bytes(self.parser.len() - first_undone.start);
        self.terminated = false;
        Ok(())
    }

    /// Back to the start of the output.
    pub fn reset(&mut self) {
        self.parser.reset();
        self.steps.clear();
        self.tokens = 0;
        self.terminated = false;
    }

    /// Whether EOS was accepted.
    pub fn is_terminated(&self) -> bool {
        self.terminated
    }

    /// Whether EOS is allowed now: the output so far is a complete sentence.
    pub fn can_terminate(&self) -> bool {
        !self.terminated && self.parser.can_finish()
    }

    /// The output bytes accepted so far.
    pub fn output_len(&self) -> usize {
        self.parser.len()
    }

    /// The number of steps that [`Matcher::rollback`] can undo.
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// The longest byte string that every continuation of the output starts with (for
    /// jump-forward decoding): empty when the output could end here or several bytes may
    /// follow. Bounded by `limit` bytes.
    pub fn forced_bytes(&mut self, limit: usize) -> Result<Vec<u8>, MatcherError> {
        let mut forced = Vec::new();
        if self.terminated {
            return Ok(forced);
        }
        while forced.len() < limit && !self.parser.can_finish() {
            let allowed = self.parser.allowed_bytes();
            // A token terminal is a token to sample, not text to force.
            let Some(byte) = allowed.single_byte().filter(|&b| b != TOKEN_MARKER) else {
                break;
            };
            match self.parser.push_byte(byte) {
                Ok(true) => forced.push(byte),
                Ok(false) => break,
                Err(limit) => {
                    self.parser.pop_bytes(forced.len());
                    return Err(limit.into());
                }
            }
        }
        self.parser.pop_bytes(forced.len());
        Ok(forced)
    }

    /// How many leading tokens of `draft` would be accepted one after another (within the
    /// budget, if any), without changing the matcher (for speculative decoding).
    pub fn validate_tokens(&mut self, draft: &[u32]) -> Result<usize, MatcherError> {
        if self.terminated {
            return Ok(0);
        }
        let vocab = self.compiled.vocabulary().clone();
        let start = self.parser.len();
        let mut accepted = 0;
        for &id in draft {
            let token = self.token(id)?;
            let spent = accepted as u32 + 1;
            match self.feed(token, &vocab) {
                Ok(Fed::Eos) => {
                    if self.remaining_tokens().is_none_or(|r| spent <= r) {
                        accepted += 1;
                    }
                    break;
                }
                Ok(Fed::Pushed) => {
                    // As `accept_token` does: the token's end drops the items of limited
                    // rules it takes past their limits, and the bound is read after it.
                    self.parser.end_token();
                    if !self.fits_after(spent) {
                        break;
                    }
                    accepted += 1;
                }
                Ok(Fed::Rejected) => break,
                Err(error) => {
                    self.parser.pop_bytes(self.parser.len() - start);
                    return Err(error);
                }
            }
        }
        self.parser.pop_bytes(self.parser.len() - start);
        Ok(accepted)
    }
}

/// What [`Matcher::feed`] did with a token.
enum Fed {
    /// Its encoding or its text was pushed.
    Pushed,
    /// It is an EOS id and the output is complete (nothing pushed).
    Eos,
    /// The grammar takes it in no way here (nothing pushed).
    Rejected,
}

/// A token for messages: a special token's name, or its text escaped.
fn describe(vocab: &Vocabulary, token: TokenId) -> String {
    match vocab.special_name(token) {
        Some(name) => name.to_owned(),
        None => escape(vocab.bytes(token)),
    }
}
