//! The LR engine behind the backend seam: [`LrGrammar`] is a [`Backend`] whose keys are LR
//! states, and [`LrParser`] is its [`Recognizer`].
//!
//! Completion bounds are [`LrParser::completion_bound_with`] over [`crate::LrCompletion`]
//! (shortest completions over single-byte tokens along the parser's frames: sound, with the
//! seam's descent property, and loose — one token per byte). Fingerprints hash the sub-automaton a bare
//! classification reaches, so keys reaching few states share classifications across
//! grammars.

use std::sync::Arc;

use sieve_backend::{Backend, Classification, Fingerprint, Key, LimitError, Recognizer};
use sieve_ir::ByteClass;
use sieve_vocab::TokenTrie;

use crate::{LrCompletion, LrGrammar, LrParser};

impl Recognizer for LrParser {
    type Completion = LrCompletion;
    /// The bound reads the whole stack each time: nothing to keep.
    type CompletionMemo = ();

    fn push_byte(&mut self, byte: u8) -> Result<bool, LimitError> {
        LrParser::push_byte(self, byte)
    }

    fn pop_bytes(&mut self, n: usize) {
        LrParser::pop_bytes(self, n);
    }

    fn len(&self) -> usize {
        LrParser::len(self)
    }

    fn can_finish(&self) -> bool {
        LrParser::can_finish(self)
    }

    fn allowed_bytes(&self) -> ByteClass {
        LrParser::allowed_bytes(self)
    }

    fn end_token(&mut self) -> bool {
        LrParser::end_token(self)
    }

    fn can_end_token(&self) -> bool {
        LrParser::can_end_token(self)
    }

    /// The one state on top of the stack.
    fn states(&self, out: &mut Vec<u32>) {
        out.push(self.top_state());
    }

    /// One key: the top state with the frames below it (their states and where the items
    /// of each frame above started), up to [`Key::MAX_CONTEXT`]; the bare key at the bottom
    /// of the stack.
    fn contexts(&self, state: u32, out: &mut Vec<Key>) {
        let frames = self.context_frames(Key::MAX_CONTEXT);
        out.push(Key::with_context(state, &frames));
    }

    fn completion_bound(&self, table: &LrCompletion) -> Option<u32> {
        self.completion_bound_with(table)
    }

    fn completion_memo(&self, _table: &LrCompletion) {}

    fn completion_bound_from(&self, table: &LrCompletion, _memo: &()) -> Option<u32> {
        self.completion_bound_with(table)
    }

    /// No cheap cap: every token is checked against the budget when it is close.
    fn completion_caps(&self, _table: &LrCompletion, caps: &mut [u32]) {
        caps.fill(u32::MAX);
    }
}

impl Backend for LrGrammar {
    type Recognizer = LrParser;

    fn recognizer(self: &Arc<Self>) -> LrParser {
        LrParser::new(self.clone())
    }

    fn state_count(&self) -> usize {
        self.tables.state_count()
    }

    /// The start state and the targets of shifts.
    fn is_scannable(&self, state: u32) -> bool {
        self.tables.is_scannable(state)
    }

    /// The bytes the state shifts without reducing first.
    fn cost_hint(&self, state: u32) -> u32 {
        self.tables.shift_bytes(state)
    }

    /// A structural hash of the part of the LR automaton the bare classification can reach
    /// (see `fingerprint.rs`); `None` when that part has more than 64 states.
    fn fingerprint(&self, state: u32) -> Option<Fingerprint> {
        crate::fingerprint::fingerprint(&self.tables, state)
    }

    fn completion_table(&self, trie: &TokenTrie) -> LrCompletion {
        self.completion(trie)
    }

    /// Token limits were counted when the tables were built; this checks the vocabulary is
    /// the one they were counted in.
    fn prepare_token_limits(&self, trie: &TokenTrie) -> Result<(), String> {
        match self.limits_trie_len {
            Some(len) if len != trie.len() => Err(format!(
                "the LR tables' token limits were counted in a vocabulary of {len} trie \
                 positions, not this one of {}",
                trie.len()
            )),
            _ => Ok(()),
        }
    }

    fn classify(&self, key: Key, trie: &TokenTrie) -> Classification {
        crate::classify::classify(&self.tables, key, trie, self.config.max_reductions_per_byte)
    }
}
