//! [`Alphabet`]: the bytes a grammar never tells apart, grouped into classes.
//!
//! A [`crate::within::StaticWalk`] step reads its byte only through byte-edge ranges, FIRST
//! of rules (descents, counted items) and FOLLOW of rules (exits). Two bytes inside every such
//! range and set alike, or outside alike, give the same step from every frontier: the same
//! configurations and the same `left`. The alphabet is the coarsest partition of the 256
//! bytes with that property over the whole grammar, so the classification walk computes one
//! step per (row, class) and reuses it for every byte of the class.
//!
//! # Invariants
//!
//! - `class_of[b]` is `b`'s class; classes are numbered `0..len` by their smallest byte.
//! - `members[c]` lists class `c`'s bytes in increasing order; the lists partition `0..=255`.
//! - Two bytes share a class iff every byte-edge range, FIRST set and FOLLOW set of the
//!   grammar contains both or neither.

use foldhash::HashSet;
use sieve_ir::ByteClass;

use crate::grammar::EarleyGrammar;

/// The byte classes of a grammar (module docs).
#[derive(Clone, Debug)]
pub(crate) struct Alphabet {
    class_of: [u8; 256],
    members: Vec<Vec<u8>>,
}

impl Alphabet {
    /// The alphabet of `g`'s byte edges and of its FIRST and FOLLOW sets.
    pub(crate) fn of(g: &EarleyGrammar) -> Alphabet {
        // Each distinct range and set refines once. A grammar has tens of thousands of byte
        // edges but a few hundred distinct ranges: a bit per (lo, hi) pair finds them without
        // sorting the edges.
        let mut seen_range = vec![0u64; 1 << 10];
        let mut refiner = Refiner::new();
        for e in &g.byte_edges {
            let pair = usize::from(e.lo) << 8 | usize::from(e.hi);
            let (word, bit) = (pair / 64, 1u64 << (pair % 64));
            if seen_range[word] & bit == 0 {
                seen_range[word] |= bit;
                refiner.split(e.lo..=e.hi);
            }
        }
        let mut seen_set: HashSet<&ByteClass> = HashSet::default();
        for set in g.first.iter().chain(&g.follow) {
            if seen_set.insert(set) {
                refiner.split(set.iter());
            }
        }
        refiner.renumber();
        let id = refiner.id;
        // Renumber by smallest byte.
        let mut renumber = [u16::MAX; 256];
        let mut class_of = [0u8; 256];
        let mut members: Vec<Vec<u8>> = Vec::new();
        for b in 0..=255u8 {
            let old = &mut renumber[id[b as usize] as usize];
            if *old == u16::MAX {
                *old = members.len() as u16;
                members.push(Vec::new());
            }
            class_of[b as usize] = *old as u8;
            members[*old as usize].push(b);
        }
        Alphabet { class_of, members }
    }

    /// The bytes of `byte`'s class, `byte` among them.
    pub(crate) fn class(&self, byte: u8) -> &[u8] {
        &self.members[self.class_of[byte as usize] as usize]
    }

    /// The number of classes.
    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }
}

impl EarleyGrammar {
    /// The grammar's byte classes, computed on first use.
    pub(crate) fn alphabet(&self) -> &Alphabet {
        self.alphabet.get_or_init(|| Alphabet::of(self))
    }
}

/// A partition of the bytes refined one set at a time, at a cost per set of its own bytes:
/// the bytes of a set move to fresh ids, one per class they came from, and the bytes outside
/// keep theirs, so every class is cut into its part inside and its part outside.
struct Refiner {
    /// `id[b]`: the class of byte `b`, below [`Refiner::MAX_IDS`].
    id: [u16; 256],
    /// The next fresh id.
    next: u16,
    /// `fresh[old]`: the id the current set's bytes of class `old` move to, valid where
    /// `stamp[old]` is the current set's number.
    fresh: Vec<u16>,
    stamp: Vec<u32>,
    set: u32,
}

impl Refiner {
    /// Ids in use at any time; past `MAX_IDS - 256` they are renumbered below 256 (a set
    /// takes at most 256 fresh ones).
    const MAX_IDS: usize = 1024;

    fn new() -> Refiner {
        Refiner {
            id: [0; 256],
            next: 1,
            fresh: vec![0; Refiner::MAX_IDS],
            stamp: vec![0; Refiner::MAX_IDS],
            set: 0,
        }
    }

    /// Cuts every class into its bytes in `bytes` and the others.
    fn split(&mut self, bytes: impl Iterator<Item = u8>) {
        if usize::from(self.next) > Refiner::MAX_IDS - 256 {
            self.renumber();
        }
        self.set += 1;
        for b in bytes {
            let old = usize::from(self.id[usize::from(b)]);
            if self.stamp[old] != self.set {
                self.stamp[old] = self.set;
                self.fresh[old] = self.next;
                self.next += 1;
            }
            self.id[usize::from(b)] = self.fresh[old];
        }
    }

    /// The same partition with ids below 256.
    fn renumber(&mut self) {
        let mut new = vec![u16::MAX; Refiner::MAX_IDS];
        let mut next = 0;
        for slot in &mut self.id {
            let old = &mut new[usize::from(*slot)];
            if *old == u16::MAX {
                *old = next;
                next += 1;
            }
            *slot = *old;
        }
        self.next = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes are exactly the sets of bytes with the same membership in every range,
    /// FIRST and FOLLOW set, on every shipped grammar.
    #[test]
    fn classes_are_the_bytes_no_range_or_set_tells_apart() {
        let mut grammars = 0;
        for path in sieve_testkit::grammar_files() {
            let grammar = sieve_testkit::compile_file(&path);
            let Ok(normalized) =
                sieve_normalize::normalize(&grammar, &sieve_normalize::Config::default())
            else {
                continue;
            };
            let Ok(fsms) = sieve_fsm::Builder::new(sieve_fsm::Config::new()).build(&normalized)
            else {
                continue;
            };
            let g = EarleyGrammar::new(&fsms, false, crate::Config::default());
            let alphabet = Alphabet::of(&g);
            let signature = |b: u8| -> Vec<bool> {
                g.byte_edges
                    .iter()
                    .map(|e| e.lo <= b && b <= e.hi)
                    .chain(g.first.iter().chain(&g.follow).map(|s| s.contains(b)))
                    .collect()
            };
            let signatures: Vec<Vec<bool>> = (0..=255u8).map(signature).collect();
            for a in 0..=255u8 {
                assert!(alphabet.class(a).contains(&a));
                for b in 0..=255u8 {
                    let same = alphabet.class(a).contains(&b);
                    assert_eq!(
                        same,
                        signatures[a as usize] == signatures[b as usize],
                        "{}: bytes {a} and {b}",
                        path.display()
                    );
                }
            }
            assert!(alphabet.len() <= 256);
            grammars += 1;
        }
        assert!(grammars > 5, "only {grammars} grammars checked");
    }
}
