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

use super::{TokenTrie, CHAIN_DEPTH, MAX_CLASS_REGIONS};

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

/// The text regions computed so far; a clone of the trie starts without them.
#[derive(Debug, Default)]
pub(super) struct TextRegionCache(std::sync::Mutex<TextRegions>);

#[derive(Debug, Default)]
struct TextRegions {
    kept: Vec<([u64; 4], Arc<TextRegion>)>,
    /// Classes asked for once, whose region is computed when asked again.
    asked: Vec<[u64; 4]>,
}

impl Clone for TextRegionCache {
    fn clone(&self) -> TextRegionCache {
        TextRegionCache::default()
    }
}

impl TokenTrie {
    /// The [`TextRegion`] whose ASCII characters are the bytes of `ascii` (bits above 127
    /// are ignored), kept with the trie and shared by every grammar and thread, computed
    /// (one walk over the inside nodes, a few times what one classification walk costs) the
    /// second time a class is asked for: a class met once, such as the free text of one
    /// grammar, is cheaper walked than prepared. `None` until then, and once
    /// [`MAX_CLASS_REGIONS`] other classes are kept.
    pub fn text_region(&self, ascii: &[u64; 4]) -> Option<Arc<TextRegion>> {
        self.text_region_when(ascii, false)
    }

    /// [`TokenTrie::text_region`], computed now if it is not kept yet: for classes known to
    /// recur (a JSON string's characters), prepared with the trie.
    pub fn prepare_text_region(&self, ascii: &[u64; 4]) -> Option<Arc<TextRegion>> {
        self.text_region_when(ascii, true)
    }

    fn text_region_when(&self, ascii: &[u64; 4], now: bool) -> Option<Arc<TextRegion>> {
        let ascii = [ascii[0], ascii[1], 0, 0];
        let mut regions = self
            .text_regions
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, region)) = regions.kept.iter().find(|(key, _)| *key == ascii) {
            return Some(region.clone());
        }
        if regions.kept.len() >= MAX_CLASS_REGIONS {
            return None;
        }
        if !now && !regions.asked.contains(&ascii) {
            if regions.asked.len() < 4 * MAX_CLASS_REGIONS {
                regions.asked.push(ascii);
            }
            return None;
        }
        let region = Arc::new(self.compute_text_region(&ascii));
        regions.kept.push((ascii, region.clone()));
        Some(region)
    }

    fn compute_text_region(&self, ascii: &[u64; 4]) -> TextRegion {
        // One spare word: nodes without a token set a bit there (as in compute_region).
        let mut inside = vec![0u32; self.n_vocab.div_ceil(32) + 1];
        let spare = inside.len() * 32 - 1;
        let mut exits = Vec::new();
        // decoder[d], chars[d]: the decoder state and the characters started after the first
        // d bytes of the current prefix.
        let table = Decoder::new(ascii);
        let mut decoder = vec![Utf8State::Boundary as u8; self.max_len + 1];
        let mut chars = vec![0u8; self.max_len + 1];
        let mut n = 0;
        while n < self.nodes.len() {
            let node = self.nodes[n];
            let depth = node.depth as usize;
            let before = decoder[depth - 1];
            let after = table.step(before, node.byte);
            if after == BREAKS {
                exits.push(TextExit {
                    node: n as u32,
                    state: Utf8State::ALL[before as usize],
                    chars: chars[depth - 1],
                });
                n = node.end as usize;
                continue;
            }
            decoder[depth] = after;
            let starts = u8::from(before == Utf8State::Boundary as u8);
            chars[depth] = chars[depth - 1].saturating_add(starts);
            self.set_node_tokens(n, &mut inside, spare);
            n += 1;
        }
        inside.pop();
        TextRegion {
            inside,
            exits,
            class: *ascii,
            depths: std::sync::OnceLock::new(),
        }
    }

    /// `region`'s inside cut by the number of characters started ([`TextDepths`]), computed
    /// on first request and kept with the region. `region` must come from this trie's
    /// [`TokenTrie::text_region`].
    pub fn text_depths<'r>(&self, region: &'r TextRegion) -> &'r TextDepths {
        region
            .depths
            .get_or_init(|| self.compute_text_depths(&region.class))
    }

    fn compute_text_depths(&self, ascii: &[u64; 4]) -> TextDepths {
        let words = self.n_vocab.div_ceil(32);
        // exact[c]: the inside tokens starting exactly c characters; one spare word as above.
        let mut exact = vec![vec![0u32; words + 1]; CHAIN_DEPTH + 1];
        let spare = words * 32 + 31;
        let mut deep = Vec::new();
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
            if started > CHAIN_DEPTH {
                deep.push(n as u32);
                n = node.end as usize;
                continue;
            }
            decoder[depth] = after;
            chars[depth] = started;
            self.set_node_tokens(n, &mut exact[started], spare);
            n += 1;
        }
        TextDepths {
            upto: super::cumulative(exact, words),
            deep,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8State;

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
}
