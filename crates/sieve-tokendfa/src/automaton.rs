//! [`TokenAutomaton`]: the token-level automaton (Koo et al.'s detokenising transducer
//! composed with the DFA), built ahead of time: for every DFA state, the text tokens it
//! accepts and the state each leads to, so a mask or a transition is a table look-up.
//!
//! # Invariants
//!
//! - `next(s, t)` is `Some(q)` iff feeding token `t`'s bytes to the DFA from `s` succeeds and
//!   ends in `q`; [`TokenAutomaton::fill_mask`] sets exactly those tokens.
//! - A state that loops on a large byte class keeps the class's region (shared with the trie,
//!   Koo et al.'s terminal-label mask): its tokens lead back to the state and are not listed
//!   as edges; every other accepted token is one explicit edge, sorted by token id.
//! - The explicit edges, the offsets and the distinct regions' bitmasks take at most
//!   [`crate::Config::get_token_automaton_bytes`] heap bytes.

use std::sync::Arc;

use sieve_vocab::{ClassRegion, TokenTrie};

use crate::dfa::ByteDfa;
use crate::walk::{walk, Visit};
use crate::TokenDfaError;

/// The token-level automaton of a [`crate::TokenDfa`] and a vocabulary (see the module docs).
#[derive(Clone, Debug)]
pub struct TokenAutomaton {
    n_vocab: usize,
    /// `edges[offsets[s]..offsets[s + 1]]`: state `s`'s explicit `(token, target)` edges.
    offsets: Vec<usize>,
    edges: Vec<(u32, u32)>,
    /// Per state: the region whose tokens loop on it, if the wildcard path was taken.
    loops: Vec<Option<Arc<ClassRegion>>>,
    heap_bytes: usize,
}

/// Collects a walk's tokens as edges.
struct Edges<'a>(&'a mut Vec<(u32, u32)>);

impl Visit for Edges<'_> {
    fn node(&mut self, trie: &TokenTrie, node: usize, state: u32) {
        for pos in trie.tokens_at_node(node) {
            self.0.push((trie.token(pos).index() as u32, state));
        }
    }
}

impl TokenAutomaton {
    /// Composes `trie` with every state of `dfa`, within `limit` heap bytes.
    pub(crate) fn build(
        dfa: &ByteDfa,
        trie: &TokenTrie,
        limit: usize,
    ) -> Result<TokenAutomaton, TokenDfaError> {
        let n = dfa.state_count();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut loops: Vec<Option<Arc<ClassRegion>>> = Vec::with_capacity(n);
        let mut stack = Vec::new();
        let mut region_bytes = 0;
        // The distinct regions met so far (a trie keeps at most 64).
        let mut distinct: Vec<Arc<ClassRegion>> = Vec::new();
        let fixed = (n + 1) * std::mem::size_of::<usize>()
            + n * std::mem::size_of::<Option<Arc<ClassRegion>>>();
        for s in 0..n {
            offsets.push(edges.len());
            let start = edges.len();
            let region = walk(dfa, trie, s as u32, &mut stack, &mut Edges(&mut edges));
            edges[start..].sort_unstable();
            if let Some(region) = &region {
                if !distinct.iter().any(|r| Arc::ptr_eq(r, region)) {
                    region_bytes += region.inside.len() * 4;
                    distinct.push(region.clone());
                }
            }
            loops.push(region);
            let bytes = fixed + region_bytes + edges.len() * std::mem::size_of::<(u32, u32)>();
            if bytes > limit {
                return Err(TokenDfaError::TokenAutomatonTooLarge {
                    limit,
                    states_done: s + 1,
                });
            }
        }
        offsets.push(edges.len());
        edges.shrink_to_fit();
        let heap_bytes = fixed + region_bytes + edges.len() * std::mem::size_of::<(u32, u32)>();
        Ok(TokenAutomaton {
            n_vocab: trie.n_vocab(),
            offsets,
            edges,
            loops,
            heap_bytes,
        })
    }

    /// The number of states (those of the DFA).
    pub fn state_count(&self) -> usize {
        self.loops.len()
    }

    /// The size of the vocabulary (a mask has `n_vocab().div_ceil(32)` words).
    pub fn n_vocab(&self) -> usize {
        self.n_vocab
    }

    /// The explicit edges of `state`: `(token id, target state)`, sorted by token id.
    pub fn edges(&self, state: u32) -> &[(u32, u32)] {
        let s = state as usize;
        &self.edges[self.offsets[s]..self.offsets[s + 1]]
    }

    /// The tokens that lead from `state` back to itself without being listed as edges (a
    /// bitmask by token id, `n_vocab().div_ceil(32)` words), when the state loops on a large
    /// byte class.
    pub fn loop_tokens(&self, state: u32) -> Option<&[u32]> {
        self.loops[state as usize]
            .as_deref()
            .map(|region| region.inside.as_slice())
    }

    /// The state token `token` leads to from `state`, or `None` when `state` rejects it.
    pub fn next(&self, state: u32, token: u32) -> Option<u32> {
        let edges = self.edges(state);
        if let Ok(i) = edges.binary_search_by_key(&token, |&(t, _)| t) {
            return Some(edges[i].1);
        }
        let bits = self.loop_tokens(state)?;
        let word = bits.get(token as usize / 32)?;
        (word & (1 << (token % 32)) != 0).then_some(state)
    }

    /// Sets in `mask` (bit `t % 32` of word `t / 32`) every token `state` accepts.
    pub fn fill_mask(&self, state: u32, mask: &mut [u32]) {
        if let Some(bits) = self.loop_tokens(state) {
            for (m, b) in mask.iter_mut().zip(bits) {
                *m |= b;
            }
        }
        for &(token, _) in self.edges(state) {
            mask[token as usize / 32] |= 1 << (token % 32);
        }
    }

    /// The number of explicit edges over all states.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// Heap bytes used (the distinct loop regions' bitmasks counted once, though the trie
    /// shares them).
    pub fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }
}
