//! The token-mask cache (XGrammar's adaptive token-mask cache, seed xgrammar2 §3.2–3.4, built
//! just in time): per backend key, which text tokens are accepted, rejected or uncertain, and
//! the mask walk that turns a recogniser's keys into an exact token bitmask.
//!
//! It sits between the backends and the runtime and knows them only through
//! [`sieve_backend`]'s traits.
//!
//! # Invariants
//!
//! - A [`TokenCache`] belongs to one backend (its keys) and one [`sieve_vocab::TokenTrie`]; entries are
//!   computed on first use (or by [`TokenCache::precompute`]) and never change.
//! - The bytes it keeps are bounded by its budget; past it, keys are classified afresh at
//!   each use — slower, equally exact.
//! - [`TokenCache::fill_text_tokens`] sets exactly the bits of the text tokens the recogniser
//!   accepts in full (the brute-force mask), and leaves the recogniser as it found it, also
//!   on error.

mod cache;
mod store;
mod walk;

pub use cache::{CacheStats, TokenCache, REFINE_ABOVE, REFINE_REPEATED_ABOVE};
pub use sieve_backend::{
    Backend, Classification, Fingerprint, Key, LimitError, Recognizer, TokenSet,
};
pub use store::{SharedStore, StoreStats};
