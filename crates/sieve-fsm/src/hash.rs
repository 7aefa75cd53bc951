//! The hierarchical structural hash of XGrammar 2 §3.3 (Algorithms 1 and 2).
//!
//! Rules are hashed callees first, in the order [`petgraph::algo::tarjan_scc`] yields the
//! strongly connected components of the rule-reference graph:
//!
//! - **Acyclic rule** (an SCC of one rule that does not reference itself): Algorithm 1. A
//!   breadth-first walk from the start state numbers states in visit order; each state
//!   contributes its accepting flag and a state marker, then each edge, in sorted order,
//!   contributes its label — a byte range as `(lo, hi)`, a rule reference as `(K_RULE, hash of
//!   the referenced rule)`, an epsilon edge as `(K_EPSILON, K_EPSILON)` — and the visit number
//!   of its target. Edges are sorted by that label key, then by canonical target number.
//! - **Simple cycle** (an SCC in which every rule references exactly one rule of the SCC; a
//!   self-recursive rule is a cycle of length 1): each member's local hash is Algorithm 1 with
//!   references inside the cycle hashed as the constant `K_CYCLE`; then Algorithm 2 gives
//!   member `i` the fold of the local hashes around the cycle in reference order starting at
//!   `i`. Corresponding members of isomorphic cycles hash equal; entering the cycle at a
//!   different member gives a different hash.
//! - **Any other SCC** gets no hash (`None`): neither algorithm identifies it soundly. Every
//!   rule that references a rule without a hash has none either.
//! - **Counted repetition**: `(K_COUNTED, hash of the item, min, max)`, as a member of a cycle
//!   or not, like any other rule.
//!
//! # Invariants
//!
//! The hash depends only on structure: never on rule ids, names, the grammar's other rules,
//! addresses or hash-map order, and [`hash_combine`] uses fixed constants, so values are stable
//! across runs, machines and versions of Rust (a golden test pins one). The combine step is not
//! commutative, so order matters everywhere. Ties in the edge order (two references to
//! different rules of equal hash out of one state, or equal labels in a non-deterministic
//! automaton) are broken by canonical state number, which can in rare cases depend on rule ids.

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use sieve_ir::RuleId;

use crate::fsm::{Fsm, Label, StateId};
use crate::RuleAutomaton;

const K_STATE: u64 = 0x5354_4154_455f_4b31;
const K_RULE: u64 = 0x5255_4c45_5f52_4546;
const K_EPSILON: u64 = 0x4550_5349_4c4f_4e30;
const K_CYCLE: u64 = 0x4359_434c_455f_5245;
const K_COUNTED: u64 = 0x434f_554e_5445_4431;
const K_UNBOUNDED: u64 = 0x554e_424f_554e_4431;
const SEED_FSM: u64 = 0x4653_4d5f_5345_4544;
const SEED_CYCLE: u64 = 0x4359_434c_455f_5345;

/// splitmix64's finaliser: a bijective mixer of one word.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Folds `value` into the running hash `h`. Not commutative: the running hash is rotated and
/// multiplied before the mixed value joins it.
pub(crate) fn hash_combine(h: u64, value: u64) -> u64 {
    mix(h.rotate_left(23).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ mix(value ^ 0xd6e8_feb8_6659_fd93))
}

/// Computes the hash of every rule (indexed by rule), `None` where the SCC shape rules it out.
pub(crate) fn hash_rules(automata: &[RuleAutomaton]) -> Vec<Option<u64>> {
    let n = automata.len();
    let references = References::new(automata);
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(n, references.items.len());
    for _ in 0..n {
        graph.add_node(());
    }
    for from in 0..n {
        for &to in references.of(from) {
            graph.add_edge(NodeIndex::new(from), NodeIndex::new(to as usize), ());
        }
    }

    let mut hashes: Vec<Option<u64>> = vec![None; n];
    let mut in_scc = vec![false; n];
    let mut scratch = Scratch::default();
    for scc in tarjan_scc(&graph) {
        let members: Vec<usize> = scc.iter().map(|node| node.index()).collect();
        if let [only] = members[..] {
            if !references.of(only).contains(&(only as u32)) {
                hashes[only] = local_hash(&automata[only], |r| hashes[r.index()], &mut scratch);
                continue;
            }
        }
        for &m in &members {
            in_scc[m] = true;
        }
        hash_cycle(
            automata,
            &references,
            &members,
            &in_scc,
            &mut hashes,
            &mut scratch,
        );
        for &m in &members {
            in_scc[m] = false;
        }
    }
    hashes
}

/// The rules each automaton references, sorted, without repeats, in one vector: rule `r`'s
/// are `items[offsets[r]..offsets[r + 1]]`.
struct References {
    offsets: Vec<u32>,
    items: Vec<u32>,
}

impl References {
    fn new(automata: &[RuleAutomaton]) -> References {
        let mut offsets = Vec::with_capacity(automata.len() + 1);
        let mut items = Vec::new();
        offsets.push(0);
        for automaton in automata {
            let from = items.len();
            match automaton {
                RuleAutomaton::Regular(fsm) => {
                    items.extend(fsm.reference_edges().map(|r| r.index() as u32));
                    items[from..].sort_unstable();
                    let mut kept = from;
                    for i in from..items.len() {
                        if kept == from || items[kept - 1] != items[i] {
                            items[kept] = items[i];
                            kept += 1;
                        }
                    }
                    items.truncate(kept);
                }
                RuleAutomaton::Counted { item, .. } => items.push(item.index() as u32),
            }
            offsets.push(u32::try_from(items.len()).expect("edges are counted in u32"));
        }
        References { offsets, items }
    }

    fn of(&self, rule: usize) -> &[u32] {
        &self.items[self.offsets[rule] as usize..self.offsets[rule + 1] as usize]
    }
}

/// Buffers Algorithm 1 reuses from one automaton to the next.
#[derive(Default)]
struct Scratch {
    /// Per state, its visit number, or `u32::MAX`; all `u32::MAX` between automata.
    number: Vec<u32>,
    queue: Vec<StateId>,
    keyed: Vec<((u8, u64, u64), StateId)>,
}

/// Algorithm 2 on an SCC, when it is a simple cycle; leaves `None` otherwise.
fn hash_cycle(
    automata: &[RuleAutomaton],
    references: &References,
    members: &[usize],
    in_scc: &[bool],
    hashes: &mut [Option<u64>],
    scratch: &mut Scratch,
) {
    // `next[i]`: the position in `members` of the one member that member `i` references.
    let mut position: Vec<(usize, usize)> =
        members.iter().enumerate().map(|(i, &m)| (m, i)).collect();
    position.sort_unstable();
    let position_of = |rule: usize| {
        let found = position.binary_search_by_key(&rule, |&(m, _)| m);
        position[found.expect("a member")].1
    };
    let mut next = Vec::with_capacity(members.len());
    for &m in members {
        let mut inside = references.of(m).iter().filter(|&&r| in_scc[r as usize]);
        match (inside.next(), inside.next()) {
            (Some(r), None) => next.push(position_of(*r as usize)),
            _ => return, // Not a simple cycle.
        }
    }
    let mut local = Vec::with_capacity(members.len());
    for &m in members {
        let callee = |r: RuleId| {
            if in_scc[r.index()] {
                Some(K_CYCLE)
            } else {
                hashes[r.index()]
            }
        };
        match local_hash(&automata[m], callee, scratch) {
            Some(h) => local.push(h),
            None => return,
        }
    }
    for (i, &m) in members.iter().enumerate() {
        let mut h = SEED_CYCLE;
        let mut cur = i;
        for _ in 0..members.len() {
            h = hash_combine(h, local[cur]);
            cur = next[cur];
        }
        debug_assert_eq!(cur, i, "a simple cycle returns to where it started");
        hashes[m] = Some(h);
    }
}

/// The hash of one automaton given its callees' hashes (`None` when one is missing).
fn local_hash(
    automaton: &RuleAutomaton,
    callee: impl Fn(RuleId) -> Option<u64>,
    scratch: &mut Scratch,
) -> Option<u64> {
    match automaton {
        RuleAutomaton::Regular(fsm) => fsm_hash(fsm, callee, scratch),
        RuleAutomaton::Counted { item, min, max } => {
            let mut h = hash_combine(K_COUNTED, callee(*item)?);
            h = hash_combine(h, u64::from(*min));
            h = match max {
                Some(max) => hash_combine(h, u64::from(*max)),
                None => hash_combine(h, K_UNBOUNDED),
            };
            Some(h)
        }
    }
}

/// The sort key of an edge label for Algorithm 1: byte ranges first, by bounds; then
/// references, by the referenced rule's hash; then epsilon.
fn label_key(label: Label, callee: &impl Fn(RuleId) -> Option<u64>) -> Option<(u8, u64, u64)> {
    Some(match label {
        Label::Bytes { lo, hi } => (0, u64::from(lo), u64::from(hi)),
        Label::Rule(r) => (1, callee(r)?, 0),
        Label::Epsilon => (2, 0, 0),
    })
}

/// Algorithm 1 (equal hashes imply equal encodings).
fn fsm_hash(
    fsm: &Fsm,
    callee: impl Fn(RuleId) -> Option<u64>,
    scratch: &mut Scratch,
) -> Option<u64> {
    let Scratch {
        number,
        queue,
        keyed,
    } = scratch;
    if number.len() < fsm.state_count() {
        number.resize(fsm.state_count(), u32::MAX);
    }
    queue.clear();
    queue.push(fsm.start());
    number[fsm.start().index()] = 0;
    let h = fsm_hash_from_start(fsm, &callee, number, queue, keyed);
    // Leave every visit number unset for the next automaton (also after a missing callee).
    for state in queue.iter() {
        number[state.index()] = u32::MAX;
    }
    h
}

/// The walk of [`fsm_hash`] from the queued start state.
fn fsm_hash_from_start(
    fsm: &Fsm,
    callee: &impl Fn(RuleId) -> Option<u64>,
    number: &mut [u32],
    queue: &mut Vec<StateId>,
    keyed: &mut Vec<((u8, u64, u64), StateId)>,
) -> Option<u64> {
    let mut h = hash_combine(SEED_FSM, fsm.state_count() as u64);
    let mut next = 0;
    while next < queue.len() {
        let state = queue[next];
        next += 1;
        h = hash_combine(h, u64::from(fsm.is_accepting(state)));
        h = hash_combine(h, K_STATE);
        keyed.clear();
        for edge in fsm.edges(state) {
            keyed.push((label_key(edge.label, callee)?, edge.target));
        }
        keyed.sort_unstable();
        for &((kind, a, b), target) in keyed.iter() {
            if number[target.index()] == u32::MAX {
                number[target.index()] = u32::try_from(queue.len()).expect("bounded");
                queue.push(target);
            }
            h = match kind {
                0 => hash_combine(hash_combine(h, a), b),
                1 => hash_combine(hash_combine(h, K_RULE), a),
                _ => hash_combine(hash_combine(h, K_EPSILON), K_EPSILON),
            };
            h = hash_combine(h, u64::from(number[target.index()]));
        }
    }
    Some(h)
}
