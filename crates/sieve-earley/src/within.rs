//! Scanning inside one rule's automaton, without the Earley machinery: what the token-mask
//! cache (`sieve-matcher`) precomputes per state.
//!
//! From a scan item in state `s`, a byte string either stays inside the rule's automaton (each
//! byte follows a byte edge), or reaches a state where the item could *leave* it — complete
//! the rule (an accepting state), descend into another rule (a rule edge), or follow an ε
//! edge — or dies. Leaving before byte `b` is only possible if `b` can follow the exit:
//! FOLLOW(rule) after completing, FIRST(B) when descending into `B`
//! ([`EarleyGrammar::can_leave_before`]). Only leaving needs the rest of the Earley set, so:
//!
//! - a token whose bytes all follow byte edges from `s` is accepted whenever an item in `s`
//!   is in the top set (every stored item can be continued, see the crate docs);
//! - a token that dies inside the automaton, where no state after its first byte could leave
//!   it before the byte that followed, gets nothing from the items in `s`;
//! - anything else depends on the other items.
//!
//! Counted states have no byte edges, so they never head a scan item.

use sieve_ir::ByteClass;

use crate::grammar::{EarleyGrammar, NOT_COUNTED};
use crate::Parser;

impl EarleyGrammar {
    /// Whether an item in `state` can leave its rule there with `next` as the following byte
    /// (FIRST/FOLLOW over-approximations: `false` proves the exit dead, `true` does not prove
    /// it alive).
    pub fn can_leave_before(&self, state: u32, next: u8) -> bool {
        self.exit_bytes[state as usize].contains(next)
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

/// Per state, the bytes that can follow when an item leaves its rule there: FOLLOW(rule) if
/// the state accepts, FIRST(B) for each rule edge to `B`, and every byte when that cannot be
/// bounded (ε edges, a nullable `B`, counted states). FIRST and FOLLOW are the usual
/// grammar-wide sets over first bytes, computed as least fixpoints; they over-approximate
/// what any context allows, which is what makes "the next byte is not in here" a proof that
/// the exit is dead.
pub(crate) fn exit_bytes(g: &EarleyGrammar) -> Vec<ByteClass> {
    let all = ByteClass::range(0, 255);
    let rules = g.start.len();
    // state_first[q]: first bytes of the non-empty strings from q to the end of its rule,
    // continued through rule edges; rule_first[r] = state_first[start[r]].
    let mut state_first = vec![ByteClass::EMPTY; g.states.len()];
    let mut rule_first = vec![ByteClass::EMPTY; rules];
    loop {
        let mut changed = false;
        for (q, info) in g.states.iter().enumerate() {
            let mut first = state_first[q];
            if info.counted != NOT_COUNTED {
                first = first.union(&rule_first[g.counted[info.counted as usize].item as usize]);
            }
            for edge in g.byte_edges(info) {
                first = first.union(&ByteClass::range(edge.lo, edge.hi));
            }
            for edge in g.rule_edges(info) {
                first = first.union(&rule_first[edge.rule as usize]);
                if g.nullable[edge.rule as usize] {
                    first = first.union(&state_first[edge.target as usize]);
                }
            }
            for &target in g.eps_edges(info) {
                first = first.union(&state_first[target as usize]);
            }
            if first != state_first[q] {
                state_first[q] = first;
                changed = true;
            }
        }
        for rule in 0..rules {
            let first = state_first[g.start[rule] as usize];
            if first != rule_first[rule] {
                rule_first[rule] = first;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // follow[r]: bytes that can come right after a string of rule r.
    let mut follow = vec![ByteClass::EMPTY; rules];
    loop {
        let mut changed = false;
        for info in &g.states {
            let parent = info.rule as usize;
            let mut updates: Vec<(usize, ByteClass)> = Vec::new();
            if info.counted != NOT_COUNTED {
                let item = g.counted[info.counted as usize].item as usize;
                updates.push((item, rule_first[item].union(&follow[parent])));
            }
            for edge in g.rule_edges(info) {
                let target = &g.states[edge.target as usize];
                // Conservative "can end here": accepting, or more than bytes may follow
                // without consuming any (ε edges, nullable rules).
                let may_end = target.accepting
                    || target.eps.0 != target.eps.1
                    || g.rule_edges(target)
                        .iter()
                        .any(|e| g.nullable[e.rule as usize]);
                let mut next = state_first[edge.target as usize];
                if may_end {
                    next = next.union(&follow[parent]);
                }
                updates.push((edge.rule as usize, next));
            }
            for (rule, bytes) in updates {
                let merged = follow[rule].union(&bytes);
                if merged != follow[rule] {
                    follow[rule] = merged;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    g.states
        .iter()
        .map(|info| {
            if info.counted != NOT_COUNTED || info.eps.0 != info.eps.1 {
                return all;
            }
            let mut exit = if info.accepting {
                follow[info.rule as usize]
            } else {
                ByteClass::EMPTY
            };
            for edge in g.rule_edges(info) {
                if g.nullable[edge.rule as usize] {
                    return all;
                }
                exit = exit.union(&rule_first[edge.rule as usize]);
            }
            exit
        })
        .collect()
}
