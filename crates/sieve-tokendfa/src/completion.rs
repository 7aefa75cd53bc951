//! [`CompletionTable`]: for every DFA state, the fewest text tokens of one vocabulary that
//! reach an accepting state — shortest paths over the token-level automaton — and the most
//! of that over the states reachable from it by bytes (for the caps).
//!
//! The token graph's edges are the distinct successor states of each state's accepted
//! tokens: from a [`TokenAutomaton`] when one is built, otherwise from the same walks
//! without keeping the tokens (a state has at most as many distinct successors as the DFA
//! has states, far fewer than tokens). Distances come from one breadth-first search
//! backwards from the accepting states.
//!
//! # Invariants
//!
//! - `dist[s] == 0` iff `s` accepts; `dist[s] == u > 0` iff the shortest token path from `s`
//!   to an accepting state has `u` tokens, so some accepted token leads to a state at
//!   `u - 1` (the seam's descent contract); [`UNREACHABLE`] when no token path reaches one.
//! - `far[s]` is the most `dist` after a token end at the states `q` reachable from `s` by
//!   bytes ([`UNREACHABLE`] counting as the most; a state whose token end kills the input
//!   counting as 0, since no token ends there).
//! - Token ends (token limits): the token graph's edges lead to the state after each token's
//!   end, so distances count limits in; a recogniser's bound reads the state after its
//!   current token's end.

use sieve_vocab::TokenTrie;

use crate::automaton::TokenAutomaton;
use crate::dfa::{ByteDfa, DEAD};
use crate::walk::{walk, Bulk, Visit};

/// The distance of a state from which no token path reaches an accepting state.
pub const UNREACHABLE: u32 = u32::MAX;

/// Shortest completions counted in tokens of one vocabulary (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionTable {
    dist: Vec<u32>,
    far: Vec<u32>,
}

/// Collects the distinct successors of one state's tokens.
struct Successors<'a> {
    seen: &'a mut [bool],
    out: &'a mut Vec<u32>,
}

impl Visit for Successors<'_> {
    fn node(&mut self, _: &TokenTrie, _: usize, state: u32) {
        if !self.seen[state as usize] {
            self.seen[state as usize] = true;
            self.out.push(state);
        }
    }
}

impl CompletionTable {
    /// The table of `dfa` with the tokens of `trie`, walking the trie from every state.
    pub(crate) fn new(dfa: &ByteDfa, trie: &TokenTrie) -> CompletionTable {
        let n = dfa.state_count();
        let mut seen = vec![false; n];
        let mut stack = Vec::new();
        let mut succ: Vec<Vec<u32>> = Vec::with_capacity(n);
        for s in 0..n as u32 {
            let mut out = Vec::new();
            // Tokens of a loop region lead back to `s`: no edge a shortest path needs.
            walk(
                dfa,
                trie,
                s,
                Bulk::InPlace,
                &mut stack,
                &mut Successors {
                    seen: &mut seen,
                    out: &mut out,
                },
            );
            for &t in &out {
                seen[t as usize] = false;
            }
            succ.push(out);
        }
        CompletionTable::from_successors(dfa, &succ)
    }

    /// The table of `dfa` read off its token automaton.
    pub(crate) fn from_automaton(dfa: &ByteDfa, automaton: &TokenAutomaton) -> CompletionTable {
        let succ: Vec<Vec<u32>> = (0..automaton.state_count() as u32)
            .map(|s| {
                let mut out: Vec<u32> = automaton.edges(s).map(|(_, t)| t).collect();
                out.sort_unstable();
                out.dedup();
                out
            })
            .collect();
        CompletionTable::from_successors(dfa, &succ)
    }

    fn from_successors(dfa: &ByteDfa, succ: &[Vec<u32>]) -> CompletionTable {
        let n = dfa.state_count();
        let mut first = vec![0usize; n + 1];
        for out in succ {
            for &t in out {
                first[t as usize + 1] += 1;
            }
        }
        for s in 0..n {
            first[s + 1] += first[s];
        }
        let mut fill = first.clone();
        let mut pred = vec![0u32; first[n]];
        for (s, out) in succ.iter().enumerate() {
            for &t in out {
                pred[fill[t as usize]] = s as u32;
                fill[t as usize] += 1;
            }
        }
        let mut dist = vec![UNREACHABLE; n];
        let mut queue: Vec<u32> = (0..n as u32).filter(|&s| dfa.is_accepting(s)).collect();
        for &s in &queue {
            dist[s as usize] = 0;
        }
        let mut i = 0;
        while i < queue.len() {
            let t = queue[i] as usize;
            for &s in &pred[first[t]..first[t + 1]] {
                if dist[s as usize] == UNREACHABLE {
                    dist[s as usize] = dist[t] + 1;
                    queue.push(s);
                }
            }
            i += 1;
        }
        let far = far(dfa, &dist);
        CompletionTable { dist, far }
    }

    /// The fewest tokens from `state` to an accepting state, or [`UNREACHABLE`].
    pub fn distance(&self, state: u32) -> u32 {
        self.dist[state as usize]
    }

    /// The most [`CompletionTable::distance`] over the states reachable from `state` by bytes.
    pub fn far(&self, state: u32) -> u32 {
        self.far[state as usize]
    }

    /// Fills `caps` (see `Recognizer::completion_caps`) for a recogniser in `state`: a
    /// breadth-first search over bytes, level `d` holding the states `d` bytes away, given up
    /// for [`CompletionTable::far`] past [`CAPS_EFFORT`] states.
    pub(crate) fn caps(&self, dfa: &ByteDfa, state: u32, caps: &mut [u32]) {
        let mut seen: Vec<u32> = vec![state];
        let mut level: Vec<u32> = vec![state];
        let mut next: Vec<u32> = Vec::new();
        let mut cap = self.dist[state as usize];
        for (d, slot) in caps.iter_mut().enumerate() {
            if d > 0 && !level.is_empty() {
                next.clear();
                for &s in &level {
                    for &t in dfa.row(s) {
                        if t != DEAD && !seen.contains(&t) && !next.contains(&t) {
                            next.push(t);
                        }
                    }
                }
                for &t in &next {
                    cap = cap.max(after_end(dfa, &self.dist, t));
                }
                seen.extend_from_slice(&next);
                std::mem::swap(&mut level, &mut next);
                if seen.len() > CAPS_EFFORT {
                    // The empty string keeps `dist[state]` in every cap.
                    cap = cap.max(self.far[state as usize]);
                    level.clear();
                }
            }
            *slot = cap;
        }
    }
}

/// The most states the caps' breadth-first search visits before it answers with
/// [`CompletionTable::far`].
pub const CAPS_EFFORT: usize = 64;

/// `dist` of the state a token end leads `state` to, 0 when the end kills the input (no
/// token ends there, so none is bounded).
fn after_end(dfa: &ByteDfa, dist: &[u32], state: u32) -> u32 {
    match dfa.token_end(state) {
        DEAD => 0,
        t => dist[t as usize],
    }
}

/// `far[s]`: the most [`after_end`] over the states reachable from `s` by bytes. Tarjan's algorithm
/// (explicit stack) finds the strongly connected components of the byte graph sinks first,
/// so each component's value is its members' most and its successors' values, already final.
fn far(dfa: &ByteDfa, dist: &[u32]) -> Vec<u32> {
    const UNSEEN: u32 = u32::MAX;
    let n = dfa.state_count();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut far = vec![0u32; n];
    let mut next_index = 0u32;
    // The walk: each state and the next class of its row to follow.
    let mut path: Vec<(u32, usize)> = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != UNSEEN {
            continue;
        }
        path.push((root, 0));
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (s, ref mut class)) = path.last_mut() {
            let row = dfa.row(s);
            if let Some(&t) = row.get(*class) {
                *class += 1;
                if t == DEAD {
                    continue;
                }
                if index[t as usize] == UNSEEN {
                    index[t as usize] = next_index;
                    low[t as usize] = next_index;
                    next_index += 1;
                    stack.push(t);
                    on_stack[t as usize] = true;
                    path.push((t, 0));
                } else if on_stack[t as usize] {
                    low[s as usize] = low[s as usize].min(index[t as usize]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent as usize] = low[parent as usize].min(low[s as usize]);
            }
            if low[s as usize] != index[s as usize] {
                continue;
            }
            // `s` roots a component: its members are on the stack down to `s`; every edge
            // out of it goes to a finished component.
            let from = stack.iter().rposition(|&m| m == s).expect("on the stack");
            let mut most = 0u32;
            for &m in &stack[from..] {
                most = most.max(after_end(dfa, dist, m));
                for &t in dfa.row(m) {
                    if t != DEAD && !on_stack[t as usize] {
                        most = most.max(far[t as usize]);
                    }
                }
            }
            for m in stack.drain(from..) {
                on_stack[m as usize] = false;
                far[m as usize] = most;
            }
        }
    }
    far
}
