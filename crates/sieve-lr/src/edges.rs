//! Aggregated edges (Pre³'s prefix-conditioned edges): the net effect of one byte's whole
//! reduction chain and shift, keyed by the top frames the chain reads, computed on first use
//! and memoised in a bounded table shared by every parser of the grammar.
//!
//! # Keys
//!
//! An [`EdgeKey`] is the byte's terminal class and the *configuration* of the top
//! [`DEPTH`] frames (fewer at the bottom of the stack): each frame's state and, per kernel
//! item, where its origin is — a frame of the configuration (its position) or outside it.
//! That is all a step reads as long as it does not reduce into a frame outside the
//! configuration; frames with more than [`PACKED`] kernel items have no key.
//!
//! # Edges
//!
//! An edge is computed by running [`step`] on a local stack holding only the configuration,
//! with the outside origins and the bottom frame's parent symbolic (at or above
//! [`SYMBOLIC`], which the step treats as unknown). A step that never reads a symbolic value
//! is exactly the step the parser takes on any stack with that configuration on top, so the
//! frames and origins it appends, with their references mapped back (configuration
//! positions to the parser's frames, symbols to the origins or parent they stand for, new
//! frames to the arena's end), are exactly what the step-by-step path appends. A step that
//! would read outside the configuration, or run out of fuel, is recorded as
//! [`Edge::Step`]: the parser takes the step-by-step path. Rejection is an edge too.
//!
//! # Cycles
//!
//! A chain cannot revisit a configuration: the step is deterministic, so a revisit would
//! repeat forever, reducing in a loop without consuming — a derivation `A ⇒⁺ A`. Such a
//! grammar is ambiguous, never LR(1), and its build fails with a conflict. The fuel bound
//! stands guard anyway: a chain out of fuel is never an edge.
//!
//! # Invariants
//!
//! - The table holds at most its capacity of edges; when full, new keys take the
//!   step-by-step path without computing an edge.
//! - Arena indices stay below [`SYMBOLIC`] (the parser takes the step-by-step path past it).

use std::collections::HashMap;
use std::hash::BuildHasher as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::machine::{step, Frame, Stack, Step, UNKNOWN};
use crate::tables::Tables;

/// The most frames a key holds (the top and the frames below it).
pub(crate) const DEPTH: usize = 4;
/// The most kernel items of a keyed frame (four bits of position each).
pub(crate) const PACKED: usize = 8;
/// The first symbolic reference: `SYMBOLIC + PACKED * i + k` is the origin of item `k` of
/// configuration frame `i` (from the top) lying outside the configuration. Everything at or
/// above it is unknown to [`step`].
pub(crate) const SYMBOLIC: u32 = u32::MAX - 64;

/// The number of independently locked shards.
const SHARDS: usize = 16;

/// The configuration of the top frames and the byte's class (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct EdgeKey {
    pub class: u16,
    pub len: u8,
    /// Per frame, top first: its state and its kernel origins' positions (four bits per
    /// item; `0` is outside the configuration).
    pub frames: [(u32, u32); DEPTH],
}

/// The net effect of a byte on a configuration.
#[derive(Debug)]
pub(crate) enum Edge {
    /// Take the step-by-step path (the chain reads below the configuration, or runs out of
    /// fuel).
    Step,
    /// The byte is not accepted.
    Rejected,
    /// The byte is shifted after the chain: append `frames` and `origins`, whose references
    /// are local (see [`EdgeTable::edge`]).
    Shifted {
        frames: Box<[Frame]>,
        origins: Box<[u32]>,
        /// The local origins before the appended ones.
        origin_base: u32,
    },
}

/// The memo table of one grammar's edges (see the module docs).
pub(crate) struct EdgeTable {
    shards: [Mutex<HashMap<EdgeKey, Arc<Edge>, foldhash::fast::FixedState>>; SHARDS],
    len: AtomicUsize,
    capacity: usize,
}

impl std::fmt::Debug for EdgeTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EdgeTable")
            .field("len", &self.len.load(Ordering::Relaxed))
            .field("capacity", &self.capacity)
            .finish()
    }
}

/// A clone of a grammar starts with an empty table (it is a cache).
impl Clone for EdgeTable {
    fn clone(&self) -> EdgeTable {
        EdgeTable::new(self.capacity)
    }
}

impl EdgeTable {
    pub(crate) fn new(capacity: usize) -> EdgeTable {
        EdgeTable {
            shards: std::array::from_fn(|_| Mutex::new(HashMap::default())),
            len: AtomicUsize::new(0),
            capacity,
        }
    }

    /// The edge of `key` for `terminal` (of `key`'s class), computed on first use; `None`
    /// when the table is full and the edge is not in it.
    fn edge(
        &self,
        tables: &Tables,
        key: &EdgeKey,
        hash: u64,
        terminal: usize,
        fuel: usize,
    ) -> Option<Arc<Edge>> {
        let shard = &self.shards[(hash >> 60) as usize % SHARDS];
        let mut map = shard.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(edge) = map.get(key) {
            return Some(edge.clone());
        }
        if self.len.fetch_add(1, Ordering::Relaxed) >= self.capacity {
            self.len.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        let edge = Arc::new(compute(tables, key, terminal, fuel));
        map.insert(*key, edge.clone());
        Some(edge)
    }

    /// The number of edges held.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }
}

/// A parser's own direct-mapped cache of [`CACHE`] edges in front of the shared table: a hit
/// takes no lock. Empty until the first edge.
#[derive(Clone, Debug, Default)]
pub(crate) struct EdgeCache {
    slots: Vec<Option<(EdgeKey, Arc<Edge>)>>,
}

/// The slots of an [`EdgeCache`] (a power of two).
const CACHE: usize = 64;

impl EdgeCache {
    /// The edge of `key` for `terminal`, from this cache or else `table`; `None` when the
    /// table is full and the edge is not in it.
    pub(crate) fn edge(
        &mut self,
        table: &EdgeTable,
        tables: &Tables,
        key: &EdgeKey,
        terminal: usize,
        fuel: usize,
    ) -> Option<&Edge> {
        let hash = foldhash::fast::FixedState::default().hash_one(key);
        if self.slots.is_empty() {
            self.slots = vec![None; CACHE];
        }
        let slot = &mut self.slots[hash as usize % CACHE];
        if !slot.as_ref().is_some_and(|(k, _)| k == key) {
            *slot = Some((*key, table.edge(tables, key, hash, terminal, fuel)?));
        }
        slot.as_ref().map(|(_, edge)| &**edge)
    }
}

/// The edge of `key` for `terminal` (see the module docs).
fn compute(tables: &Tables, key: &EdgeKey, terminal: usize, mut fuel: usize) -> Edge {
    let n = usize::from(key.len);
    let mut local = Stack::default();
    // Local frame `x` is configuration frame `n - 1 - x` (the bottom first).
    for x in 0..n {
        let i = n - 1 - x;
        let (state, packed) = key.frames[i];
        let origins = local.origins.len() as u32;
        for k in 0..tables.kernel_len(state) {
            let position = (packed >> (4 * k)) & 15;
            local.origins.push(if position == 0 {
                SYMBOLIC + (PACKED * i + k) as u32
            } else {
                (n - 1 - position as usize) as u32
            });
        }
        local.frames.push(Frame {
            state,
            parent: if x == 0 { UNKNOWN } else { x as u32 - 1 },
            origins,
        });
    }
    let origin_base = local.origins.len() as u32;
    match step(tables, &mut local, terminal, &mut fuel) {
        Step::Shifted => Edge::Shifted {
            frames: local.frames[n..].into(),
            origins: local.origins[origin_base as usize..].into(),
            origin_base,
        },
        Step::Rejected | Step::Accepted => Edge::Rejected,
        Step::Unknown | Step::OutOfFuel => Edge::Step,
    }
}
