//! [`ByteDfa`]: a partial, trimmed, minimal DFA over bytes stored as a dense table over byte
//! classes, and the two constructions that make one: subset construction from an [`Nfa`]
//! ([`determinize`]) and Hopcroft minimisation with trimming and canonical numbering
//! ([`minimize`]).
//!
//! # Invariants
//!
//! For every [`ByteDfa`] returned by [`minimize`]:
//!
//! - the start is state `0`, and states are numbered breadth-first from it, bytes in
//!   ascending order, so two DFAs of one language are equal field for field;
//! - every state is reachable from the start and reaches an accepting state or a cycle (no
//!   dead states: a missing transition, [`DEAD`], is the only rejection), so a byte with a
//!   transition keeps the input a prefix of a sentence or of an infinite derivation (a
//!   pumping rule such as `B ::= "a" B`, viable for the seam as for the Earley backend);
//! - no two states are bisimilar (minimal: equal accepted languages and equal sets of
//!   viable continuations);
//! - byte classes are the coarsest partition of the bytes that no state's transitions split;
//! - token ends (`⊥`, see [`crate::nfa`]) are one more symbol, kept apart from the byte
//!   classes: [`ByteDfa::token_end`] is the state `⊥` leads to ([`DEAD`] when it kills the
//!   input). A DFA in which `⊥` leaves every state where it is stores no column for it.
//!   Liveness is judged on bytes alone (every state of a trimmed rule reaches acceptance by
//!   bytes; `⊥` only removes threads), while minimisation tells states apart by `⊥` too.
//!
//! [`determinize`] never holds more than its limit of DFA states, nor state sets of more than
//! [`SET_ELEMENTS_PER_STATE`] NFA states per allowed DFA state in all: its memory is bounded
//! by the limit, whatever the NFA.

use foldhash::{HashMap, HashMapExt};

use crate::nfa::{Nfa, STAY};

/// The target of a missing transition.
pub(crate) const DEAD: u32 = u32::MAX;

/// A deterministic automaton over bytes (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ByteDfa {
    /// `class_of[b]`: the class of byte `b`.
    class_of: [u8; 256],
    /// The number of classes.
    classes: usize,
    /// The maximal runs of bytes of one class, ascending: `(lo, hi, class)`.
    class_runs: Vec<(u8, u8, u8)>,
    /// `table[s * classes + c]`: the target of state `s` on class `c`, or [`DEAD`].
    table: Vec<u32>,
    accepting: Vec<bool>,
    /// Per state, the target of a token end; empty when every state stays where it is.
    token_end: Vec<u32>,
}

impl ByteDfa {
    /// Whether a token end moves (or kills) some state: the DFA honours token limits.
    #[inline]
    pub(crate) fn has_token_ends(&self) -> bool {
        !self.token_end.is_empty()
    }

    /// The state a token end leads `state` to, or [`DEAD`] (`state` itself when the DFA has
    /// no token ends).
    #[inline]
    pub(crate) fn token_end(&self, state: u32) -> u32 {
        match self.token_end.get(state as usize) {
            Some(&t) => t,
            None => state,
        }
    }

    /// The number of states.
    pub(crate) fn state_count(&self) -> usize {
        self.accepting.len()
    }

    /// The number of byte classes.
    pub(crate) fn class_count(&self) -> usize {
        self.classes
    }

    /// Whether `state` accepts.
    #[inline]
    pub(crate) fn is_accepting(&self, state: u32) -> bool {
        self.accepting[state as usize]
    }

    /// The target of `state` on `byte`, or [`DEAD`].
    #[inline]
    pub(crate) fn next(&self, state: u32, byte: u8) -> u32 {
        self.table[state as usize * self.classes + self.class_of[byte as usize] as usize]
    }

    /// The row of `state`: its targets by class.
    #[inline]
    pub(crate) fn row(&self, state: u32) -> &[u32] {
        let start = state as usize * self.classes;
        &self.table[start..start + self.classes]
    }

    /// The transitions of `state` as maximal runs of bytes `(lo, hi, target)` with one
    /// target, ascending, [`DEAD`] left out: a form independent of the class partition.
    pub(crate) fn runs(&self, state: u32) -> Vec<(u8, u8, u32)> {
        let row = self.row(state);
        let mut runs: Vec<(u8, u8, u32)> = Vec::new();
        for &(lo, hi, class) in &self.class_runs {
            let t = row[class as usize];
            if t == DEAD {
                continue;
            }
            match runs.last_mut() {
                Some(last) if last.2 == t && usize::from(last.1) + 1 == usize::from(lo) => {
                    last.1 = hi;
                }
                _ => runs.push((lo, hi, t)),
            }
        }
        runs
    }

    /// Heap bytes used.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.table.len() * 4 + self.accepting.len() + self.token_end.len() * 4
    }
}

/// The maximal runs of bytes of one class under `class_of`.
fn class_runs_of(class_of: &[u8; 256]) -> Vec<(u8, u8, u8)> {
    let mut runs: Vec<(u8, u8, u8)> = Vec::new();
    for b in 0..=255u8 {
        match runs.last_mut() {
            Some(last) if last.2 == class_of[b as usize] => last.1 = b,
            _ => runs.push((b, b, class_of[b as usize])),
        }
    }
    runs
}

/// The coarsest byte classes no byte edge of `nfa` splits: `(class_of, count)`.
fn nfa_classes(nfa: &Nfa) -> ([u8; 256], usize) {
    let mut cut = [false; 257];
    for edges in &nfa.bytes {
        for &(lo, hi, _) in edges {
            cut[usize::from(lo)] = true;
            cut[usize::from(hi) + 1] = true;
        }
    }
    let mut class_of = [0u8; 256];
    let mut class = 0usize;
    for b in 0..256 {
        if b > 0 && cut[b] {
            class += 1;
        }
        class_of[b] = u8::try_from(class).expect("at most 256 classes");
    }
    (class_of, class + 1)
}

/// Epsilon closures with a generation-stamped visited set, so a closure costs only the states
/// it reaches.
struct Closure {
    stamp: Vec<u32>,
    generation: u32,
    stack: Vec<u32>,
}

impl Closure {
    fn new(n: usize) -> Closure {
        Closure {
            stamp: vec![0; n],
            generation: 0,
            stack: Vec::new(),
        }
    }

    /// Writes into `out` the sorted epsilon closure of `seeds`.
    fn close(&mut self, nfa: &Nfa, seeds: &[u32], out: &mut Vec<u32>) {
        self.generation += 1;
        out.clear();
        for &s in seeds {
            if self.stamp[s as usize] != self.generation {
                self.stamp[s as usize] = self.generation;
                self.stack.push(s);
            }
        }
        while let Some(s) = self.stack.pop() {
            out.push(s);
            for &t in &nfa.eps[s as usize] {
                if self.stamp[t as usize] != self.generation {
                    self.stamp[t as usize] = self.generation;
                    self.stack.push(t);
                }
            }
        }
        out.sort_unstable();
    }
}

/// The NFA state sets of the subset construction, each stored once in one arena and found
/// by hash: at most `limit` sets and [`SET_ELEMENTS_PER_STATE`] elements per allowed set.
struct SetStore {
    arena: Vec<u32>,
    /// `arena[spans[id].0..spans[id].1]`: set `id`.
    spans: Vec<(usize, usize)>,
    /// Set hash to the ids with that hash.
    by_hash: HashMap<u64, Vec<u32>>,
    hasher: foldhash::fast::FixedState,
    limit: usize,
}

/// The most NFA states a DFA state's set holds on average, times the state limit, bounds the
/// sets' memory.
const SET_ELEMENTS_PER_STATE: usize = 256;

impl SetStore {
    fn new(limit: usize) -> SetStore {
        SetStore {
            arena: Vec::new(),
            spans: Vec::new(),
            by_hash: HashMap::new(),
            hasher: foldhash::fast::FixedState::default(),
            limit,
        }
    }

    fn len(&self) -> usize {
        self.spans.len()
    }

    fn get(&self, id: usize) -> &[u32] {
        let (from, to) = self.spans[id];
        &self.arena[from..to]
    }

    fn find(&self, set: &[u32]) -> Option<u32> {
        use std::hash::BuildHasher;
        let ids = self.by_hash.get(&self.hasher.hash_one(set))?;
        ids.iter().copied().find(|&id| self.get(id as usize) == set)
    }

    /// Adds `set` (not yet stored) and returns its id; `None` past the limits.
    fn insert(&mut self, set: &[u32]) -> Option<u32> {
        use std::hash::BuildHasher;
        if self.spans.len() >= self.limit
            || self.arena.len() + set.len() > self.limit.saturating_mul(SET_ELEMENTS_PER_STATE)
        {
            return None;
        }
        let id = u32::try_from(self.spans.len()).expect("bounded by the limit");
        let from = self.arena.len();
        self.arena.extend_from_slice(set);
        self.spans.push((from, self.arena.len()));
        self.by_hash
            .entry(self.hasher.hash_one(set))
            .or_default()
            .push(id);
        Some(id)
    }
}

/// The subset construction of `nfa` (started at state `0`); `None` when the DFA would have
/// more than `limit` states or its state sets more than [`SET_ELEMENTS_PER_STATE`] NFA states
/// per allowed state in all. The result is deterministic but neither trimmed nor minimal.
pub(crate) fn determinize(nfa: &Nfa, limit: usize) -> Option<ByteDfa> {
    let (class_of, classes) = nfa_classes(nfa);
    let ends = nfa.has_token_ends();
    // A set is keyed by its closure restricted to states with byte edges or accepting: the
    // others add nothing to what the set does next — unless token ends are read, after which
    // a staying state's epsilon edges lead on again.
    let matters: Vec<bool> = (0..nfa.len())
        .map(|s| ends || nfa.accepting[s] || !nfa.bytes[s].is_empty())
        .collect();
    let mut closure = Closure::new(nfa.len());
    let mut closed = Vec::new();
    let mut key_of = |seeds: &[u32], closure: &mut Closure, key: &mut Vec<u32>| {
        closure.close(nfa, seeds, &mut closed);
        key.clear();
        key.extend(closed.iter().copied().filter(|&s| matters[s as usize]));
    };
    let mut sets = SetStore::new(limit);
    let mut key = Vec::new();
    key_of(&[0], &mut closure, &mut key);
    sets.insert(&key)?;

    let mut table: Vec<u32> = Vec::new();
    let mut token_end: Vec<u32> = Vec::new();
    let mut seeds: Vec<u32> = Vec::new();
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); classes];
    let mut next = 0;
    while next < sets.len() {
        if ends {
            seeds.clear();
            for &s in sets.get(next) {
                match nfa.token_end[s as usize] {
                    STAY => seeds.push(s),
                    DEAD => {}
                    t => seeds.push(t),
                }
            }
            let target = if seeds.is_empty() {
                DEAD
            } else {
                key_of(&seeds, &mut closure, &mut key);
                match sets.find(&key) {
                    Some(id) => id,
                    None => sets.insert(&key)?,
                }
            };
            token_end.push(target);
        }
        for &s in sets.get(next) {
            for &(lo, hi, t) in &nfa.bytes[s as usize] {
                let from = class_of[usize::from(lo)] as usize;
                let to = class_of[usize::from(hi)] as usize;
                for bucket in &mut buckets[from..=to] {
                    bucket.push(t);
                }
            }
        }
        let row = table.len();
        table.resize(row + classes, DEAD);
        for c in 0..classes {
            if buckets[c].is_empty() {
                continue;
            }
            // Neighbouring classes crossed by the same edges share a target.
            if c > 0 && buckets[c] == buckets[c - 1] {
                table[row + c] = table[row + c - 1];
                buckets[c - 1].clear();
                continue;
            }
            if c > 0 {
                buckets[c - 1].clear();
            }
            key_of(&buckets[c], &mut closure, &mut key);
            let id = match sets.find(&key) {
                Some(id) => id,
                None => sets.insert(&key)?,
            };
            table[row + c] = id;
        }
        for bucket in &mut buckets {
            bucket.clear();
        }
        next += 1;
    }
    let accepting = (0..sets.len())
        .map(|id| sets.get(id).iter().any(|&s| nfa.accepting[s as usize]))
        .collect();
    Some(ByteDfa {
        class_runs: class_runs_of(&class_of),
        class_of,
        classes,
        table,
        accepting,
        token_end,
    })
}

/// Per state, whether some path of bytes from it runs forever: what is left after taking
/// away, again and again, every state all of whose byte transitions lead to states already
/// taken away. `incoming` lists token ends as class `dfa.classes`; they are ignored.
fn reaches_a_cycle(dfa: &ByteDfa, reverse_first: &[usize], incoming: &[(u32, u32)]) -> Vec<bool> {
    let n = dfa.state_count();
    let k = dfa.classes;
    let mut out_degree: Vec<usize> = (0..n)
        .map(|s| {
            dfa.table[s * k..(s + 1) * k]
                .iter()
                .filter(|&&t| t != DEAD)
                .count()
        })
        .collect();
    let mut remaining = vec![true; n];
    let mut stack: Vec<usize> = (0..n).filter(|&s| out_degree[s] == 0).collect();
    while let Some(t) = stack.pop() {
        remaining[t] = false;
        for &(c, s) in &incoming[reverse_first[t]..reverse_first[t + 1]] {
            if c as usize == k {
                // A token end: not counted in the out-degree.
                continue;
            }
            let s = s as usize;
            out_degree[s] -= 1;
            if out_degree[s] == 0 {
                stack.push(s);
            }
        }
    }
    remaining
}

/// The minimal trimmed DFA of `dfa`'s language, numbered canonically and with the coarsest
/// byte classes (see the module docs). An empty language gives one non-accepting state
/// without transitions.
pub(crate) fn minimize(dfa: &ByteDfa) -> ByteDfa {
    let n = dfa.state_count();
    let k = dfa.classes;
    // Incoming edges by target, token ends as class `k`.
    let mut reverse_first = vec![0usize; n + 1];
    for &t in dfa.table.iter().chain(&dfa.token_end) {
        if t != DEAD {
            reverse_first[t as usize + 1] += 1;
        }
    }
    for s in 0..n {
        reverse_first[s + 1] += reverse_first[s];
    }
    let mut fill = reverse_first.clone();
    let mut incoming = vec![(0u32, 0u32); reverse_first[n]];
    for s in 0..n {
        for c in 0..k {
            let t = dfa.table[s * k + c];
            if t != DEAD {
                incoming[fill[t as usize]] = (c as u32, s as u32);
                fill[t as usize] += 1;
            }
        }
        if let Some(&t) = dfa.token_end.get(s) {
            if t != DEAD {
                incoming[fill[t as usize]] = (k as u32, s as u32);
                fill[t as usize] += 1;
            }
        }
    }
    // Live: the states that reach an accepting state or a cycle. A cycle is an infinite
    // derivation (`B ::= "a" B`), whose prefixes the seam counts as viable, as the Earley
    // backend does; only dead ends go.
    let mut live = dfa.accepting.clone();
    for (s, cyclic) in reaches_a_cycle(dfa, &reverse_first, &incoming)
        .into_iter()
        .enumerate()
    {
        live[s] |= cyclic;
    }
    let mut stack: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
    while let Some(t) = stack.pop() {
        for &(_, s) in &incoming[reverse_first[t as usize]..reverse_first[t as usize + 1]] {
            if !live[s as usize] {
                live[s as usize] = true;
                stack.push(s);
            }
        }
    }
    if !live[0] {
        return ByteDfa {
            class_runs: vec![(0, 255, 0)],
            class_of: [0; 256],
            classes: 1,
            table: vec![DEAD],
            accepting: vec![false],
            token_end: Vec::new(),
        };
    }

    // Hopcroft over the live states, partial transitions (both initial blocks are splitters).
    let mut partition = Partition::new(&dfa.accepting, &live);
    let mut in_work = vec![true; partition.block_count()];
    let mut work: Vec<u32> = (0..partition.block_count() as u32).collect();
    let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); k + 1];
    let mut used: Vec<usize> = Vec::new();
    let mut splits = Vec::new();
    while let Some(splitter) = work.pop() {
        in_work[splitter as usize] = false;
        for &t in partition.members(splitter) {
            for &(c, s) in &incoming[reverse_first[t as usize]..reverse_first[t as usize + 1]] {
                if !live[s as usize] {
                    continue;
                }
                let bucket = &mut by_class[c as usize];
                if bucket.is_empty() {
                    used.push(c as usize);
                }
                bucket.push(s);
            }
        }
        used.sort_unstable();
        for &c in &used {
            for &s in &by_class[c] {
                partition.mark(s);
            }
            by_class[c].clear();
            partition.split_marked(&mut splits);
            for &(old, new) in &splits {
                in_work.push(false);
                let (old, new) = (old as usize, new as usize);
                let pick = if in_work[old] || partition.size(new) <= partition.size(old) {
                    new
                } else {
                    old
                };
                in_work[pick] = true;
                work.push(pick as u32);
            }
        }
        used.clear();
    }

    // Canonical numbering: breadth-first from the start's block, bytes ascending.
    let blocks = partition.block_count();
    let mut number = vec![DEAD; blocks];
    let mut order: Vec<u32> = Vec::with_capacity(blocks);
    number[partition.block_of[0] as usize] = 0;
    order.push(partition.block_of[0]);
    // Rows over the old classes, flattened, then each state's token end.
    let mut rows: Vec<u32> = Vec::new();
    let mut ends: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let rep = partition.members(order[i])[0] as usize;
        let end = dfa.token_end.get(rep).copied();
        let targets = (0..k).map(|c| dfa.table[rep * k + c]).chain(end);
        for (c, t) in targets.enumerate() {
            let numbered = if t == DEAD || !live[t as usize] {
                DEAD
            } else {
                let block = partition.block_of[t as usize] as usize;
                if number[block] == DEAD {
                    number[block] = order.len() as u32;
                    order.push(block as u32);
                }
                number[block]
            };
            if c < k {
                rows.push(numbered);
            } else {
                ends.push(numbered);
            }
        }
        i += 1;
    }
    // A token end that leaves every state where it is needs no column.
    if ends.iter().enumerate().all(|(s, &t)| t == s as u32) {
        ends.clear();
    }
    let accepting: Vec<bool> = order
        .iter()
        .map(|&b| dfa.accepting[partition.members(b)[0] as usize])
        .collect();
    compress(&dfa.class_of, k, &rows, accepting, ends)
}

/// A dense DFA from rows over `k` old classes (`class_of` maps bytes to them), with the old
/// classes merged into the coarsest partition no row splits, and the states' token ends.
fn compress(
    class_of: &[u8; 256],
    k: usize,
    rows: &[u32],
    accepting: Vec<bool>,
    token_end: Vec<u32>,
) -> ByteDfa {
    // Two old classes merge iff every row sends them to the same target: equal columns.
    let mut merged = vec![0u32; k];
    let mut columns: HashMap<Vec<u32>, u32> = HashMap::new();
    for (c, slot) in merged.iter_mut().enumerate() {
        let column: Vec<u32> = rows.iter().skip(c).step_by(k).copied().collect();
        let fresh = columns.len() as u32;
        *slot = *columns.entry(column).or_insert(fresh);
    }
    let classes = columns.len();
    // Number the new classes by their first byte, so the layout is canonical too.
    let mut number = vec![u32::MAX; classes];
    let mut representative = Vec::with_capacity(classes);
    let mut new_class_of = [0u8; 256];
    for b in 0..256 {
        let m = merged[class_of[b] as usize] as usize;
        if number[m] == u32::MAX {
            number[m] = representative.len() as u32;
            representative.push(class_of[b] as usize);
        }
        new_class_of[b] = u8::try_from(number[m]).expect("at most 256 classes");
    }
    let mut table = Vec::with_capacity(rows.len() / k.max(1) * classes);
    for row in rows.chunks(k) {
        table.extend(representative.iter().map(|&c| row[c]));
    }
    ByteDfa {
        class_runs: class_runs_of(&new_class_of),
        class_of: new_class_of,
        classes,
        table,
        accepting,
        token_end,
    }
}

/// A partition of the live states into blocks stored as runs of one permutation, so marking
/// and splitting cost time proportional to the marked states.
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
    /// The live states split into accepting and not (empty blocks left out); dead states
    /// belong to no block (`block_of` is [`DEAD`]).
    fn new(accepting: &[bool], live: &[bool]) -> Partition {
        let n = accepting.len();
        let mut elems: Vec<u32> = (0..n as u32)
            .filter(|&s| live[s as usize] && accepting[s as usize])
            .collect();
        let split = elems.len();
        elems.extend((0..n as u32).filter(|&s| live[s as usize] && !accepting[s as usize]));
        let mut pos = vec![DEAD; n];
        for (i, &s) in elems.iter().enumerate() {
            pos[s as usize] = i as u32;
        }
        let mut p = Partition {
            block_of: vec![DEAD; n],
            pos,
            start: Vec::new(),
            mid: Vec::new(),
            end: Vec::new(),
            touched: Vec::new(),
            elems,
        };
        let total = p.elems.len();
        for (from, to) in [(0, split), (split, total)] {
            if from == to {
                continue;
            }
            let b = p.start.len() as u32;
            p.start.push(from as u32);
            p.mid.push(from as u32);
            p.end.push(to as u32);
            for i in from..to {
                p.block_of[p.elems[i] as usize] = b;
            }
        }
        p
    }

    fn block_count(&self) -> usize {
        self.start.len()
    }

    fn size(&self, b: usize) -> u32 {
        self.end[b] - self.start[b]
    }

    fn members(&self, b: u32) -> &[u32] {
        &self.elems[self.start[b as usize] as usize..self.end[b as usize] as usize]
    }

    fn mark(&mut self, s: u32) {
        let b = self.block_of[s as usize] as usize;
        let i = self.pos[s as usize];
        if i < self.mid[b] {
            return;
        }
        if self.mid[b] == self.start[b] {
            self.touched.push(b as u32);
        }
        let j = self.mid[b];
        let other = self.elems[j as usize];
        self.elems.swap(i as usize, j as usize);
        self.pos[s as usize] = j;
        self.pos[other as usize] = i;
        self.mid[b] += 1;
    }

    /// Splits every block with some but not all members marked (the marked ones move to a
    /// new block) and clears the marks; `splits` gets the `(old, new)` block pairs.
    fn split_marked(&mut self, splits: &mut Vec<(u32, u32)>) {
        splits.clear();
        for k in 0..self.touched.len() {
            let b = self.touched[k] as usize;
            if self.mid[b] == self.end[b] {
                self.mid[b] = self.start[b];
                continue;
            }
            let nb = self.start.len() as u32;
            self.start.push(self.start[b]);
            self.mid.push(self.start[b]);
            self.end.push(self.mid[b]);
            self.start[b] = self.mid[b];
            for i in self.start[nb as usize]..self.end[nb as usize] {
                self.block_of[self.elems[i as usize] as usize] = nb;
            }
            splits.push((b as u32, nb));
        }
        self.touched.clear();
    }
}
