//! The fingerprint of a state: a structural hash of the DFA reachable from it, numbered
//! canonically (breadth-first from the state, bytes ascending), so two states of any two
//! token DFAs that accept the same language from there get the same words, and their
//! classifications (a pure function of that language and the trie) can be shared.
//!
//! # Invariants
//!
//! - The hash reads only the reachable sub-automaton in canonical form: each state's
//!   accepting flag and its transitions as maximal byte runs with canonical targets, and
//!   (in a DFA with token limits) where a token end leads, after its bytes. Since
//!   every [`ByteDfa`] is minimal, equal languages give equal forms, and equal forms give
//!   equal languages.
//! - Two independently keyed 64-bit hashes plus the state and edge counts make a collision
//!   between different forms negligible.
//! - A state reaching more than [`FINGERPRINT_STATES`] states gets none (the work is bounded).

use std::hash::{Hash, Hasher};

use sieve_backend::Fingerprint;

use crate::dfa::{ByteDfa, DEAD};

/// The most states a fingerprint's walk visits. The token cache asks for a fingerprint before
/// each classification when it shares a store, so the walk must stay well below a
/// classification's cost: past this, the state's classification is simply not shared.
pub const FINGERPRINT_STATES: usize = 256;

/// Names this backend and the form's version in the first word.
const TOKEN_DFA_V1: u64 = 0x544f_4b44_4641_0001;

/// The fingerprint of `state` (see the module docs).
pub(crate) fn fingerprint(dfa: &ByteDfa, state: u32) -> Option<Fingerprint> {
    let mut number: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut order = vec![state];
    number.insert(state, 0);
    let mut first = std::hash::DefaultHasher::new();
    let mut second = std::hash::DefaultHasher::new();
    0x9e37_79b9_7f4a_7c15u64.hash(&mut second);
    let mut edges = 0u64;
    let mut i = 0;
    while i < order.len() {
        let s = order[i];
        let accepting = dfa.is_accepting(s);
        accepting.hash(&mut first);
        accepting.hash(&mut second);
        for (lo, hi, t) in dfa.runs(s) {
            debug_assert_ne!(t, DEAD);
            let canonical = canonical_number(t, &mut number, &mut order)?;
            (lo, hi, canonical).hash(&mut first);
            (lo, hi, canonical).hash(&mut second);
            edges += 1;
        }
        if dfa.has_token_ends() {
            // Where a token end leads (limits), numbered like the byte targets.
            let canonical = match dfa.token_end(s) {
                DEAD => DEAD,
                t => canonical_number(t, &mut number, &mut order)?,
            };
            (u32::MAX - 1, canonical).hash(&mut first);
            (u32::MAX - 1, canonical).hash(&mut second);
        }
        // An end-of-state marker, so run lists cannot run into each other.
        u32::MAX.hash(&mut first);
        u32::MAX.hash(&mut second);
        i += 1;
    }
    Some(Fingerprint([
        TOKEN_DFA_V1 ^ (crate::walk::WILDCARD_MIN as u64),
        first.finish(),
        second.finish(),
        order.len() as u64,
        edges,
        0,
    ]))
}

/// The canonical number of `state`: its place in `order`, appended on first sight; `None`
/// when that would pass [`FINGERPRINT_STATES`].
fn canonical_number(
    state: u32,
    number: &mut std::collections::HashMap<u32, u32>,
    order: &mut Vec<u32>,
) -> Option<u32> {
    let next = order.len() as u32;
    let canonical = *number.entry(state).or_insert(next);
    if canonical == next {
        if order.len() >= FINGERPRINT_STATES {
            return None;
        }
        order.push(state);
    }
    Some(canonical)
}
