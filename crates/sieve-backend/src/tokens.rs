//! Token sets and per-key classifications, each set stored in its cheaper form.
//!
//! # Invariants
//!
//! - A [`TokenSet::Ids`] list is sorted and without repeats; a [`TokenSet::Bits`] mask has
//!   exactly `ceil(n_vocab / 32)` words.
//! - A [`Classification`]'s uncertain ranges are sorted, disjoint and non-touching ranges of
//!   trie positions, and no token in them is in its accepted set.

use std::ops::Range;

/// Words of a bitmask tested for zero together by [`TokenSet::from_bits`] (one 64-byte line).
const ZERO_BLOCK: usize = 16;

/// Whether every word of `block` is zero. A full block is read as one fixed-size array, which
/// the compiler turns into a few wide loads and ORs; the slice fold it replaces went word by
/// word and was most of a sparse set's conversion.
fn is_zero(block: &[u32]) -> bool {
    match <&[u32; ZERO_BLOCK]>::try_from(block) {
        Ok(full) => full.iter().fold(0, |any, &w| any | w) == 0,
        Err(_) => block.iter().all(|&w| w == 0),
    }
}

/// Writes the ids of a mask's set bits, word by word in increasing order, into a list of
/// the count known beforehand: writing into place keeps the loop free of the growth check
/// that pushing needed (the list's length and capacity were spilled to the stack on every id).
struct IdWriter {
    ids: Vec<u32>,
    at: usize,
}

impl IdWriter {
    fn new(count: usize) -> IdWriter {
        IdWriter {
            ids: vec![0; count],
            at: 0,
        }
    }

    /// Writes the ids of the set bits of word `w`.
    fn word(&mut self, w: usize, word: u32) {
        let base = (w * 32) as u32;
        let mut rest = word;
        while rest != 0 {
            self.ids[self.at] = base | rest.trailing_zeros();
            self.at += 1;
            rest &= rest - 1;
        }
    }

    fn finish(self) -> Vec<u32> {
        debug_assert_eq!(self.at, self.ids.len());
        self.ids
    }
}

/// Calls `visit` with the index of every set bit of `marks` (bit `w % 64` of
/// `marks[w / 64]`), in increasing order, until it returns false.
fn for_each_marked(marks: &[u64], mut visit: impl FnMut(usize) -> bool) {
    for (i, &mark) in marks.iter().enumerate() {
        let mut rest = mark;
        while rest != 0 {
            if !visit(i * 64 + rest.trailing_zeros() as usize) {
                return;
            }
            rest &= rest - 1;
        }
    }
}

thread_local! {
    /// A zeroed bitmask kept between this thread's [`TokenBits`]: one whose set ends as a
    /// list leaves its mask behind, cleared word by touched word, so the next one neither
    /// allocates nor zeroes a vocabulary-wide mask.
    static ZEROED_WORDS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A token set being collected by a classification walk, as a bitmask over ids with one
/// spare word past the vocabulary: ids from `n_vocab` to [`TokenBits::spare_id`] land
/// there (a walk may set a bit at every live trie node without a branch, the nodes without a
/// token setting the spare one), and the spare word is dropped by [`TokenBits::finish`].
///
/// Tokens inserted one at a time mark their word, so [`TokenBits::finish`] reads only the
/// marked words ([`TokenSet::from_bits`]'s scan of the whole mask was a fifth of all
/// classification time); a region or-ed in whole ([`TokenBits::bulk_words`]) falls back to
/// that scan. A set that ends as a list leaves its mask, cleared, for the thread's next
/// collection.
pub struct TokenBits {
    /// `n_vocab.div_ceil(32)` words and the spare one.
    words: Vec<u32>,
    /// Bit `w % 64` of `touched[w / 64]` is set when word `w` got a bit from
    /// [`TokenBits::insert`]; meaningless once `bulk`.
    touched: Vec<u64>,
    /// Some bits were set through [`TokenBits::bulk_words`].
    bulk: bool,
}

impl TokenBits {
    /// An empty set over `n_vocab` token ids.
    pub fn new(n_vocab: usize) -> TokenBits {
        let len = n_vocab.div_ceil(32) + 1;
        let kept = ZEROED_WORDS.with(|kept| std::mem::take(&mut *kept.borrow_mut()));
        TokenBits {
            words: if kept.len() == len {
                kept
            } else {
                vec![0; len]
            },
            touched: vec![0; len.div_ceil(64)],
            bulk: false,
        }
    }

    /// The id whose bit is the spare one: insert it for "no token".
    pub fn spare_id(&self) -> usize {
        self.words.len() * 32 - 1
    }

    /// Inserts token `id` (at most [`TokenBits::spare_id`]).
    #[inline]
    pub fn insert(&mut self, id: usize) {
        self.words[id / 32] |= 1 << (id % 32);
        self.touched[id / 2048] |= 1 << (id / 32 % 64);
    }

    /// The mask's words (without the spare one), for or-ing in or clearing whole regions;
    /// the set is then read whole by [`TokenBits::finish`].
    pub fn bulk_words(&mut self) -> &mut [u32] {
        self.bulk = true;
        let words = self.words.len() - 1;
        &mut self.words[..words]
    }

    /// The set, in its cheaper form.
    pub fn finish(self) -> TokenSet {
        let TokenBits {
            mut words,
            mut touched,
            bulk,
        } = self;
        words.pop();
        if bulk {
            return TokenSet::from_bits(words);
        }
        let spare = words.len();
        touched[spare / 64] &= !(1 << (spare % 64));
        let set = TokenSet::from_touched_bits(&mut words, &touched);
        if !words.is_empty() {
            for_each_marked(&touched, |w| {
                words[w] = 0;
                true
            });
            words.push(0);
            debug_assert!(words.iter().all(|&w| w == 0));
            ZEROED_WORDS.with(|kept| *kept.borrow_mut() = words);
        }
        set
    }
}

/// Tokens, as a bitmask over ids when many, else as a sorted id list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSet {
    /// Bit `t % 32` of word `t / 32` is set iff token `t` is in the set.
    Bits(Vec<u32>),
    /// The ids, ascending.
    Ids(Vec<u32>),
}

impl TokenSet {
    /// The cheaper form of the set whose bitmask (of `words` words) is `bits`: a list costs
    /// a word per token, a bitmask a word per 32 ids.
    ///
    /// Runs of zero words are skipped a block at a time, and counting stops as soon as the
    /// bitmask is known to be the cheaper form, so a sparse set costs about one pass of wide
    /// loads over the mask and a dense one a few hundred words: a classification builds one
    /// per state, and counting every word bit by bit cost more than the rest of a small
    /// state's classification.
    pub fn from_bits(bits: Vec<u32>) -> TokenSet {
        let limit = bits.len();
        let mut count = 0;
        for block in bits.chunks(ZERO_BLOCK) {
            if is_zero(block) {
                continue;
            }
            count += block.iter().map(|w| w.count_ones() as usize).sum::<usize>();
            if count >= limit {
                return TokenSet::Bits(bits);
            }
        }
        let mut ids = IdWriter::new(count);
        for (b, block) in bits.chunks(ZERO_BLOCK).enumerate() {
            if is_zero(block) {
                continue;
            }
            for (i, &word) in block.iter().enumerate() {
                ids.word(b * ZERO_BLOCK + i, word);
            }
        }
        TokenSet::Ids(ids.finish())
    }

    /// [`TokenSet::from_bits`] for a mask whose possibly non-zero words are known: bit
    /// `w % 64` of `touched[w / 64]` is set for every non-zero word `w` of `bits` (and may be
    /// set for zero ones). Costs a pass over `touched` and the words it marks, not over the
    /// whole mask: a classification that sets a few bits one by one marks their words as it
    /// goes, and the set of a small state no longer costs a scan of the vocabulary.
    ///
    /// A bitmask set takes `bits` (leaving it empty); a list leaves it as it was, for the
    /// caller to clear the touched words and use again.
    fn from_touched_bits(bits: &mut Vec<u32>, touched: &[u64]) -> TokenSet {
        debug_assert!(bits
            .iter()
            .enumerate()
            .all(|(w, &word)| word == 0 || touched[w / 64] & (1 << (w % 64)) != 0));
        let limit = bits.len();
        let mut count = 0;
        for_each_marked(touched, |w| {
            count += bits[w].count_ones() as usize;
            count < limit
        });
        if count >= limit {
            return TokenSet::Bits(std::mem::take(bits));
        }
        let mut ids = IdWriter::new(count);
        for_each_marked(touched, |w| {
            ids.word(w, bits[w]);
            true
        });
        TokenSet::Ids(ids.finish())
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        match self {
            TokenSet::Bits(bits) => bits.iter().map(|w| w.count_ones() as usize).sum(),
            TokenSet::Ids(ids) => ids.len(),
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        match self {
            TokenSet::Bits(bits) => bits.iter().all(|&w| w == 0),
            TokenSet::Ids(ids) => ids.is_empty(),
        }
    }

    /// Whether token `id` is in the set.
    pub fn contains(&self, id: u32) -> bool {
        match self {
            TokenSet::Bits(bits) => bits
                .get(id as usize / 32)
                .is_some_and(|w| w & (1 << (id % 32)) != 0),
            TokenSet::Ids(ids) => ids.binary_search(&id).is_ok(),
        }
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        match self {
            TokenSet::Bits(words) | TokenSet::Ids(words) => words.len() * 4,
        }
    }

    /// Sets the bits of the set's tokens in `mask`.
    pub fn or_into(&self, mask: &mut [u32]) {
        match self {
            TokenSet::Bits(bits) => {
                for (m, b) in mask.iter_mut().zip(bits) {
                    *m |= b;
                }
            }
            TokenSet::Ids(ids) => {
                for &id in ids {
                    mask[id as usize / 32] |= 1 << (id % 32);
                }
            }
        }
    }
}

/// What one key decides about the text tokens of a trie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Classification {
    /// Tokens accepted whenever the key is among the recogniser's keys.
    pub accepted: TokenSet,
    /// Trie positions of the tokens that depend on the rest of the recogniser's state.
    pub uncertain: Vec<Range<u32>>,
}

impl Classification {
    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.accepted.heap_bytes() + self.uncertain.len() * std::mem::size_of::<Range<u32>>()
    }

    /// The number of uncertain tokens.
    pub fn uncertain_count(&self) -> usize {
        self.uncertain.iter().map(|r| r.len()).sum()
    }
}

/// Appends `range` to sorted, disjoint `ranges`, merging it with the last range when they
/// touch.
pub fn push_range(ranges: &mut Vec<Range<u32>>, range: Range<u32>) {
    match ranges.last_mut() {
        Some(last) if last.end == range.start => last.end = range.end,
        _ => ranges.push(range),
    }
}

/// `ranges` (in any order, possibly overlapping) as sorted, disjoint ranges covering the
/// same positions.
pub fn merge_ranges(mut ranges: Vec<Range<u32>>) -> Vec<Range<u32>> {
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

#[cfg(test)]
mod tests {
    use super::TokenSet;

    /// The definition `from_bits` must meet: the ids of the set bits, as a list when they
    /// are fewer than the mask's words, else the mask itself.
    fn reference(bits: &[u32]) -> TokenSet {
        let ids: Vec<u32> = (0..bits.len() as u32 * 32)
            .filter(|&t| bits[t as usize / 32] & (1 << (t % 32)) != 0)
            .collect();
        if ids.len() >= bits.len() {
            TokenSet::Bits(bits.to_vec())
        } else {
            TokenSet::Ids(ids)
        }
    }

    /// Masks around every boundary the block skipping and the early stop could get wrong:
    /// empty, bits at block edges, counts one below, at and above the word count, dense.
    #[test]
    fn from_bits_and_from_touched_bits_meet_their_definition() {
        let words = 6251;
        let mut masks = vec![vec![0u32; words], vec![u32::MAX; words]];
        for ids in [
            vec![0],
            vec![words as u32 * 32 - 1],
            vec![15 * 32 + 31, 16 * 32, 16 * 32 + 1],
            (0..words as u32 - 1).map(|i| i * 32 + i % 32).collect(),
            (0..words as u32).map(|i| i * 32 + i % 32).collect(),
            (0..words as u32 + 1).map(|i| i * 31).collect(),
            (0..words as u32 * 32).step_by(7).collect::<Vec<_>>(),
        ] {
            let mut mask = vec![0u32; words];
            for id in ids {
                mask[id as usize / 32] |= 1 << (id % 32);
            }
            masks.push(mask);
        }
        for mask in masks {
            let set = TokenSet::from_bits(mask.clone());
            assert_eq!(set, reference(&mask));
            let mut exact = vec![0u64; words.div_ceil(64)];
            for (w, _) in mask.iter().enumerate().filter(|(_, &word)| word != 0) {
                exact[w / 64] |= 1 << (w % 64);
            }
            // Marks on zero words too: every third word, and the last one.
            let mut loose = exact.clone();
            for w in (0..words).step_by(3).chain([words - 1]) {
                loose[w / 64] |= 1 << (w % 64);
            }
            for touched in [&exact, &loose] {
                let mut bits = mask.clone();
                assert_eq!(TokenSet::from_touched_bits(&mut bits, touched), set);
                let taken = matches!(set, TokenSet::Bits(_));
                assert_eq!(bits, if taken { Vec::new() } else { mask.clone() });
            }
            let mut back = vec![0u32; words];
            set.or_into(&mut back);
            assert_eq!(back, mask);
        }
    }
}
