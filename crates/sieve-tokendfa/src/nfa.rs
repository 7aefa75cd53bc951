//! [`Nfa`]: a byte NFA with epsilon edges and any number of accepting states, the scratch form
//! a rule's automaton takes while its references are inlined (see [`crate::compose`]).
//!
//! # Invariants
//!
//! - Every edge's target is a state of the automaton; the start is state `0`.
//! - [`Nfa::embed`] copies a [`ByteDfa`] in whole, so a copy's states are contiguous and its
//!   start is the first of them.
//! - Token ends: besides bytes, the automaton reads `⊥`, the end of a token (see
//!   [`crate::compose`]'s token limits). `token_end[s]` is [`STAY`] for a state that `⊥`
//!   leaves where it is (every state outside a limited rule), [`DEAD`] for one it kills, else
//!   its target.

use crate::dfa::{ByteDfa, DEAD};

/// `token_end` of a state that a token end leaves where it is.
pub(crate) const STAY: u32 = u32::MAX - 1;

/// A byte NFA under construction.
#[derive(Clone, Debug, Default)]
pub(crate) struct Nfa {
    /// Per state: `(lo, hi, target)` byte-range edges.
    pub(crate) bytes: Vec<Vec<(u8, u8, u32)>>,
    /// Per state: epsilon targets.
    pub(crate) eps: Vec<Vec<u32>>,
    pub(crate) accepting: Vec<bool>,
    /// Per state: the target of `⊥` (see the module docs).
    pub(crate) token_end: Vec<u32>,
}

impl Nfa {
    /// An automaton with only a start state.
    pub(crate) fn new() -> Nfa {
        let mut nfa = Nfa::default();
        nfa.add_state();
        nfa
    }

    /// The number of states.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// A fresh state with no edges, not accepting.
    pub(crate) fn add_state(&mut self) -> u32 {
        let id = u32::try_from(self.bytes.len()).expect("state counts are bounded by the limit");
        self.bytes.push(Vec::new());
        self.eps.push(Vec::new());
        self.accepting.push(false);
        self.token_end.push(STAY);
        id
    }

    /// Whether some state's token end does more than stay.
    pub(crate) fn has_token_ends(&self) -> bool {
        self.token_end.iter().any(|&t| t != STAY)
    }

    /// A copy of `dfa` (its token ends too); returns its start state and appends its
    /// accepting states to `accepting`.
    pub(crate) fn embed(&mut self, dfa: &ByteDfa, accepting: &mut Vec<u32>) -> u32 {
        let base = u32::try_from(self.len()).expect("state counts are bounded by the limit");
        for s in 0..dfa.state_count() {
            let id = self.add_state();
            if dfa.is_accepting(s as u32) {
                accepting.push(id);
            }
            for (lo, hi, t) in dfa.runs(s as u32) {
                debug_assert_ne!(t, DEAD);
                self.bytes[id as usize].push((lo, hi, base + t));
            }
            if dfa.has_token_ends() {
                let t = dfa.token_end(s as u32);
                self.token_end[id as usize] = if t == DEAD { DEAD } else { base + t };
            }
        }
        base
    }
}
