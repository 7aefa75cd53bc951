//! A generation-stamped open-addressing set of items, reset in O(1) per Earley set.
//!
//! Most sets hold a handful of items, so the first [`SMALL`] items of a set are kept in a
//! short array searched linearly; the hash table only takes over (receiving them all) when a
//! set grows past that.
//!
//! # Invariants
//!
//! - While `len <= SMALL`, the set is exactly `small[..len]` and the table holds nothing of the
//!   current generation; after that, the table holds every item and `small` is stale.
//! - A slot belongs to the current set iff its stamp equals the current generation; starting
//!   a new set bumps the generation (clearing every stamp only when it wraps).
//! - The table is at most half full, so probing always ends; it grows by doubling and never
//!   shrinks, so after warm-up no byte allocates.

use crate::parser::Item;

#[derive(Clone, Copy, Debug)]
struct Slot {
    item: Item,
    stamp: u32,
}

/// See the module docs.
#[derive(Clone, Debug)]
pub(crate) struct Dedup {
    small: [Item; SMALL],
    slots: Vec<Slot>,
    generation: u32,
    len: usize,
}

/// How many items are searched linearly before the hash table is used.
const SMALL: usize = 16;

const EMPTY_SLOT: Slot = Slot {
    item: Item {
        state: 0,
        origin: 0,
        count: 0,
    },
    stamp: 0,
};

fn hash(item: Item) -> u64 {
    let a = u64::from(item.state) | (u64::from(item.origin) << 32);
    let mut h = a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(item.count);
    h = (h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 32)
}

impl Dedup {
    pub(crate) fn new() -> Dedup {
        Dedup {
            small: [EMPTY_SLOT.item; SMALL],
            slots: vec![EMPTY_SLOT; 64],
            generation: 1,
            len: 0,
        }
    }

    /// Forgets every item (O(1) except once per 2³² calls).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.fill(EMPTY_SLOT);
            self.generation = 1;
        }
    }

    /// How many items are in the set.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Adds `item`; `true` when it was not there yet.
    #[inline]
    pub(crate) fn insert(&mut self, item: Item) -> bool {
        if self.len < SMALL {
            if self.small[..self.len].contains(&item) {
                return false;
            }
            self.small[self.len] = item;
            self.len += 1;
            return true;
        }
        if self.len == SMALL {
            if self.small.contains(&item) {
                return false;
            }
            self.len = 0;
            for i in 0..SMALL {
                let old = self.small[i];
                self.insert_hashed(old);
            }
        }
        self.insert_hashed(item)
    }

    fn insert_hashed(&mut self, item: Item) -> bool {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = hash(item) as usize & mask;
        loop {
            let slot = &mut self.slots[i];
            if slot.stamp != self.generation {
                *slot = Slot {
                    item,
                    stamp: self.generation,
                };
                self.len += 1;
                return true;
            }
            if slot.item == item {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let bigger = vec![EMPTY_SLOT; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        let mask = self.slots.len() - 1;
        for slot in old.into_iter().filter(|s| s.stamp == self.generation) {
            let mut i = hash(slot.item) as usize & mask;
            while self.slots[i].stamp == self.generation {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(state: u32, origin: u32, count: u32) -> Item {
        Item {
            state,
            origin,
            count,
        }
    }

    #[test]
    fn inserts_dedupe_and_clear_resets() {
        let mut d = Dedup::new();
        for round in 0..3 {
            for i in 0..1000 {
                assert!(d.insert(item(i, round, i % 7)));
            }
            for i in 0..1000 {
                assert!(!d.insert(item(i, round, i % 7)));
            }
            assert!(d.insert(item(0, round, 99)));
            assert_eq!(d.len(), 1001);
            d.clear();
            assert_eq!(d.len(), 0);
        }
    }

    #[test]
    fn generation_wrap_clears_stamps() {
        let mut d = Dedup::new();
        d.generation = u32::MAX;
        assert!(d.insert(item(1, 2, 3)));
        d.clear();
        assert_eq!(d.generation, 1);
        assert!(d.insert(item(1, 2, 3)));
    }
}
