//! The backends a [`crate::CompiledGrammar`] can run, as one enum behind the
//! [`sieve_backend`] seam (in the style of regex-automata's `meta::Strategy`): the matcher and
//! the token cache see [`Engine`] and [`EngineRecognizer`] only through the seam's traits, so a
//! new backend is a new variant here and nothing else changes above.
//!
//! # Invariants
//!
//! - An [`EngineRecognizer`], an [`EngineCompletion`] and an [`EngineCompletionMemo`] are
//!   always of the variant of the [`Engine`] that made them; a mixed pair is a bug here, not
//!   an input, and panics.
//! - Fingerprints are namespaced by backend ([`Engine::fingerprint`]), so the store shared by
//!   every grammar of a tokenizer never hands one backend's classification to another.

use std::sync::Arc;

use sieve_backend::{Backend, Classification, Fingerprint, Key, LimitError, Recognizer};
use sieve_earley::{EarleyGrammar, Parser};
use sieve_ir::ByteClass;
use sieve_lr::{LrGrammar, LrParser};
use sieve_tokendfa::{TokenDfa, TokenDfaRecognizer};
use sieve_vocab::TokenTrie;

use crate::selection::BackendKind;

/// The compiled tables of one backend.
#[derive(Debug)]
pub(crate) enum Engine {
    /// The byte-level Earley recogniser over the rule automata (the default).
    Earley(Arc<EarleyGrammar>),
    /// LR(1) tables run as a deterministic pushdown automaton.
    Lr(Arc<LrGrammar>),
    /// One DFA for the whole (regular) constraint.
    TokenDfa(Arc<TokenDfa>),
}

/// The completion table of an [`Engine`] for one vocabulary (of the same variant).
#[derive(Debug)]
pub(crate) enum EngineCompletion {
    /// The Earley backend's shortest completions.
    Earley(sieve_earley::CompletionTable),
    /// The LR backend's shortest completions over single-byte tokens.
    Lr(sieve_lr::LrCompletion),
    /// The token DFA's exact fewest tokens per state.
    TokenDfa(sieve_tokendfa::CompletionTable),
}

/// What an [`EngineRecognizer`] keeps to bound continuations of its bytes (of its variant).
#[derive(Debug)]
pub(crate) enum EngineCompletionMemo {
    /// The Earley parser's routes.
    Earley(sieve_earley::CompletionMemo),
    /// Nothing (the LR bound reads the whole stack each time).
    Lr,
    /// The token DFA's bound reads only its current state.
    TokenDfa,
}

/// The per-request state of an [`Engine`].
// One per request, held by value; boxing the Earley parser would add an indirection to every
// pushed byte of the default backend to save a few hundred bytes per matcher.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub(crate) enum EngineRecognizer {
    /// An Earley parser.
    Earley(Parser),
    /// An LR parser's stack.
    Lr(LrParser),
    /// A stack of DFA states.
    TokenDfa(TokenDfaRecognizer),
}

/// `$body` with `$inner` bound to the variant's contents, for every variant of `$value`
/// (an [`Engine`] or an [`EngineRecognizer`]).
macro_rules! each_variant {
    ($enum:ident, $value:expr, $inner:ident => $body:expr) => {
        match $value {
            $enum::Earley($inner) => $body,
            $enum::Lr($inner) => $body,
            $enum::TokenDfa($inner) => $body,
        }
    };
}

/// The panic for a recogniser and a completion table (or memo) of different backends.
fn mixed_variants() -> ! {
    unreachable!("a completion table used with another backend's recogniser")
}

impl Recognizer for EngineRecognizer {
    type Completion = EngineCompletion;
    type CompletionMemo = EngineCompletionMemo;

    #[inline]
    fn push_byte(&mut self, byte: u8) -> Result<bool, LimitError> {
        each_variant!(EngineRecognizer, self, r => Recognizer::push_byte(r, byte))
    }

    #[inline]
    fn pop_bytes(&mut self, n: usize) {
        each_variant!(EngineRecognizer, self, r => Recognizer::pop_bytes(r, n))
    }

    fn len(&self) -> usize {
        each_variant!(EngineRecognizer, self, r => Recognizer::len(r))
    }

    fn can_finish(&self) -> bool {
        each_variant!(EngineRecognizer, self, r => Recognizer::can_finish(r))
    }

    fn allowed_bytes(&self) -> ByteClass {
        each_variant!(EngineRecognizer, self, r => Recognizer::allowed_bytes(r))
    }

    fn reset(&mut self) {
        each_variant!(EngineRecognizer, self, r => Recognizer::reset(r))
    }

    fn end_token(&mut self) -> bool {
        each_variant!(EngineRecognizer, self, r => Recognizer::end_token(r))
    }

    fn can_end_token(&self) -> bool {
        each_variant!(EngineRecognizer, self, r => Recognizer::can_end_token(r))
    }

    fn states(&self, out: &mut Vec<u32>) {
        each_variant!(EngineRecognizer, self, r => Recognizer::states(r, out))
    }

    fn contexts(&self, state: u32, out: &mut Vec<Key>) {
        each_variant!(EngineRecognizer, self, r => Recognizer::contexts(r, state, out))
    }

    fn completion_bound(&self, table: &EngineCompletion) -> Option<u32> {
        match (self, table) {
            (EngineRecognizer::Earley(p), EngineCompletion::Earley(t)) => {
                Recognizer::completion_bound(p, t)
            }
            (EngineRecognizer::Lr(r), EngineCompletion::Lr(t)) => {
                Recognizer::completion_bound(r, t)
            }
            (EngineRecognizer::TokenDfa(r), EngineCompletion::TokenDfa(t)) => {
                Recognizer::completion_bound(r, t)
            }
            _ => mixed_variants(),
        }
    }

    fn completion_memo(&self, table: &EngineCompletion) -> EngineCompletionMemo {
        match (self, table) {
            (EngineRecognizer::Earley(p), EngineCompletion::Earley(t)) => {
                EngineCompletionMemo::Earley(Recognizer::completion_memo(p, t))
            }
            (EngineRecognizer::Lr(_), EngineCompletion::Lr(_)) => EngineCompletionMemo::Lr,
            (EngineRecognizer::TokenDfa(_), EngineCompletion::TokenDfa(_)) => {
                EngineCompletionMemo::TokenDfa
            }
            _ => mixed_variants(),
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
            (EngineRecognizer::Lr(r), EngineCompletion::Lr(t), EngineCompletionMemo::Lr) => {
                Recognizer::completion_bound_from(r, t, &())
            }
            (
                EngineRecognizer::TokenDfa(r),
                EngineCompletion::TokenDfa(t),
                EngineCompletionMemo::TokenDfa,
            ) => Recognizer::completion_bound_from(r, t, &()),
            _ => mixed_variants(),
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
            (EngineRecognizer::Lr(r), EngineCompletion::Lr(t), EngineCompletionMemo::Lr) => {
                Recognizer::completion_decide(r, t, &(), trie, limit, fits, exceeds);
            }
            (
                EngineRecognizer::TokenDfa(r),
                EngineCompletion::TokenDfa(t),
                EngineCompletionMemo::TokenDfa,
            ) => Recognizer::completion_decide(r, t, &(), trie, limit, fits, exceeds),
            _ => mixed_variants(),
        }
    }

    fn completion_caps(&self, table: &EngineCompletion, caps: &mut [u32]) {
        match (self, table) {
            (EngineRecognizer::Earley(p), EngineCompletion::Earley(t)) => {
                Recognizer::completion_caps(p, t, caps);
            }
            (EngineRecognizer::Lr(r), EngineCompletion::Lr(t)) => {
                Recognizer::completion_caps(r, t, caps);
            }
            (EngineRecognizer::TokenDfa(r), EngineCompletion::TokenDfa(t)) => {
                Recognizer::completion_caps(r, t, caps);
            }
            _ => mixed_variants(),
        }
    }
}

impl EngineRecognizer {
    /// Which backend this is.
    pub(crate) fn kind(&self) -> BackendKind {
        match self {
            EngineRecognizer::Earley(_) => BackendKind::Earley,
            EngineRecognizer::Lr(_) => BackendKind::Lr,
            EngineRecognizer::TokenDfa(_) => BackendKind::TokenDfa,
        }
    }
}

impl Engine {
    /// A recogniser at the start of the input.
    pub(crate) fn start(&self) -> EngineRecognizer {
        match self {
            Engine::Earley(g) => EngineRecognizer::Earley(g.recognizer()),
            Engine::Lr(g) => EngineRecognizer::Lr(g.recognizer()),
            Engine::TokenDfa(g) => EngineRecognizer::TokenDfa(g.recognizer()),
        }
    }

    /// Which backend this is.
    pub(crate) fn kind(&self) -> BackendKind {
        match self {
            Engine::Earley(_) => BackendKind::Earley,
            Engine::Lr(_) => BackendKind::Lr,
            Engine::TokenDfa(_) => BackendKind::TokenDfa,
        }
    }

    /// The heap bytes of the backend's compiled tables.
    pub(crate) fn table_bytes(&self) -> usize {
        match self {
            Engine::Earley(g) => g.heap_bytes(),
            Engine::Lr(g) => g.table_bytes(),
            Engine::TokenDfa(g) => g.heap_bytes(),
        }
    }
}

impl Backend for Engine {
    type Recognizer = EngineRecognizer;

    fn recognizer(self: &Arc<Self>) -> EngineRecognizer {
        self.start()
    }

    fn state_count(&self) -> usize {
        each_variant!(Engine, self, g => Backend::state_count(&**g))
    }

    fn is_scannable(&self, state: u32) -> bool {
        each_variant!(Engine, self, g => g.is_scannable(state))
    }

    fn canonical_key(&self, key: Key, max_token_len: usize) -> Key {
        each_variant!(Engine, self, g => g.canonical_key(key, max_token_len))
    }

    fn cost_hint(&self, state: u32) -> u32 {
        each_variant!(Engine, self, g => g.cost_hint(state))
    }

    /// The backend's fingerprint, its first word mixed with the backend (the default
    /// backend's unchanged), so equal fingerprints of two backends never meet in the store.
    fn fingerprint(&self, state: u32) -> Option<Fingerprint> {
        let mut fingerprint = each_variant!(Engine, self, g => g.fingerprint(state))?;
        let tag = self.kind() as u64;
        fingerprint.0[0] ^= tag.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Some(fingerprint)
    }

    fn prepare_token_limits(&self, trie: &TokenTrie) -> Result<(), String> {
        each_variant!(Engine, self, g => Backend::prepare_token_limits(&**g, trie))
    }

    fn completion_table(&self, trie: &TokenTrie) -> EngineCompletion {
        match self {
            Engine::Earley(g) => EngineCompletion::Earley(g.completion_table(trie)),
            Engine::Lr(g) => EngineCompletion::Lr(g.completion_table(trie)),
            Engine::TokenDfa(g) => EngineCompletion::TokenDfa(g.completion_table(trie)),
        }
    }

    fn classify(&self, key: Key, trie: &TokenTrie) -> Classification {
        each_variant!(Engine, self, g => g.classify(key, trie))
    }
}
