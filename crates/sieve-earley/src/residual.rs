//! The residual hash of a state: the structure of what its rule can still read from it.
//!
//! A bare classification (see `classify.rs` and `within.rs`) walks the state's automaton only
//! through the states reachable from it, descends into the rules those states refer to, and
//! leaves the rule only through FOLLOW. So two states — in one rule, in two rules of one
//! grammar, or in two grammars — whose reachable parts read alike, with references to rules
//! of equal structural hash at corresponding edges, classify alike given equal FOLLOW sets.
//! The residual hash names that reachable part: the string contents of `"name":string` and of
//! `"email":string` hash equal although their rules do not.
//!
//! The hash follows the strongly connected components of the rule's automaton, callees first
//! (the hierarchical scheme of XGrammar 2 §3.3, inside one rule): a breadth-first walk from the
//! state, kept inside its component, numbers the states it meets in visit order; each
//! contributes its accepting flag and a marker, then each edge, sorted by label (byte ranges
//! by bounds, references by the callee's structural hash, then ε) and by target, contributes
//! its label and then its target: the visit number of a target inside the component, the
//! residual hash of one outside it. A state outside every cycle is thus hashed from its
//! successors' hashes (a Merkle hash), and the hashes found are kept ([`ResidualMemo`]): the
//! states of a long rule, an object's members one after another, cost a step each rather than
//! a walk of the rest of the rule each.
//!
//! # Invariants
//!
//! - Equal hashes mean equal encodings, up to the collisions of two 64-bit lanes, and the
//!   encoding is structural: states of equal hash have residuals that read alike.
//! - A state's hash does not depend on which states were hashed before it (the kept hashes
//!   are the ones a fresh walk would compute).
//! - Never for a state whose rule has no structural hash (the callees' hashes are then not
//!   all known) nor for counted rules' states.
//! - Values depend on structure only (fixed constants, no addresses or map order), like
//!   `sieve_fsm`'s rule hashes; a tie in the edge order (two references to rules of equal
//!   hash out of one state) is broken by state id, which can only split equal residuals, never
//!   join different ones.

use std::sync::Mutex;

use foldhash::HashMap;
use sieve_backend::FingerprintHasher;

use crate::grammar::{EarleyGrammar, StateInfo, NOT_COUNTED};

const K_STATE: u64 = 0x5245_5349_4455_414c;
const K_RULE: u64 = 0x5245_535f_5255_4c45;
const K_EPSILON: u64 = 0x5245_535f_4550_5331;
const K_INSIDE: u64 = 0x5245_535f_494e_5331;
const K_OUTSIDE: u64 = 0x5245_535f_4f55_5431;
const SEED: u64 = 0x7265_735f_7363_6331;

/// The residual hashes found so far, and the components of the rules they were found in.
/// Cloning a grammar does not clone it.
#[derive(Default)]
pub(crate) struct ResidualMemo(Mutex<Memo>);

#[derive(Default)]
struct Memo {
    hashes: HashMap<u32, [u64; 2]>,
    components: HashMap<u32, Components>,
}

/// Buffers [`EarleyGrammar::hash_in_component`] reuses from one state to the next.
#[derive(Default)]
struct Scratch {
    /// Per member of the component (by its place), its visit number, or `u32::MAX`.
    number: Vec<u32>,
    queue: Vec<u32>,
    edges: Vec<EdgeKey>,
}

/// An edge in the order of the encoding: its label's key (kind, then bounds or callee hash),
/// its target's key (outside the component and its hash, or inside and its state id), and the
/// target.
type EdgeKey = ((u8, u64, u64), (bool, u64, u64), u32);

/// The strongly connected components of one rule's automaton.
struct Components {
    /// The rule's first state.
    first: u32,
    /// Per state of the rule (by its offset from `first`), its component and its place among
    /// the component's members.
    of: Vec<u32>,
    place: Vec<u32>,
    /// Component `c`'s states are `members[start[c]..start[c + 1]]`.
    start: Vec<u32>,
    members: Vec<u32>,
}

impl Components {
    fn of(&self, state: u32) -> u32 {
        self.of[(state - self.first) as usize]
    }

    fn place(&self, state: u32) -> usize {
        self.place[(state - self.first) as usize] as usize
    }

    fn members(&self, component: u32) -> &[u32] {
        let c = component as usize;
        &self.members[self.start[c] as usize..self.start[c + 1] as usize]
    }
}

impl Clone for ResidualMemo {
    fn clone(&self) -> ResidualMemo {
        ResidualMemo::default()
    }
}

impl std::fmt::Debug for ResidualMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResidualMemo")
    }
}

impl EarleyGrammar {
    /// The residual hash of `state` (see the module docs), or `None` when it has none.
    pub(crate) fn residual_hash(&self, state: u32) -> Option<[u64; 2]> {
        let info = self.states[state as usize];
        self.rule_hash[info.rule as usize]?;
        if info.counted != NOT_COUNTED {
            return None;
        }
        let mut memo = self
            .residuals
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&hash) = memo.hashes.get(&state) {
            return Some(hash);
        }
        let Memo { hashes, components } = &mut *memo;
        let components = components
            .entry(info.rule)
            .or_insert_with(|| self.components(info.rule));
        // Each state is hashed once the states its component leads out to are.
        let mut pending = vec![state];
        let mut scratch = Scratch::default();
        while let Some(&at) = pending.last() {
            if hashes.contains_key(&at) {
                pending.pop();
                continue;
            }
            let component = components.of(at);
            let waiting = pending.len();
            for &member in components.members(component) {
                for target in self.targets(&self.states[member as usize]) {
                    if components.of(target) != component && !hashes.contains_key(&target) {
                        pending.push(target);
                    }
                }
            }
            if pending.len() == waiting {
                let hash = self.hash_in_component(at, components, hashes, &mut scratch)?;
                hashes.insert(at, hash);
                pending.pop();
            }
        }
        hashes.get(&state).copied()
    }

    /// The hash of `state` (see the module docs), the states its component leads out to
    /// being in `hashes`; `None` when a callee has no structural hash.
    fn hash_in_component(
        &self,
        state: u32,
        components: &Components,
        hashes: &HashMap<u32, [u64; 2]>,
        scratch: &mut Scratch,
    ) -> Option<[u64; 2]> {
        let component = components.of(state);
        let Scratch {
            number,
            queue,
            edges,
        } = scratch;
        number.clear();
        number.resize(components.members(component).len(), u32::MAX);
        number[components.place(state)] = 0;
        queue.clear();
        queue.push(state);
        let mut lanes = FingerprintHasher::new(SEED);
        let mut next = 0;
        while let Some(&at) = queue.get(next) {
            next += 1;
            let info = &self.states[at as usize];
            lanes.word(u64::from(info.accepting));
            lanes.word(K_STATE);
            edges.clear();
            let target_key = |target: u32| {
                if components.of(target) == component {
                    (false, u64::from(target), 0)
                } else {
                    let [h0, h1] = hashes[&target];
                    (true, h0, h1)
                }
            };
            for edge in self.byte_edges(info) {
                let label = (0, edge.lo.into(), edge.hi.into());
                edges.push((label, target_key(edge.target), edge.target));
            }
            for edge in self.rule_edges(info) {
                let callee = self.rule_hash[edge.rule as usize]?;
                edges.push(((1, callee, 0), target_key(edge.target), edge.target));
            }
            for &target in self.eps_edges(info) {
                edges.push(((2, 0, 0), target_key(target), target));
            }
            edges.sort_unstable();
            for &((kind, a, b), (outside, h0, h1), target) in edges.iter() {
                match kind {
                    0 => {
                        lanes.word(a);
                        lanes.word(b);
                    }
                    1 => {
                        lanes.word(K_RULE);
                        lanes.word(a);
                    }
                    _ => lanes.word(K_EPSILON),
                }
                if outside {
                    lanes.word(K_OUTSIDE);
                    lanes.word(h0);
                    lanes.word(h1);
                } else {
                    let visit = &mut number[components.place(target)];
                    if *visit == u32::MAX {
                        *visit = u32::try_from(queue.len()).expect("states are counted in u32");
                        queue.push(target);
                    }
                    lanes.word(K_INSIDE);
                    lanes.word(u64::from(*visit));
                }
            }
        }
        Some(lanes.finish())
    }

    /// The targets of a state's edges: byte, rule and ε edges.
    fn targets<'a>(&'a self, info: &'a StateInfo) -> impl Iterator<Item = u32> + 'a {
        let bytes = self.byte_edges(info).iter().map(|e| e.target);
        let rules = self.rule_edges(info).iter().map(|e| e.target);
        bytes
            .chain(rules)
            .chain(self.eps_edges(info).iter().copied())
    }

    /// The strongly connected components of `rule`'s automaton (Tarjan's algorithm, without
    /// recursion).
    fn components(&self, rule: u32) -> Components {
        let first = self.start[rule as usize];
        let end = self
            .start
            .get(rule as usize + 1)
            .copied()
            .unwrap_or(self.states.len() as u32);
        let n = (end - first) as usize;
        let local = |state: u32| (state - first) as usize;
        const UNSEEN: u32 = u32::MAX;
        let mut index = vec![UNSEEN; n];
        let mut low = vec![0u32; n];
        let mut on_stack = vec![false; n];
        let mut stack: Vec<u32> = Vec::new();
        let mut of = vec![UNSEEN; n];
        let mut place = vec![0u32; n];
        let mut start = vec![0u32];
        let mut members: Vec<u32> = Vec::with_capacity(n);
        let mut visited = 0u32;
        // The walk: a state and how many of its targets it has looked at.
        let mut calls: Vec<(u32, usize)> = Vec::new();
        for root in first..end {
            if index[local(root)] != UNSEEN {
                continue;
            }
            index[local(root)] = visited;
            low[local(root)] = visited;
            visited += 1;
            stack.push(root);
            on_stack[local(root)] = true;
            calls.push((root, 0));
            while let Some(&mut (v, ref mut seen)) = calls.last_mut() {
                let next = self.targets(&self.states[v as usize]).nth(*seen);
                if let Some(w) = next {
                    *seen += 1;
                    if index[local(w)] == UNSEEN {
                        index[local(w)] = visited;
                        low[local(w)] = visited;
                        visited += 1;
                        stack.push(w);
                        on_stack[local(w)] = true;
                        calls.push((w, 0));
                    } else if on_stack[local(w)] {
                        low[local(v)] = low[local(v)].min(index[local(w)]);
                    }
                    continue;
                }
                calls.pop();
                if let Some(&(u, _)) = calls.last() {
                    low[local(u)] = low[local(u)].min(low[local(v)]);
                }
                if low[local(v)] == index[local(v)] {
                    let component = u32::try_from(start.len() - 1).expect("bounded by states");
                    loop {
                        let w = stack.pop().expect("v is on the stack");
                        on_stack[local(w)] = false;
                        of[local(w)] = component;
                        let from = start.last().copied().expect("a start per component");
                        place[local(w)] =
                            u32::try_from(members.len()).expect("bounded by states") - from;
                        members.push(w);
                        if w == v {
                            break;
                        }
                    }
                    start.push(u32::try_from(members.len()).expect("bounded by states"));
                }
            }
        }
        Components {
            first,
            of,
            place,
            start,
            members,
        }
    }
}
