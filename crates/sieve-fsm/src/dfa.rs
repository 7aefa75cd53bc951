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
//! - [`minimize`] returns the minimal partial DFA of the same language (Hopcroft's partition
//!   refinement, started from the accepting/non-accepting split with both blocks as
//!   splitters, which is what makes it correct for partial transition functions).

use foldhash::HashMap;

use sieve_ir::RuleId;

use crate::fsm::Label;
use crate::nfa::{Closure, Nfa};

/// A partial DFA over the symbols of one rule.
#[derive(Clone, Debug)]
pub(crate) struct Dfa {
    /// `trans[s]`: `(symbol, target)` pairs sorted by symbol, one per symbol at most.
    pub(crate) trans: Vec<Vec<(u32, u32)>>,
    pub(crate) accepting: Vec<bool>,
    /// `labels[symbol]`: the byte interval or rule reference the symbol stands for.
    pub(crate) labels: Vec<Label>,
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
        for edges in &nfa.edges {
            for &(label, _) in edges {
                match label {
                    Label::Bytes { lo, hi } => {
                        cut[usize::from(lo)] = true;
                        cut[usize::from(hi) + 1] = true;
                    }
                    Label::Rule(r) => rules.push(r),
                    Label::Epsilon => {}
                }
            }
        }
        rules.sort();
        rules.dedup();
        let mut class_of = [0u32; 256];
        let mut labels = Vec::new();
        let mut lo = 0usize;
        for b in 0..256usize {
            if b > 0 && cut[b] {
                labels.push(byte_label(lo, b - 1));
                lo = b;
            }
            class_of[b] = u32::try_from(labels.len()).expect("at most 256 intervals");
        }
        labels.push(byte_label(lo, 255));
        let intervals = labels.len();
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

/// The subset construction of `nfa`; `None` when the DFA would have more than `limit` states.
pub(crate) fn determinize(nfa: &Nfa, limit: usize) -> Option<Dfa> {
    let alphabet = Alphabet::of(nfa);
    let matters: Vec<bool> = nfa
        .edges
        .iter()
        .enumerate()
        .map(|(s, edges)| {
            s == nfa.accept as usize || edges.iter().any(|&(l, _)| l != Label::Epsilon)
        })
        .collect();
    let mut closure = Closure::new(nfa.len());
    let mut scratch = Vec::new();
    // The key of a seed set: its epsilon closure restricted to the states that matter,
    // sorted; written into `key` so a set already seen costs no allocation.
    let mut key_of = |seeds: &[u32], closure: &mut Closure, key: &mut Vec<u32>| {
        closure.close(nfa, seeds.iter().copied(), &mut scratch);
        key.clear();
        key.extend(scratch.iter().copied().filter(|&s| matters[s as usize]));
        key.sort_unstable();
    };

    let mut ids: HashMap<Vec<u32>, u32> = HashMap::default();
    let mut sets: Vec<Vec<u32>> = Vec::new();
    let mut key = Vec::new();
    key_of(&[nfa.start], &mut closure, &mut key);
    ids.insert(key.clone(), 0);
    sets.push(key.clone());

    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); alphabet.labels.len()];
    let mut touched: Vec<usize> = Vec::new();
    let mut trans: Vec<Vec<(u32, u32)>> = Vec::new();
    // The last bucket resolved and its target: neighbouring byte intervals crossed by the
    // same edges have equal buckets, and their closure is computed once.
    let mut last: (Vec<u32>, u32) = (Vec::new(), 0);
    let mut next = 0;
    while next < sets.len() {
        for &s in &sets[next] {
            for &(label, t) in &nfa.edges[s as usize] {
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
        let mut out = Vec::with_capacity(touched.len());
        last.0.clear();
        for &sym in &touched {
            let id = if !last.0.is_empty() && buckets[sym] == last.0 {
                last.1
            } else {
                key_of(&buckets[sym], &mut closure, &mut key);
                let id = match ids.get(key.as_slice()) {
                    Some(&id) => id,
                    None => {
                        if sets.len() >= limit {
                            return None;
                        }
                        let id = u32::try_from(sets.len()).expect("bounded by the limit");
                        ids.insert(key.clone(), id);
                        sets.push(key.clone());
                        id
                    }
                };
                last.0.clone_from(&buckets[sym]);
                last.1 = id;
                id
            };
            buckets[sym].clear();
            out.push((u32::try_from(sym).expect("small alphabet"), id));
        }
        touched.clear();
        trans.push(out);
        next += 1;
    }
    let accepting = sets
        .iter()
        .map(|set| set.binary_search(&nfa.accept).is_ok())
        .collect();
    Some(Dfa {
        trans,
        accepting,
        labels: alphabet.labels,
    })
}

/// The minimal DFA of `dfa`'s language (Hopcroft), started at state `0`.
pub(crate) fn minimize(dfa: &Dfa) -> Dfa {
    let n = dfa.trans.len();
    // Incoming edges, grouped by target: (symbol, source), `incoming[first[t]..first[t + 1]]`.
    let mut first = vec![0usize; n + 1];
    for out in &dfa.trans {
        for &(_, t) in out {
            first[t as usize + 1] += 1;
        }
    }
    for t in 0..n {
        first[t + 1] += first[t];
    }
    let mut fill = first.clone();
    let mut incoming = vec![(0u32, 0u32); first[n]];
    for (s, out) in dfa.trans.iter().enumerate() {
        for &(sym, t) in out {
            incoming[fill[t as usize]] = (sym, u32::try_from(s).expect("bounded"));
            fill[t as usize] += 1;
        }
    }

    let mut partition = Partition::new(&dfa.accepting);
    let mut in_work: Vec<bool> = vec![true; partition.block_count()];
    let mut work: Vec<u32> = (0..partition.block_count())
        .map(|b| u32::try_from(b).expect("bounded"))
        .collect();
    // The splitter's preimage, bucketed by symbol: `by_symbol[sym]` holds the sources of
    // `sym`-edges into it, `symbols` the buckets in use. Marking is idempotent, so a source
    // listed twice costs nothing more.
    let mut by_symbol: Vec<Vec<u32>> = vec![Vec::new(); dfa.labels.len()];
    let mut symbols: Vec<u32> = Vec::new();
    let mut splits: Vec<(u32, u32)> = Vec::new();
    while let Some(splitter) = work.pop() {
        in_work[splitter as usize] = false;
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
        for &sym in &symbols {
            for &s in &by_symbol[sym as usize] {
                partition.mark(s);
            }
            by_symbol[sym as usize].clear();
            partition.split_marked(&mut splits);
            for &(old, new) in &splits {
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
    let mut order: Vec<usize> = (0..blocks).collect();
    let start_block = partition.block_of[0] as usize;
    order.swap(0, start_block);
    let mut new_id = vec![0u32; blocks];
    for (i, &b) in order.iter().enumerate() {
        new_id[b] = u32::try_from(i).expect("bounded");
    }
    let mut trans = Vec::with_capacity(blocks);
    let mut accepting = Vec::with_capacity(blocks);
    for &b in &order {
        let rep = partition.members(u32::try_from(b).expect("bounded"))[0] as usize;
        trans.push(
            dfa.trans[rep]
                .iter()
                .map(|&(sym, t)| (sym, new_id[partition.block_of[t as usize] as usize]))
                .collect(),
        );
        accepting.push(dfa.accepting[rep]);
    }
    Dfa {
        trans,
        accepting,
        labels: dfa.labels.clone(),
    }
}

/// A partition of states `0..n` into blocks stored as contiguous runs of one permutation, so
/// marking a state and splitting a block cost time proportional to the marked states.
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
    /// The partition into accepting and non-accepting states (empty blocks left out).
    fn new(accepting: &[bool]) -> Partition {
        let n = accepting.len();
        let mut elems: Vec<u32> = Vec::with_capacity(n);
        let to_u32 = |i: usize| u32::try_from(i).expect("bounded");
        elems.extend((0..n).filter(|&s| accepting[s]).map(to_u32));
        let split = elems.len();
        elems.extend((0..n).filter(|&s| !accepting[s]).map(to_u32));
        let mut pos = vec![0u32; n];
        for (i, &s) in elems.iter().enumerate() {
            pos[s as usize] = to_u32(i);
        }
        let mut bounds = vec![0];
        if split > 0 && split < n {
            bounds.push(split);
        }
        bounds.push(n);
        let mut p = Partition {
            elems,
            pos,
            block_of: vec![0; n],
            start: Vec::new(),
            mid: Vec::new(),
            end: Vec::new(),
            touched: Vec::new(),
        };
        for w in bounds.windows(2) {
            let b = to_u32(p.start.len());
            p.start.push(to_u32(w[0]));
            p.mid.push(to_u32(w[0]));
            p.end.push(to_u32(w[1]));
            for i in w[0]..w[1] {
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
