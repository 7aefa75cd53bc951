//! Scanning inside one rule's automaton, without the Earley machinery: what the token-mask
//! cache (`sieve-matcher`) precomputes per state.
//!
//! From a scan item in state `s`, a byte string either stays inside the rule's automaton (each
//! byte follows a byte edge), or reaches a state where the item could *leave* it — complete
//! the rule (an accepting state), descend into another rule (a rule edge), or follow an ε
//! edge — or dies. Only leaving needs the rest of the Earley set, so:
//!
//! - a token whose bytes all follow byte edges from `s` is accepted whenever an item in `s`
//!   is in the top set (every stored item can be continued, see the crate docs);
//! - a token that dies inside the automaton before any state after its first byte could leave
//!   it gets nothing from the items in `s`;
//! - anything else depends on the other items.
//!
//! Counted states have no byte edges, so they never head a scan item.

use crate::grammar::{EarleyGrammar, NOT_COUNTED};
use crate::Parser;

impl EarleyGrammar {
    /// Whether an item in `state` could leave its rule's automaton there: the state accepts,
    /// has a rule edge or an ε edge, or belongs to a counted rule.
    pub fn can_leave(&self, state: u32) -> bool {
        let info = &self.states[state as usize];
        info.accepting
            || info.counted != NOT_COUNTED
            || info.rules.0 != info.rules.1
            || info.eps.0 != info.eps.1
    }

    /// Appends to `out` the target of every byte edge of `state` that contains `byte`.
    pub fn scan_targets(&self, state: u32, byte: u8, out: &mut Vec<u32>) {
        let info = &self.states[state as usize];
        for edge in self.byte_edges(info) {
            if edge.lo <= byte && byte <= edge.hi {
                out.push(edge.target);
            }
        }
    }
}

impl Parser {
    /// The states of the top set's scan items, in set order (a state appears once per origin
    /// it has there).
    pub fn scan_states(&self) -> impl Iterator<Item = u32> + '_ {
        self.top_scans().iter().map(|item| item.state)
    }
}
