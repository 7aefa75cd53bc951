//! [`TokenCache`]: one lazily computed [`Classification`] per backend key.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use sieve_backend::{Backend, Classification, LimitError, Recognizer};
use sieve_vocab::TokenTrie;

use crate::walk;

/// Figures about a cache, for tests, tuning and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Keys whose classification is stored.
    pub entries: usize,
    /// Heap bytes of the stored classifications.
    pub bytes: usize,
}

/// One lazily computed [`Classification`] per key of a backend, against one trie.
#[derive(Debug)]
pub struct TokenCache {
    entries: Vec<OnceLock<Classification>>,
    /// Bytes of the entries stored so far, and the most that may be stored.
    used: AtomicUsize,
    budget: usize,
}

impl TokenCache {
    /// An empty cache for a backend with `key_count` keys, keeping at most `budget` bytes of
    /// entries.
    pub fn new(key_count: usize, budget: usize) -> TokenCache {
        TokenCache {
            entries: (0..key_count).map(|_| OnceLock::new()).collect(),
            used: AtomicUsize::new(0),
            budget,
        }
    }

    /// Whether `key`'s classification is stored.
    pub fn is_cached(&self, key: u32) -> bool {
        self.entries[key as usize].get().is_some()
    }

    /// The entry of `key`: stored on first use while the budget lasts, computed afresh (and
    /// not kept) after that.
    pub fn get<B: Backend + ?Sized>(
        &self,
        backend: &B,
        trie: &TokenTrie,
        key: u32,
    ) -> Cow<'_, Classification> {
        let slot = &self.entries[key as usize];
        if let Some(entry) = slot.get() {
            return Cow::Borrowed(entry);
        }
        let entry = backend.classify(key, trie);
        let size = entry.heap_bytes();
        let reserved = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                (used + size <= self.budget).then_some(used + size)
            })
            .is_ok();
        if !reserved {
            return Cow::Owned(entry);
        }
        if slot.set(entry).is_err() {
            // Another thread stored this key first; give the reservation back.
            self.used.fetch_sub(size, Ordering::Relaxed);
        }
        Cow::Borrowed(slot.get().expect("set above or by another thread"))
    }

    /// Classifies `keys` now (ahead of time), skipping those already stored.
    pub fn precompute<B: Backend + ?Sized>(
        &self,
        backend: &B,
        trie: &TokenTrie,
        keys: impl IntoIterator<Item = u32>,
    ) {
        for key in keys {
            if !self.is_cached(key) {
                self.get(backend, trie, key);
            }
        }
    }

    /// Figures about the stored entries.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            entries: self.entries.iter().filter(|e| e.get().is_some()).count(),
            bytes: self.used.load(Ordering::Relaxed),
        }
    }

    /// Sets the bit of every text token of `trie` that `recognizer` accepts in full (see the
    /// crate docs). Leaves `recognizer` as it found it, also on error.
    ///
    /// # Errors
    /// The recogniser's [`LimitError`]; the mask is then partly filled.
    pub fn fill_text_tokens<B: Backend + ?Sized>(
        &self,
        backend: &B,
        recognizer: &mut B::Recognizer,
        trie: &TokenTrie,
        mask: &mut [u32],
    ) -> Result<(), LimitError> {
        let mut keys = Vec::new();
        recognizer.keys(&mut keys);
        keys.sort_unstable();
        keys.dedup();
        let mut uncertain: Vec<Range<u32>> = Vec::new();
        for key in keys {
            let entry = self.get(backend, trie, key);
            entry.accepted.or_into(mask);
            uncertain.extend_from_slice(&entry.uncertain);
        }
        walk::walk(recognizer, trie, &walk::merge(uncertain), mask)
    }
}
