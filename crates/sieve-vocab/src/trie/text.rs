//! Text regions: the tokens that spell well-formed UTF-8 text whose ASCII characters come
//! from one class — what a walk from an automaton state that loops on such text (a JSON
//! string's characters) accepts without looking at them one by one.
//!
//! A class region ([`super::ClassRegion`]) holds only tokens made of class *bytes*, so the
//! multi-byte characters of a string, which pass through intermediate automaton states, are
//! all exits, and a vocabulary with many non-ASCII tokens (o200k_base) is walked almost
//! whole. A [`TextRegion`] follows the UTF-8 decoder ([`Utf8State`]) instead: a token is
//! inside when every byte is a well-formed step of the decoder from a character boundary
//! (it may end inside a character), and an exit records the decoder state before the byte
//! that breaks it, so the walker can resume from the automaton row of that state.
//!
//! # Invariants
//!
//! - [`Utf8State::step`] accepts exactly the well-formed UTF-8 byte sequences of the Unicode
//!   standard (table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), with the
//!   ASCII bytes restricted to the region's class.
//! - `inside` and `exits` partition the trie: every node is inside, an exit, or below one.

use std::sync::Arc;

use super::{TokenTrie, CHAIN_DEPTH};

/// Where a UTF-8 decoder is between bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Utf8State {
    /// At a character boundary.
    Boundary,
    /// One continuation byte (`80..=BF`) left.
    Need1,
    /// After `E0`: `A0..=BF`, then one more.
    AfterE0,
    /// Two continuation bytes left.
    Need2,
    /// After `ED`: `80..=9F` (no surrogates), then one more.
    AfterED,
    /// After `F0`: `90..=BF`, then two more.
    AfterF0,
    /// Three continuation bytes left.
    Need3,
    /// After `F4`: `80..=8F` (nothing above U+10FFFF), then two more.
    AfterF4,
}

impl Utf8State {
    /// Every state, in `repr` order.
    pub const ALL: [Utf8State; 8] = [
        Utf8State::Boundary,
        Utf8State::Need1,
        Utf8State::AfterE0,
        Utf8State::Need2,
        Utf8State::AfterED,
        Utf8State::AfterF0,
        Utf8State::Need3,
        Utf8State::AfterF4,
    ];

    /// The state after `byte`, or `None` when the byte breaks well-formed text; an ASCII byte
    /// must be in `ascii` (bit `b % 64` of word `b / 64`).
    pub fn step(self, byte: u8, ascii: &[u64; 4]) -> Option<Utf8State> {
        use Utf8State::*;
        let continuation =
            |lo: u8, hi: u8, next: Utf8State| (lo..=hi).contains(&byte).then_some(next);
        match self {
            Boundary => match byte {
                0x00..=0x7f => {
                    (ascii[byte as usize / 64] & (1 << (byte % 64)) != 0).then_some(Boundary)
                }
                0xc2..=0xdf => Some(Need1),
                0xe0 => Some(AfterE0),
                0xe1..=0xec | 0xee..=0xef => Some(Need2),
                0xed => Some(AfterED),
                0xf0 => Some(AfterF0),
                0xf1..=0xf3 => Some(Need3),
                0xf4 => Some(AfterF4),
                _ => None,
            },
            Need1 => continuation(0x80, 0xbf, Boundary),
            AfterE0 => continuation(0xa0, 0xbf, Need1),
            Need2 => continuation(0x80, 0xbf, Need1),
            AfterED => continuation(0x80, 0x9f, Need1),
            AfterF0 => continuation(0x90, 0xbf, Need2),
            Need3 => continuation(0x80, 0xbf, Need2),
            AfterF4 => continuation(0x80, 0x8f, Need2),
        }
    }
}

/// [`Utf8State::step`] for one ASCII class as a table: `next[state][byte]` is the next
/// state's `repr`, or [`BREAKS`]. The region walks look a byte up instead of matching on it.
struct Decoder {
    next: [[u8; 256]; 8],
}

/// A byte that breaks the text, in [`Decoder::next`].
const BREAKS: u8 = u8::MAX;

impl Decoder {
    fn new(ascii: &[u64; 4]) -> Decoder {
        let mut next = [[BREAKS; 256]; 8];
        for state in Utf8State::ALL {
            for byte in 0..=255u8 {
                if let Some(after) = state.step(byte, ascii) {
                    next[state as usize][byte as usize] = after as u8;
                }
            }
        }
        Decoder { next }
    }

    /// The state after `byte` from `state` (both as `repr`), or [`BREAKS`].
    #[inline]
    fn step(&self, state: u8, byte: u8) -> u8 {
        self.next[state as usize & 7][byte as usize]
    }
}

/// The tokens that spell well-formed UTF-8 text (or a prefix of it) with ASCII characters
/// from one class, and where the others break it (see the module docs).
#[derive(Debug)]
pub struct TextRegion {
    /// Bit `t % 32` of word `t / 32` is set iff text token `t` is inside
    /// (`ceil(n_vocab / 32)` words).
    pub inside: Vec<u32>,
    /// In pre-order, each node whose byte breaks the text while its parent's prefix does not:
    /// the subtrees a walk must still visit.
    pub exits: Vec<TextExit>,
    class: [u64; 4],
    depths: std::sync::OnceLock<TextDepths>,
    /// `shallow[c]`: the inside tokens that start at most `c` characters, for `c` up to
    /// [`CHAIN_DEPTH`], each computed on its own when the whole [`TextDepths`] has not been.
    shallow: [std::sync::OnceLock<Vec<u32>>; CHAIN_DEPTH + 1],
    /// [`TextDepths::deep`], when the whole [`TextDepths`] has not been computed.
    deep: std::sync::OnceLock<Vec<u32>>,
}

/// Where a token breaks a [`TextRegion`]'s text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextExit {
    /// The node whose byte breaks the text.
    pub node: u32,
    /// The decoder state before that byte.
    pub state: Utf8State,
    /// How many characters the prefix before that byte has started (a character in progress
    /// counts), saturating at 255.
    pub chars: u8,
}

/// A [`TextRegion`]'s inside cut by the number of characters started, for walks whose state
/// changes with each of the first characters but not with which character it is (a string
/// with a bounded length): see [`TokenTrie::text_depths`].
#[derive(Debug)]
pub struct TextDepths {
    /// `upto[c]` for `c` in `0..=CHAIN_DEPTH`: the inside tokens that start at most `c`
    /// characters, laid out as [`TextRegion::inside`].
    pub upto: Vec<Vec<u32>>,
    /// In pre-order, the inside nodes whose byte starts character `CHAIN_DEPTH + 1`: their
    /// subtrees hold every inside token that starts more characters, and every exit after
    /// more than `CHAIN_DEPTH` started characters.
    pub deep: Vec<u32>,
}

/// The text regions computed so far, and the index they are computed from; a clone of the
/// trie starts without them.
#[derive(Debug, Default)]
pub(super) struct TextRegionCache {
    kept: super::kept::KeptRegions<TextRegion>,
    index: std::sync::OnceLock<TextIndex>,
}

/// What every text region is cut from, built once per trie by one walk over its nodes with the
/// decoder reading every ASCII byte. For a class, the exits are the first nodes on each path
/// where an ASCII byte outside the class, or a byte that breaks UTF-8, appears: a region
/// costs the exits of the bytes it leaves out, not a walk over the trie.
#[derive(Debug)]
struct TextIndex {
    /// Per node whose parent prefix is well-formed: the decoder state before its byte.
    state_before: Vec<u8>,
    /// Per such node: the characters its parent prefix has started, saturating at 255.
    chars_before: Vec<u8>,
    /// For each ASCII byte `b`, in pre-order: the nodes whose byte is `b`, whose parent prefix
    /// is well-formed and holds no `b`.
    first: Vec<Vec<u32>>,
    /// In pre-order: the nodes whose byte breaks well-formed UTF-8 after a well-formed prefix.
    breaks: Vec<u32>,
    /// The tokens whose bytes are a well-formed UTF-8 prefix, whatever their ASCII bytes
    /// (`ceil(n_vocab / 32)` words).
    wellformed: Vec<u32>,
}

impl TextIndex {
    fn build(trie: &TokenTrie) -> TextIndex {
        let all_ascii = [u64::MAX, u64::MAX, 0, 0];
        let table = Decoder::new(&all_ascii);
        let nodes = trie.nodes.len();
        let mut index = TextIndex {
            state_before: vec![Utf8State::Boundary as u8; nodes],
            chars_before: vec![0; nodes],
            first: vec![Vec::new(); 128],
            breaks: Vec::new(),
            wellformed: vec![0u32; trie.n_vocab.div_ceil(32) + 1],
        };
        let spare = index.wellformed.len() * 32 - 1;
        // Per depth of the current path: decoder state, characters started, ASCII bytes seen.
        let mut decoder = vec![Utf8State::Boundary as u8; trie.max_len + 1];
        let mut chars = vec![0u8; trie.max_len + 1];
        let mut seen = vec![0u128; trie.max_len + 1];
        let mut n = 0;
        while n < nodes {
            let node = trie.nodes[n];
            let depth = node.depth as usize;
            let before = decoder[depth - 1];
            index.state_before[n] = before;
            index.chars_before[n] = chars[depth - 1];
            let after = table.step(before, node.byte);
            if after == BREAKS {
                index.breaks.push(n as u32);
                n = node.end as usize;
                continue;
            }
            seen[depth] = seen[depth - 1];
            if node.byte < 128 {
                let bit = 1u128 << node.byte;
                if seen[depth - 1] & bit == 0 {
                    index.first[node.byte as usize].push(n as u32);
                }
                seen[depth] |= bit;
            }
            decoder[depth] = after;
            let starts = u8::from(before == Utf8State::Boundary as u8);
            chars[depth] = chars[depth - 1].saturating_add(starts);
            trie.set_node_tokens(n, &mut index.wellformed, spare);
            n += 1;
        }
        index.wellformed.pop();
        index
    }
}

impl Clone for TextRegionCache {
    fn clone(&self) -> TextRegionCache {
        TextRegionCache::default()
    }
}

impl TokenTrie {
    /// The [`TextRegion`] whose ASCII characters are the bytes of `ascii` (bits above 127
    /// are ignored), computed on first request and kept with the trie, shared by every
    /// grammar and thread. The first request of any class builds the trie's text index (one
    /// walk over the nodes); a region then costs the exits of the ASCII bytes it leaves out.
    /// Kept among the [`MAX_CLASS_REGIONS`](crate::MAX_CLASS_REGIONS) most recently requested.
    pub fn text_region(&self, ascii: &[u64; 4]) -> Arc<TextRegion> {
        let ascii = [ascii[0], ascii[1], 0, 0];
        self.text_regions
            .kept
            .get_or_build(ascii, || self.compute_text_region(&ascii))
    }

    /// The exits of the region of `ascii` are the candidates — the first occurrence on a path
    /// of each ASCII byte left out, and every break — that no earlier candidate covers; its
    /// inside is the well-formed tokens less those below an ASCII exit.
    fn compute_text_region(&self, ascii: &[u64; 4]) -> TextRegion {
        let index = self
            .text_regions
            .index
            .get_or_init(|| TextIndex::build(self));
        let mut candidates = index.breaks.clone();
        for byte in 0..128usize {
            if ascii[byte / 64] & (1 << (byte % 64)) == 0 {
                candidates.extend_from_slice(&index.first[byte]);
            }
        }
        candidates.sort_unstable();
        let mut inside = index.wellformed.clone();
        let mut exits = Vec::new();
        let mut covered = 0;
        for n in candidates {
            let at = n as usize;
            if at < covered {
                continue;
            }
            let node = self.nodes[at];
            covered = node.end as usize;
            exits.push(TextExit {
                node: n,
                state: Utf8State::ALL[index.state_before[at] as usize],
                chars: index.chars_before[at],
            });
            if node.byte < 128 {
                for pos in node.pos as usize..self.node_pos_end(at) {
                    let id = self.ids[pos].index();
                    inside[id / 32] &= !(1 << (id % 32));
                }
            }
        }
        TextRegion {
            inside,
            exits,
            class: *ascii,
            depths: std::sync::OnceLock::new(),
            shallow: std::array::from_fn(|_| std::sync::OnceLock::new()),
            deep: std::sync::OnceLock::new(),
        }
    }

    /// `region`'s inside cut by the number of characters started ([`TextDepths`]), computed
    /// on first request (one walk over the inside nodes of up to [`CHAIN_DEPTH`] characters)
    /// and kept with the region. `region` must come from this trie's
    /// [`TokenTrie::text_region`].
    pub fn text_depths<'r>(&self, region: &'r TextRegion) -> &'r TextDepths {
        region.depths.get_or_init(|| {
            let words = self.n_vocab.div_ceil(32);
            // exact[c]: the inside tokens starting exactly c characters; one spare word as
            // in set_node_tokens.
            let mut exact = vec![vec![0u32; words + 1]; CHAIN_DEPTH + 1];
            let spare = words * 32 + 31;
            let mut deep = Vec::new();
            self.walk_text_prefixes(
                &region.class,
                CHAIN_DEPTH,
                |n, started| self.set_node_tokens(n, &mut exact[started], spare),
                |n| deep.push(n as u32),
            );
            TextDepths {
                upto: super::cumulative(exact, words),
                deep,
            }
        })
    }

    /// The inside tokens of `region` that start at most `chars` characters
    /// ([`TextDepths::upto`]`[chars]`, `chars` ≤ [`CHAIN_DEPTH`]). Unless the whole
    /// [`TextDepths`] is already there, only the nodes of the first `chars` characters are
    /// walked, and only that count's set is made (at [`CHAIN_DEPTH`], with
    /// [`TokenTrie::text_deep`] in the same walk): a string of at most one character costs
    /// the trie's first characters, not the whole trie, and an open-ended walk one cut, not
    /// seventeen.
    pub fn text_upto<'r>(&self, region: &'r TextRegion, chars: usize) -> &'r [u32] {
        let chars = chars.min(CHAIN_DEPTH);
        if let Some(depths) = region.depths.get() {
            return &depths.upto[chars];
        }
        if chars == CHAIN_DEPTH {
            self.text_open_cut(region);
        }
        region.shallow[chars].get_or_init(|| {
            self.node_tokens(|visit| {
                self.walk_text_prefixes(&region.class, chars, |n, _| visit(n), |_| {});
            })
        })
    }

    /// [`TextDepths::deep`] of `region`: the inside nodes whose byte starts character
    /// `CHAIN_DEPTH + 1`, found (with the cut at [`CHAIN_DEPTH`] characters) by one walk,
    /// unless the whole [`TextDepths`] is already there.
    pub fn text_deep<'r>(&self, region: &'r TextRegion) -> &'r [u32] {
        if let Some(depths) = region.depths.get() {
            return &depths.deep;
        }
        self.text_open_cut(region);
        region.deep.get().expect("set by the open cut")
    }

    /// Sets `region`'s cut at [`CHAIN_DEPTH`] characters and its deep nodes, by one walk, if
    /// not set.
    fn text_open_cut(&self, region: &TextRegion) {
        self.open_cut(
            &region.shallow[CHAIN_DEPTH],
            &region.deep,
            |inside, deep| {
                self.walk_text_prefixes(&region.class, CHAIN_DEPTH, |n, _| inside(n), deep);
            },
        );
    }

    /// Visits in pre-order the nodes whose prefix is well-formed text of class `ascii` and
    /// starts at most `max_chars` characters (`inside`, with the characters started), and the
    /// nodes whose byte starts character `max_chars + 1` after such a prefix (`deep`), whose
    /// subtrees it skips.
    fn walk_text_prefixes(
        &self,
        ascii: &[u64; 4],
        max_chars: usize,
        mut inside: impl FnMut(usize, usize),
        mut deep: impl FnMut(usize),
    ) {
        let table = Decoder::new(ascii);
        let mut decoder = vec![Utf8State::Boundary as u8; self.max_len + 1];
        let mut chars = vec![0usize; self.max_len + 1];
        let mut n = 0;
        while n < self.nodes.len() {
            let node = self.nodes[n];
            let depth = node.depth as usize;
            let before = decoder[depth - 1];
            let after = table.step(before, node.byte);
            if after == BREAKS {
                n = node.end as usize;
                continue;
            }
            let started = chars[depth - 1] + usize::from(before == Utf8State::Boundary as u8);
            if started > max_chars {
                deep(n);
                n = node.end as usize;
                continue;
            }
            decoder[depth] = after;
            chars[depth] = started;
            inside(n, started);
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{TextExit, Utf8State};
    use crate::{TokenTrie, Vocabulary};

    /// The region by its definition: one walk over the trie with the class's decoder.
    fn reference_region(trie: &TokenTrie, ascii: &[u64; 4]) -> (Vec<u32>, Vec<TextExit>) {
        let mut inside = vec![0u32; trie.n_vocab.div_ceil(32)];
        let mut exits = Vec::new();
        let mut decoder = vec![Utf8State::Boundary; trie.max_len + 1];
        let mut chars = vec![0u8; trie.max_len + 1];
        let mut n = 0;
        while n < trie.nodes.len() {
            let node = trie.nodes[n];
            let depth = node.depth as usize;
            let before = decoder[depth - 1];
            let Some(after) = before.step(node.byte, ascii) else {
                exits.push(TextExit {
                    node: n as u32,
                    state: before,
                    chars: chars[depth - 1],
                });
                n = node.end as usize;
                continue;
            };
            decoder[depth] = after;
            chars[depth] = chars[depth - 1] + u8::from(before == Utf8State::Boundary);
            for pos in trie.tokens_at_node(n) {
                let id = trie.ids[pos].index();
                inside[id / 32] |= 1 << (id % 32);
            }
            n += 1;
        }
        (inside, exits)
    }

    /// Regions cut from the index equal their definition, for classes that leave out nothing,
    /// one byte, JSON's quote and controls, or most of ASCII.
    #[test]
    fn regions_from_the_index_equal_their_definition() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        let class = |bytes: &dyn Fn(u8) -> bool| {
            let mut class = [0u64; 4];
            for b in (0..128u8).filter(|&b| bytes(b)) {
                class[b as usize / 64] |= 1 << (b % 64);
            }
            class
        };
        let classes = [
            class(&|_| true),
            class(&|b| b != b'<'),
            class(&|b| b >= 0x20 && b != b'"' && b != b'\\'),
            class(&|b| b.is_ascii_lowercase()),
            class(&|b| b.is_ascii_digit() || b == b' '),
            class(&|_| false),
        ];
        for ascii in classes {
            let region = trie.text_region(&ascii);
            let (inside, exits) = reference_region(&trie, &ascii);
            assert_eq!(region.inside, inside, "{ascii:x?}");
            assert_eq!(region.exits, exits, "{ascii:x?}");
        }
    }

    /// The inside tokens that start at most `c` characters equal their definition for every
    /// `c`, whether they come from the shallow walk (nothing deeper computed yet) or from the
    /// whole [`super::TextDepths`]; and the class regions' `region_upto` likewise by length.
    /// The deep nodes are the same either way.
    #[test]
    fn inside_tokens_by_count_equal_their_definition() {
        let mut letters = [0u64; 4];
        for b in (b'a'..=b'z').chain(b'A'..=b'Z').chain([b' ']) {
            letters[b as usize / 64] |= 1 << (b % 64);
        }
        let classes = [letters, [u64::MAX, u64::MAX, 0, 0]];
        let vocab = Vocabulary::embedded_default();
        let expected = |trie: &TokenTrie, keep: &dyn Fn(&[u8]) -> bool| {
            let mut bits = vec![0u32; trie.n_vocab.div_ceil(32)];
            for pos in 0..trie.len() {
                if keep(trie.bytes_at(pos)) {
                    let id = trie.token(pos).index();
                    bits[id / 32] |= 1 << (id % 32);
                }
            }
            bits
        };
        // Characters started by well-formed text of class `ascii`, `None` when it breaks.
        let started = |ascii: &[u64; 4], bytes: &[u8]| {
            let mut state = Utf8State::Boundary;
            let mut chars = 0;
            for &b in bytes {
                chars += usize::from(state == Utf8State::Boundary);
                state = state.step(b, ascii)?;
            }
            Some(chars)
        };
        let in_class = |ascii: &[u64; 4], b: u8| ascii[b as usize / 64] & (1 << (b % 64)) != 0;
        for ascii in classes {
            for shallow_first in [true, false] {
                let trie = TokenTrie::new(vocab);
                let text = trie.text_region(&ascii);
                let class = trie.class_region(&ascii);
                if !shallow_first {
                    trie.text_depths(&text);
                    trie.region_depths(&class);
                }
                for c in (0..=super::CHAIN_DEPTH).rev() {
                    let by_count = |bytes: &[u8]| started(&ascii, bytes).is_some_and(|n| n <= c);
                    assert_eq!(
                        trie.text_upto(&text, c),
                        expected(&trie, &by_count),
                        "text, {c} characters, shallow first: {shallow_first}"
                    );
                    let by_length = |bytes: &[u8]| {
                        bytes.len() <= c && bytes.iter().all(|&b| in_class(&ascii, b))
                    };
                    assert_eq!(
                        trie.region_upto(&class, c),
                        expected(&trie, &by_length),
                        "bytes, {c} bytes, shallow first: {shallow_first}"
                    );
                }
                // The deep nodes found with the cut at `CHAIN_DEPTH` (shallow first) are
                // those of the whole cut by length.
                assert_eq!(
                    trie.text_deep(&text),
                    trie.text_depths(&text).deep.as_slice(),
                    "text deep nodes, shallow first: {shallow_first}"
                );
                assert_eq!(
                    trie.region_deep(&class),
                    trie.region_depths(&class).deep.as_slice(),
                    "byte deep nodes, shallow first: {shallow_first}"
                );
            }
        }
    }

    /// The decoder accepts exactly what `std::str::from_utf8` accepts, on every sequence of
    /// up to three bytes, and every 4-byte sequence with a 4-byte lead.
    #[test]
    fn the_decoder_accepts_exactly_well_formed_utf8() {
        let all_ascii = [u64::MAX, u64::MAX, 0, 0];
        let decodes = |bytes: &[u8]| {
            let mut state = Utf8State::Boundary;
            for &b in bytes {
                match state.step(b, &all_ascii) {
                    Some(next) => state = next,
                    None => return false,
                }
            }
            state == Utf8State::Boundary
        };
        let mut sequences: Vec<Vec<u8>> = Vec::new();
        for a in 0..=255u8 {
            sequences.push(vec![a]);
            for b in 0..=255u8 {
                sequences.push(vec![a, b]);
                if a >= 0xe0 {
                    for c in (0..=255u8).step_by(7).chain([0x80, 0xbf]) {
                        sequences.push(vec![a, b, c]);
                        if a >= 0xf0 {
                            sequences.push(vec![a, b, c, 0x80]);
                            sequences.push(vec![a, b, c, 0xc0]);
                        }
                    }
                }
            }
        }
        for bytes in sequences {
            assert_eq!(
                decodes(&bytes),
                std::str::from_utf8(&bytes).is_ok(),
                "{bytes:02x?}"
            );
        }
    }

    #[test]
    fn ascii_bytes_outside_the_class_break_the_text() {
        let letters = {
            let mut class = [0u64; 4];
            for b in b'a'..=b'z' {
                class[b as usize / 64] |= 1 << (b % 64);
            }
            class
        };
        assert_eq!(
            Utf8State::Boundary.step(b'q', &letters),
            Some(Utf8State::Boundary)
        );
        assert_eq!(Utf8State::Boundary.step(b'"', &letters), None);
        assert_eq!(
            Utf8State::Boundary.step(0xc3, &letters),
            Some(Utf8State::Need1)
        );
    }

    /// The ASCII-first set holds exactly the text tokens whose bytes start below 0x80.
    #[test]
    fn ascii_first_tokens_are_the_text_tokens_starting_with_an_ascii_byte() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        let set = trie.ascii_first();
        let mut expected = vec![0u32; trie.n_vocab.div_ceil(32)];
        let (mut ascii, mut other) = (0, 0);
        for pos in 0..trie.len() {
            let id = trie.token(pos).index();
            if trie.bytes_at(pos)[0] < 0x80 {
                expected[id / 32] |= 1 << (id % 32);
                ascii += 1;
            } else {
                other += 1;
            }
        }
        assert!(
            ascii > 0 && other > 0,
            "{ascii} ASCII-first, {other} others"
        );
        assert_eq!(set, &expected[..]);
    }
}
