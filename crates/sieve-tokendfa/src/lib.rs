//! sieve's token-level DFA backend (Koo et al., "Automata-based constraints for language model
//! decoding"), for regular constraints: regexes, non-recursive grammars and non-recursive JSON
//! Schemas.
//!
//! ```text
//! GrammarFsms ──compose──► one minimal byte DFA ──× vocabulary──► TokenAutomaton
//!  (per rule)   (inline references,     │          (per state: tokens → next state)
//!               determinise, minimise)  │
//!                                       └──► Backend / Recognizer (the sieve-backend seam)
//! ```
//!
//! 1. [`TokenDfa::new`] inlines every rule reference of the grammar's automata, expands
//!    counted repetitions, and determinises and minimises into one DFA for the whole
//!    constraint ([`Config::state_limit`] bounds every automaton on the way). Recursion only
//!    in tail position (right-linear rules) is regular and built; any other recursion is
//!    refused with the rules of one cycle ([`TokenDfaError::Recursive`]).
//! 2. [`TokenDfa`] implements [`Backend`]: its keys are DFA states, with no contexts, and
//!    [`Backend::classify`] is exact (no uncertain tokens) — a walk of the trie over the
//!    DFA's table from the state, with a state that loops on a large byte class taking the
//!    trie's class region at once (terminal-label masks), and a state that reads UTF-8 text
//!    character by character (a JSON string, bounded or not) taking the trie's text region
//!    and walking only its exits, or one that steps most bytes along a chain of states
//!    counting them (a bounded run of a class) taking the class region cut by length. [`TokenDfaRecognizer`] is a stack
//!    of DFA states: a push is one table look-up, a pop a truncation.
//! 3. [`TokenDfa::token_automaton`] composes the vocabulary with every state ahead of time
//!    ([`TokenAutomaton`]), within [`Config::token_automaton_bytes`]; past the bound it fails
//!    and masks come lazily, state by state, from the token cache over
//!    [`Backend::classify`] (the same walk).
//! 4. Completion bounds are exact: the fewest tokens to an accepting state, by a backward
//!    breadth-first search over the token automaton ([`CompletionTable`]).
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use sieve_backend::{Backend, Recognizer};
//! use sieve_tokendfa::{Config, TokenDfa};
//!
//! let grammar = sieve_regex::compile("[0-9]+(\\.[0-9]+)?", &Default::default()).unwrap();
//! let normalized = sieve_normalize::normalize(&grammar, &Default::default()).unwrap();
//! let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
//!     .build_normalized(&normalized)
//!     .unwrap();
//! let dfa = Arc::new(TokenDfa::new(&fsms, Config::new()).unwrap());
//! let mut r = dfa.recognizer();
//! assert_eq!(r.push_byte(b'4'), Ok(true));
//! assert_eq!(r.push_byte(b'x'), Ok(false));
//! assert!(r.can_finish());
//! assert_eq!(r.push_byte(b'.'), Ok(true));
//! assert!(!r.can_finish());
//! ```
//!
//! # Invariants
//!
//! The DFA is minimal and trimmed: a byte with a transition keeps the input a prefix of a
//! sentence (or of an infinite derivation, as the seam counts it), so [`Recognizer::allowed_bytes`] and [`Recognizer::push_byte`] are exact, and
//! masks through the token cache equal brute force. Nothing recurses on user input, and every
//! construction is bounded by [`Config`].

mod automaton;
mod backend;
mod chain;
mod completion;
mod compose;
mod config;
mod dfa;
mod error;
mod fingerprint;
mod nfa;
mod text;
mod walk;

pub use automaton::TokenAutomaton;
pub use backend::{TokenDfa, TokenDfaRecognizer};
pub use completion::{CompletionTable, CAPS_EFFORT, UNREACHABLE};
pub use config::Config;
pub use error::TokenDfaError;
pub use fingerprint::FINGERPRINT_STATES;
pub use walk::WILDCARD_MIN;

#[cfg(doc)]
use sieve_backend::{Backend, Recognizer};
