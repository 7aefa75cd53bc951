//! sieve's vocabularies: every token of a tokenizer as its exact byte string, which tokens are
//! special (never text), the EOS ids, and the [`TokenTrie`] the mask computation walks.
//!
//! A [`Vocabulary`] is made by one of the loaders, each a module:
//!
//! | loader | input | bytes of a token |
//! |---|---|---|
//! | [`tiktoken`] | `BASE64(bytes) SP rank LF` lines + special tokens as `(name, id)` | the decoded base64 |
//! | [`hf`] | Hugging Face `tokenizer.json` | per [`VocabType`]: GPT-2 byte-level, SentencePiece `▁`/`<0xNN>`, or raw UTF-8 |
//! | [`plain`] | one token per line (JSON string, `hex:`, `special:`) | as written |
//! | [`manifest`] | an entry of `shared/tokenizers/manifest.json` (the bench protocol's `tokenizer`) | per its `format` |
//!
//! and [`Vocabulary::embedded_default`] is GPT-2's `r50k_base`, shipped inside the crate.
//!
//! # Example
//!
//! ```
//! use sieve_vocab::{TokenId, Vocabulary};
//!
//! let vocab = Vocabulary::embedded_default();
//! assert_eq!(vocab.n_vocab(), 50257);
//! let eos = vocab.special_by_name("<|endoftext|>").unwrap();
//! assert_eq!(vocab.eos_ids(), &[eos]);
//! let hello = [TokenId::new(15496).unwrap(), TokenId::new(995).unwrap()];
//! assert_eq!(vocab.decode(&hello).unwrap(), b"Hello world");
//! ```
//!
//! # Invariants
//!
//! - Ids are dense `0..n_vocab()`. An id is either a *text* token with a non-empty byte string,
//!   or *special*: a named control token, an EOS id, or an *unused* id (below `n_vocab` but
//!   defined by nothing). Special tokens have an empty byte string and never match text.
//! - A token whose byte string would be empty is special (it could be emitted forever without
//!   progress).
//! - Loaders never panic on their input: a malformed file gives an [`Error`] with its
//!   location (line for line formats, JSON path or line:column for JSON), and sizes are bounded
//!   by [`MAX_N_VOCAB`] and [`MAX_TOTAL_BYTES`].

mod base64;
mod embedded;
mod error;
pub mod hf;
mod id;
pub mod manifest;
pub mod plain;
pub mod tiktoken;
mod trie;
mod vocab;

pub use error::Error;
pub use hf::VocabType;
pub use id::TokenId;
pub use trie::{
    ClassRegion, FirstByte, RegionDepths, Step, TextDepths, TextExit, TextRegion, TokenTrie,
    TrieNode, Utf8State, CHAIN_DEPTH, MAX_CLASS_REGIONS, WIDE_SUBTREE,
};
pub use vocab::{Vocabulary, DEFAULT_EOS_NAMES, MAX_N_VOCAB, MAX_TOTAL_BYTES};
