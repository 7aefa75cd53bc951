//! Strongly connected components, callees first: of a grammar's reference graph (rule `A` →
//! rule `B` when `A`'s body names `B`, [`Components::of`]), or of any [`Graph`]
//! (`remove-useless` builds one of the references a derivation can reach first).
//!
//! Several passes and every fixpoint analysis walk the rules one component at a time, so this
//! runs a few times per normalisation on every grammar. It is Pearce's variant of Tarjan's
//! algorithm, run with an explicit stack (a deep chain of rules cannot overflow the thread's
//! stack) over the references gathered into one array.
//!
//! # Invariants
//!
//! - Every rule is in exactly one component, and every rule a component refers to outside
//!   itself is in an earlier one.
//! - The components, and the order of rules within each, are exactly those of
//!   `petgraph::algo::tarjan_scc` on a `petgraph::Graph` with one edge per reference, added in
//!   reference order (a test checks this on random graphs). Passes that spend a budget in
//!   component order, such as `inline-terminals`, so give the same grammar as before.

use sieve_ir::Grammar;

/// The components of a reference graph, callees first (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Components {
    /// The members of every component, one component after another.
    members: Vec<usize>,
    /// Where each component's members end in `members`.
    ends: Vec<usize>,
    /// Per component: whether it is a cycle (more than one rule, or one rule naming itself;
    /// [`Graph::components`] sees only the first, [`Components::of`] adds the second).
    cyclic: Vec<bool>,
}

impl Components {
    /// The components of `grammar`'s reference graph.
    pub(crate) fn of(grammar: &Grammar) -> Components {
        let count = grammar.rules().len();
        let mut graph = Graph::with_capacity(count);
        let mut self_referencing = vec![false; count];
        for (index, rule) in grammar.rules().iter().enumerate() {
            // `push_vertex` without a vector per rule: the references go straight in.
            rule.body().for_each_ref(&mut |target| {
                self_referencing[index] |= target.index() == index;
                graph.targets.push(target.index());
            });
            graph.starts.push(graph.targets.len());
        }
        let mut components = graph.components();
        for c in 0..components.ends.len() {
            if let [only] = components.members_of(c) {
                components.cyclic[c] = self_referencing[*only];
            }
        }
        components
    }

    /// The component of every vertex, numbered as [`Components::iter`] yields them.
    pub(crate) fn component_of_each(&self) -> Vec<usize> {
        let mut component = vec![0; self.members.len()];
        for (c, (members, _)) in self.iter().enumerate() {
            for &member in members {
                component[member] = c;
            }
        }
        component
    }

    /// Each component's members, and whether it is a cycle, callees first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[usize], bool)> + '_ {
        (0..self.ends.len()).map(|c| (self.members_of(c), self.cyclic[c]))
    }

    fn members_of(&self, component: usize) -> &[usize] {
        let start = component.checked_sub(1).map_or(0, |c| self.ends[c]);
        &self.members[start..self.ends[component]]
    }
}

/// A directed graph on `0..n`: the successors of `v` are `targets[starts[v]..starts[v + 1]]`.
pub(crate) struct Graph {
    starts: Vec<usize>,
    targets: Vec<usize>,
}

/// One vertex being visited: its successors not yet looked at end before `next`.
struct Frame {
    vertex: usize,
    next: usize,
    local_root: bool,
}

/// No rank yet: the vertex is unvisited (below every rank, as `None` is in petgraph).
const UNVISITED: usize = 0;

impl Graph {
    /// A graph without vertices, with room for `vertices`.
    pub(crate) fn with_capacity(vertices: usize) -> Graph {
        let mut starts = Vec::with_capacity(vertices + 1);
        starts.push(0);
        Graph {
            starts,
            targets: Vec::with_capacity(vertices * 2),
        }
    }

    /// Adds the next vertex (numbered from 0) with its edges to `successors`, in order.
    pub(crate) fn push_vertex(&mut self, successors: impl IntoIterator<Item = usize>) {
        self.targets.extend(successors);
        self.starts.push(self.targets.len());
    }

    /// Pearce's algorithm, successors taken last to first (the order a `petgraph::Graph`
    /// lists a vertex's edges in), with its frames on the heap. Ranks count up from 1 while
    /// a vertex is open; a finished component's vertices get a rank counting down from
    /// `usize::MAX`, above every open one.
    pub(crate) fn components(&self) -> Components {
        let count = self.starts.len() - 1;
        let mut rank = vec![UNVISITED; count];
        let mut next_rank = 1usize;
        let mut finished_rank = usize::MAX;
        let mut open: Vec<usize> = Vec::new();
        let mut frames: Vec<Frame> = Vec::new();
        let mut out = Components {
            members: Vec::with_capacity(count),
            ends: Vec::new(),
            cyclic: Vec::new(),
        };
        for root in 0..count {
            if rank[root] != UNVISITED {
                continue;
            }
            self.open(root, &mut rank, &mut next_rank, &mut frames);
            while let Some(frame) = frames.last_mut() {
                let v = frame.vertex;
                if frame.next > self.starts[v] {
                    frame.next -= 1;
                    let w = self.targets[frame.next];
                    if rank[w] == UNVISITED {
                        self.open(w, &mut rank, &mut next_rank, &mut frames);
                    } else if rank[w] < rank[v] {
                        rank[v] = rank[w];
                        frame.local_root = false;
                    }
                    continue;
                }
                let Frame { local_root, .. } = frames.pop().expect("the frame looked at");
                if local_root {
                    // `v` and the open vertices ranked at or above it form a component.
                    let mut closed = 1;
                    let start = open
                        .iter()
                        .rposition(|&w| rank[v] > rank[w])
                        .map_or(0, |position| position + 1);
                    for &w in &open[start..] {
                        rank[w] = finished_rank;
                        closed += 1;
                    }
                    rank[v] = finished_rank;
                    out.members.extend_from_slice(&open[start..]);
                    out.members.push(v);
                    out.ends.push(out.members.len());
                    out.cyclic.push(closed > 1);
                    open.truncate(start);
                    next_rank -= closed;
                    finished_rank -= 1;
                } else {
                    open.push(v);
                }
                // Back in the caller: what `v` reached lowers the caller's rank.
                if let Some(caller) = frames.last_mut() {
                    if rank[v] < rank[caller.vertex] {
                        rank[caller.vertex] = rank[v];
                        caller.local_root = false;
                    }
                }
            }
        }
        out
    }

    /// Starts visiting `vertex`: it takes the next rank and a frame with all its successors
    /// still to look at.
    fn open(
        &self,
        vertex: usize,
        rank: &mut [usize],
        next_rank: &mut usize,
        frames: &mut Vec<Frame>,
    ) {
        rank[vertex] = *next_rank;
        *next_rank += 1;
        frames.push(Frame {
            vertex,
            next: self.starts[vertex + 1],
            local_root: true,
        });
    }
}

#[cfg(test)]
mod tests {
    use petgraph::graph::{DiGraph, NodeIndex};
    use proptest::prelude::*;

    use super::{Components, Graph};

    fn ours(count: usize, edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let mut graph = Graph::with_capacity(count);
        for successors in edges.iter().take(count) {
            graph.push_vertex(successors.iter().map(|&w| w % count));
        }
        let components: Components = graph.components();
        components.iter().map(|(m, _)| m.to_vec()).collect()
    }

    fn petgraphs(count: usize, edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let mut graph: DiGraph<(), ()> = DiGraph::new();
        for _ in 0..count {
            graph.add_node(());
        }
        for (v, successors) in edges.iter().take(count).enumerate() {
            for &w in successors {
                graph.add_edge(NodeIndex::new(v), NodeIndex::new(w % count), ());
            }
        }
        petgraph::algo::tarjan_scc(&graph)
            .into_iter()
            .map(|c| c.into_iter().map(NodeIndex::index).collect())
            .collect()
    }

    proptest! {
        /// The same components in the same order, members in the same order, as petgraph's
        /// Tarjan on the same edges: passes that depend on the order keep their output.
        #[test]
        fn components_equal_petgraphs(
            count in 1usize..40,
            edges in prop::collection::vec(prop::collection::vec(0usize..40, 0..4), 40),
        ) {
            prop_assert_eq!(ours(count, &edges), petgraphs(count, &edges));
        }
    }

    /// A chain longer than any thread's stack could hold as recursion is split without one.
    #[test]
    fn a_long_chain_needs_no_deep_recursion() {
        let count = 200_000;
        let edges: Vec<Vec<usize>> = (0..count).map(|v| vec![(v + 1) % count]).collect();
        let components = ours(count, &edges);
        assert_eq!(components.len(), 1);
        assert_eq!(components[0].len(), count);
    }
}
