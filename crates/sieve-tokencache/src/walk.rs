//! The mask walk over uncertain tokens: fed to the recogniser in byte order, sharing work
//! across common prefixes.
//!
//! The recogniser holds the bytes of the current token's prefix as a stack: moving to the
//! next token pops down to the common prefix with the previous one and pushes the rest. When a
//! byte is rejected at depth `k`, every following token sharing those `k + 1` bytes is skipped
//! at once. Tokens whose bits are already set (accepted by some key) are not fed.
//!
//! Each token is decided by exactly the bytes a fresh recogniser would see, so together with
//! the cache's accepted sets the result equals feeding every token to a clone of the
//! recogniser (the brute-force oracle of the tests).

use std::ops::Range;

use sieve_backend::{LimitError, Recognizer};
use sieve_vocab::TokenTrie;

fn is_set(mask: &[u32], id: usize) -> bool {
    mask[id / 32] & (1 << (id % 32)) != 0
}

/// Feeds the tokens at the positions of `ranges` (sorted, disjoint) whose bits are not yet set
/// to `recognizer`, setting the bits of those it accepts. Leaves `recognizer` as it found it.
/// Returns how many tokens it fed.
pub(crate) fn walk<R: Recognizer>(
    recognizer: &mut R,
    trie: &TokenTrie,
    ranges: &[Range<u32>],
    mask: &mut [u32],
) -> Result<usize, LimitError> {
    let mut fed = 0;
    let base = recognizer.len();
    // The bytes on the recogniser's stack are the first `depth` bytes of the token at
    // `previous`.
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
            fed += 1;
            let keep = depth.min(common);
            recognizer.pop_bytes(depth - keep);
            depth = keep;
            previous = Some(i);
            let mut rejected = false;
            while depth < bytes.len() {
                match recognizer.push_byte(bytes[depth]) {
                    Ok(true) => depth += 1,
                    Ok(false) => {
                        rejected = true;
                        break;
                    }
                    Err(limit) => {
                        recognizer.pop_bytes(depth);
                        return Err(limit);
                    }
                }
            }
            if rejected {
                // Every token sharing the first `depth + 1` bytes is rejected too.
                i = trie.skip_to(i + 1, depth + 1);
                resume = i;
            } else {
                if recognizer.can_end_token() {
                    mask[id / 32] |= 1 << (id % 32);
                }
                i += 1;
            }
        }
    }
    recognizer.pop_bytes(depth);
    debug_assert_eq!(recognizer.len(), base);
    Ok(fed)
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
