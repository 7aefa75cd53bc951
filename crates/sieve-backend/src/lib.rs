//! The seam between sieve's recognisers (backends) and the token-mask machinery.
//!
//! A backend turns the automata of a normalised grammar into something that recognises byte
//! strings. Everything above it — the token-mask cache (`sieve-tokencache`) and the runtime
//! (`sieve-matcher`) — sees it only through two traits:
//!
//! - [`Backend`]: the compiled tables, immutable and shared (`Send + Sync`). It names its
//!   *keys*: the scannable states whose token classification depends on the key alone, not on
//!   the rest of the recogniser's state. [`Backend::classify`] sorts every text token of a
//!   vocabulary, from one key, into *accepted*, *rejected* and *uncertain*.
//! - [`Recognizer`]: the per-request state, a stack of consumed bytes. Pushing a byte either
//!   extends the stack or leaves it unchanged; popping restores exactly the state before the
//!   matching pushes, which is what makes rollback and the mask walk cheap.
//!
//! # The contract that makes masks exact
//!
//! For a recogniser `r` whose [`Recognizer::keys`] are `K`:
//!
//! 1. every token in `classify(k).accepted` for some `k ∈ K` is accepted by `r` (its bytes
//!    pushed one by one are all accepted);
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
//! # Adding a backend
//!
//! Implement [`Recognizer`] for the per-request state and [`Backend`] for the tables. A
//! backend with no cheap static classification may classify every token as uncertain (one
//! range over the whole trie): masks stay exact, every step then walks the trie with the
//! recogniser.

mod limit;
mod tokens;

use std::fmt;
use std::sync::Arc;

use sieve_ir::ByteClass;
use sieve_vocab::TokenTrie;

pub use limit::LimitError;
pub use tokens::{push_range, Classification, TokenSet};

/// The per-request state of a backend: the bytes consumed so far, as a stack.
///
/// Every method that fails leaves the recogniser unchanged.
pub trait Recognizer: Clone + Send + Sync + fmt::Debug {
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

    /// Appends to `out` the keys of the current scannable states (repeats allowed).
    fn keys(&self, out: &mut Vec<u32>);
}

/// The compiled, immutable tables of a backend, shared by every recogniser made from them.
pub trait Backend: Send + Sync + fmt::Debug {
    /// The per-request state.
    type Recognizer: Recognizer;

    /// A recogniser at the start of the input.
    fn recognizer(self: &Arc<Self>) -> Self::Recognizer;

    /// Keys are `0..key_count()`.
    fn key_count(&self) -> usize;

    /// Whether `key` can ever be reported by [`Recognizer::keys`] (the keys worth classifying
    /// ahead of time).
    fn is_scannable(&self, key: u32) -> bool;

    /// Sorts every text token of `trie` from `key` (see the crate docs for what the sets
    /// promise). A pure function of the key and the trie.
    fn classify(&self, key: u32, trie: &TokenTrie) -> Classification;
}
