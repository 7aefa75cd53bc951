//! Sets of bytes.
//!
//! A [`ByteClass`] is a set of byte values stored as a 256-bit set, so equal sets are equal
//! values (the representation is canonical) and set operations are a few word operations. It
//! reads and serialises as a sorted list of disjoint, non-adjacent inclusive ranges.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A set of bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteClass {
    bits: [u64; 4],
}

impl ByteClass {
    /// The empty set.
    pub const EMPTY: ByteClass = ByteClass { bits: [0; 4] };
    /// Every byte.
    pub const ALL: ByteClass = ByteClass {
        bits: [u64::MAX; 4],
    };

    /// The set of the bytes in the inclusive range `lo..=hi` (empty when `lo > hi`).
    pub fn range(lo: u8, hi: u8) -> ByteClass {
        let mut class = ByteClass::EMPTY;
        class.add_range(lo, hi);
        class
    }

    /// The set holding one byte.
    pub fn byte(b: u8) -> ByteClass {
        ByteClass::range(b, b)
    }

    /// The union of the given inclusive ranges.
    pub fn from_ranges(ranges: impl IntoIterator<Item = (u8, u8)>) -> ByteClass {
        let mut class = ByteClass::EMPTY;
        for (lo, hi) in ranges {
            class.add_range(lo, hi);
        }
        class
    }

    /// Adds the inclusive range `lo..=hi`; nothing when `lo > hi`.
    pub fn add_range(&mut self, lo: u8, hi: u8) {
        if lo > hi {
            return;
        }
        let (lo, hi) = (u32::from(lo), u32::from(hi));
        // A mask per word the range touches: bits `start..=end` of that word.
        for word in lo / 64..=hi / 64 {
            let start = lo.max(word * 64) - word * 64;
            let end = hi.min(word * 64 + 63) - word * 64;
            self.bits[word as usize] |= (u64::MAX << start) & (u64::MAX >> (63 - end));
        }
    }

    /// Adds one byte.
    pub fn insert(&mut self, b: u8) {
        self.bits[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    /// Removes `b` from the set.
    pub fn remove(&mut self, b: u8) {
        self.bits[usize::from(b >> 6)] &= !(1 << (b & 63));
    }

    /// Whether `b` is in the set.
    pub fn contains(&self, b: u8) -> bool {
        self.bits[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits == [0; 4]
    }

    /// The number of bytes in the set.
    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The only byte of a one-byte set.
    pub fn single_byte(&self) -> Option<u8> {
        match self.len() {
            1 => self.iter().next(),
            _ => None,
        }
    }

    /// The union of two sets.
    pub fn union(&self, other: &ByteClass) -> ByteClass {
        let mut bits = self.bits;
        for (w, o) in bits.iter_mut().zip(other.bits) {
            *w |= o;
        }
        ByteClass { bits }
    }

    /// The intersection of two sets.
    pub fn intersection(&self, other: &ByteClass) -> ByteClass {
        let mut bits = self.bits;
        for (w, o) in bits.iter_mut().zip(other.bits) {
            *w &= o;
        }
        ByteClass { bits }
    }

    /// The bytes not in the set.
    pub fn complement(&self) -> ByteClass {
        ByteClass {
            bits: self.bits.map(|w| !w),
        }
    }

    /// The bytes in the set, ascending (the iterator holds a copy of the set).
    pub fn iter(&self) -> impl Iterator<Item = u8> {
        self.bits.into_iter().enumerate().flat_map(|(word, bits)| {
            let mut bits = bits;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let bit = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    (word * 64 + bit) as u8
                })
            })
        })
    }

    /// The set as four words: byte `b` is bit `b % 64` of word `b / 64`.
    pub fn words(&self) -> [u64; 4] {
        self.bits
    }

    /// The set whose words are `words` (see [`ByteClass::words`]).
    pub fn from_words(words: [u64; 4]) -> ByteClass {
        ByteClass { bits: words }
    }

    /// The set as sorted, disjoint, non-adjacent inclusive ranges.
    pub fn ranges(&self) -> Vec<(u8, u8)> {
        let mut out = Vec::new();
        let mut from = 0u32;
        while let Some(lo) = Self::next_one(&self.bits, from) {
            let end = Self::next_one(&self.bits.map(|w| !w), lo).unwrap_or(256);
            out.push((lo as u8, (end - 1) as u8));
            from = end;
        }
        out
    }

    /// The first byte at or after `from` whose bit is set in `bits`, a word at a time.
    fn next_one(bits: &[u64; 4], from: u32) -> Option<u32> {
        let mut word = (from / 64) as usize;
        if word >= 4 {
            return None;
        }
        let mut rest = bits[word] & (u64::MAX << (from % 64));
        loop {
            if rest != 0 {
                return Some(word as u32 * 64 + rest.trailing_zeros());
            }
            word += 1;
            if word == 4 {
                return None;
            }
            rest = bits[word];
        }
    }
}

impl std::fmt::Debug for ByteClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for ByteClass {
    /// Prints the set as a bracketed class of escaped bytes, e.g. `[0-9a-f\x80-\xbf]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[")?;
        for (lo, hi) in self.ranges() {
            write_class_byte(f, lo)?;
            if hi > lo {
                if hi > lo + 1 {
                    f.write_str("-")?;
                }
                write_class_byte(f, hi)?;
            }
        }
        f.write_str("]")
    }
}

fn write_class_byte(f: &mut std::fmt::Formatter<'_>, b: u8) -> std::fmt::Result {
    match b {
        b'\\' | b']' | b'[' | b'-' | b'^' => write!(f, "\\{}", b as char),
        b'\t' => f.write_str("\\t"),
        b'\n' => f.write_str("\\n"),
        b'\r' => f.write_str("\\r"),
        0x20..=0x7e => write!(f, "{}", b as char),
        _ => write!(f, "\\x{b:02x}"),
    }
}

impl Serialize for ByteClass {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.ranges().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ByteClass {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ranges = Vec::<(u8, u8)>::deserialize(deserializer)?;
        Ok(ByteClass::from_ranges(ranges))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_canonical() {
        let class = ByteClass::from_ranges([(b'a', b'c'), (b'd', b'f'), (b'0', b'0')]);
        assert_eq!(class.ranges(), vec![(b'0', b'0'), (b'a', b'f')]);
        assert_eq!(class.len(), 7);
        assert_eq!(class.to_string(), "[0a-f]");
    }

    /// The word-at-a-time `add_range` against its definition, one byte at a time, for every
    /// `(lo, hi)` pair (empty ones included) added to a class that already has members.
    #[test]
    fn add_range_matches_inserting_each_byte() {
        let base = ByteClass::from_ranges([(10, 10), (100, 140)]);
        for lo in 0..=255u8 {
            for hi in 0..=255u8 {
                let mut fast = base;
                fast.add_range(lo, hi);
                let mut naive = base;
                for b in lo..=hi {
                    naive.insert(b);
                }
                assert_eq!(fast, naive, "add_range({lo}, {hi})");
            }
        }
    }

    /// The word-at-a-time `iter` and `ranges` against their definitions (the bytes `contains`
    /// accepts), on classes with runs across word boundaries (63/64, 127/128, 191/192),
    /// ending at 255 and starting at 0.
    #[test]
    fn ranges_match_the_members() {
        let naive = |class: &ByteClass| {
            let mut out: Vec<(u8, u8)> = Vec::new();
            for b in class.iter() {
                match out.last_mut() {
                    Some((_, hi)) if u16::from(*hi) + 1 == u16::from(b) => *hi = b,
                    _ => out.push((b, b)),
                }
            }
            out
        };
        let mut classes = vec![
            ByteClass::EMPTY,
            ByteClass::ALL,
            ByteClass::range(63, 64),
            ByteClass::range(0, 0),
            ByteClass::range(255, 255),
            ByteClass::range(60, 200),
            ByteClass::from_ranges([(0, 63), (128, 191)]),
            ByteClass::from_ranges([(64, 127), (192, 255)]),
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2_000 {
            let mut bits = [0u64; 4];
            for word in &mut bits {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                // Mix in long runs of ones and zeros, not only noise.
                *word = match state >> 62 {
                    0 => state,
                    1 => u64::MAX << (state % 64),
                    2 => !(u64::MAX << (state % 64)),
                    _ => 0,
                };
            }
            classes.push(ByteClass { bits });
        }
        for class in classes {
            let members: Vec<u8> = (0..=255u8).filter(|&b| class.contains(b)).collect();
            assert_eq!(
                class.iter().collect::<Vec<u8>>(),
                members,
                "{:?}",
                class.bits
            );
            assert_eq!(class.ranges(), naive(&class), "{:?}", class.bits);
        }
    }

    #[test]
    fn complement_and_display_escape_specials() {
        let class = ByteClass::range(0, 0x1f).union(&ByteClass::byte(b'-'));
        assert_eq!(class.to_string(), r"[\x00-\x1f\-]");
        assert_eq!(class.complement().len(), 256 - 33);
        assert!(ByteClass::ALL.complement().is_empty());
        assert_eq!(ByteClass::range(b'a', b'b').to_string(), "[ab]");
        let whitespace = ByteClass::from_ranges([(b' ', b' '), (b'\t', b'\n'), (b'\r', b'\r')]);
        assert_eq!(whitespace.to_string(), r"[\t\n\r ]");
    }

    #[test]
    fn serde_round_trip() {
        let class = ByteClass::from_ranges([(0, 9), (200, 255)]);
        let json = serde_json::to_string(&class).unwrap();
        assert_eq!(json, "[[0,9],[200,255]]");
        assert_eq!(serde_json::from_str::<ByteClass>(&json).unwrap(), class);
    }
}
