//! Class chains: DFA states from which most bytes step along a chain of states that depends
//! only on how many of them came, not on which (a bounded run of a byte class, such as
//! `[a-zA-Z]{2,24}`, or a first byte that enters a class loop), so a walk from them takes the
//! trie's [`sieve_vocab::ClassRegion`] of the class at once (cut by length with
//! [`sieve_vocab::RegionDepths`] when the chain does not loop) and walks only its exits.
//!
//! # Invariants
//!
//! - For every depth `d` below the last, every byte of `class` steps `rows[d]` to
//!   `rows[d + 1]`; so a token of `d` class bytes leads to `rows[d]`, and an exit whose
//!   prefix has `d` class bytes resumes from `rows[d]`.
//! - [`TextEnd::Loops`]: every class byte steps the last row to itself. [`TextEnd::Dies`]:
//!   every class byte kills the last row. [`TextEnd::Open`]: the rows still change after
//!   [`CHAIN_DEPTH`] bytes.

use sieve_vocab::CHAIN_DEPTH;

use crate::dfa::{ByteDfa, DEAD};
use crate::text::TextEnd;
use crate::walk::WILDCARD_MIN;

/// The states after each number of class bytes from a start (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClassChain {
    /// The bytes that step the chain.
    pub(crate) class: [u64; 4],
    /// `rows[d]`: the state after `d` class bytes; `rows[0]` is the start.
    pub(crate) rows: Vec<u32>,
    pub(crate) end: TextEnd,
}

impl ClassChain {
    /// The chain from `start`: at each depth the live target most of the class's bytes
    /// share (else `DEAD`), the class shrunk to the bytes that share it; `None` when fewer
    /// than [`WILDCARD_MIN`] bytes agree or the start's bytes die.
    pub(crate) fn detect(dfa: &ByteDfa, start: u32) -> Option<ClassChain> {
        let mut class = [u64::MAX; 4];
        let mut rows = vec![start];
        loop {
            let depth = rows.len() - 1;
            let end = if depth == CHAIN_DEPTH {
                Some(TextEnd::Open)
            } else {
                let from = rows[depth];
                let target = most_common_target(dfa, from, &mut class)?;
                if target == DEAD {
                    if depth == 0 {
                        return None;
                    }
                    Some(TextEnd::Dies)
                } else if target == from {
                    Some(TextEnd::Loops)
                } else {
                    rows.push(target);
                    None
                }
            };
            if let Some(end) = end {
                return Some(ClassChain { class, rows, end });
            }
        }
    }

    /// The state an exit resumes from when its prefix has `prefix` class bytes, or `None`
    /// when that prefix was already rejected (the chain died) or lies in a deep subtree.
    pub(crate) fn resume(&self, prefix: usize) -> Option<u32> {
        let last = self.rows.len() - 1;
        if prefix > last && self.end != TextEnd::Loops {
            return None;
        }
        Some(self.rows[prefix.min(last)])
    }
}

/// The live target most of `class`'s bytes have from `from` when at least [`WILDCARD_MIN`]
/// share it, else `DEAD` when at least that many die; `class` shrinks to the bytes that have
/// it. `None` when neither.
fn most_common_target(dfa: &ByteDfa, from: u32, class: &mut [u64; 4]) -> Option<u32> {
    let before = *class;
    let in_class = |b: u8| before[b as usize / 64] & (1 << (b % 64)) != 0;
    let mut targets: Vec<u32> = (0..=255u8)
        .filter(|&b| in_class(b))
        .map(|b| dfa.next(from, b))
        .collect();
    targets.sort_unstable();
    let count = |t: u32| targets.iter().filter(|&&x| x == t).count();
    let live = targets
        .chunk_by(|a, b| a == b)
        .filter(|run| run[0] != DEAD)
        .max_by_key(|run| run.len())
        .map(|run| run[0]);
    let target = match live {
        Some(t) if count(t) >= WILDCARD_MIN => t,
        _ if count(DEAD) >= WILDCARD_MIN => DEAD,
        _ => return None,
    };
    for b in 0..=255u8 {
        if dfa.next(from, b) != target {
            class[b as usize / 64] &= !(1 << (b % 64));
        }
    }
    Some(target)
}
