//! The seam between sieve's recognisers (backends) and the token-mask machinery.
//!
//! A backend turns the automata of a normalised grammar into something that recognises byte
//! strings. Everything above it — the token-mask cache (`sieve-tokencache`) and the runtime
//! (`sieve-matcher`) — sees it only through two traits:
//!
//! - [`Backend`]: the compiled tables, immutable and shared (`Send + Sync`). It names its
//!   *keys*: a scannable state, optionally narrowed by a *context* (what the state's rule
//!   returns to), whose token classification depends on the key alone, not on the rest of the
//!   recogniser's state. [`Backend::classify`] sorts every text token of a vocabulary, from one
//!   key, into *accepted*, *rejected* and *uncertain*. A key with a context decides at least
//!   what the bare state decides, and usually far more: tokens that finish the state's rule
//!   and go on in the caller are uncertain for the bare state but decided with the context.
//! - [`Recognizer`]: the per-request state, a stack of consumed bytes. Pushing a byte either
//!   extends the stack or leaves it unchanged; popping restores exactly the state before the
//!   matching pushes, which is what makes rollback and the mask walk cheap.
//!
//! # The contract that makes masks exact
//!
//! For a recogniser `r` whose scannable states ([`Recognizer::states`]) are `S`, let `K` hold,
//! for each `s ∈ S`, either the bare key of `s` ([`Key::bare`]) or every key of
//! [`Recognizer::contexts`]`(s)`:
//!
//! 1. every token in `classify(k).accepted` for some `k ∈ K` is accepted by `r` (its bytes
//!    pushed one by one are all accepted, and [`Recognizer::can_end_token`] holds after
//!    them);
//! 2. every text token that is in no `classify(k).accepted` and in no `classify(k).uncertain`
//!    range, over all `k ∈ K`, is rejected by `r`;
//! 3. [`Recognizer::allowed_bytes`] is exactly the set of bytes [`Recognizer::push_byte`]
//!    accepts, and a byte is accepted iff the bytes so far are a prefix of a sentence (or of
//!    an infinite derivation of a pumping rule).
//!
//! So the mask is the union of the accepted sets plus the uncertain tokens the recogniser
//! accepts when fed in full; `sieve-tokencache` computes exactly that, and its tests check it
//! against feeding every token to the recogniser.
//!
//! # Completion bounds (token budgets)
//!
//! [`Recognizer::completion_bound`] bounds the text tokens that still reach a sentence. Its
//! contract is a *descent* property, not just an upper bound: whenever the bound is `u > 0`,
//! some accepted token brings it to `u - 1` or below. A runtime that allows only tokens
//! after which the bound still fits in the remaining budget therefore never runs out of
//! allowed tokens before a sentence is complete. [`Recognizer::completion_caps`] bounds the
//! bound after any short string, so that check can be skipped while the budget is far.
//!
//! # Adding a backend
//!
//! Implement [`Recognizer`] for the per-request state and [`Backend`] for the tables. A
//! backend with no cheap static classification may classify every token as uncertain (one
//! range over the whole trie): masks stay exact, every step then walks the trie with the
//! recogniser.

mod hasher;
mod limit;
pub mod token_limits;
mod tokens;

use std::fmt;
use std::sync::Arc;

use sieve_ir::ByteClass;
use sieve_vocab::TokenTrie;

pub use hasher::FingerprintHasher;
pub use limit::LimitError;
pub use tokens::{merge_ranges, push_range, Classification, TokenBits, TokenSet};

/// What a bare key's classification depends on, as a value: two keys with equal fingerprints
/// (in any two grammars compiled by the same backend) have equal bare classifications
/// against the same trie, which lets classifications be shared across grammars. The words
/// are backend-defined (for the Earley backend: a structural hash of the part of the state's
/// automaton it can reach and of the rules that part refers to, and the bytes that may follow
/// its rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint(pub [u64; 6]);

/// A scannable state of a backend, with or without a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The state (below [`Backend::state_count`]).
    pub state: u32,
    /// What the state's rule returns to, innermost first: up to [`Key::MAX_CONTEXT`] frames
    /// of two backend-defined words each; the frames past `len` are zero.
    frames: [(u32, u32); Key::MAX_CONTEXT],
    len: u8,
}

impl Key {
    /// The most frames a context holds.
    pub const MAX_CONTEXT: usize = 3;

    /// `state` without a context.
    pub fn bare(state: u32) -> Key {
        Key {
            state,
            frames: [(0, 0); Key::MAX_CONTEXT],
            len: 0,
        }
    }

    /// `state` with the context `frames`, innermost first (at most [`Key::MAX_CONTEXT`];
    /// more are dropped from the outside).
    pub fn with_context(state: u32, frames: &[(u32, u32)]) -> Key {
        let mut key = Key::bare(state);
        let len = frames.len().min(Key::MAX_CONTEXT);
        key.frames[..len].copy_from_slice(&frames[..len]);
        key.len = len as u8;
        key
    }

    /// Whether the key has a context.
    pub fn has_context(&self) -> bool {
        self.len > 0
    }

    /// The context's frames, innermost first.
    pub fn context(&self) -> &[(u32, u32)] {
        &self.frames[..self.len as usize]
    }
}

/// The per-request state of a backend: the bytes consumed so far, as a stack.
///
/// Every method that fails leaves the recogniser unchanged.
pub trait Recognizer: Clone + Send + Sync + fmt::Debug {
    /// What the completion bounds read: the backend's shortest completions counted in tokens
    /// of one vocabulary, built once per grammar and vocabulary by
    /// [`Backend::completion_table`].
    type Completion: Send + Sync + fmt::Debug;

    /// What [`Recognizer::completion_memo`] keeps of the current bytes.
    type CompletionMemo: Send + Sync + fmt::Debug;

    /// Consumes one byte. `Ok(true)`: the input so far is still a prefix of a sentence and the
    /// byte was pushed; `Ok(false)`: it would not be, and nothing changed.
    ///
    /// # Errors
    /// A [`LimitError`] when the backend's work or memory bound would be exceeded; nothing
    /// changed.
    fn push_byte(&mut self, byte: u8) -> Result<bool, LimitError>;

    /// Undoes the last `n` pushed bytes, restoring exactly the state before them.
    ///
    /// # Panics
    /// When `n > self.len()`.
    fn pop_bytes(&mut self, n: usize);

    /// The number of bytes consumed.
    fn len(&self) -> usize;

    /// Whether no byte has been consumed.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the input so far is a complete sentence.
    fn can_finish(&self) -> bool;

    /// Exactly the bytes [`Recognizer::push_byte`] would accept now (limits aside).
    fn allowed_bytes(&self) -> ByteClass;

    /// Back to the empty input.
    fn reset(&mut self) {
        self.pop_bytes(self.len());
    }

    /// Marks the end of a token at the current bytes, for grammars whose rules limit the
    /// tokens they span (`sieve_ir::Rule::max_tokens`): parts of the recogniser that could
    /// no longer finish within their limit are dropped. Returns whether the input can still
    /// go on or finish (when not, pop bytes to go back). Called once after the bytes of each
    /// accepted token; popping those bytes undoes it. The default (no limits) changes
    /// nothing.
    fn end_token(&mut self) -> bool {
        true
    }

    /// Whether [`Recognizer::end_token`] would leave the recogniser alive; changes nothing.
    /// A token is accepted iff its bytes are and this holds after them: every mask path
    /// checks it after a token's last byte.
    fn can_end_token(&self) -> bool {
        true
    }

    /// Appends to `out` the current scannable states (repeats allowed). Cheap: called at
    /// every mask.
    fn states(&self, out: &mut Vec<u32>);

    /// Appends to `out` the keys of `state` (one of [`Recognizer::states`]) with their
    /// contexts, one per way its rule can return (repeats allowed); a bare key where no
    /// context can be given. Called only for states whose bare classification leaves many
    /// tokens uncertain.
    fn contexts(&self, state: u32, out: &mut Vec<Key>);

    /// An upper bound `u` on the text tokens (of `table`'s vocabulary) that reach a complete
    /// sentence from here, or `None` when the backend cannot bound it. The contract, which
    /// token budgets rest on (see the crate docs):
    ///
    /// - `Some(0)` only if [`Recognizer::can_finish`];
    /// - `Some(u)` with `u > 0`: some text token of the vocabulary is accepted now (its bytes
    ///   pushed one by one) and leaves a bound of at most `u - 1` — so, by induction, a
    ///   sentence is reached in at most `u` tokens, each of which keeps the bound.
    fn completion_bound(&self, table: &Self::Completion) -> Option<u32>;

    /// What bounding continuations of the bytes consumed so far can reuse (for a backend
    /// whose bound reads its history: the part of it that those bytes fix).
    fn completion_memo(&self, table: &Self::Completion) -> Self::CompletionMemo;

    /// Equal to [`Recognizer::completion_bound`], provided every byte consumed when `memo`
    /// was made by [`Recognizer::completion_memo`] is still consumed (only pushes, and pops
    /// of those pushes, since); usually much cheaper. A budget filter feeds many tokens from
    /// one state this way.
    fn completion_bound_from(
        &self,
        table: &Self::Completion,
        memo: &Self::CompletionMemo,
    ) -> Option<u32>;

    /// Decides, without feeding them, what it cheaply can of the tokens of `trie` against
    /// `limit`: sets in `fits` (bitmask by token id) tokens after which, if the recogniser
    /// accepts them, [`Recognizer::completion_bound`] is at most `limit`, and in `exceeds`
    /// tokens after which, if accepted, it is more than `limit` (`None` counting as more).
    /// `memo` is [`Recognizer::completion_memo`] of the current bytes. The default decides
    /// nothing; a backend that can follow tokens through its tables says more, which spares
    /// a budget filter feeding those tokens.
    fn completion_decide(
        &self,
        table: &Self::Completion,
        memo: &Self::CompletionMemo,
        trie: &TokenTrie,
        limit: u32,
        fits: &mut [u32],
        exceeds: &mut [u32],
    ) {
        let _ = (table, memo, trie, limit, fits, exceeds);
    }

    /// Fills `caps[d]`, for each `d < caps.len()`, with a value at least the
    /// [`Recognizer::completion_bound`] (`None` counting as `u32::MAX`) after any string of
    /// at most `d` bytes this recogniser accepts; `u32::MAX` where it cannot say. Cheap
    /// (about the work of one bound): it lets a budget skip checking tokens one by one.
    fn completion_caps(&self, table: &Self::Completion, caps: &mut [u32]);
}

/// The compiled, immutable tables of a backend, shared by every recogniser made from them.
pub trait Backend: Send + Sync + fmt::Debug {
    /// The per-request state.
    type Recognizer: Recognizer;

    /// A recogniser at the start of the input.
    fn recognizer(self: &Arc<Self>) -> Self::Recognizer;

    /// States are `0..state_count()`.
    fn state_count(&self) -> usize;

    /// Whether `state` can ever be reported by [`Recognizer::states`] (the
    /// states worth classifying ahead of time).
    fn is_scannable(&self, state: u32) -> bool;

    /// Sorts every text token of `trie` from `key` (see the crate docs for what the sets
    /// promise). A pure function of the key and the trie.
    fn classify(&self, key: Key, trie: &TokenTrie) -> Classification;

    /// The representative of `key`'s class of keys with equal classifications, given that no
    /// token is longer than `max_token_len` bytes: keys that differ only in what no token can
    /// reach (a repetition count far from its bounds) should map to one key, so the cache
    /// classifies them once. The default is `key` itself.
    fn canonical_key(&self, key: Key, max_token_len: usize) -> Key {
        let _ = max_token_len;
        key
    }

    /// A rough relative cost of classifying `state` (for ordering ahead-of-time work, costliest
    /// first): e.g. how many first bytes it allows.
    fn cost_hint(&self, state: u32) -> u32 {
        let _ = state;
        1
    }

    /// The fingerprint of `state`'s bare classification, or `None` when the backend cannot
    /// name one soundly (then the classification is never shared across grammars).
    fn fingerprint(&self, state: u32) -> Option<Fingerprint>;

    /// Prepares the grammar's token limits (`sieve_ir::Rule::max_tokens`) for `trie`, the
    /// vocabulary every token will come from; called once when a grammar is compiled for a
    /// vocabulary. Fails with a message naming the rule when a limit cannot be honoured
    /// (a backend without token limits refuses such grammars when it is built). The default
    /// has nothing to prepare.
    ///
    /// # Errors
    /// A message naming the rule whose limit cannot be honoured with this vocabulary.
    fn prepare_token_limits(&self, trie: &TokenTrie) -> Result<(), String> {
        let _ = trie;
        Ok(())
    }

    /// The tables [`Recognizer::completion_bound`] and [`Recognizer::completion_caps`] read,
    /// for the text tokens of `trie`. A pure function of the grammar and the trie; built once
    /// per grammar and vocabulary (only when a budget asks for it).
    fn completion_table(&self, trie: &TokenTrie) -> <Self::Recognizer as Recognizer>::Completion;
}
