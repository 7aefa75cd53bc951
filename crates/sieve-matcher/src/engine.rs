//! The backends a [`crate::CompiledGrammar`] can run, as one enum behind the
//! [`sieve_backend`] seam (in the style of regex-automata's `meta::Strategy`): the matcher and
//! the token cache see [`Engine`] and [`EngineRecognizer`] only through the seam's traits, so a
//! new backend is a new variant here and nothing else changes above.
//!
//! # Invariant
//!
//! An [`EngineRecognizer`] (and an [`EngineCompletion`]) is always of the same variant as
//! the [`Engine`] that made it.

use std::sync::Arc;

use sieve_backend::{Backend, Classification, Fingerprint, Key, LimitError, Recognizer};
use sieve_earley::{EarleyGrammar, Parser};
use sieve_ir::ByteClass;
use sieve_vocab::TokenTrie;

/// The compiled tables of one backend.
#[derive(Debug)]
pub(crate) enum Engine {
    /// The byte-level Earley recogniser over the rule automata (the default).
    Earley(Arc<EarleyGrammar>),
}

/// The completion table of an [`Engine`] for one vocabulary (of the same variant).
#[derive(Debug)]
pub(crate) enum EngineCompletion {
    /// The Earley backend's shortest completions.
    Earley(sieve_earley::CompletionTable),
}

/// What an [`EngineRecognizer`] keeps to bound continuations of its bytes (of its variant).
#[derive(Debug)]
pub(crate) enum EngineCompletionMemo {
    /// The Earley parser's routes.
    Earley(sieve_earley::CompletionMemo),
}

/// The per-request state of an [`Engine`].
#[derive(Clone, Debug)]
pub(crate) enum EngineRecognizer {
    /// An Earley parser.
    Earley(Parser),
}

impl Recognizer for EngineRecognizer {
    type Completion = EngineCompletion;
    type CompletionMemo = EngineCompletionMemo;

    #[inline]
    fn push_byte(&mut self, byte: u8) -> Result<bool, LimitError> {
        match self {
            EngineRecognizer::Earley(p) => Recognizer::push_byte(p, byte),
        }
    }

    #[inline]
    fn pop_bytes(&mut self, n: usize) {
        match self {
            EngineRecognizer::Earley(p) => Recognizer::pop_bytes(p, n),
        }
    }

    fn len(&self) -> usize {
        match self {
            EngineRecognizer::Earley(p) => Recognizer::len(p),
        }
    }

    fn can_finish(&self) -> bool {
        match self {
            EngineRecognizer::Earley(p) => Recognizer::can_finish(p),
        }
    }

    fn allowed_bytes(&self) -> ByteClass {
        match self {
            EngineRecognizer::Earley(p) => Recognizer::allowed_bytes(p),
        }
    }

    fn reset(&mut self) {
        match self {
            EngineRecognizer::Earley(p) => Recognizer::reset(p),
        }
    }

    fn states(&self, out: &mut Vec<u32>) {
        match self {
            EngineRecognizer::Earley(p) => Recognizer::states(p, out),
        }
    }

    fn contexts(&self, state: u32, out: &mut Vec<Key>) {
        match self {
            EngineRecognizer::Earley(p) => Recognizer::contexts(p, state, out),
        }
    }

    fn completion_bound(&self, table: &EngineCompletion) -> Option<u32> {
        match (self, table) {
            (EngineRecognizer::Earley(p), EngineCompletion::Earley(t)) => {
                Recognizer::completion_bound(p, t)
            }
        }
    }

    fn completion_memo(&self, table: &EngineCompletion) -> EngineCompletionMemo {
        match (self, table) {
            (EngineRecognizer::Earley(p), EngineCompletion::Earley(t)) => {
                EngineCompletionMemo::Earley(Recognizer::completion_memo(p, t))
            }
        }
    }

    fn completion_bound_from(
        &self,
        table: &EngineCompletion,
        memo: &EngineCompletionMemo,
    ) -> Option<u32> {
        match (self, table, memo) {
            (
                EngineRecognizer::Earley(p),
                EngineCompletion::Earley(t),
                EngineCompletionMemo::Earley(m),
            ) => Recognizer::completion_bound_from(p, t, m),
        }
    }

    fn completion_decide(
        &self,
        table: &EngineCompletion,
        memo: &EngineCompletionMemo,
        trie: &TokenTrie,
        limit: u32,
        fits: &mut [u32],
        exceeds: &mut [u32],
    ) {
        match (self, table, memo) {
            (
                EngineRecognizer::Earley(p),
                EngineCompletion::Earley(t),
                EngineCompletionMemo::Earley(m),
            ) => Recognizer::completion_decide(p, t, m, trie, limit, fits, exceeds),
        }
    }

    fn completion_caps(&self, table: &EngineCompletion, caps: &mut [u32]) {
        match (self, table) {
            (EngineRecognizer::Earley(p), EngineCompletion::Earley(t)) => {
                Recognizer::completion_caps(p, t, caps);
            }
        }
    }
}

impl Engine {
    /// A recogniser at the start of the input.
    pub(crate) fn start(&self) -> EngineRecognizer {
        match self {
            Engine::Earley(g) => EngineRecognizer::Earley(g.recognizer()),
        }
    }
}

impl Backend for Engine {
    type Recognizer = EngineRecognizer;

    fn recognizer(self: &Arc<Self>) -> EngineRecognizer {
        self.start()
    }

    fn state_count(&self) -> usize {
        match self {
            Engine::Earley(g) => Backend::state_count(&**g),
        }
    }

    fn is_scannable(&self, state: u32) -> bool {
        match self {
            Engine::Earley(g) => g.is_scannable(state),
        }
    }

    fn canonical_key(&self, key: Key, max_token_len: usize) -> Key {
        match self {
            Engine::Earley(g) => g.canonical_key(key, max_token_len),
        }
    }

    fn cost_hint(&self, state: u32) -> u32 {
        match self {
            Engine::Earley(g) => g.cost_hint(state),
        }
    }

    fn fingerprint(&self, state: u32) -> Option<Fingerprint> {
        match self {
            Engine::Earley(g) => g.fingerprint(state),
        }
    }

    fn completion_table(&self, trie: &TokenTrie) -> EngineCompletion {
        match self {
            Engine::Earley(g) => EngineCompletion::Earley(g.completion_table(trie)),
        }
    }

    fn classify(&self, key: Key, trie: &TokenTrie) -> Classification {
        match self {
            Engine::Earley(g) => g.classify(key, trie),
        }
    }
}
