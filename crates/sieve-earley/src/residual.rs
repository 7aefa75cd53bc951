//! The residual hash of a state: the structure of what its rule can still read from it.
//!
//! A bare classification (see `classify.rs` and `within.rs`) walks the state's automaton only
//! through the states reachable from it, descends into the rules those states refer to, and
//! leaves the rule only through FOLLOW. So two states — in one rule, in two rules of one
//! grammar, or in two grammars — whose reachable parts are isomorphic, with references to
//! rules of equal structural hash at corresponding edges, classify alike given equal FOLLOW
//! sets. The residual hash names that reachable part: the string contents of `"name":string`
//! and of `"email":string` hash equal although their rules do not.
//!
//! # Invariants
//!
//! - The hash reads only the reachable part: a breadth-first walk from the state numbers the
//!   states it meets in visit order; each contributes its accepting flag and a marker, then
//!   each edge, sorted by label (byte ranges by bounds, references by the callee's structural
//!   hash, then ε) and by target, contributes its label and its target's visit number.
//!   Equal hashes therefore mean equal encodings, up to the collisions of two 64-bit lanes.
//! - Never for a state whose rule has no structural hash (the callees' hashes are then not
//!   all known) nor for counted rules' states.
//! - Values depend on structure only (fixed constants, no addresses or map order), like
//!   `sieve_fsm`'s rule hashes; a tie in the edge order (two references to rules of equal
//!   hash out of one state) is broken by state id, which can only split equal residuals, never
//!   join different ones.

use sieve_backend::FingerprintHasher;

use crate::grammar::{EarleyGrammar, NOT_COUNTED};

const K_STATE: u64 = 0x5245_5349_4455_414c;
const K_RULE: u64 = 0x5245_535f_5255_4c45;
const K_EPSILON: u64 = 0x5245_535f_4550_5331;
const SEED: u64 = 0x7265_7369_6475_616c;

impl EarleyGrammar {
    /// The residual hash of `state` (see the module docs), or `None` when it has none.
    pub(crate) fn residual_hash(&self, state: u32) -> Option<[u64; 2]> {
        let info = self.states[state as usize];
        self.rule_hash[info.rule as usize]?;
        if info.counted != NOT_COUNTED {
            return None;
        }
        let first = self.start[info.rule as usize];
        let end = self
            .start
            .get(info.rule as usize + 1)
            .copied()
            .unwrap_or(self.states.len() as u32);
        let mut number = vec![u32::MAX; (end - first) as usize];
        let mut queue = vec![state];
        number[(state - first) as usize] = 0;
        let mut lanes = FingerprintHasher::new(SEED);
        let mut edges: Vec<((u8, u64, u64), u32)> = Vec::new();
        let mut next = 0;
        while let Some(&at) = queue.get(next) {
            next += 1;
            let info = &self.states[at as usize];
            lanes.word(u64::from(info.accepting));
            lanes.word(K_STATE);
            edges.clear();
            for edge in self.byte_edges(info) {
                edges.push(((0, edge.lo.into(), edge.hi.into()), edge.target));
            }
            for edge in self.rule_edges(info) {
                let callee = self.rule_hash[edge.rule as usize]?;
                edges.push(((1, callee, 0), edge.target));
            }
            for &target in self.eps_edges(info) {
                edges.push(((2, 0, 0), target));
            }
            edges.sort_unstable();
            for &((kind, a, b), target) in &edges {
                let slot = &mut number[(target - first) as usize];
                if *slot == u32::MAX {
                    *slot = u32::try_from(queue.len()).expect("states are counted in u32");
                    queue.push(target);
                }
                let target_number = *slot;
                match kind {
                    0 => {
                        lanes.word(a);
                        lanes.word(b);
                    }
                    1 => {
                        lanes.word(K_RULE);
                        lanes.word(a);
                    }
                    _ => lanes.word(K_EPSILON),
                }
                lanes.word(u64::from(target_number));
            }
        }
        Some(lanes.finish())
    }
}
