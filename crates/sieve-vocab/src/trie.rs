//! [`TokenTrie`]: the text tokens of a vocabulary sorted by bytes, with the arrays a mask
//! walker needs to share work across common prefixes and to skip a rejected prefix at once.
//!
//! It is a trie flattened into sorted order: position `i` (0-based, `0..len()`) holds
//!
//! - `token(i)`: the id; positions are sorted by `(bytes, id)`, so tokens with equal bytes
//!   (e.g. SentencePiece's `<0x41>` and `A`) are adjacent, lower id first;
//! - `bytes_at(i)`: its bytes (a copy laid out in sorted order, for locality);
//! - `lcp(i)`: the length of the longest common prefix of `bytes_at(i)` and
//!   `bytes_at(i - 1)`; `lcp(0) == 0`;
//! - `subtree_end(i)`: the first position `j > i` whose bytes do not start with `bytes_at(i)`
//!   (or `len()`), so `i..subtree_end(i)` are exactly the tokens extending token `i` (itself
//!   and its duplicates included).
//!
//! Invariants, checked by the property tests on random vocabularies:
//! - the tokens starting with any byte string form one contiguous run of positions;
//! - `subtree_end(i) == min { j > i : lcp(j) < len(bytes_at(i)) }` (or `len()`);
//! - the common prefix of `bytes_at(i)` and `bytes_at(j)`, `i < j`, is
//!   `min(lcp(i + 1..=j))` long;
//! - special tokens (control, EOS, unused) are not in the trie.
//!
//! [`TokenTrie::walk`] visits the positions in order and lets the visitor skip every token that
//! shares a rejected prefix; [`TokenTrie::skip_to`] is the same skip as a function.

use crate::{TokenId, Vocabulary};

/// What a [`TokenTrie::walk`] visitor wants next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Visit the next position.
    Next,
    /// Skip every following token whose first `k` bytes equal this token's first `k` bytes
    /// (`k` is at most this token's length; `k = 0` ends the walk). Used when the prefix of
    /// length `k` is rejected, or when `k` is the whole length and the subtree is decided.
    SkipPrefix(usize),
    /// End the walk.
    Stop,
}

/// The text tokens of a [`Vocabulary`] sorted by bytes, with common-prefix lengths and subtree
/// ends (see the module docs for the invariants).
#[derive(Clone, Debug)]
pub struct TokenTrie {
    ids: Vec<TokenId>,
    lcp: Vec<u32>,
    subtree_end: Vec<u32>,
    bytes: Vec<u8>,
    offsets: Vec<u32>,
}

impl TokenTrie {
    /// Builds the trie of `vocab`'s text tokens (specials excluded). `O(n log n)` comparisons.
    pub fn new(vocab: &Vocabulary) -> TokenTrie {
        let mut sorted: Vec<(&[u8], TokenId)> = (0..vocab.n_vocab())
            .map(TokenId::from_index)
            .filter(|&t| !vocab.is_special(t))
            .map(|t| (vocab.bytes(t), t))
            .collect();
        sorted.sort_unstable();
        let n = sorted.len();
        let ids: Vec<TokenId> = sorted.iter().map(|&(_, t)| t).collect();
        let mut bytes = Vec::with_capacity(sorted.iter().map(|(b, _)| b.len()).sum());
        let mut offsets = Vec::with_capacity(n + 1);
        let mut lcp = Vec::with_capacity(n);
        offsets.push(0u32);
        let mut prev: &[u8] = &[];
        for &(b, _) in &sorted {
            lcp.push(common_prefix(prev, b) as u32);
            bytes.extend_from_slice(b);
            offsets.push(bytes.len() as u32);
            prev = b;
        }
        // Open positions on the stack have non-decreasing lengths; position j closes every
        // open subtree whose token is longer than what j shares with its predecessor.
        let mut subtree_end = vec![n as u32; n];
        let mut open: Vec<u32> = Vec::new();
        for (j, &shared) in lcp.iter().enumerate() {
            while let Some(&top) = open.last() {
                let len = offsets[top as usize + 1] - offsets[top as usize];
                if len > shared {
                    subtree_end[top as usize] = j as u32;
                    open.pop();
                } else {
                    break;
                }
            }
            open.push(j as u32);
        }
        TokenTrie {
            ids,
            lcp,
            subtree_end,
            bytes,
            offsets,
        }
    }

    /// The number of positions (text tokens).
    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no text tokens.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The token at position `i`.
    #[inline]
    pub fn token(&self, i: usize) -> TokenId {
        self.ids[i]
    }

    /// The bytes of the token at position `i`.
    #[inline]
    pub fn bytes_at(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The common prefix length of positions `i - 1` and `i` (0 for `i = 0`).
    #[inline]
    pub fn lcp(&self, i: usize) -> usize {
        self.lcp[i] as usize
    }

    /// The first position after `i` whose bytes do not start with `bytes_at(i)`.
    #[inline]
    pub fn subtree_end(&self, i: usize) -> usize {
        self.subtree_end[i] as usize
    }

    /// The positions in sorted order (ids); `tokens()[i] == token(i)`.
    pub fn tokens(&self) -> &[TokenId] {
        &self.ids
    }

    /// The first position `j >= i` whose common prefix with position `i - 1` is shorter than
    /// `prefix_len` (or `len()`): after rejecting the first `prefix_len` bytes of token
    /// `i - 1`, the next token that does not start with them. Jumps whole subtrees, so it
    /// costs about one step per distinct extension, not one per token.
    #[inline]
    pub fn skip_to(&self, mut i: usize, prefix_len: usize) -> usize {
        let n = self.len();
        while i < n && self.lcp[i] as usize >= prefix_len {
            // Everything in i's subtree extends bytes_at(i), which shares the prefix.
            i = self.subtree_end[i] as usize;
        }
        i
    }

    /// Visits positions in sorted order. `visit(common, bytes, id)` gets the common prefix
    /// length of this token's bytes with the previously *visited* token's bytes (0 for the
    /// first), so a walker keeping a stack of states per byte depth can pop back to `common`
    /// and feed only `bytes[common..]`. Its [`Step`] says whether to skip a prefix.
    pub fn walk(&self, mut visit: impl FnMut(usize, &[u8], TokenId) -> Step) {
        let n = self.len();
        let mut i = 0;
        let mut common = 0;
        while i < n {
            let bytes = self.bytes_at(i);
            match visit(common, bytes, self.ids[i]) {
                Step::Next => i += 1,
                Step::SkipPrefix(k) => i = self.skip_to(i + 1, k.min(bytes.len())),
                Step::Stop => return,
            }
            // After a skip from p to i, the skipped positions all share more than lcp(i)
            // bytes with p, so lcp(i) is also i's common prefix with p.
            if i < n {
                common = self.lcp[i] as usize;
            }
        }
    }

    /// The lowest id whose bytes are exactly `bytes`, if any text token has them.
    pub fn find(&self, bytes: &[u8]) -> Option<TokenId> {
        let i = self.lower_bound(bytes);
        (i < self.len() && self.bytes_at(i) == bytes).then(|| self.ids[i])
    }

    /// The positions of the tokens whose bytes start with `prefix` (a contiguous range).
    pub fn prefix_range(&self, prefix: &[u8]) -> std::ops::Range<usize> {
        let start = self.lower_bound(prefix);
        let mut end = start;
        while end < self.len() && self.bytes_at(end).starts_with(prefix) {
            end = self.subtree_end(end);
        }
        start..end
    }

    /// The first position whose bytes are not less than `key`.
    fn lower_bound(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.bytes_at(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
