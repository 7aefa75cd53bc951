//! The runtime: compile a grammar against a vocabulary once, then drive one [`Matcher`] per
//! request.
//!
//! ```
//! use std::sync::Arc;
//! use sieve_matcher::{CompiledGrammar, Matcher, Options, Tokenizer};
//!
//! let grammar = sieve_gbnf::compile(r#"root ::= "yes" | "no""#, &Default::default()).unwrap();
//! let vocab = Arc::new(sieve_vocab::Vocabulary::embedded_default().clone());
//! let tokenizer = Arc::new(Tokenizer::new(vocab)); // once per vocabulary
//! let compiled = Arc::new(CompiledGrammar::new(&grammar, tokenizer, &Options::default()).unwrap());
//! let mut matcher = Matcher::new(compiled.clone());
//! let mut mask = vec![0u32; compiled.bitmask_words()];
//! matcher.fill_next_token_bitmask(&mut mask).unwrap();
//! let allowed = compiled.allowed_tokens(&mask);
//! assert!(allowed.iter().all(|&t| b"yes".starts_with(compiled.vocabulary().bytes(t))
//!     || b"no".starts_with(compiled.vocabulary().bytes(t))));
//! ```
//!
//! # Contract
//!
//! - Every grammar is compiled by the stages of [`pipeline`] (normalise, automata, backend),
//!   each honouring its part of the caller's [`Options`]; [`CompiledGrammar::new`] and
//!   [`ByteMatcher::new`] (the same recogniser over bytes, without a vocabulary) are their
//!   composition.
//! - [`Tokenizer`] (vocabulary + token trie) is built once per vocabulary and shared.
//! - [`CompiledGrammar`] is immutable, `Send + Sync`, shared through an `Arc`; a [`Matcher`] is
//!   cheap to create and owned by one request.
//! - Masks are exact: bit `t` (word `t / 32`, bit `t % 32`) is set iff the bytes accepted so far
//!   followed by token `t`'s bytes are a prefix of some sentence of the grammar (or of an
//!   infinite derivation of a pumping rule); an EOS token's bit is set iff the output so far is
//!   a complete sentence; no other special token is ever set.
//! - A matcher with a token budget ([`Matcher::with_budget`]) clears, in addition, every text
//!   token after which no complete output fits in the tokens left (EOS counted), so its
//!   masks are never empty before EOS and every output ends complete within the budget.
//! - Every mutating call either succeeds or returns a [`MatcherError`] and leaves the matcher
//!   exactly as it was.

mod batch;
mod budget;
mod byte_matcher;
mod compiled;
mod engine;
mod error;
mod matcher;
pub mod pipeline;
mod selection;
pub mod speculative;

pub use batch::{
    fill_next_token_bitmasks, fill_next_token_bitmasks_at, BatchError, PARALLEL_MIN_BATCH,
};
pub use byte_matcher::ByteMatcher;
pub use compiled::{
    AheadOfTime, CompileError, CompiledGrammar, Options, Tokenizer, DEFAULT_AUTOMATA_BYTES,
    DEFAULT_STORE_BYTES,
};
pub use error::MatcherError;
pub use matcher::Matcher;
pub use selection::{
    BackendChoice, BackendKind, UnknownBackend, AUTO_AHEAD_OF_TIME, AUTO_JUST_IN_TIME,
    AUTO_TOKEN_DFA_STATES,
};
pub use sieve_backend::LimitError;
pub use sieve_tokencache::{CacheStats, StoreStats};
pub use sieve_vocab::TokenId;
pub use speculative::{
    fill_draft_tree_bitmasks_batch, validate_tokens_batch, DraftChainMasks, DraftError, DraftTree,
    DraftTreeError, DraftTreeMasks, NodeState,
};
