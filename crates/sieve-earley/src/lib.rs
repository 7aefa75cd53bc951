//! A byte-level Earley recogniser over the per-rule automata of a normalised grammar.
//!
//! [`EarleyGrammar`] compiles a [`sieve_fsm::GrammarFsms`] once into flat tables (it is
//! `Send + Sync`; share it with an `Arc`). A [`Parser`] is the per-request state: one Earley
//! set per consumed byte, kept as a stack so the token-mask walk can [`Parser::push_byte`] and
//! [`Parser::pop_bytes`] thousands of times per mask.
//!
//! # Items
//!
//! An item is `(state, origin, count)`: a global FSM state (each rule's states are numbered
//! into one space; a counted rule `R ::= X{m,n}` has a single state), the index of the set
//! where the rule was predicted, and — for counted rules only — how many `X`s have been
//! recognised so far. Counts live in the item, never as expanded states, so `{0,65535}` costs
//! one item per set. For an unbounded `X{m,}` every count `≥ m` behaves alike and is clamped
//! to `m`, so such items dedupe.
//!
//! # Sets
//!
//! Each set stores, in contiguous buffers shared by all sets (one `Vec` each, plus per-set start
//! offsets, so popping is a truncation):
//!
//! - **scan items**: items whose state has a byte edge (the only ones a byte can advance);
//! - **waiters**: for each item waiting on a rule `B` (an FSM edge labelled `B`, or a counted
//!   item expecting its next `X`), the already-advanced item to add when `B` completes, sorted
//!   by `B` so completion is a binary search;
//! - **Leo entries**: for a rule `B` with a deterministic reduction path out of this set
//!   (Leo 1991), the topmost item that completing `B` eventually yields;
//! - the set's allowed bytes and whether the input so far is a sentence.
//!
//! Items that can only complete (accepting states without edges, counted items at their upper
//! bound) are processed and then discarded, as in KBNF: nothing can scan from them and their
//! completions are already done. Only the per-set dedup table (generation-stamped, never
//! reallocated per byte) sees them.
//!
//! # Invariants
//!
//! - Sets below the top are immutable: a set is complete when it is pushed (only the root may
//!   derive ε, and ε-completions are handled when the waiter is created, Aycock–Horspool
//!   style), so a pop restores exactly the state before the matching pushes.
//! - Every stored item can be continued to a sentence or an infinite derivation (normalised
//!   grammars have no useless rules), so a byte is accepted iff scanning it leaves a non-empty
//!   set, and [`Parser::allowed_bytes`] is exactly the set of bytes [`Parser::push_byte`]
//!   accepts.
//! - Nothing recurses: closure is a worklist, Leo chains are resolved when a set is sealed.
//! - Hitting a [`Config`] limit leaves the parser unchanged and returns a [`LimitError`].
//!
//! # Limits
//!
//! Each [`Parser::push_byte`] is bounded twice: by the distinct items of the new set
//! ([`Config::max_items_per_set`], which bounds memory) and by the work of building it
//! ([`Config::max_work_per_byte`], which bounds time: completion visits the waiters of the
//! origin sets, so very ambiguous grammars do quadratic work per byte in sets of linear
//! size). The whole history is bounded by [`Config::max_bytes_history`] and
//! [`Config::max_total_items`].

mod alphabet;
mod backend;
mod classify;
mod completion;
mod dedup;
mod first_follow;
mod grammar;
mod limits;
mod parser;
mod residual;
mod within;

use std::fmt;

pub use completion::{CompletionMemo, CompletionTable};
pub use grammar::EarleyGrammar;
pub use limits::{TokenLimitError, MAX_TIGHT};
pub use parser::{Parser, Stats};

/// Limits and switches of the recogniser. The fields are public so callers can write
/// `Config { max_items_per_set: 1000, ..Config::default() }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The most items one Earley set may process (scan items, waiters' sources and the
    /// discarded completed items alike). Ambiguous grammars (`S ::= S S | "a"`) grow sets
    /// linearly with the input and the work per byte quadratically; this stops them. Default
    /// 65,536.
    pub max_items_per_set: usize,
    /// The most units of work building one Earley set may take, i.e. the fuel of one
    /// [`Parser::push_byte`] (the initial set is exempt: it depends only on the grammar). A
    /// unit is one derived item offered to the set, new or a duplicate (so every waiter a
    /// completion visits in its origin set counts), one waiter recorded, one look-up in an
    /// origin set (a Leo entry or a waiter range) and one scan item of the previous set
    /// examined. Every loop of set building runs over one of these, so the time to build a set
    /// is proportional to its units (a few nanoseconds each). [`Stats::max_set_fuel`] reports
    /// what a parser spent.
    ///
    /// [`Config::max_items_per_set`] alone does not bound the time per byte: completing a rule
    /// visits the waiters of its origin set, so a set of `n` distinct items may cost `n²`
    /// visits. In `S ::= S S | "a"` the set after `n` bytes holds O(n) items but costs about
    /// `n²/2` units (and all `n` bytes about `n³/6`). The default stops that grammar at about
    /// 720 bytes, at about 2 ms per byte, while unambiguous grammars spend a few units per
    /// item: the shipped grammars stay below 100 units per byte and the valid instances of
    /// JSONSchemaBench and SchemaStore below 1,300, a margin of 200. Default 262,144
    /// (four units per item of a set at the default [`Config::max_items_per_set`]).
    pub max_work_per_byte: usize,
    /// The most bytes a parser may hold (its history, i.e. [`Parser::len`]). Each byte costs a
    /// set record (about 64 bytes) plus its items. Default 1,048,576.
    pub max_bytes_history: usize,
    /// The most items stored over all sets (scan items, waiters and Leo entries; 16 bytes
    /// each). Bounds memory when sets are large *and* the input is long. Default 16,777,216.
    pub max_total_items: usize,
    /// Whether to use Leo's optimisation for right recursion. Default `true`; turning it off
    /// is for tests (results are the same, right recursion costs O(n) per byte instead of O(1)).
    pub leo: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_items_per_set: 1 << 16,
            max_work_per_byte: 1 << 18,
            max_bytes_history: 1 << 20,
            max_total_items: 1 << 24,
            leo: true,
        }
    }
}

/// Which limit of [`Config`] was hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LimitKind {
    ItemsPerSet,
    WorkPerByte,
    BytesHistory,
    TotalItems,
}

/// A [`Config`] limit was hit; the parser is unchanged. Opaque: read [`LimitError::limit_name`],
/// [`LimitError::limit`] or the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitError {
    kind: LimitKind,
    limit: usize,
}

impl LimitError {
    pub(crate) fn items_per_set(limit: usize) -> LimitError {
        LimitError {
            kind: LimitKind::ItemsPerSet,
            limit,
        }
    }

    pub(crate) fn work_per_byte(limit: usize) -> LimitError {
        LimitError {
            kind: LimitKind::WorkPerByte,
            limit,
        }
    }

    pub(crate) fn bytes_history(limit: usize) -> LimitError {
        LimitError {
            kind: LimitKind::BytesHistory,
            limit,
        }
    }

    pub(crate) fn total_items(limit: usize) -> LimitError {
        LimitError {
            kind: LimitKind::TotalItems,
            limit,
        }
    }

    /// The name of the [`Config`] field whose limit was hit, e.g. `"max_items_per_set"`.
    pub fn limit_name(&self) -> &'static str {
        match self.kind {
            LimitKind::ItemsPerSet => "max_items_per_set",
            LimitKind::WorkPerByte => "max_work_per_byte",
            LimitKind::BytesHistory => "max_bytes_history",
            LimitKind::TotalItems => "max_total_items",
        }
    }

    /// The configured value of that limit.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            LimitKind::ItemsPerSet => {
                "an Earley set would hold more items than allowed (the grammar is probably very ambiguous)"
            }
            LimitKind::WorkPerByte => {
                "building the Earley set for one byte would take more work than allowed (the grammar is probably very ambiguous)"
            }
            LimitKind::BytesHistory => "the input is longer than the parser may keep",
            LimitKind::TotalItems => "the parser's history would hold more items than allowed",
        };
        write!(f, "{what}: {} is {}", self.limit_name(), self.limit)
    }
}

impl std::error::Error for LimitError {}
