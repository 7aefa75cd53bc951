//! [`SharedStore`]: bare classifications shared by every grammar compiled against one
//! tokenizer, keyed by [`Fingerprint`] (seed xgrammar2 §3.3, the cross-grammar cache).
//!
//! # Invariants
//!
//! - An entry is the bare classification of a key with that fingerprint against the trie of
//!   the store's tokenizer; the backend's fingerprint contract makes it the classification
//!   of every key with that fingerprint, in any grammar.
//! - The bytes held are at most the budget after every insertion: the least recently used
//!   entries are evicted first. A classification larger than the budget is not kept.
//! - Thread-safe; lookups take one lock briefly, classifications run outside it.

use foldhash::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use sieve_backend::{Classification, Fingerprint};

/// Counters of a [`SharedStore`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreStats {
    /// Lookups that found an entry.
    pub hits: u64,
    /// Lookups that found none.
    pub misses: u64,
    /// Entries evicted to stay within the budget.
    pub evictions: u64,
    /// Entries held now.
    pub entries: usize,
    /// Heap bytes of the entries held now.
    pub bytes: usize,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<Fingerprint, (Arc<Classification>, u64)>,
    clock: u64,
    stats: StoreStats,
}

/// Classifications shared across grammars, bounded in bytes.
#[derive(Debug)]
pub struct SharedStore {
    inner: Mutex<Inner>,
    budget: usize,
}

impl SharedStore {
    /// An empty store keeping at most `budget` bytes of classifications.
    pub fn new(budget: usize) -> SharedStore {
        SharedStore {
            inner: Mutex::new(Inner::default()),
            budget,
        }
    }

    /// The most bytes kept.
    pub fn budget(&self) -> usize {
        self.budget
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entry for `fingerprint`, if held (counted as a hit or a miss).
    pub fn get(&self, fingerprint: &Fingerprint) -> Option<Arc<Classification>> {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        match inner.entries.get_mut(fingerprint) {
            Some((entry, used)) => {
                *used = now;
                let entry = entry.clone();
                inner.stats.hits += 1;
                Some(entry)
            }
            None => {
                inner.stats.misses += 1;
                None
            }
        }
    }

    /// Keeps `entry` for `fingerprint` (another thread's entry, if one arrived first, wins
    /// and is returned), evicting the least recently used entries past the budget.
    pub fn insert(
        &self,
        fingerprint: Fingerprint,
        entry: Arc<Classification>,
    ) -> Arc<Classification> {
        let size = entry.heap_bytes();
        if size > self.budget {
            return entry;
        }
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        if let Some((held, used)) = inner.entries.get_mut(&fingerprint) {
            *used = now;
            return held.clone();
        }
        inner.entries.insert(fingerprint, (entry.clone(), now));
        inner.stats.bytes += size;
        if inner.stats.bytes > self.budget {
            // Evict down to seven eighths of the budget, oldest first, so eviction scans are
            // amortised over many insertions.
            let target = self.budget / 8 * 7;
            let mut by_age: Vec<(u64, Fingerprint)> = inner
                .entries
                .iter()
                .map(|(f, (_, used))| (*used, *f))
                .collect();
            by_age.sort_unstable_by_key(|&(used, _)| used);
            for (_, victim) in by_age {
                if inner.stats.bytes <= target {
                    break;
                }
                if victim == fingerprint {
                    continue;
                }
                if let Some((gone, _)) = inner.entries.remove(&victim) {
                    inner.stats.bytes -= gone.heap_bytes();
                    inner.stats.evictions += 1;
                }
            }
        }
        inner.stats.entries = inner.entries.len();
        entry
    }

    /// The counters.
    pub fn stats(&self) -> StoreStats {
        let inner = self.lock();
        StoreStats {
            entries: inner.entries.len(),
            ..inner.stats
        }
    }
}
