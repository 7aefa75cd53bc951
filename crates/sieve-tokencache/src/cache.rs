//! [`TokenCache`]: one lazily computed [`Classification`] per backend key.
//!
//! Bare keys (a state without context) live in a dense table; keys with a context in a map.
//! A step first uses each state's bare classification; only a state whose bare
//! classification leaves more than [`REFINE_ABOVE`] tokens uncertain (more than
//! [`REFINE_REPEATED_ABOVE`] once a step has met it before) is looked up with the
//! contexts the recogniser reports for it — all of them, as the seam's contract requires —
//! so a rule shared by many callers (a JSON string) is classified once, and a rule whose
//! tokens run on into its caller (a statement list in a C block) once per caller.

use foldhash::{HashMap, HashMapExt};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use sieve_backend::{Backend, Classification, Key, LimitError, Recognizer};
use sieve_vocab::TokenTrie;

use crate::store::SharedStore;
use crate::walk;

/// A state whose bare classification leaves more uncertain tokens than this is classified
/// per context the first time a step meets it: walking an uncertain token with the
/// recogniser costs about as much as a classification spends on a few thousand trie nodes.
pub const REFINE_ABOVE: usize = 256;

/// One that leaves more than this is classified per context from the second step that meets
/// it on: a state met again is usually met in the same context (the characters of one
/// string), and its exits — about 150 tokens after a JSON string with flexible whitespace —
/// were walked at every character; a state met once (a statement of a C block) is cheaper
/// walked once. Measured on the peer harness's walks (instructions of every mask, three
/// walks) against 256: json_generic −45 %, tool_call_qwen_structtag −36 %, code_c_subset
/// −10 %; refining at once above 32 instead made the 99th-percentile step of a stream of
/// 1,000 JSONSchemaBench requests 20 % slower.
pub const REFINE_REPEATED_ABOVE: usize = 32;

/// Figures about a cache, for tests, tuning and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Keys whose classification is stored (bare and with context).
    pub entries: usize,
    /// Heap bytes of the stored classifications.
    pub bytes: usize,
    /// Classifications computed by this cache (bare and with context; not those found in the
    /// shared store).
    pub classified: u64,
    /// Uncertain tokens fed to the recogniser by the mask walks so far.
    pub walked: u64,
}

/// One lazily computed [`Classification`] per key of a backend, against one trie.
#[derive(Debug)]
pub struct TokenCache {
    bare: Vec<OnceLock<Arc<Classification>>>,
    /// Where bare classifications are shared with other grammars of the same tokenizer.
    store: Option<Arc<SharedStore>>,
    with_context: RwLock<HashMap<Key, Arc<Classification>>>,
    /// Bytes of the entries stored so far, and the most that may be stored.
    used: AtomicUsize,
    budget: usize,
    refine_above: usize,
    refine_repeated_above: usize,
    /// Per state, whether a step has walked its uncertain tokens (see [`REFINE_REPEATED_ABOVE`]).
    walked_before: Vec<AtomicBool>,
    classified: std::sync::atomic::AtomicU64,
    walked: std::sync::atomic::AtomicU64,
}

impl TokenCache {
    /// An empty cache for a backend with `state_count` states, keeping at most `budget` bytes
    /// of entries.
    pub fn new(state_count: usize, budget: usize) -> TokenCache {
        TokenCache::with_refinement(state_count, budget, REFINE_ABOVE)
    }

    /// Like [`TokenCache::new`], with the number of uncertain tokens above which a state is
    /// classified per context at once instead of [`REFINE_ABOVE`] (0: always, `usize::MAX`:
    /// never; below `usize::MAX`, a state met again is refined above the lesser of it and
    /// [`REFINE_REPEATED_ABOVE`]). Masks are the same either way, only the work differs.
    pub fn with_refinement(state_count: usize, budget: usize, refine_above: usize) -> TokenCache {
        TokenCache {
            bare: (0..state_count).map(|_| OnceLock::new()).collect(),
            store: None,
            with_context: RwLock::new(HashMap::new()),
            used: AtomicUsize::new(0),
            budget,
            refine_above,
            refine_repeated_above: if refine_above == usize::MAX {
                usize::MAX
            } else {
                refine_above.min(REFINE_REPEATED_ABOVE)
            },
            walked_before: (0..state_count).map(|_| AtomicBool::new(false)).collect(),
            classified: std::sync::atomic::AtomicU64::new(0),
            walked: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Shares bare classifications through `store` (see [`SharedStore`]): looked up there
    /// before classifying, put there after.
    pub fn sharing(mut self, store: Arc<SharedStore>) -> TokenCache {
        self.store = Some(store);
        self
    }

    /// Whether `state`'s bare classification is stored.
    pub fn is_cached(&self, state: u32) -> bool {
        self.bare[state as usize].get().is_some()
    }

    /// Reserves `size` bytes of the budget.
    fn reserve(&self, size: usize) -> bool {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                (used + size <= self.budget).then_some(used + size)
            })
            .is_ok()
    }

    /// The bare classification of `state`: from this cache, else from the shared store,
    /// else computed (and put in the store); kept here while the budget lasts, used once
    /// and dropped after that.
    pub fn get<B: Backend + ?Sized>(
        &self,
        backend: &B,
        trie: &TokenTrie,
        state: u32,
    ) -> Arc<Classification> {
        let slot = &self.bare[state as usize];
        if let Some(entry) = slot.get() {
            return entry.clone();
        }
        let fingerprint = self
            .store
            .as_ref()
            .and_then(|store| Some((store, backend.fingerprint(state)?)));
        let shared = fingerprint.and_then(|(store, f)| store.get(&f));
        let entry = match shared {
            Some(entry) => entry,
            None => {
                self.classified.fetch_add(1, Ordering::Relaxed);
                let entry = Arc::new(backend.classify(Key::bare(state), trie));
                match fingerprint {
                    Some((store, f)) => store.insert(f, entry),
                    None => entry,
                }
            }
        };
        let size = entry.heap_bytes();
        if self.reserve(size) && slot.set(entry.clone()).is_err() {
            // Another thread stored this state first; give the reservation back.
            self.used.fetch_sub(size, Ordering::Relaxed);
        }
        entry
    }

    /// The classification of a key with a context, kept like [`TokenCache::get`]'s.
    fn get_with_context<B: Backend + ?Sized>(
        &self,
        backend: &B,
        trie: &TokenTrie,
        key: Key,
    ) -> Arc<Classification> {
        if let Some(entry) = self
            .with_context
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
        {
            return entry.clone();
        }
        self.classified.fetch_add(1, Ordering::Relaxed);
        let entry = Arc::new(backend.classify(key, trie));
        if self.reserve(entry.heap_bytes()) {
            let mut map = self
                .with_context
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match map.entry(key) {
                std::collections::hash_map::Entry::Occupied(stored) => {
                    self.used.fetch_sub(entry.heap_bytes(), Ordering::Relaxed);
                    return stored.get().clone();
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(entry.clone());
                }
            }
        }
        entry
    }

    /// Classifies the bare keys of every scannable state now (ahead of time), costliest
    /// first by [`Backend::cost_hint`], across rayon's threads when `parallel`, and stops
    /// starting new ones once `deadline` has passed. Returns how many states were
    /// classified (or found shared).
    pub fn precompute<B: Backend + ?Sized>(
        &self,
        backend: &B,
        trie: &TokenTrie,
        deadline: Option<std::time::Instant>,
        parallel: bool,
    ) -> usize {
        let mut states: Vec<u32> = (0..backend.state_count() as u32)
            .filter(|&s| backend.is_scannable(s) && !self.is_cached(s))
            .collect();
        states.sort_by_key(|&s| std::cmp::Reverse(backend.cost_hint(s)));
        let done = AtomicUsize::new(0);
        let one = |&state: &u32| {
            if deadline.is_none_or(|d| std::time::Instant::now() < d) {
                self.get(backend, trie, state);
                done.fetch_add(1, Ordering::Relaxed);
            }
        };
        if parallel {
            use rayon::prelude::*;
            states.par_iter().for_each(one);
        } else {
            states.iter().for_each(one);
        }
        done.into_inner()
    }

    /// Figures about the stored entries.
    pub fn stats(&self) -> CacheStats {
        let contexts = self
            .with_context
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len();
        CacheStats {
            entries: self.bare.iter().filter(|e| e.get().is_some()).count() + contexts,
            bytes: self.used.load(Ordering::Relaxed),
            classified: self.classified.load(Ordering::Relaxed),
            walked: self.walked.load(Ordering::Relaxed),
        }
    }

    /// Whether a step that meets `state`, whose bare classification leaves `uncertain` tokens
    /// uncertain, classifies it per context: above [`TokenCache::with_refinement`]'s
    /// threshold at once, above the repeated threshold from the second step that meets it on.
    fn refines(&self, state: u32, uncertain: usize) -> bool {
        if uncertain > self.refine_above {
            return true;
        }
        uncertain > self.refine_repeated_above
            && self.walked_before[state as usize].swap(true, Ordering::Relaxed)
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
        let mut states = Vec::new();
        recognizer.states(&mut states);
        states.sort_unstable();
        states.dedup();
        let mut uncertain: Vec<Range<u32>> = Vec::new();
        let mut keys = Vec::new();
        for state in states {
            let bare = self.get(backend, trie, state);
            if self.refines(state, bare.uncertain_count()) {
                keys.clear();
                recognizer.contexts(state, &mut keys);
                keys.sort_unstable();
                keys.dedup();
                if keys.iter().all(Key::has_context) {
                    for &key in &keys {
                        let key = backend.canonical_key(key, trie.max_token_len());
                        let entry = self.get_with_context(backend, trie, key);
                        entry.accepted.or_into(mask);
                        uncertain.extend_from_slice(&entry.uncertain);
                    }
                    continue;
                }
            }
            bare.accepted.or_into(mask);
            uncertain.extend_from_slice(&bare.uncertain);
        }
        let fed = walk::walk(
            recognizer,
            trie,
            &sieve_backend::merge_ranges(uncertain),
            mask,
        )?;
        self.walked.fetch_add(fed as u64, Ordering::Relaxed);
        Ok(())
    }
}
