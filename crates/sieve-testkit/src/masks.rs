//! Brute-force masks and sentence tokenisation for the suites that test a backend through the
//! seam (`sieve-tokencache`, `sieve-lr`, `sieve-tokendfa`).

use sieve_backend::Recognizer;
use sieve_vocab::TokenTrie;

/// The mask of every token of `trie` with a reading (its text, or its token-terminal
/// encoding) that `recognizer` accepts fed byte by byte from its current bytes, a token end
/// included (`Recognizer::can_end_token`; each reading on its own; the recogniser is left as
/// found).
///
/// # Panics
/// When the recogniser hits a limit (a broken test set-up).
pub fn brute_force_mask<R: Recognizer>(recognizer: &mut R, trie: &TokenTrie) -> Vec<u32> {
    let mut mask = vec![0u32; trie.n_vocab().div_ceil(32)];
    for i in 0..trie.len() {
        let bytes = trie.bytes_at(i);
        let mut pushed = 0;
        while pushed < bytes.len() && recognizer.push_byte(bytes[pushed]).expect("no limit") {
            pushed += 1;
        }
        let ends = pushed == bytes.len() && recognizer.can_end_token();
        recognizer.pop_bytes(pushed);
        if ends {
            let id = trie.token(i).index();
            mask[id / 32] |= 1 << (id % 32);
        }
    }
    mask
}

/// The longest token of `trie` (at most 16 bytes) that spells the start of `rest`, so walks
/// follow real sentences.
pub fn next_token<'a>(trie: &TokenTrie, rest: &'a [u8]) -> Option<&'a [u8]> {
    (1..=rest.len().min(16))
        .rev()
        .find(|&len| trie.find(&rest[..len]).is_some())
        .map(|len| &rest[..len])
}
