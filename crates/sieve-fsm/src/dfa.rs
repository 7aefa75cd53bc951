//! Subset construction and Hopcroft minimisation.
//!
//! The alphabet of one rule is its byte space cut into the coarsest intervals that no byte
//! edge of the NFA splits, plus one symbol per referenced rule (a reference is consumed like a
//! byte). Symbols are numbered intervals first (ascending), then rules (by id).
//!
//! # Invariants
//!
//! - [`determinize`] works straight on the epsilon NFA (keys are epsilon-closed sets restricted
//!   to states that matter: those with a non-epsilon edge, and the accepting state) and gives
//!   up, returning `None`, past its state limit; it never allocates beyond that limit.
//! - A [`Dfa`] is partial (a missing transition rejects), has no dead states and starts at
//!   state `0`; its transitions are sorted by symbol.
//! - Both keep their working memory in a per-thread scratch between calls (one rule after
//!   another); nothing in it carries over but capacity, and a call stopped at its limit
//!   leaves nothing the next one reads.
//! - [`minimize`] returns the minimal partial DFA of the same language: in linear time for an
//!   acyclic DFA (`acyclic.rs`), else by Hopcroft's partition refinement, started from the
//!   accepting/non-accepting split with both blocks as splitters, which is what makes it
//!   correct for partial transition functions.

use std::cell::RefCell;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use foldhash::HashMap;

use sieve_ir::RuleId;

use crate::fsm::Label;
use crate::nfa::{Closure, Nfa};

mod acyclic;

use acyclic::{minimize_acyclic, Acyclic};

/// A partial DFA over the symbols of one rule, stored flat: state `s`'s transitions are
/// `edges[first[s]..first[s + 1]]`.
#[derive(Clone, Debug)]
pub(crate) struct Dfa {
    /// Per state, where its transitions start in `edges`, plus a sentinel (the edge count).
    first: Vec<u32>,
    /// `(symbol, target)` pairs, each state's sorted by symbol, one per symbol at most.
    edges: Vec<(u32, u32)>,
    pub(crate) accepting: Vec<bool>,
    /// `labels[symbol]`: the byte interval or rule reference the symbol stands for.
    pub(crate) labels: Vec<Label>,
}

impl Dfa {
    /// The number of states.
    pub(crate) fn len(&self) -> usize {
        self.accepting.len()
    }

    /// The transitions of state `s`, sorted by symbol.
    pub(crate) fn out(&self, s: usize) -> &[(u32, u32)] {
        &self.edges[self.first[s] as usize..self.first[s + 1] as usize]
    }

    /// Closes the transitions pushed since the last call as the next state's.
    fn end_state(&mut self) {
        self.first
            .push(u32::try_from(self.edges.len()).expect("bounded by the limits"));
    }
}

/// The alphabet of an NFA: byte intervals and rule symbols.
struct Alphabet {
    /// `class_of[b]`: the interval symbol holding byte `b`.
    class_of: [u32; 256],
    intervals: usize,
    rules: Vec<RuleId>,
    labels: Vec<Label>,
}

impl Alphabet {
    fn of(nfa: &Nfa) -> Alphabet {
        let mut cut = [false; 257];
        cut[0] = true;
        let mut rules = Vec::new();
        for &(label, _) in nfa.all_edges() {
            match label {
                Label::Bytes { lo, hi } => {
                    cut[usize::from(lo)] = true;
                    cut[usize::from(hi) + 1] = true;
                }
                Label::Rule(r) => rules.push(r),
                Label::Epsilon => {}
            }
        }
        rules.sort();
        rules.dedup();
        let mut class_of = [0u32; 256];
        let intervals = 1 + cut[1..256].iter().filter(|&&c| c).count();
        let mut labels = Vec::with_capacity(intervals + rules.len());
        let mut lo = 0usize;
        for b in 0..256usize {
            if b > 0 && cut[b] {
                labels.push(byte_label(lo, b - 1));
                lo = b;
            }
            class_of[b] = u32::try_from(labels.len()).expect("at most 256 intervals");
        }
        labels.push(byte_label(lo, 255));
        debug_assert_eq!(labels.len(), intervals);
        labels.extend(rules.iter().map(|&r| Label::Rule(r)));
        Alphabet {
            class_of,
            intervals,
            rules,
            labels,
        }
    }

    fn rule_symbol(&self, rule: RuleId) -> usize {
        self.intervals
            + self
                .rules
                .binary_search(&rule)
                .expect("every referenced rule has a symbol")
    }
}

fn byte_label(lo: usize, hi: usize) -> Label {
    Label::Bytes {
        lo: u8::try_from(lo).expect("a byte"),
        hi: u8::try_from(hi).expect("a byte"),
    }
}

/// Working memory of [`determinize`] and [`minimize`], kept per thread between rules so that
/// building a grammar's automata does not allocate it again for every rule. Nothing in it
/// carries over from one call to the next but capacity.
#[derive(Default)]
struct Scratch {
    closure: Closure,
    /// An epsilon closure, in discovery order.
    closed: Vec<u32>,
    /// The key of the set being looked up: its closure's states that matter, sorted.
    key: Vec<u32>,
    /// The DFA states' keys, one after another: set `i` is `set_states[set_first[i]..set_first[i + 1]]`.
    set_states: Vec<u32>,
    set_first: Vec<u32>,
    /// Per key hash, the newest set with that hash; `chain[i]` is the next older one (or `NONE`).
    by_hash: HashMap<u64, u32>,
    chain: Vec<u32>,
    /// Per symbol, the NFA targets of one DFA state's edges on it.
    buckets: Vec<Vec<u32>>,
    touched: Vec<usize>,
    last: Vec<u32>,
    /// Per symbol, the sources of edges on it into one splitter of [`minimize`];
    /// `symbols` lists the symbols in use.
    by_symbol: Vec<Vec<u32>>,
    symbols: Vec<u32>,
    /// [`minimize`]'s other working memory.
    refine: Refinement,
    /// [`minimize`]'s for acyclic DFAs.
    acyclic: Acyclic,
}

/// The working memory of one [`minimize`] call besides its symbol buckets: the incoming edges
/// grouped by target, the partition, and the work list of splitters.
#[derive(Default)]
struct Refinement {
    /// Target `t`'s incoming edges are `incoming[first[t]..first[t + 1]]`.
    first: Vec<usize>,
    fill: Vec<usize>,
    /// `(symbol, source)` pairs.
    incoming: Vec<(u32, u32)>,
    partition: Partition,
    in_work: Vec<bool>,
    work: Vec<u32>,
    splits: Vec<(u32, u32)>,
}

/// The most states (and twice as many edges) [`determinize`] makes room for before it starts.
const SMALL_DFA: usize = 32;

/// The end of a hash chain in [`Scratch::chain`].
const NONE: u32 = u32::MAX;

/// Past this many elements in its largest buffer, a thread's [`Scratch`] is dropped after
/// use instead of kept, so one huge rule does not pin its memory for the thread's lifetime.
const KEPT_SCRATCH: usize = 1 << 16;

impl Scratch {
    fn is_large(&self) -> bool {
        self.set_states.capacity() > KEPT_SCRATCH
            || self.closed.capacity() > KEPT_SCRATCH
            || self.closure.capacity() > KEPT_SCRATCH
            || self.by_hash.capacity() > KEPT_SCRATCH
            || self.buckets.iter().any(|b| b.capacity() > KEPT_SCRATCH)
            || self.by_symbol.iter().any(|b| b.capacity() > KEPT_SCRATCH)
            || self.refine.incoming.capacity() > KEPT_SCRATCH
            // The partition's other vectors and the work list grow with its elements.
            || self.refine.partition.elems.capacity() > KEPT_SCRATCH
            || self.acyclic.is_large(KEPT_SCRATCH)
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch (a fresh one if it is in use), then lets it go if it
/// grew past [`KEPT_SCRATCH`].
fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => {
            let out = f(&mut scratch);
            if scratch.is_large() {
                *scratch = Scratch::default();
            }
            out
        }
        Err(_) => f(&mut Scratch::default()),
    })
}

/// The subset construction of `nfa`; `None` when the DFA would have more than `limit` states.
pub(crate) fn determinize(nfa: &Nfa, limit: usize) -> Option<Dfa> {
    with_scratch(|scratch| determinize_with(nfa, limit, scratch))
}

fn determinize_with(nfa: &Nfa, limit: usize, scratch: &mut Scratch) -> Option<Dfa> {
    let alphabet = Alphabet::of(nfa);
    let Scratch {
        closure,
        closed,
        key,
        set_states,
        set_first,
        by_hash,
        chain,
        buckets,
        touched,
        last,
        ..
    } = scratch;
    closure.reset(nfa.len());
    set_states.clear();
    set_first.clear();
    set_first.push(0);
    by_hash.clear();
    chain.clear();
    // A call that stopped at the limit leaves the buckets it had touched filled.
    for sym in touched.drain(..) {
        buckets[sym].clear();
    }
    if buckets.len() < alphabet.labels.len() {
        buckets.resize_with(alphabet.labels.len(), Vec::new);
    }
    let buckets = &mut buckets[..alphabet.labels.len()];
    let hasher = FixedState::default();
    // Writes into `key` the key of a seed set: its epsilon closure restricted to the states
    // that matter (those with a non-epsilon edge, and the accepting state), sorted.
    let key_of =
        |seeds: &[u32], closure: &mut Closure, closed: &mut Vec<u32>, key: &mut Vec<u32>| {
            closure.close(nfa, seeds.iter().copied(), closed);
            key.clear();
            key.extend(
                closed
                    .iter()
                    .copied()
                    .filter(|&s| s == nfa.accept || nfa.has_input_edge(s)),
            );
            key.sort_unstable();
        };
    // The id of the set `key`, added if new; `None` past the limit.
    let mut intern = |key: &[u32], set_states: &mut Vec<u32>, set_first: &mut Vec<u32>| {
        let hash = hasher.hash_one(key);
        let newest = by_hash.get(&hash).copied().unwrap_or(NONE);
        let mut at = newest;
        while at != NONE {
            let i = at as usize;
            if &set_states[set_first[i] as usize..set_first[i + 1] as usize] == key {
                return Some(at);
            }
            at = chain[i];
        }
        let id = set_first.len() - 1;
        if id >= limit {
            return None;
        }
        let id = u32::try_from(id).expect("bounded by the limit");
        set_states.extend_from_slice(key);
        set_first.push(u32::try_from(set_states.len()).expect("bounded by the limit"));
        chain.push(newest);
        by_hash.insert(hash, id);
        Some(id)
    };

    key_of(&[nfa.start], closure, closed, key);
    intern(key, set_states, set_first)?;

    // Room for a small rule's automaton at once (most are a few states), so that filling it
    // does not grow the vectors step by step.
    let room = nfa.len().min(SMALL_DFA);
    let mut first = Vec::with_capacity(room + 1);
    first.push(0);
    let mut dfa = Dfa {
        first,
        edges: Vec::with_capacity(2 * room),
        accepting: Vec::new(),
        labels: Vec::new(),
    };
    let mut next = 0;
    while next + 1 < set_first.len() {
        let members = set_first[next] as usize..set_first[next + 1] as usize;
        for &s in &set_states[members] {
            for &(label, t) in nfa.out(s) {
                match label {
                    Label::Bytes { lo, hi } => {
                        let from = alphabet.class_of[usize::from(lo)] as usize;
                        let to = alphabet.class_of[usize::from(hi)] as usize;
                        for (offset, bucket) in buckets[from..=to].iter_mut().enumerate() {
                            if bucket.is_empty() {
                                touched.push(from + offset);
                            }
                            bucket.push(t);
                        }
                    }
                    Label::Rule(r) => {
                        let sym = alphabet.rule_symbol(r);
                        if buckets[sym].is_empty() {
                            touched.push(sym);
                        }
                        buckets[sym].push(t);
                    }
                    Label::Epsilon => {}
                }
            }
        }
        touched.sort_unstable();
        // The last bucket resolved and its target: neighbouring byte intervals crossed by the
        // same edges have equal buckets, and their closure is computed once.
        last.clear();
        let mut last_id = 0;
        for &sym in touched.iter() {
            let id = if !last.is_empty() && buckets[sym] == *last {
                last_id
            } else {
                key_of(&buckets[sym], closure, closed, key);
                let id = intern(key, set_states, set_first)?;
                last.clone_from(&buckets[sym]);
                last_id = id;
                id
            };
            buckets[sym].clear();
            dfa.edges
                .push((u32::try_from(sym).expect("small alphabet"), id));
        }
        touched.clear();
        dfa.end_state();
        next += 1;
    }
    dfa.accepting = (0..set_first.len() - 1)
        .map(|i| {
            set_states[set_first[i] as usize..set_first[i + 1] as usize]
                .binary_search(&nfa.accept)
                .is_ok()
        })
        .collect();
    dfa.labels = alphabet.labels;
    Some(dfa)
}

/// The minimal DFA of `dfa`'s language, started at state `0`: in linear time when `dfa` is
/// acyclic, else by Hopcroft's refinement.
pub(crate) fn minimize(dfa: &Dfa) -> Dfa {
    with_scratch(|scratch| {
        minimize_acyclic(dfa, &mut scratch.acyclic).unwrap_or_else(|| {
            minimize_with(
                dfa,
                &mut scratch.by_symbol,
                &mut scratch.symbols,
                &mut scratch.refine,
            )
        })
    })
}

/// Both minimisations of `dfa`: the acyclic one (`None` for a cyclic DFA) and Hopcroft's.
#[cfg(test)]
pub(crate) fn minimize_both_ways(dfa: &Dfa) -> (Option<Dfa>, Dfa) {
    let mut scratch = Scratch::default();
    let acyclic = minimize_acyclic(dfa, &mut scratch.acyclic);
    let refined = minimize_with(
        dfa,
        &mut scratch.by_symbol,
        &mut scratch.symbols,
        &mut scratch.refine,
    );
    (acyclic, refined)
}

fn minimize_with(
    dfa: &Dfa,
    by_symbol: &mut Vec<Vec<u32>>,
    symbols: &mut Vec<u32>,
    refine: &mut Refinement,
) -> Dfa {
    let n = dfa.len();
    let Refinement {
        first,
        fill,
        incoming,
        partition,
        in_work,
        work,
        splits,
    } = refine;
    // Incoming edges, grouped by target: (symbol, source), `incoming[first[t]..first[t + 1]]`.
    first.clear();
    first.resize(n + 1, 0);
    for &(_, t) in &dfa.edges {
        first[t as usize + 1] += 1;
    }
    for t in 0..n {
        first[t + 1] += first[t];
    }
    fill.clone_from(first);
    incoming.clear();
    incoming.resize(first[n], (0, 0));
    for s in 0..n {
        for &(sym, t) in dfa.out(s) {
            incoming[fill[t as usize]] = (sym, u32::try_from(s).expect("bounded"));
            fill[t as usize] += 1;
        }
    }

    partition.reset(&dfa.accepting);
    in_work.clear();
    in_work.resize(partition.block_count(), true);
    work.clear();
    work.extend((0..partition.block_count()).map(|b| u32::try_from(b).expect("bounded")));
    if by_symbol.len() < dfa.labels.len() {
        by_symbol.resize_with(dfa.labels.len(), Vec::new);
    }
    while let Some(splitter) = work.pop() {
        in_work[splitter as usize] = false;
        // The splitter's preimage, bucketed by symbol. Marking is idempotent, so a source
        // listed twice costs nothing more.
        for &t in partition.members(splitter) {
            for &(sym, s) in &incoming[first[t as usize]..first[t as usize + 1]] {
                let bucket = &mut by_symbol[sym as usize];
                if bucket.is_empty() {
                    symbols.push(sym);
                }
                bucket.push(s);
            }
        }
        symbols.sort_unstable();
        for &sym in symbols.iter() {
            for &s in &by_symbol[sym as usize] {
                partition.mark(s);
            }
            by_symbol[sym as usize].clear();
            partition.split_marked(splits);
            for &(old, new) in splits.iter() {
                in_work.push(false);
                let (old, new) = (old as usize, new as usize);
                if in_work[old] {
                    in_work[new] = true;
                    work.push(u32::try_from(new).expect("bounded"));
                } else {
                    let smaller = if partition.size(new) <= partition.size(old) {
                        new
                    } else {
                        old
                    };
                    in_work[smaller] = true;
                    work.push(u32::try_from(smaller).expect("bounded"));
                }
            }
        }
        symbols.clear();
    }

    // Block of the start state becomes state 0; others keep their relative order.
    let blocks = partition.block_count();
    let start_block = partition.block_of[0] as usize;
    // Output state `i` is block `swap(i)`; a swap is its own inverse, so block `b` is output
    // state `swap(b)`.
    let swap = |b: usize| match b {
        0 => start_block,
        b if b == start_block => 0,
        b => b,
    };
    let mut min = Dfa {
        first: Vec::with_capacity(blocks + 1),
        edges: Vec::with_capacity(dfa.edges.len()),
        accepting: Vec::with_capacity(blocks),
        labels: dfa.labels.clone(),
    };
    min.first.push(0);
    for b in (0..blocks).map(swap) {
        let rep = partition.members(u32::try_from(b).expect("bounded"))[0] as usize;
        min.edges.extend(dfa.out(rep).iter().map(|&(sym, t)| {
            let block = partition.block_of[t as usize] as usize;
            (sym, u32::try_from(swap(block)).expect("bounded"))
        }));
        min.end_state();
        min.accepting.push(dfa.accepting[rep]);
    }
    min
}

/// A partition of states `0..n` into blocks stored as contiguous runs of one permutation, so
/// marking a state and splitting a block cost time proportional to the marked states.
#[derive(Default)]
struct Partition {
    elems: Vec<u32>,
    pos: Vec<u32>,
    block_of: Vec<u32>,
    /// Per block: `start..end` in `elems`; `start..mid` are the marked members.
    start: Vec<u32>,
    mid: Vec<u32>,
    end: Vec<u32>,
    touched: Vec<u32>,
}

impl Partition {
    /// Makes this the partition into accepting and non-accepting states (empty blocks left
    /// out), keeping only the capacity of what it held.
    fn reset(&mut self, accepting: &[bool]) {
        let n = accepting.len();
        let to_u32 = |i: usize| u32::try_from(i).expect("bounded");
        self.elems.clear();
        self.elems
            .extend((0..n).filter(|&s| accepting[s]).map(to_u32));
        let split = self.elems.len();
        self.elems
            .extend((0..n).filter(|&s| !accepting[s]).map(to_u32));
        self.pos.clear();
        self.pos.resize(n, 0);
        for (i, &s) in self.elems.iter().enumerate() {
            self.pos[s as usize] = to_u32(i);
        }
        self.block_of.clear();
        self.block_of.resize(n, 0);
        self.start.clear();
        self.mid.clear();
        self.end.clear();
        self.touched.clear();
        // One block, unless both kinds of states are present.
        if split > 0 && split < n {
            self.push_block(0..split);
            self.push_block(split..n);
        } else {
            self.push_block(0..n);
        }
    }

    /// Adds the block of the members at `range` in `elems`.
    fn push_block(&mut self, range: std::ops::Range<usize>) {
        let to_u32 = |i: usize| u32::try_from(i).expect("bounded");
        let b = to_u32(self.start.len());
        self.start.push(to_u32(range.start));
        self.mid.push(to_u32(range.start));
        self.end.push(to_u32(range.end));
        for i in range {
            self.block_of[self.elems[i] as usize] = b;
        }
    }

    fn block_count(&self) -> usize {
        self.start.len()
    }

    fn size(&self, b: usize) -> u32 {
        self.end[b] - self.start[b]
    }

    fn members(&self, b: u32) -> &[u32] {
        let b = b as usize;
        &self.elems[self.start[b] as usize..self.end[b] as usize]
    }

    fn mark(&mut self, s: u32) {
        let b = self.block_of[s as usize] as usize;
        let i = self.pos[s as usize];
        if i < self.mid[b] {
            return;
        }
        if self.mid[b] == self.start[b] {
            self.touched.push(u32::try_from(b).expect("bounded"));
        }
        let j = self.mid[b];
        let other = self.elems[j as usize];
        self.elems.swap(i as usize, j as usize);
        self.pos[s as usize] = j;
        self.pos[other as usize] = i;
        self.mid[b] += 1;
    }

    /// Splits every block with some but not all members marked, the marked ones moving to a
    /// new block; clears all marks. Writes the `(old block, new block)` pairs into `splits`.
    fn split_marked(&mut self, splits: &mut Vec<(u32, u32)>) {
        splits.clear();
        for k in 0..self.touched.len() {
            let b = self.touched[k];
            let bi = b as usize;
            if self.mid[bi] == self.end[bi] {
                self.mid[bi] = self.start[bi];
                continue;
            }
            let nb = u32::try_from(self.start.len()).expect("bounded");
            self.start.push(self.start[bi]);
            self.mid.push(self.start[bi]);
            self.end.push(self.mid[bi]);
            self.start[bi] = self.mid[bi];
            for i in self.start[nb as usize]..self.end[nb as usize] {
                self.block_of[self.elems[i as usize] as usize] = nb;
            }
            splits.push((b, nb));
        }
        self.touched.clear();
    }
}
