//! sieve's automata layer: one byte-level automaton per rule of a normalised grammar, and the
//! hierarchical structural hash of XGrammar 2 §3.3 that finds identical sub-structures within
//! and across grammars.
//!
//! A regular rule becomes an [`Fsm`] whose edges consume a byte range or a whole sentence of
//! another rule ([`Label`]). It is built Thompson-style, determinised by subset construction,
//! minimised (Hopcroft) and numbered canonically, so structurally identical rules give
//! identical automata. When a rule's DFA would be too large ([`Config::dfa_state_limit`]) its
//! epsilon-free NFA is kept instead and flagged ([`Fsm::is_deterministic`]). A counted
//! repetition rule stays a counter ([`RuleAutomaton::Counted`]).
//!
//! Hashes ([`GrammarFsms::hash`]): acyclic rules and rules on a *simple* cycle of references
//! (each member references exactly one member, self-recursion included) get a hash that
//! depends only on structure and is stable across runs and machines; rules on any other cycle,
//! and every rule that references one, get `None`. The table below sums it up.
//!
//! # Example
//!
//! ```
//! use sieve_fsm::{Builder, Config};
//! use sieve_ir::{ByteClass, Expr, GrammarBuilder};
//!
//! let mut b = GrammarBuilder::new();
//! let root = b.declare("number").unwrap();
//! let digit = Expr::class(ByteClass::range(b'0', b'9')).unwrap();
//! b.define(root, Expr::seq([Expr::optional(Expr::bytes("-")), Expr::plus(digit)]));
//! let grammar = b.build(root).unwrap();
//!
//! let fsms = Builder::new(Config::new()).build(&grammar).unwrap();
//! assert_eq!(fsms.matches(root, b"-42"), Some(true));
//! assert_eq!(fsms.matches(root, b"4-2"), Some(false));
//! assert_eq!(fsms.state_count(), 3);
//! assert!(fsms.hash(root).is_some());
//! ```
//!
//! # Hash
//!
//! Per strongly connected component of the rule-reference graph, callees first:
//!
//! | SCC shape | hash |
//! |---|---|
//! | one rule, not self-recursive | Algorithm 1: BFS over the canonical FSM, edges in sorted order, references as the callee's hash |
//! | simple cycle (incl. self-recursion) | Algorithm 1 with in-cycle references as a constant, then Algorithm 2: fold of the cycle's local hashes starting at the member |
//! | any other cycle | `None`, and `None` for every rule that reaches it |
//! | counted repetition | `(tag, item hash, min, max)` |
//!
//! # Invariants
//!
//! Inputs are checked, never trusted: a grammar that is not in normalised form gives a
//! [`BuildError`] naming the rule, and sizes are bounded by [`Config`]; nothing recurses on the
//! depth of user input. The one exception is [`Builder::build_normalized`], whose input type
//! ([`sieve_normalize::Normalized`]) proves the normalised form: it skips the nullability
//! check (sizes are still bounded).

mod build;
mod canonical;
mod dfa;
mod dump;
mod error;
mod fragment;
mod fsm;
mod hash;
mod head;
mod memo;
mod nfa;
mod shared;
#[cfg(test)]
mod tests;

pub use build::{Builder, Config, GrammarFsms, RuleAutomaton};
pub use error::BuildError;
pub use fsm::{Edge, Fsm, Label, StateId};
pub use shared::{AutomatonCache, CacheStats};
