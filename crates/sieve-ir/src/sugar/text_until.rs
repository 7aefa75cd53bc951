//! `TEXT_UNTIL`: valid UTF-8 text up to and including the first occurrence of a stop phrase.
//!
//! The language is the set of byte strings `w` such that `w` is valid UTF-8, `w` ends with one
//! of the stop phrases, and no proper prefix of `w` ends with one. So the text before the stop
//! phrase may be empty, and the match ends at the *first* place any stop phrase is complete.
//!
//! # Construction
//!
//! 1. An Aho–Corasick automaton over the bytes of the stop phrases: a trie, failure links by
//!    breadth-first search, a complete 256-way transition table, and per state whether a stop
//!    phrase ends there (its own or one along its failure chain).
//! 2. Its product with the UTF-8 decoder (the Unicode standard's table of well-formed byte
//!    sequences as an 8-state automaton); a product state on a character boundary is a state
//!    of the emitted automaton, states inside a character are crossed on the way, so each
//!    edge is labelled with the byte classes of one character.
//! 3. A completed stop phrase goes to the single accepting state, which has no edges.
//!
//! **Invariants:** size is linear in the total length of the stop phrases (at most one rule
//! per trie node); the stop phrases are valid UTF-8, so a stop phrase always completes on a
//! character boundary.

use std::collections::VecDeque;

use crate::sugar::automaton::Automaton;
use crate::{ByteClass, Expr};

/// The Aho–Corasick automaton: complete transitions and, per state, whether a phrase ends.
struct AhoCorasick {
    next: Vec<[u32; 256]>,
    hit: Vec<bool>,
}

impl AhoCorasick {
    fn new(phrases: &[&str]) -> AhoCorasick {
        const NONE: u32 = u32::MAX;
        let mut next: Vec<[u32; 256]> = vec![[NONE; 256]];
        let mut hit = vec![false];
        for phrase in phrases {
            let mut s = 0usize;
            for &b in phrase.as_bytes() {
                if next[s][usize::from(b)] == NONE {
                    next[s][usize::from(b)] = u32::try_from(next.len()).expect("bounded by limits");
                    next.push([NONE; 256]);
                    hit.push(false);
                }
                s = next[s][usize::from(b)] as usize;
            }
            hit[s] = true;
        }
        let mut fail = vec![0u32; next.len()];
        let mut queue = VecDeque::from([0usize]);
        while let Some(u) = queue.pop_front() {
            if u != 0 {
                hit[u] = hit[u] || hit[fail[u] as usize];
            }
            // The failure state is shallower, so its row is complete already.
            let fail_row = (u != 0).then(|| next[fail[u] as usize]);
            for b in 0..256 {
                let fallback = fail_row.map_or(0, |row| row[b]);
                let slot = next[u][b];
                if slot == NONE {
                    next[u][b] = fallback;
                } else {
                    fail[slot as usize] = fallback;
                    queue.push_back(slot as usize);
                }
            }
        }
        AhoCorasick { next, hit }
    }
}

/// The UTF-8 decoder's next state (0 is a character boundary), or `None` when `b` cannot
/// follow.
pub(crate) fn utf8_step(state: u8, b: u8) -> Option<u8> {
    match (state, b) {
        (0, 0x00..=0x7F) | (1, 0x80..=0xBF) => Some(0),
        (0, 0xC2..=0xDF) | (2, 0x80..=0xBF) | (3, 0xA0..=0xBF) | (7, 0x80..=0x9F) => Some(1),
        (0, 0xE1..=0xEC | 0xEE..=0xEF) | (5, 0x80..=0xBF) | (4, 0x90..=0xBF) | (6, 0x80..=0x8F) => {
            Some(2)
        }
        (0, 0xE0) => Some(3),
        (0, 0xF0) => Some(4),
        (0, 0xF1..=0xF3) => Some(5),
        (0, 0xF4) => Some(6),
        (0, 0xED) => Some(7),
        _ => None,
    }
}

/// Where a path through one character leads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The boundary state of this Aho–Corasick state.
    Boundary(u32),
    /// A stop phrase is complete.
    Stop,
}

/// The automaton for `TEXT_UNTIL` with the given (non-empty, valid UTF-8) stop phrases; its
/// start state is 0.
pub(crate) fn automaton(phrases: &[&str]) -> Automaton {
    let ac = AhoCorasick::new(phrases);
    let states = ac.next.len();
    let mut automaton = Automaton::default();
    for _ in 0..states {
        automaton.add_state(false);
    }
    let stop = automaton.add_state(true);
    let mut memo = foldhash::HashMap::default();
    for a in 0..states {
        for (target, label) in paths(&ac, a as u32, 0, &mut memo) {
            let to = match target {
                Target::Boundary(t) => t as usize,
                Target::Stop => stop,
            };
            automaton.add_edge(a, label, to);
        }
    }
    automaton
}

/// The paths from product state `(a, u)` to the next character boundary, one expression per
/// target.
fn paths(
    ac: &AhoCorasick,
    a: u32,
    u: u8,
    memo: &mut foldhash::HashMap<(u32, u8), Vec<(Target, Expr)>>,
) -> Vec<(Target, Expr)> {
    if u != 0 {
        if let Some(known) = memo.get(&(a, u)) {
            return known.clone();
        }
    }
    // Bytes grouped by (target, decoder state after them).
    let mut groups: Vec<((u32, u8), ByteClass)> = Vec::new();
    for b in 0..=255u8 {
        let Some(u2) = utf8_step(u, b) else { continue };
        let a2 = ac.next[a as usize][usize::from(b)];
        match groups.iter_mut().find(|(key, _)| *key == (a2, u2)) {
            Some((_, class)) => class.insert(b),
            None => groups.push(((a2, u2), ByteClass::byte(b))),
        }
    }
    let mut out: Vec<(Target, Vec<Expr>)> = Vec::new();
    let mut add = |t: Target, e: Expr| match out.iter_mut().find(|(target, _)| *target == t) {
        Some((_, list)) => list.push(e),
        None => out.push((t, vec![e])),
    };
    for ((a2, u2), class) in groups {
        let first = Expr::class(class).expect("a non-empty group");
        if u2 != 0 {
            for (t, rest) in paths(ac, a2, u2, memo) {
                add(t, Expr::seq([first.clone(), rest]));
            }
        } else if ac.hit[a2 as usize] {
            add(Target::Stop, first);
        } else {
            add(Target::Boundary(a2), first);
        }
    }
    let result: Vec<(Target, Expr)> = out
        .into_iter()
        .map(|(t, list)| (t, Expr::choice(list).expect("one path at least")))
        .collect();
    if u != 0 {
        memo.insert((a, u), result.clone());
    }
    result
}
