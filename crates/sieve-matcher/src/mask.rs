//! The mask walk: every text token tested against the recogniser, sharing work across common
//! prefixes.
//!
//! Tokens are visited in byte order (the [`TokenTrie`]). The recogniser holds the bytes of the
//! current token's prefix as a stack: moving to the next token pops down to the common prefix
//! with the previous one and pushes the rest. When a byte is rejected at depth `k`, every
//! following token sharing those `k + 1` bytes is skipped at once. Each token is decided by
//! exactly the bytes a fresh recogniser would see, so the result equals feeding every token to
//! a clone of the recogniser (the brute-force oracle in the tests).

use sieve_earley::{LimitError, Parser};
use sieve_vocab::TokenTrie;

/// Sets the bit of every text token of `trie` that `parser` accepts in full. Leaves `parser`
/// as it found it, also on error.
pub(crate) fn fill_text_tokens(
    parser: &mut Parser,
    trie: &TokenTrie,
    mask: &mut [u32],
) -> Result<(), LimitError> {
    let base = parser.len();
    let mut depth = 0usize;
    let mut i = 0usize;
    let result = loop {
        if i >= trie.len() {
            break Ok(());
        }
        let bytes = trie.bytes_at(i);
        let keep = depth.min(trie.lcp(i));
        parser.pop_bytes(depth - keep);
        depth = keep;
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
        } else {
            let id = trie.token(i).index();
            mask[id / 32] |= 1 << (id % 32);
            i += 1;
        }
    };
    parser.pop_bytes(depth);
    debug_assert_eq!(parser.len(), base);
    result
}
