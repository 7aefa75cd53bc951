//! The compile pipeline, one public function per stage:
//!
//! ```text
//! Grammar ──normalize──► Normalized ──automata──► GrammarFsms ──earley──► recogniser tables
//!                                                       │
//!                     CompiledGrammar::from_automata ◄──┴──► ByteMatcher::from_automata
//!                     (with a Tokenizer: token masks)        (no vocabulary: bytes only)
//! ```
//!
//! [`CompiledGrammar::new`] and [`ByteMatcher::new`] are the composition of these stages.
//! Everything that compiles a grammar — the library, the `sieve` command, xtask and the
//! benchmarks — goes through them, so a grammar compiles the same way everywhere and a caller
//! that times the stages one by one times exactly what the library runs.
//!
//! ```
//! use sieve_matcher::{pipeline, ByteMatcher, Options};
//!
//! let grammar = sieve_gbnf::compile(r#"root ::= "a"{2,3}"#, &Default::default()).unwrap();
//! let options = Options::default();
//! let normalized = pipeline::normalize(&grammar, &options).unwrap();
//! let fsms = pipeline::automata(&normalized, &options).unwrap();
//! let mut matcher = ByteMatcher::from_automata(&fsms, &options).unwrap();
//! assert_eq!(matcher.push_byte(b'a'), Ok(true));
//! assert!(!matcher.can_finish());
//! assert_eq!(matcher.push_byte(b'a'), Ok(true));
//! assert!(matcher.can_finish());
//! ```
//!
//! # Invariants
//!
//! - Every stage takes its settings from the caller's [`Options`] (normalisation from
//!   `normalize`, automata from `fsm`, the recogniser from `backend` and its section) and from
//!   nowhere else: no stage falls back to defaults of its own. The one adjustment: the LR
//!   backend normalises with a repetition threshold of at least [`LR_REPETITION_THRESHOLD`].
//! - The automata are built from a [`Normalized`] grammar, whose type proves the normalised
//!   form, so the automata stage does not check that contract again
//!   (`sieve_fsm::Builder::build_normalized`).
//! - Stages are pure: the same input and options give the same output.
//!
//! [`CompiledGrammar::new`]: crate::CompiledGrammar::new
//! [`CompiledGrammar::from_automata`]: crate::CompiledGrammar::from_automata
//! [`ByteMatcher::new`]: crate::ByteMatcher::new
//! [`ByteMatcher::from_automata`]: crate::ByteMatcher::from_automata

use std::sync::Arc;

use crate::selection::{BackendChoice, BackendKind};

use sieve_earley::EarleyGrammar;
use sieve_fsm::{AutomatonCache, GrammarFsms};
use sieve_ir::Grammar;
use sieve_normalize::Normalized;
use sieve_vocab::TokenTrie;

use crate::engine::Engine;
pub use crate::{CompileError, Options};

/// The least repetition threshold grammars compiled for the LR backend are normalised with.
/// A bounded repetition past the threshold is written as optional copies followed by a
/// counted rule, and where the copies end and the counter starts is free: that form is
/// ambiguous, never LR(1). Expanding bounds up to 64 keeps JSON's `ws ::= [ \t]{0,20}` and
/// most schema bounds LR(1), at the cost of larger tables.
pub const LR_REPETITION_THRESHOLD: u32 = 64;

/// Stage 1: runs the normalisation passes with `options.normalize` — its repetition
/// threshold raised to [`LR_REPETITION_THRESHOLD`] when `options.backend` is the LR backend.
///
/// # Errors
/// [`CompileError::Normalize`] when the grammar accepts nothing or grows past a limit.
pub fn normalize(grammar: &Grammar, options: &Options) -> Result<Normalized, CompileError> {
    if options.backend == BackendChoice::Lr
        && options.normalize.repetition_threshold < LR_REPETITION_THRESHOLD
    {
        let config = sieve_normalize::Config {
            repetition_threshold: LR_REPETITION_THRESHOLD,
            ..options.normalize.clone()
        };
        return Ok(sieve_normalize::normalize(grammar, &config)?);
    }
    Ok(sieve_normalize::normalize(grammar, &options.normalize)?)
}

/// Stage 2: builds one automaton per rule with `options.fsm`.
///
/// # Errors
/// [`CompileError::Automata`] when the automata exceed a limit of `options.fsm`.
pub fn automata(normalized: &Normalized, options: &Options) -> Result<GrammarFsms, CompileError> {
    Ok(sieve_fsm::Builder::new(options.fsm.clone()).build_normalized(normalized)?)
}

/// [`automata`], taking rule automata from `cache` where an earlier build of the same rule
/// shape put them, and adding the ones it builds (what [`crate::CompiledGrammar::new`] does
/// with its tokenizer's cache). The result is the same as [`automata`]'s.
///
/// # Errors
/// As [`automata`].
pub fn automata_cached(
    normalized: &Normalized,
    options: &Options,
    cache: &Arc<AutomatonCache>,
) -> Result<GrammarFsms, CompileError> {
    Ok(sieve_fsm::Builder::new(options.fsm.clone())
        .with_cache(cache.clone())
        .build_normalized(normalized)?)
}

/// Stage 3 of the default backend: the Earley recogniser's tables over `fsms`, with
/// `options.earley`. [`crate::CompiledGrammar::from_automata`] and
/// [`crate::ByteMatcher::from_automata`] run it; it is public for tools that study the backend
/// itself (the `classify` benchmark).
pub fn earley(fsms: &GrammarFsms, options: &Options) -> EarleyGrammar {
    EarleyGrammar::new(fsms, root_nullable(fsms), options.earley.clone())
}

/// Whether the root derives ε. Only the root may (the normalised form), so it does iff its
/// own automaton accepts at its start.
fn root_nullable(fsms: &GrammarFsms) -> bool {
    fsms.automaton(fsms.root())
        .fsm()
        .is_some_and(|fsm| fsm.is_accepting(fsm.start()))
}

/// Stage 3 for the crate: the backend `options.backend` selects, behind the [`Engine`] seam.
/// `auto` takes the first of [`BackendChoice::candidates`] that accepts the grammar (the
/// token DFA within [`crate::AUTO_TOKEN_DFA_STATES`]); the last, Earley, accepts every
/// grammar. `trie` is the vocabulary tokens will come from, which backends that count
/// token limits into their tables need (`None` for a byte-level recogniser, which has no
/// tokens to count).
pub(crate) fn engine(
    fsms: &GrammarFsms,
    options: &Options,
    trie: Option<&TokenTrie>,
) -> Result<Engine, CompileError> {
    let ahead_of_time = options.ahead_of_time != crate::AheadOfTime::Off;
    let candidates = options.backend.candidates(ahead_of_time);
    let mut refusal = None;
    for &kind in candidates {
        let built = if options.backend == BackendChoice::Auto && kind == BackendKind::TokenDfa {
            let limit = options
                .token_dfa
                .get_state_limit()
                .min(crate::AUTO_TOKEN_DFA_STATES);
            let options = Options {
                token_dfa: options.token_dfa.clone().state_limit(limit),
                ..options.clone()
            };
            build(kind, fsms, &options, trie)
        } else {
            build(kind, fsms, options, trie)
        };
        match built {
            Ok(engine) => return Ok(engine),
            Err(error) => refusal = Some(error),
        }
    }
    Err(refusal.expect("every choice has a candidate"))
}

/// The tables of backend `kind` over `fsms` (token limits counted in `trie`).
fn build(
    kind: BackendKind,
    fsms: &GrammarFsms,
    options: &Options,
    trie: Option<&TokenTrie>,
) -> Result<Engine, CompileError> {
    Ok(match kind {
        BackendKind::Earley => Engine::Earley(Arc::new(earley(fsms, options))),
        BackendKind::TokenDfa => {
            let config = options.token_dfa.clone();
            let built = match trie {
                Some(trie) => sieve_tokendfa::TokenDfa::with_token_limits(fsms, config, trie),
                None => sieve_tokendfa::TokenDfa::new(fsms, config),
            };
            Engine::TokenDfa(Arc::new(built.map_err(|error| match error {
                sieve_tokendfa::TokenDfaError::TokenLimit(error) => {
                    CompileError::TokenLimit(error.to_string())
                }
                error => CompileError::TokenDfa(error),
            })?))
        }
        BackendKind::Lr => {
            let (nullable, config) = (root_nullable(fsms), options.lr.clone());
            let built = match trie {
                Some(trie) => sieve_lr::LrGrammar::with_token_limits(fsms, nullable, config, trie),
                None => sieve_lr::LrGrammar::new(fsms, nullable, config),
            };
            Engine::Lr(Arc::new(built.map_err(|error| match error {
                sieve_lr::LrError::TokenLimit(error) => CompileError::TokenLimit(error.to_string()),
                error => CompileError::from(error),
            })?))
        }
    })
}
