//! The Earley engine behind the backend seam: [`EarleyGrammar`] is a [`Backend`] whose keys are
//! its global automaton states, and [`Parser`] is its [`Recognizer`].

use std::sync::Arc;

use sieve_backend::{Backend, Classification, Fingerprint, Key, Recognizer};
use sieve_ir::ByteClass;
use sieve_vocab::TokenTrie;

use crate::{EarleyGrammar, LimitError, Parser};

impl From<LimitError> for sieve_backend::LimitError {
    fn from(error: LimitError) -> sieve_backend::LimitError {
        sieve_backend::LimitError::new(error.limit_name(), error.limit(), error.to_string())
    }
}

impl Recognizer for Parser {
    type Completion = crate::CompletionTable;
    type CompletionMemo = crate::CompletionMemo;

    fn push_byte(&mut self, byte: u8) -> Result<bool, sieve_backend::LimitError> {
        Ok(Parser::push_byte(self, byte)?)
    }

    fn pop_bytes(&mut self, n: usize) {
        Parser::pop_bytes(self, n);
    }

    fn len(&self) -> usize {
        Parser::len(self)
    }

    fn can_finish(&self) -> bool {
        Parser::can_finish(self)
    }

    fn allowed_bytes(&self) -> ByteClass {
        Parser::allowed_bytes(self)
    }

    fn reset(&mut self) {
        Parser::reset(self);
    }

    fn end_token(&mut self) -> bool {
        Parser::end_token(self)
    }

    fn can_end_token(&self) -> bool {
        Parser::can_end_token(self)
    }

    /// Each scan item's state, or its tight key near a token limit (see `limits.rs`).
    fn states(&self, out: &mut Vec<u32>) {
        if self.grammar().limits.any() {
            out.extend(self.top_scans().iter().map(|&item| self.item_key(item)));
        } else {
            out.extend(self.scan_states());
        }
    }

    /// A scan item's context is the chain of items its rule returns to: for each item
    /// waiting on the rule where it started, that item's state and count after the rule,
    /// then in turn the items waiting on that item's rule, up to [`Key::MAX_CONTEXT`] levels.
    fn contexts(&self, key: u32, out: &mut Vec<Key>) {
        let limits = &self.grammar().limits;
        let state = limits.state_of(key);
        let keep = |item| !limits.any() || self.item_key(item) == key;
        self.scan_contexts(state, keep, Key::MAX_CONTEXT, |frames| {
            out.push(Key::with_context(key, frames));
        });
    }

    fn completion_bound(&self, table: &crate::CompletionTable) -> Option<u32> {
        Parser::completion_bound(self, table)
    }

    fn completion_memo(&self, table: &crate::CompletionTable) -> crate::CompletionMemo {
        Parser::completion_memo(self, table)
    }

    fn completion_bound_from(
        &self,
        table: &crate::CompletionTable,
        memo: &crate::CompletionMemo,
    ) -> Option<u32> {
        Parser::completion_bound_from(self, table, Some(memo))
    }

    fn completion_decide(
        &self,
        table: &crate::CompletionTable,
        memo: &crate::CompletionMemo,
        trie: &TokenTrie,
        limit: u32,
        fits: &mut [u32],
        exceeds: &mut [u32],
    ) {
        Parser::completion_decide(self, table, memo, trie, limit, fits, exceeds);
    }

    fn completion_caps(&self, table: &crate::CompletionTable, caps: &mut [u32]) {
        Parser::completion_caps(self, table, caps);
    }
}

impl Backend for EarleyGrammar {
    type Recognizer = Parser;

    fn recognizer(self: &Arc<Self>) -> Parser {
        Parser::new(self.clone())
    }

    /// The grammar's states, then the tight keys of token limits (see `limits.rs`).
    fn state_count(&self) -> usize {
        EarleyGrammar::state_count(self) + self.limits.tight_count()
    }

    /// States with byte edges. Tight keys are classified when met, never ahead of time.
    fn is_scannable(&self, key: u32) -> bool {
        self.limits.tight(key).is_none()
            && self.states[key as usize].class != crate::grammar::NO_CLASS
    }

    fn prepare_token_limits(&self, trie: &TokenTrie) -> Result<(), String> {
        EarleyGrammar::prepare_token_limits(self, trie).map_err(|error| error.to_string())
    }

    /// A frame returning to a counted state `X{min,max}` with count `c` is decided by how far
    /// `c` is from `min` and from `max`, up to the most items a token can complete (each item
    /// takes at least one byte; the walk gives up on nullable items): counts farther than that
    /// from both bounds are one count.
    fn canonical_key(&self, key: Key, max_token_len: usize) -> Key {
        let reach = u32::try_from(max_token_len)
            .unwrap_or(u32::MAX)
            .saturating_add(1);
        let frames: Vec<(u32, u32)> = key
            .context()
            .iter()
            .map(|&(ret, count)| {
                let info = self.states[ret as usize];
                if info.counted == crate::grammar::NOT_COUNTED {
                    return (ret, count);
                }
                let counted = self.counted[info.counted as usize];
                let canonical = if count < counted.min {
                    counted.min - (counted.min - count).min(reach)
                } else if counted.max == crate::grammar::UNBOUNDED {
                    counted.min
                } else {
                    counted.max - (counted.max.saturating_sub(count)).min(reach)
                };
                (ret, canonical)
            })
            .collect();
        Key::with_context(key.state, &frames)
    }

    /// The number of bytes the state has edges for.
    fn cost_hint(&self, state: u32) -> u32 {
        let state = self.limits.state_of(state);
        let class = self.states[state as usize].class;
        if class == crate::grammar::NO_CLASS {
            0
        } else {
            self.classes[class as usize].len() as u32
        }
    }

    /// The residual hash of the state (`residual.rs`: the part of its rule's automaton it can
    /// reach, with the structural hashes of the rules that part refers to) and FOLLOW of its
    /// rule: all a bare classification reads (the walk descends only into rules the hash
    /// covers, and leaves the state's own rule only through FOLLOW). The first word also names
    /// this backend and the walk's limits, which change the result.
    fn fingerprint(&self, state: u32) -> Option<Fingerprint> {
        const EARLEY_STATIC_WALK_V2: u64 = 0x4541_524c_4559_0002;
        // A tight key's classification is its state's, less what the rule's `rest` (a
        // function of its automaton, which the rule hash names, and of the tokenizer, which
        // owns the store) and the allowance remove: the state's fingerprint with the
        // allowance and a tag bit folded into the second word.
        let (state, tight) = match self.limits.tight(state) {
            Some((state, allowance)) => (state, (1u64 << 63) | (u64::from(allowance) << 32)),
            None => (state, 0),
        };
        let [a, b] = self.residual_hash(state)?;
        let rule = self.states[state as usize].rule;
        let mut follow = [0u64; 4];
        for byte in self.follow[rule as usize].iter() {
            follow[byte as usize / 64] |= 1 << (byte % 64);
        }
        Some(Fingerprint([
            a ^ EARLEY_STATIC_WALK_V2.rotate_left(crate::within::MAX_STACK as u32)
                ^ (crate::within::MAX_CONFIGS as u64),
            b ^ tight,
            follow[0],
            follow[1],
            follow[2],
            follow[3],
        ]))
    }

    /// See `completion.rs`: token edges within each rule's automaton, caps up to the trie's
    /// longest token.
    fn completion_table(&self, trie: &TokenTrie) -> crate::CompletionTable {
        crate::CompletionTable::new(self, trie)
    }

    fn classify(&self, key: Key, trie: &TokenTrie) -> Classification {
        let context: Vec<(u32, u32)> = key
            .context()
            .iter()
            .map(|&(ret, count)| {
                let counted = self.states[ret as usize].counted != crate::grammar::NOT_COUNTED;
                (
                    ret,
                    if counted {
                        count
                    } else {
                        crate::grammar::NOT_COUNTED
                    },
                )
            })
            .collect();
        match self.limits.tight(key.state) {
            None => crate::classify::classify(self, trie, key.state, &context),
            Some((state, allowance)) => {
                let plain = crate::classify::classify(self, trie, state, &context);
                crate::limits::tighten(self, trie, state, allowance, plain)
            }
        }
    }
}
