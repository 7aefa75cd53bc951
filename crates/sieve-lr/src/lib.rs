//! sieve's LR(1) backend: the rule automata of a normalised grammar (a regular right-part
//! grammar) compiled to LR(1) tables and run as a deterministic pushdown automaton — the
//! Pre³ design (seed `pre3-lr1-to-dpda`) behind [`sieve_backend`]'s seam.
//!
//! [`LrGrammar::new`] builds the tables from [`sieve_fsm::GrammarFsms`] or fails with an
//! [`LrError`]: a [`Conflict`] (the grammar is not LR(1): the items, the look-ahead byte and a
//! prefix reaching the state), an unsupported automaton (an NFA rule, a counted repetition
//! too long to expand), or a [`Config`] limit. [`LrParser`] is the per-request recogniser.
//!
//! # How it works
//!
//! - `rules`: every rule automaton in one state space, FIRST sets and nullability.
//! - `build`: LR(1) item sets over those states, merged with Pager's weak compatibility
//!   (LR(1) power, about LALR(1) size); the action and goto tables (`tables`).
//! - `machine`: the DPDA step. Because rule bodies are automata, a rule's length is not
//!   fixed: every frame records, per item, the frame where its rule started, so a reduction
//!   pops exactly to it. Pushing a byte is the reductions its look-ahead selects, then the
//!   shift; popping truncates an append-only arena.
//! - `edges`: a byte's whole reduction chain and shift memoised as one edge per (byte class,
//!   configuration of the top four frames), computed on first use by the same step and kept
//!   in a bounded table shared by the grammar's parsers ([`Config::max_edges`]), with a small
//!   cache per parser in front; the step-by-step path when a chain reads deeper.
//! - `classify`: a key (an LR state, optionally with the states below it) decides the
//!   tokens whose reductions stay within its known frames; the rest are uncertain and fed.
//!   `fingerprint`: a canonical hash of what a bare classification reads, for sharing across
//!   grammars. `completion`: completion bounds with the seam's descent property.
//!
//! # Limits
//!
//! Construction is bounded by [`Config::max_states`]; each pushed byte by
//! [`Config::max_reductions_per_byte`]; the history by [`Config::max_bytes_history`] and
//! [`Config::max_frames`].
//!
//! # Completion bounds
//!
//! [`LrGrammar::completion`] and [`LrParser::completion_bound_with`] give a bound with the
//! seam's descent property (shortest completions over single-byte tokens along the parser's
//! frames, see `completion.rs`); it is the backend's [`sieve_backend::Recognizer`]
//! completion bound, so token budgets work on it (loosely: one token per byte).
//!
//! # Token limits
//!
//! [`LrGrammar::with_token_limits`] counts the tokens of a vocabulary for rules with a token
//! limit (`max_tokens`), by the rule every backend shares ([`sieve_backend::token_limits`]):
//! a limited rule's automaton is copied once per token its occurrence has ended, and a token
//! end is one more symbol of the LR automaton, which moves only the top frame's items (see
//! `rules.rs` and `build.rs`). [`LrParser::end_token`] takes it; classifications accept a
//! token only if its end survives.
//!
//! # Sharing
//!
//! Fingerprints cover keys whose bare classification reaches at most 64 LR states (a
//! string's or a number's inside); others are not shared across grammars.

mod backend;
mod build;
mod classify;
mod completion;
mod edges;
mod error;
mod fingerprint;
mod lookahead;
mod machine;
mod parser;
mod rules;
mod tables;

use sieve_backend::token_limits::{first_limited, rule_limits, RuleLimit};
use sieve_fsm::GrammarFsms;
use sieve_vocab::TokenTrie;

pub use completion::LrCompletion;
pub use error::{Conflict, ConflictAction, ConflictItem, LrError};
pub use parser::LrParser;

/// Limits and switches of the LR backend. The fields are public so callers can write
/// `Config { max_states: 1000, ..Config::default() }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The most LR states the construction may create (merged states counted once, states
    /// dropped as unreachable after merging counted too). Each state costs its items (about
    /// 50 bytes each while building) and an action row (4 bytes per terminal class, or 6 per
    /// action when sparse). Default 65,536.
    pub max_states: usize,
    /// The longest chain a counted repetition `X{m,n}` may expand to (`n + 1` states, or
    /// `m + 1` when unbounded); longer ones are refused as unsupported. Each count is its own
    /// LR state in every context, so this also bounds table growth. Default 256.
    pub max_counted_states: usize,
    /// Whether to merge states with Pager's weak compatibility. Default `true`; `false` builds
    /// canonical LR(1) tables (same language, more states).
    pub merge: bool,
    /// The most reductions one pushed byte may take (and one classification step). Each
    /// reduction is a few table look-ups. Default 65,536.
    pub max_reductions_per_byte: usize,
    /// The most bytes a parser may hold. Default 1,048,576.
    pub max_bytes_history: usize,
    /// The most frames a parser's arena may hold (about 16 bytes each with their origins).
    /// Default 16,777,216.
    pub max_frames: usize,
    /// The most aggregated edges (a byte's reductions and shift from a configuration of the
    /// top frames, see `docs/backends-lr.md`) memoised per grammar, shared by its parsers;
    /// about 100 bytes each. Past it, bytes take the step-by-step path. `0` turns them off.
    /// Default 65,536.
    pub max_edges: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_states: 1 << 16,
            max_counted_states: 256,
            merge: true,
            max_reductions_per_byte: 1 << 16,
            max_bytes_history: 1 << 20,
            max_frames: 1 << 24,
            max_edges: 1 << 16,
        }
    }
}

/// The compiled LR tables of one grammar (immutable; share with an `Arc`).
#[derive(Clone, Debug)]
pub struct LrGrammar {
    tables: tables::Tables,
    config: Config,
    /// The rule automata, for completion tables.
    rules: rules::Rules,
    /// The aggregated edges met so far.
    edges: edges::EdgeTable,
    /// The number of trie positions of the vocabulary token limits were counted in, when the
    /// grammar has any.
    limits_trie_len: Option<usize>,
}

impl LrGrammar {
    /// Builds the tables of `fsms`, whose root derives ε iff `root_nullable` (only the root
    /// may, in the normalised form).
    ///
    /// # Errors
    /// An [`LrError`]: the grammar is not LR(1), has an automaton this backend does not take,
    /// or exceeds a [`Config`] limit; [`LrError::NeedsVocabulary`] when a rule has a token
    /// limit (build with [`LrGrammar::with_token_limits`]).
    pub fn new(
        fsms: &GrammarFsms,
        root_nullable: bool,
        config: Config,
    ) -> Result<LrGrammar, LrError> {
        if let Some(rule) = first_limited(fsms) {
            return Err(LrError::NeedsVocabulary {
                rule: fsms.name(rule).to_owned(),
            });
        }
        LrGrammar::build(fsms, root_nullable, config, &[], None)
    }

    /// As [`LrGrammar::new`], counting the tokens of `trie` for the rules with a token limit
    /// (see the crate docs). Masks must then come from `trie`'s vocabulary.
    ///
    /// # Errors
    /// As [`LrGrammar::new`] (but for [`LrError::NeedsVocabulary`]), and
    /// [`LrError::TokenLimit`] when a limit cannot be honoured with this vocabulary.
    pub fn with_token_limits(
        fsms: &GrammarFsms,
        root_nullable: bool,
        config: Config,
        trie: &TokenTrie,
    ) -> Result<LrGrammar, LrError> {
        let limits = rule_limits(fsms, trie).map_err(LrError::TokenLimit)?;
        let trie_len = limits.iter().any(Option::is_some).then_some(trie.len());
        LrGrammar::build(fsms, root_nullable, config, &limits, trie_len)
    }

    fn build(
        fsms: &GrammarFsms,
        root_nullable: bool,
        config: Config,
        limits: &[Option<RuleLimit>],
        limits_trie_len: Option<usize>,
    ) -> Result<LrGrammar, LrError> {
        let rules = rules::Rules::new(fsms, root_nullable, &config, limits)?;
        let tables = build::build(&rules, &config)?;
        Ok(LrGrammar {
            tables,
            edges: edges::EdgeTable::new(config.max_edges),
            config,
            rules,
            limits_trie_len,
        })
    }

    /// Whether some rule has a token limit (counted when the tables were built).
    pub fn has_token_limits(&self) -> bool {
        self.limits_trie_len.is_some()
    }

    /// The number of LR states.
    pub fn state_count(&self) -> usize {
        self.tables.state_count()
    }

    /// Heap bytes of the tables.
    pub fn table_bytes(&self) -> usize {
        self.tables.heap_bytes()
    }

    /// The completion table for the text tokens of `trie`, which
    /// [`LrParser::completion_bound_with`] reads: per automaton state, the fewest single-byte
    /// tokens to its rule's end.
    pub fn completion(&self, trie: &TokenTrie) -> LrCompletion {
        LrCompletion::new(&self.rules, trie)
    }

    /// The number of aggregated edges memoised so far.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// The configuration the tables were built with.
    pub fn config(&self) -> &Config {
        &self.config
    }
}
