//! Sets of Unicode scalar values as UTF-8 byte expressions.
//!
//! A range of code points is split into runs whose encodings all have the same length and
//! differ only in a suffix of "free" continuation bytes; each run is then one sequence of byte
//! ranges. One-byte sequences share one byte class.
//!
//! **Invariant:** the expression matches exactly the UTF-8 encodings of the set's scalar
//! values (surrogates are never in a set: [`CharSet`] stores only scalar values).

use crate::{ByteClass, Expr};

/// A set of Unicode scalar values as sorted, disjoint, non-adjacent ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CharSet {
    ranges: Vec<(char, char)>,
}

impl CharSet {
    /// The set of the given inclusive ranges (any order, may overlap).
    pub(crate) fn from_ranges(ranges: impl IntoIterator<Item = (char, char)>) -> CharSet {
        let mut list: Vec<(u32, u32)> = ranges
            .into_iter()
            .filter(|(lo, hi)| lo <= hi)
            .map(|(lo, hi)| (u32::from(lo), u32::from(hi)))
            .collect();
        list.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(list.len());
        for (lo, hi) in list {
            match merged.last_mut() {
                Some((_, end)) if lo <= end.saturating_add(1) => *end = (*end).max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        CharSet {
            ranges: merged
                .into_iter()
                .map(|(lo, hi)| (scalar(lo), scalar(hi)))
                .collect(),
        }
    }

    /// This set without the characters of `other`.
    pub(crate) fn minus(&self, other: &CharSet) -> CharSet {
        let mut out = Vec::new();
        for &(lo, hi) in &self.ranges {
            let mut pieces = vec![(u32::from(lo), u32::from(hi))];
            for &(olo, ohi) in &other.ranges {
                let (olo, ohi) = (u32::from(olo), u32::from(ohi));
                pieces = pieces
                    .into_iter()
                    .flat_map(|(a, b)| {
                        let mut keep = Vec::new();
                        if olo > a {
                            keep.push((a, b.min(olo - 1)));
                        }
                        if ohi < b {
                            keep.push((a.max(ohi + 1), b));
                        }
                        keep.into_iter().filter(|(x, y)| x <= y)
                    })
                    .collect();
            }
            out.extend(pieces);
        }
        CharSet::from_ranges(
            out.into_iter()
                .flat_map(|(a, b)| split_surrogates(a, b))
                .map(|(a, b)| (scalar(a), scalar(b))),
        )
    }

    /// Whether `c` is in the set.
    #[cfg(test)]
    pub(crate) fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
    }

    /// The UTF-8 encodings of the set's characters; `None` for the empty set.
    pub(crate) fn to_expr(&self) -> Option<Expr> {
        let mut single = ByteClass::EMPTY;
        let mut alternatives = Vec::new();
        for &(lo, hi) in &self.ranges {
            for seq in sequences(u32::from(lo), u32::from(hi)) {
                if let [(a, b)] = seq.as_slice() {
                    single.add_range(*a, *b);
                    continue;
                }
                alternatives.push(byte_sequence(&seq));
            }
        }
        let mut all: Vec<Expr> = Expr::class(single).into_iter().collect();
        all.extend(alternatives);
        Expr::choice(all)
    }
}

/// The sequence of the byte ranges, runs of single bytes joined into one string.
fn byte_sequence(seq: &[(u8, u8)]) -> Expr {
    let mut items = Vec::new();
    let mut run = Vec::new();
    for &(a, b) in seq {
        if a == b {
            run.push(a);
            continue;
        }
        if !run.is_empty() {
            items.push(Expr::bytes(std::mem::take(&mut run)));
        }
        items.push(Expr::class(ByteClass::range(a, b)).expect("a non-empty range"));
    }
    if !run.is_empty() {
        items.push(Expr::bytes(run));
    }
    Expr::seq(items)
}

/// The scalar value `v` (callers only pass values outside the surrogate block).
fn scalar(v: u32) -> char {
    char::from_u32(v).expect("not a surrogate")
}

/// `[a, b]` without the surrogate block.
fn split_surrogates(a: u32, b: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    if a < 0xD800 {
        out.push((a, b.min(0xD7FF)));
    }
    if b > 0xDFFF {
        out.push((a.max(0xE000), b));
    }
    out
}

/// The last code point encoded with 1, 2, 3 and 4 bytes.
const LENGTH_ENDS: [u32; 4] = [0x7F, 0x7FF, 0xFFFF, 0x10FFFF];

/// The byte-range sequences whose concatenations are exactly the encodings of `[lo, hi]`
/// (a range of scalar values).
fn sequences(lo: u32, hi: u32) -> Vec<Vec<(u8, u8)>> {
    let mut out = Vec::new();
    let mut stack = vec![(lo, hi)];
    while let Some((lo, hi)) = stack.pop() {
        // One encoded length at a time.
        if let Some(&end) = LENGTH_ENDS.iter().find(|&&end| lo <= end && end < hi) {
            stack.push((end + 1, hi));
            stack.push((lo, end));
            continue;
        }
        let len = LENGTH_ENDS
            .iter()
            .position(|&end| hi <= end)
            .expect("<= U+10FFFF")
            + 1;
        // Split until every continuation byte below some position is free (0x80..=0xBF in
        // both bounds), so the run is a product of byte ranges.
        let mut split = false;
        for free in 1..len {
            let mask = (1u32 << (6 * free)) - 1;
            if lo & !mask != hi & !mask {
                if lo & mask != 0 {
                    stack.push(((lo | mask) + 1, hi));
                    stack.push((lo, lo | mask));
                    split = true;
                    break;
                }
                if hi & mask != mask {
                    stack.push((hi & !mask, hi));
                    stack.push((lo, (hi & !mask) - 1));
                    split = true;
                    break;
                }
            }
        }
        if split {
            continue;
        }
        let (mut a, mut b) = ([0u8; 4], [0u8; 4]);
        let a = scalar(lo).encode_utf8(&mut a).as_bytes().to_vec();
        let b = scalar(hi).encode_utf8(&mut b).as_bytes().to_vec();
        out.push(a.into_iter().zip(b).collect());
    }
    // The stack pops the lower half first, so `out` is already in code point order.
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::Recognizer;
    use crate::GrammarBuilder;

    #[test]
    fn sequences_cover_exactly_the_range() {
        for (lo, hi) in [
            (0u32, 0x10FFFF),
            (0x7F, 0x80),
            (0x7FF, 0x800),
            (0xFFF, 0x1001),
            (0xE000, 0xFFFD),
            (0x10000, 0x10FFFF),
            (0x3A9, 0x3B1),
        ] {
            for set in [CharSet::from_ranges(
                split_surrogates(lo, hi)
                    .into_iter()
                    .map(|(a, b)| (scalar(a), scalar(b))),
            )] {
                let seqs: Vec<Vec<(u8, u8)>> = set
                    .ranges
                    .iter()
                    .flat_map(|&(a, b)| sequences(u32::from(a), u32::from(b)))
                    .collect();
                let matches = |bytes: &[u8]| {
                    seqs.iter().any(|s| {
                        s.len() == bytes.len()
                            && s.iter().zip(bytes).all(|(&(a, b), &x)| a <= x && x <= b)
                    })
                };
                for v in (0..=0x10FFFFu32).step_by(7).chain([lo, hi, 0x10FFFF]) {
                    let Some(c) = char::from_u32(v) else { continue };
                    let mut buf = [0u8; 4];
                    assert_eq!(
                        matches(c.encode_utf8(&mut buf).as_bytes()),
                        set.contains(c),
                        "{v:#x} in {lo:#x}..={hi:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn expressions_reject_invalid_utf8() {
        let set =
            CharSet::from_ranges([('\0', char::MAX)]).minus(&CharSet::from_ranges([('b', 'b')]));
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        b.define(root, set.to_expr().unwrap());
        let r = Recognizer::new(&b.build(root).unwrap()).unwrap();
        assert!(r.accepts(b"a"));
        assert!(!r.accepts(b"b"));
        assert!(r.accepts("é".as_bytes()));
        assert!(r.accepts("\u{10FFFF}".as_bytes()));
        for bad in [
            &[0xC0u8, 0x80][..],
            &[0xED, 0xA0, 0x80],
            &[0x80],
            &[0xF4, 0x90, 0x80, 0x80],
        ] {
            assert!(!r.accepts(bad), "{bad:?}");
        }
    }
}
