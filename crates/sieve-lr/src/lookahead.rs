//! [`La`]: a set of LR(1) look-ahead terminals, the 256 bytes and end of input.

/// The terminal number of end of input (bytes are `0..256`).
pub(crate) const EOF: usize = 256;

/// A set of terminals: bit `t` is terminal `t` (a byte, or [`EOF`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct La([u64; 5]);

impl La {
    pub(crate) const EMPTY: La = La([0; 5]);

    /// Only end of input.
    pub(crate) fn eof() -> La {
        let mut la = La::EMPTY;
        la.insert(EOF);
        la
    }

    pub(crate) fn insert(&mut self, t: usize) {
        self.0[t / 64] |= 1 << (t % 64);
    }

    pub(crate) fn insert_range(&mut self, lo: u8, hi: u8) {
        for b in lo..=hi {
            self.insert(usize::from(b));
        }
    }

    pub(crate) fn contains(&self, t: usize) -> bool {
        self.0[t / 64] & (1 << (t % 64)) != 0
    }

    /// Adds `other`; whether anything was added.
    pub(crate) fn union_with(&mut self, other: &La) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(other.0) {
            let next = *a | b;
            changed |= next != *a;
            *a = next;
        }
        changed
    }

    pub(crate) fn intersects(&self, other: &La) -> bool {
        self.0.iter().zip(other.0).any(|(a, b)| a & b != 0)
    }

    /// The smallest terminal in both sets.
    pub(crate) fn first_common(&self, other: &La) -> Option<usize> {
        self.0
            .iter()
            .zip(other.0)
            .enumerate()
            .find_map(|(w, (a, b))| {
                let both = a & b;
                (both != 0).then(|| w * 64 + both.trailing_zeros() as usize)
            })
    }
}
