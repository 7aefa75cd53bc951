//! [`KeptRegions`]: the regions of one trie by byte class, at most [`MAX_CLASS_REGIONS`] of
//! them, the least recently used dropped past it.
//!
//! # Invariants
//!
//! - At most [`MAX_CLASS_REGIONS`] entries, with distinct classes.
//! - Each entry's stamp is the clock at its last request; the clock only grows, so the entry
//!   with the smallest stamp is the least recently used.
//! - A dropped region lives on in the hands of whoever holds its [`Arc`]; a later request
//!   for its class builds it again.

use std::sync::{Arc, Mutex, PoisonError};

use super::MAX_CLASS_REGIONS;

/// Regions by byte class (module docs). A clone starts empty.
#[derive(Debug)]
pub(super) struct KeptRegions<R> {
    kept: Mutex<Kept<R>>,
}

#[derive(Debug)]
struct Kept<R> {
    /// (class, region, stamp of its last request).
    entries: Vec<([u64; 4], Arc<R>, u64)>,
    clock: u64,
}

impl<R> Default for KeptRegions<R> {
    fn default() -> KeptRegions<R> {
        KeptRegions {
            kept: Mutex::new(Kept {
                entries: Vec::new(),
                clock: 0,
            }),
        }
    }
}

impl<R> Clone for KeptRegions<R> {
    fn clone(&self) -> KeptRegions<R> {
        KeptRegions::default()
    }
}

impl<R> KeptRegions<R> {
    /// The region of `class`, built by `build` (under the lock: requests for other classes
    /// wait rather than build the same region twice) when it is not kept, dropping the least
    /// recently used one when [`MAX_CLASS_REGIONS`] are.
    pub(super) fn get_or_build(&self, class: [u64; 4], build: impl FnOnce() -> R) -> Arc<R> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.clock += 1;
        let now = kept.clock;
        if let Some(entry) = kept.entries.iter_mut().find(|entry| entry.0 == class) {
            entry.2 = now;
            return entry.1.clone();
        }
        if kept.entries.len() >= MAX_CLASS_REGIONS {
            let oldest = (0..kept.entries.len())
                .min_by_key(|&i| kept.entries[i].2)
                .expect("a full cache has entries");
            kept.entries.swap_remove(oldest);
        }
        let region = Arc::new(build());
        kept.entries.push((class, region.clone(), now));
        region
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(n: usize) -> [u64; 4] {
        [n as u64, 0, 0, 1]
    }

    /// Past the limit every class still gets a region; the least recently requested one is
    /// the one dropped, and a request for it builds it again.
    #[test]
    fn the_least_recently_used_region_makes_room() {
        let kept: KeptRegions<usize> = KeptRegions::default();
        let mut builds = 0;
        let mut first = Vec::new();
        for n in 0..MAX_CLASS_REGIONS {
            first.push(kept.get_or_build(class(n), || {
                builds += 1;
                n
            }));
        }
        // Class 0 is requested again, so class 1 is now the least recently used.
        assert!(Arc::ptr_eq(
            &kept.get_or_build(class(0), || unreachable!()),
            &first[0]
        ));
        let extra = kept.get_or_build(class(MAX_CLASS_REGIONS), || {
            builds += 1;
            MAX_CLASS_REGIONS
        });
        assert_eq!(*extra, MAX_CLASS_REGIONS);
        assert_eq!(builds, MAX_CLASS_REGIONS + 1);
        assert!(Arc::ptr_eq(
            &kept.get_or_build(class(0), || unreachable!()),
            &first[0]
        ));
        assert!(Arc::ptr_eq(
            &kept.get_or_build(class(2), || unreachable!()),
            &first[2]
        ));
        let rebuilt = kept.get_or_build(class(1), || {
            builds += 1;
            1
        });
        assert!(!Arc::ptr_eq(&rebuilt, &first[1]), "class 1 was dropped");
        assert_eq!((*rebuilt, builds), (1, MAX_CLASS_REGIONS + 2));
        assert!(kept.kept.lock().expect("not poisoned").entries.len() <= MAX_CLASS_REGIONS);
    }
}
