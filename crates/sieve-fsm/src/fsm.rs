//! The automaton types: [`StateId`], [`Label`], [`Edge`] and [`Fsm`].
//!
//! An [`Fsm`] is stored flat, for the Earley backend's hot loop: one vector of states (an
//! accepting flag and the offset of the state's first edge) and one vector of all edges, so a
//! state's edges are a contiguous slice and nothing is behind a pointer.
//!
//! # Invariants
//!
//! For every [`Fsm`] made by [`crate::Builder`]:
//!
//! - states are numbered canonically: breadth-first from the start state, visiting each state's
//!   edges in sorted order, so the start state is `0` and every state is reachable from it;
//! - each state's edges are sorted by `(label, target)` and have no duplicates; byte-range edges
//!   to the same target are merged into maximal ranges, so two such edges never overlap or
//!   touch;
//! - there are no [`Label::Epsilon`] edges (epsilon edges exist only inside construction);
//! - when [`Fsm::is_deterministic`] holds, no state has two edges whose byte ranges overlap or
//!   two edges with the same rule label, and the automaton is minimal (unless
//!   [`crate::Config::minimize`] was turned off).

use std::fmt;

use sieve_ir::RuleId;

/// The index of a state in its [`Fsm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StateId(u32);

impl StateId {
    /// The largest number of states one automaton may hold.
    pub const LIMIT: usize = u32::MAX as usize;

    /// Builds an id from an index; `None` when the index is over [`StateId::LIMIT`].
    pub fn new(index: usize) -> Option<StateId> {
        u32::try_from(index).ok().map(StateId)
    }

    /// The index into the automaton's state list.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Builds an id from an index known to be in range (construction code only).
    pub(crate) fn from_index(index: usize) -> StateId {
        StateId::new(index).expect("state count is checked against the limits")
    }
}

impl fmt::Display for StateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What an [`Edge`] consumes.
///
/// Labels order as byte ranges (by `lo`, then `hi`), then rule references (by rule id), then
/// epsilon; edges are sorted in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    /// One byte in the inclusive range `lo..=hi` (`lo <= hi`).
    Bytes {
        /// The smallest byte of the range.
        lo: u8,
        /// The largest byte of the range.
        hi: u8,
    },
    /// A whole sentence of another rule (or of this one, for recursion).
    Rule(RuleId),
    /// Nothing. Only construction uses these; built automata have none.
    Epsilon,
}

impl Label {
    /// Whether this label is a byte range holding `byte`.
    pub fn matches_byte(&self, byte: u8) -> bool {
        matches!(*self, Label::Bytes { lo, hi } if lo <= byte && byte <= hi)
    }
}

/// A transition: from the state that owns it, on `label`, to `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Edge {
    /// What the transition consumes.
    pub label: Label,
    /// The state it leads to.
    pub target: StateId,
}

/// One state's flags and where its edges start in [`Fsm`]'s edge vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct StateRecord {
    first_edge: u32,
    accepting: bool,
}

/// A finite automaton over bytes and rule references, for one rule. See the module docs for
/// its invariants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fsm {
    /// One record per state, plus a sentinel whose `first_edge` is the edge count.
    states: Vec<StateRecord>,
    edges: Vec<Edge>,
    deterministic: bool,
}

impl Fsm {
    /// An automaton without states, to be filled by [`Fsm::push_state`] in state order (state
    /// `0`, the start, first) and closed by [`Fsm::finish`]; room for `states` states.
    pub(crate) fn with_capacity(states: usize, deterministic: bool) -> Fsm {
        Fsm {
            states: Vec::with_capacity(states + 1),
            edges: Vec::new(),
            deterministic,
        }
    }

    /// Adds the next state, whose edges `edges` then appends (sorted by label, then target).
    pub(crate) fn push_state(&mut self, accepting: bool, edges: impl FnOnce(&mut Vec<Edge>)) {
        self.states.push(StateRecord {
            first_edge: u32::try_from(self.edges.len()).expect("edge count is checked"),
            accepting,
        });
        edges(&mut self.edges);
    }

    /// Closes the states pushed with the sentinel record.
    pub(crate) fn finish(mut self) -> Fsm {
        self.states.push(StateRecord {
            first_edge: u32::try_from(self.edges.len()).expect("edge count is checked"),
            accepting: false,
        });
        self
    }

    /// This automaton with every rule label `r` replaced by `rename(r)`. `rename` must be
    /// strictly increasing on the rules referenced, so that each state's edges stay sorted
    /// and the numbering stays canonical.
    pub(crate) fn rename_rules(&self, rename: impl Fn(RuleId) -> RuleId) -> Fsm {
        let edges = self
            .edges
            .iter()
            .map(|edge| Edge {
                label: match edge.label {
                    Label::Rule(rule) => Label::Rule(rename(rule)),
                    label => label,
                },
                target: edge.target,
            })
            .collect();
        let renamed = Fsm {
            states: self.states.clone(),
            edges,
            deterministic: self.deterministic,
        };
        debug_assert!(
            renamed.states().all(|s| renamed.edges(s).is_sorted()),
            "a monotone renaming keeps every state's edges sorted"
        );
        renamed
    }

    /// This automaton with a chain of states reading `head` in front of its start: states
    /// `0 … head.len() - 1` read one byte each, this automaton's states follow in their order.
    /// Breadth-first from the new start that is this automaton's own numbering shifted, so
    /// the result is canonical too.
    pub(crate) fn after_chain(&self, head: &[u8]) -> Fsm {
        let offset = u32::try_from(head.len()).expect("bounded by the limits");
        let mut states = Vec::with_capacity(self.states.len() + head.len());
        let mut edges = Vec::with_capacity(self.edges.len() + head.len());
        for (i, &byte) in (0..offset).zip(head) {
            states.push(StateRecord {
                first_edge: i,
                accepting: false,
            });
            edges.push(Edge {
                label: Label::Bytes { lo: byte, hi: byte },
                target: StateId(i + 1),
            });
        }
        states.extend(self.states.iter().map(|record| StateRecord {
            first_edge: record.first_edge + offset,
            accepting: record.accepting,
        }));
        edges.extend(self.edges.iter().map(|edge| Edge {
            label: edge.label,
            target: StateId(edge.target.0 + offset),
        }));
        Fsm {
            states,
            edges,
            deterministic: self.deterministic,
        }
    }

    /// The start state; always state `0`.
    pub fn start(&self) -> StateId {
        StateId(0)
    }

    /// The number of states.
    pub fn state_count(&self) -> usize {
        self.states.len() - 1
    }

    /// The number of edges over all states.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// Every state id, ascending.
    pub fn states(&self) -> impl ExactSizeIterator<Item = StateId> + '_ {
        (0..self.state_count()).map(StateId::from_index)
    }

    /// The edges out of `state`, sorted by `(label, target)`.
    ///
    /// # Panics
    /// When `state` is not a state of this automaton.
    pub fn edges(&self, state: StateId) -> &[Edge] {
        let from = self.states[state.index()].first_edge as usize;
        let to = self.states[state.index() + 1].first_edge as usize;
        &self.edges[from..to]
    }

    /// Whether the rule may end in `state`.
    ///
    /// # Panics
    /// When `state` is not a state of this automaton.
    pub fn is_accepting(&self, state: StateId) -> bool {
        assert!(state.index() < self.state_count(), "state out of range");
        self.states[state.index()].accepting
    }

    /// Whether the automaton is a DFA, minimal by default (see the module docs). `false` means the subset
    /// construction hit [`crate::Config::dfa_state_limit`] and this is the epsilon-free NFA.
    pub fn is_deterministic(&self) -> bool {
        self.deterministic
    }

    /// The rule of every rule-reference edge, in edge order (with repeats).
    pub(crate) fn reference_edges(&self) -> impl Iterator<Item = RuleId> + '_ {
        self.edges.iter().filter_map(|e| match e.label {
            Label::Rule(r) => Some(r),
            _ => None,
        })
    }

    /// The rules this automaton references, sorted, without repeats.
    pub fn references(&self) -> Vec<RuleId> {
        let mut refs: Vec<RuleId> = self.reference_edges().collect();
        refs.sort();
        refs.dedup();
        refs
    }

    /// Whether the automaton accepts exactly `input`; `None` when it has rule-reference edges,
    /// which this helper cannot follow.
    ///
    /// It simulates the state set, so it works for non-deterministic automata too. Meant for
    /// tests and tools, not the hot path.
    pub fn matches(&self, input: &[u8]) -> Option<bool> {
        if self
            .edges
            .iter()
            .any(|e| !matches!(e.label, Label::Bytes { .. }))
        {
            return None;
        }
        let mut current = vec![self.start()];
        let mut seen = vec![false; self.state_count()];
        for &byte in input {
            let mut next = Vec::new();
            for &state in &current {
                for edge in self.edges(state) {
                    if edge.label.matches_byte(byte) && !seen[edge.target.index()] {
                        seen[edge.target.index()] = true;
                        next.push(edge.target);
                    }
                }
            }
            for &state in &next {
                seen[state.index()] = false;
            }
            if next.is_empty() {
                return Some(false);
            }
            current = next;
        }
        Some(current.iter().any(|&s| self.is_accepting(s)))
    }
}
