//! The mask walk: the token-mask cache decides most tokens per automaton state; the rest are
//! fed to the recogniser, sharing work across common prefixes.
//!
//! 1. For each distinct state of the top set's scan items, the cache's `accepted` tokens are
//!    set and its `uncertain` trie ranges are collected ([`crate::token_cache`]).
//! 2. The uncertain tokens not already set are visited in byte order (the [`TokenTrie`]). The
//!    recogniser holds the bytes of the current token's prefix as a stack: moving to the next
//!    token pops down to the common prefix with the previous one and pushes the rest. When a
//!    byte is rejected at depth `k`, every following token sharing those `k + 1` bytes is
//!    skipped at once.
//!
//! Each token of step 2 is decided by exactly the bytes a fresh recogniser would see, and the
//! cache's invariants make step 1 agree with it, so the result equals feeding every token to a
//! clone of the recogniser (the brute-force oracle in the tests).

use std::ops::Range;

use sieve_earley::{EarleyGrammar, LimitError, Parser};
use sieve_vocab::TokenTrie;

use crate::token_cache::TokenCache;

/// Sets the bit of every text token of `trie` that `parser` accepts in full. Leaves `parser`
/// as it found it, also on error.
pub(crate) fn fill_text_tokens(
    parser: &mut Parser,
    grammar: &EarleyGrammar,
    trie: &TokenTrie,
    cache: &TokenCache,
    mask: &mut [u32],
) -> Result<(), LimitError> {
    let mut states: Vec<u32> = parser.scan_states().collect();
    states.sort_unstable();
    states.dedup();
    let mut uncertain: Vec<Range<u32>> = Vec::new();
    for state in states {
        let entry = cache.get(grammar, trie, state);
        entry.or_accepted_into(mask);
        uncertain.extend_from_slice(entry.uncertain());
    }
    walk(parser, trie, &merge(uncertain), mask)
}

/// Sorted, disjoint ranges covering the same positions.
fn merge(mut ranges: Vec<Range<u32>>) -> Vec<Range<u32>> {
    ranges.sort_unstable_by_key(|r| r.start);
    let mut merged: Vec<Range<u32>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

fn is_set(mask: &[u32], id: usize) -> bool {
    mask[id / 32] & (1 << (id % 32)) != 0
}

/// Feeds the tokens at the positions of `ranges` (sorted, disjoint) whose bits are not yet set
/// to `parser`, setting the bits of those it accepts.
fn walk(
    parser: &mut Parser,
    trie: &TokenTrie,
    ranges: &[Range<u32>],
    mask: &mut [u32],
) -> Result<(), LimitError> {
    let base = parser.len();
    // The bytes on the parser's stack are the first `depth` bytes of the token at `previous`.
    let mut depth = 0usize;
    let mut previous: Option<usize> = None;
    // Positions before this share a prefix the recogniser rejected.
    let mut resume = 0usize;
    for range in ranges {
        let mut i = resume.max(range.start as usize);
        while i < range.end as usize {
            let id = trie.token(i).index();
            if is_set(mask, id) {
                i += 1;
                continue;
            }
            let bytes = trie.bytes_at(i);
            let common = match previous {
                Some(p) if p + 1 == i => trie.lcp(i),
                Some(p) => common_prefix(trie.bytes_at(p), bytes),
                None => 0,
            };
            let keep = depth.min(common);
            parser.pop_bytes(depth - keep);
            depth = keep;
            previous = Some(i);
            let mut rejected = false;
            while depth < bytes.len() {
                match parser.push_byte(bytes[depth]) {
                    Ok(true) => depth += 1,
                    Ok(false) => {
                        rejected = true;
                        break;
                    }
                    Err(limit) => {
                        parser.pop_bytes(depth);
                        return Err(limit);
                    }
                }
            }
            if rejected {
                // Every token sharing the first `depth + 1` bytes is rejected too.
                i = trie.skip_to(i + 1, depth + 1);
                resume = i;
            } else {
                mask[id / 32] |= 1 << (id % 32);
                i += 1;
            }
        }
    }
    parser.pop_bytes(depth);
    debug_assert_eq!(parser.len(), base);
    Ok(())
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
