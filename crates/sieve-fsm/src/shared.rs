//! [`AutomatonCache`]: rule automata shared by every grammar a process builds.
//!
//! A server compiles a new schema per request, and most rules of a JSON Schema grammar —
//! numbers, generic values, arrays of strings, the members of common objects — recur from
//! one schema to the next. The cache keeps the automaton of each rule [`Shape`] (a body up
//! to an order-preserving renaming of its references, see [`crate::memo`]) that a build
//! made, and later builds take it from there instead of running the subset construction
//! and minimisation again: XGrammar 2's cross-grammar cache (§3.3), keyed by the rule body
//! rather than by an FSM hash, since the body is what a build has before it builds.
//!
//! # Invariants
//!
//! - An entry is exactly what a build of that shape gives with the same [`crate::Config`]
//!   limits that affect the automaton (the DFA cap and minimisation); the key includes them.
//! - Memory is bounded: entries are counted in approximate heap bytes; past half the budget
//!   the current generation becomes the old one and the older is dropped, so the cache holds
//!   at most the budget and keeps what was used recently (a hit in the old generation moves
//!   the entry to the current one).

use std::sync::{Arc, Mutex};

use hashbrown::HashTable;

use crate::fsm::Fsm;
use crate::memo::{Shape, ShapeKey};

/// An entry: a shape's ranked tail (with its hash), the settings that shape its automaton
/// (the DFA state cap and whether it is minimised), and the automaton over ranks.
#[derive(Debug)]
struct Entry {
    key: ShapeKey,
    dfa_cap: usize,
    minimize: bool,
    fsm: Arc<Fsm>,
    /// Its approximate heap bytes ([`entry_bytes`]), measured once.
    bytes: usize,
}

impl Entry {
    /// Whether this entry is `shape`'s, built with these settings.
    fn is(&self, shape: &Shape<'_>, dfa_cap: usize, minimize: bool) -> bool {
        self.dfa_cap == dfa_cap && self.minimize == minimize && self.key.matches(shape)
    }
}

/// Rule automata shared across builds, within a byte budget (see the module docs).
#[derive(Debug)]
pub struct AutomatonCache {
    budget: usize,
    inner: Mutex<Generations>,
}

#[derive(Debug, Default)]
struct Generations {
    current: HashTable<Entry>,
    old: HashTable<Entry>,
    current_bytes: usize,
    stats: CacheStats,
}

/// Counters of an [`AutomatonCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Rule automata found in the cache.
    pub hits: u64,
    /// Rule automata built because the cache had none.
    pub misses: u64,
    /// Entries held now.
    pub entries: usize,
}

impl AutomatonCache {
    /// An empty cache that holds at most about `budget` bytes.
    pub fn new(budget: usize) -> AutomatonCache {
        AutomatonCache {
            budget,
            inner: Mutex::new(Generations::default()),
        }
    }

    /// The counters.
    pub fn stats(&self) -> CacheStats {
        let inner = self.lock();
        CacheStats {
            entries: inner.current.len() + inner.old.len(),
            ..inner.stats
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The ranked tail of `shape` and its automaton built with these settings, over ranks,
    /// if held.
    pub(crate) fn get(
        &self,
        shape: &Shape<'_>,
        dfa_cap: usize,
        minimize: bool,
    ) -> Option<(ShapeKey, Arc<Fsm>)> {
        let mut inner = self.lock();
        let hash = shape.hash();
        if let Some(entry) = inner.current.find(hash, |e| e.is(shape, dfa_cap, minimize)) {
            let found = (entry.key.clone(), entry.fsm.clone());
            inner.stats.hits += 1;
            return Some(found);
        }
        let Ok(slot) = inner
            .old
            .find_entry(hash, |e| e.is(shape, dfa_cap, minimize))
        else {
            inner.stats.misses += 1;
            return None;
        };
        let (entry, _) = slot.remove();
        inner.stats.hits += 1;
        let found = (entry.key.clone(), entry.fsm.clone());
        self.insert_locked(&mut inner, entry);
        Some(found)
    }

    /// Keeps `ranked`, the automaton over ranks of the ranked tail `key`, built with these
    /// settings.
    pub(crate) fn insert(&self, key: &ShapeKey, dfa_cap: usize, minimize: bool, ranked: Arc<Fsm>) {
        let entry = Entry {
            bytes: entry_bytes(key, &ranked),
            key: key.clone(),
            dfa_cap,
            minimize,
            fsm: ranked,
        };
        if entry.bytes > self.budget / 2 {
            return;
        }
        let mut inner = self.lock();
        self.insert_locked(&mut inner, entry);
    }

    fn insert_locked(&self, inner: &mut Generations, entry: Entry) {
        let bytes = entry.bytes;
        if inner.current_bytes + bytes > self.budget / 2 {
            inner.old = std::mem::take(&mut inner.current);
            inner.current_bytes = 0;
        }
        let hash = entry.key.hash();
        let same = |e: &Entry| {
            e.dfa_cap == entry.dfa_cap
                && e.minimize == entry.minimize
                && e.key.ranked() == entry.key.ranked()
        };
        if inner.current.find(hash, same).is_none() {
            inner.current.insert_unique(hash, entry, |e| e.key.hash());
            inner.current_bytes += bytes;
        }
    }
}

/// The approximate heap bytes of an entry: the key's expression nodes and the automaton.
fn entry_bytes(key: &ShapeKey, fsm: &Fsm) -> usize {
    const NODE: usize = 48;
    const STATE: usize = 8;
    const EDGE: usize = 12;
    key.ranked().size() * NODE + fsm.state_count() * STATE + fsm.edge_count() * EDGE + 64
}
