//! Thompson construction: a regular rule body becomes an NFA with epsilon edges.
//!
//! # Invariants
//!
//! - The NFA has exactly one start and one accepting state; every state lies on some path from
//!   the start to the accepting state (the IR has no expression for the empty language).
//! - State numbers follow a left-to-right walk of the expression, so the same expression always
//!   gives the same NFA, whatever the rule ids or names around it.
//! - The walk uses a heap stack, never recursion, so expression depth cannot overflow the stack.
//! - Only `?`, `*` and `+` repetitions are accepted; anything else is a contract violation
//!   reported as [`BuildError`].
//! - With [`Fragments`], large alternations are spliced in as small DFAs
//!   ([`crate::fragment`]); [`Nfa::thompson_len`] is the size without them.

use sieve_ir::{Expr, ExprKind};

use crate::error::BuildError;
use crate::fragment::{Fragments, Sightings};
use crate::fsm::{Fsm, Label};

/// An NFA with epsilon edges; states are indices. Stored flat: state `s`'s edges are
/// `edges[first[s]..first[s + 1]]`, in the order the construction added them.
#[derive(Clone, Debug)]
pub(crate) struct Nfa {
    first: Vec<u32>,
    edges: Vec<(Label, u32)>,
    /// Per state, whether it has an edge that consumes input (a byte or a rule).
    consumes: Vec<bool>,
    pub(crate) start: u32,
    pub(crate) accept: u32,
    /// The number of states the construction would have made without fragments: what limits
    /// are checked against.
    pub(crate) thompson_len: usize,
}

impl Nfa {
    /// The number of states.
    pub(crate) fn len(&self) -> usize {
        self.first.len() - 1
    }

    /// The number of edges.
    pub(crate) fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// The edges out of state `s`.
    pub(crate) fn out(&self, s: u32) -> &[(Label, u32)] {
        let s = s as usize;
        &self.edges[self.first[s] as usize..self.first[s + 1] as usize]
    }

    /// Every edge, state by state.
    pub(crate) fn all_edges(&self) -> &[(Label, u32)] {
        &self.edges
    }

    /// Whether state `s` has an edge that consumes input.
    pub(crate) fn has_input_edge(&self, s: u32) -> bool {
        self.consumes[s as usize]
    }
}

/// An NFA under construction: states are counted and edges listed as they come, to be
/// grouped by source once, in [`NfaBuilder::finish`].
#[derive(Default)]
struct NfaBuilder {
    states: u32,
    /// `(from, label, to)`, in the order added.
    edges: Vec<(u32, Label, u32)>,
}

impl NfaBuilder {
    fn add_state(&mut self) -> u32 {
        self.states += 1;
        self.states - 1
    }

    fn len(&self) -> usize {
        self.states as usize
    }

    fn add_edge(&mut self, from: u32, label: Label, to: u32) {
        self.edges.push((from, label, to));
    }

    fn epsilon(&mut self, from: u32, to: u32) {
        self.add_edge(from, Label::Epsilon, to);
    }

    /// Copies `fsm` in; returns its entry (the copy of its start) and a new exit state that
    /// every accepting state reaches by an epsilon edge.
    fn splice(&mut self, fsm: &Fsm) -> (u32, u32) {
        let offset = self.states;
        for state in fsm.states() {
            let from = self.add_state();
            self.edges.extend(fsm.edges(state).iter().map(|edge| {
                let to = u32::try_from(edge.target.index()).expect("a small fragment");
                (from, edge.label, offset + to)
            }));
        }
        let exit = self.add_state();
        for state in fsm.states() {
            if fsm.is_accepting(state) {
                let from = offset + u32::try_from(state.index()).expect("a small fragment");
                self.epsilon(from, exit);
            }
        }
        (offset, exit)
    }

    /// The NFA, its edges grouped by source (a stable counting sort, so each state keeps its
    /// edges in the order they were added).
    fn finish(self, start: u32, accept: u32, thompson_len: usize) -> Nfa {
        let n = self.len();
        let mut first = vec![0u32; n + 1];
        let mut consumes = vec![false; n];
        for &(from, label, _) in &self.edges {
            first[from as usize + 1] += 1;
            consumes[from as usize] |= label != Label::Epsilon;
        }
        for s in 0..n {
            first[s + 1] += first[s];
        }
        let mut fill = first.clone();
        let mut edges = vec![(Label::Epsilon, 0u32); self.edges.len()];
        for (from, label, to) in self.edges {
            let at = &mut fill[from as usize];
            edges[*at as usize] = (label, to);
            *at += 1;
        }
        Nfa {
            first,
            edges,
            consumes,
            start,
            accept,
            thompson_len,
        }
    }
}

enum Task<'a> {
    Enter(&'a Expr),
    Seq(usize),
    Choice(usize),
    Repeat { min: u32, max: Option<u32> },
}

/// Whether `(min, max)` are the bounds of a `?`, `*` or `+` repetition.
pub(crate) fn is_regular_repeat(min: u32, max: Option<u32>) -> bool {
    matches!((min, max), (0, Some(1)) | (0, None) | (1, None))
}

/// Builds the Thompson NFA of a regular rule body, with the large alternations that
/// `fragments` has spliced in as DFAs; `rule` names the rule in errors.
pub(crate) fn thompson(
    body: &Expr,
    rule: &str,
    fragments: Option<&Fragments>,
) -> Result<Nfa, BuildError> {
    let mut nfa = NfaBuilder::default();
    // States the plain construction would have made beyond those spliced in.
    let mut saved = 0usize;
    let mut sightings = Sightings::default();
    // Fragments under construction: (entry state, exit state).
    let mut frags: Vec<(u32, u32)> = Vec::new();
    let mut tasks = vec![Task::Enter(body)];
    while let Some(task) = tasks.pop() {
        match task {
            Task::Enter(expr) => match expr.kind() {
                ExprKind::Empty => {
                    let s = nfa.add_state();
                    frags.push((s, s));
                }
                ExprKind::Bytes(bytes) => {
                    let s = nfa.add_state();
                    let mut cur = s;
                    for &b in bytes {
                        let next = nfa.add_state();
                        nfa.add_edge(cur, Label::Bytes { lo: b, hi: b }, next);
                        cur = next;
                    }
                    frags.push((s, cur));
                }
                ExprKind::Class(class) => {
                    let (s, e) = (nfa.add_state(), nfa.add_state());
                    for (lo, hi) in class.ranges() {
                        nfa.add_edge(s, Label::Bytes { lo, hi }, e);
                    }
                    frags.push((s, e));
                }
                ExprKind::Ref(id) => {
                    let (s, e) = (nfa.add_state(), nfa.add_state());
                    nfa.add_edge(s, Label::Rule(*id), e);
                    frags.push((s, e));
                }
                ExprKind::Seq(items) => {
                    tasks.push(Task::Seq(items.len()));
                    tasks.extend(items.iter().rev().map(Task::Enter));
                }
                ExprKind::Choice(alts) => {
                    if let Some(fragment) = fragments.and_then(|f| f.get(expr, &mut sightings)) {
                        let before = nfa.len();
                        frags.push(nfa.splice(&fragment.fsm));
                        saved += fragment.thompson_len.saturating_sub(nfa.len() - before);
                        continue;
                    }
                    tasks.push(Task::Choice(alts.len()));
                    tasks.extend(alts.iter().rev().map(Task::Enter));
                }
                ExprKind::Repeat { item, min, max } => {
                    if !is_regular_repeat(*min, *max) {
                        return Err(BuildError::counted_repetition(rule, *min, *max));
                    }
                    tasks.push(Task::Repeat {
                        min: *min,
                        max: *max,
                    });
                    tasks.push(Task::Enter(item));
                }
            },
            Task::Seq(n) => {
                let parts = frags.split_off(frags.len() - n);
                for pair in parts.windows(2) {
                    nfa.epsilon(pair[0].1, pair[1].0);
                }
                frags.push((parts[0].0, parts[n - 1].1));
            }
            Task::Choice(n) => {
                let parts = frags.split_off(frags.len() - n);
                let (s, e) = (nfa.add_state(), nfa.add_state());
                for (ps, pe) in parts {
                    nfa.epsilon(s, ps);
                    nfa.epsilon(pe, e);
                }
                frags.push((s, e));
            }
            Task::Repeat { min, max } => {
                let (is, ie) = frags.pop().expect("the item's fragment");
                match (min, max) {
                    (0, Some(1)) => {
                        let (s, e) = (nfa.add_state(), nfa.add_state());
                        nfa.epsilon(s, is);
                        nfa.epsilon(ie, e);
                        nfa.epsilon(s, e);
                        frags.push((s, e));
                    }
                    (0, None) => {
                        // One hub state is both entry and exit: hub -> item -> hub.
                        let hub = nfa.add_state();
                        nfa.epsilon(hub, is);
                        nfa.epsilon(ie, hub);
                        frags.push((hub, hub));
                    }
                    _ => {
                        // `+`: item, then back to its entry any number of times.
                        let hub = nfa.add_state();
                        nfa.epsilon(ie, hub);
                        nfa.epsilon(hub, is);
                        frags.push((is, hub));
                    }
                }
            }
        }
    }
    let (start, accept) = frags.pop().expect("the body's fragment");
    debug_assert!(frags.is_empty());
    let thompson_len = nfa.len() + saved;
    Ok(nfa.finish(start, accept, thompson_len))
}

/// Scratch space for epsilon closures over one NFA at a time.
#[derive(Default)]
pub(crate) struct Closure {
    stamp: Vec<u32>,
    generation: u32,
    stack: Vec<u32>,
}

impl Closure {
    pub(crate) fn new(states: usize) -> Closure {
        let mut closure = Closure::default();
        closure.reset(states);
        closure
    }

    /// The most NFA states this scratch has room for.
    pub(crate) fn capacity(&self) -> usize {
        self.stamp.len()
    }

    /// Makes room for an NFA of `states` states. Stamps of an earlier NFA may stay: a stamp
    /// only counts when it equals the current generation, which the next closure moves past.
    pub(crate) fn reset(&mut self, states: usize) {
        if self.stamp.len() < states {
            self.stamp.resize(states, 0);
        }
    }

    /// Writes into `out` every state reachable from `seeds` by epsilon edges (seeds included),
    /// in discovery order.
    pub(crate) fn close(
        &mut self,
        nfa: &Nfa,
        seeds: impl IntoIterator<Item = u32>,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.fill(0);
            self.generation = 1;
        }
        for seed in seeds {
            if self.stamp[seed as usize] != self.generation {
                self.stamp[seed as usize] = self.generation;
                self.stack.push(seed);
            }
        }
        while let Some(s) = self.stack.pop() {
            out.push(s);
            for &(label, t) in nfa.out(s) {
                if label == Label::Epsilon && self.stamp[t as usize] != self.generation {
                    self.stamp[t as usize] = self.generation;
                    self.stack.push(t);
                }
            }
        }
    }
}

/// Whether `nfa` accepts the empty string, when the rules for which `nullable_rule` holds may
/// be crossed without consuming input.
pub(crate) fn accepts_empty(nfa: &Nfa, nullable_rule: impl Fn(sieve_ir::RuleId) -> bool) -> bool {
    let mut seen = vec![false; nfa.len()];
    let mut stack = vec![nfa.start];
    seen[nfa.start as usize] = true;
    while let Some(s) = stack.pop() {
        if s == nfa.accept {
            return true;
        }
        for &(label, t) in nfa.out(s) {
            let free = match label {
                Label::Epsilon => true,
                Label::Rule(r) => nullable_rule(r),
                Label::Bytes { .. } => false,
            };
            if free && !seen[t as usize] {
                seen[t as usize] = true;
                stack.push(t);
            }
        }
    }
    false
}

/// The epsilon-free NFA of `nfa`: its states are the start and every target of a non-epsilon
/// edge; each has the non-epsilon edges of its epsilon closure and accepts when the closure
/// holds the accepting state. Returns `(start, accepting, edges)` over indices into the result;
/// `edge_limit` bounds the edges it may create (`None` when exceeded).
#[allow(clippy::type_complexity)] // A private triple consumed by one caller.
pub(crate) fn remove_epsilons(
    nfa: &Nfa,
    edge_limit: usize,
) -> Option<(usize, Vec<bool>, Vec<Vec<(Label, u32)>>)> {
    let mut index = vec![u32::MAX; nfa.len()];
    let mut kept = vec![nfa.start];
    index[nfa.start as usize] = 0;
    for &(label, t) in nfa.all_edges() {
        if label != Label::Epsilon && index[t as usize] == u32::MAX {
            index[t as usize] = u32::try_from(kept.len()).expect("bounded by the NFA");
            kept.push(t);
        }
    }
    let mut closure = Closure::new(nfa.len());
    let mut members = Vec::new();
    let mut accepting = Vec::with_capacity(kept.len());
    let mut out_edges = Vec::with_capacity(kept.len());
    let mut total = 0usize;
    for &q in &kept {
        closure.close(nfa, [q], &mut members);
        accepting.push(members.contains(&nfa.accept));
        let mut out = Vec::new();
        for &m in &members {
            for &(label, t) in nfa.out(m) {
                if label != Label::Epsilon {
                    out.push((label, index[t as usize]));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        total += out.len();
        if total > edge_limit {
            return None;
        }
        out_edges.push(out);
    }
    Some((0, accepting, out_edges))
}
