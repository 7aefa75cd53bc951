//! The composition of the vocabulary with the DFA from one state: a deterministic walk of the
//! trie's nodes over the DFA's table, one look-up per node, a rejected prefix skipped with
//! its whole subtree (the detokenising transducer of Koo et al. composed with the DFA, one
//! state at a time).
//!
//! Wildcards (Koo et al.'s terminal-label masks): a state that loops on a class of at least
//! [`WILDCARD_MIN`] bytes takes every token made only of that class at once from the trie's
//! [`ClassRegion`] (all of them lead back to the state), and walks only the region's exits,
//! the subtrees where a token first leaves the class — from the same state, since every byte
//! before the exit looped.
//!
//! Text (Koo et al.'s masks for a string's characters): from a state with a [`TextShape`],
//! [`walk_text`] takes the trie's [`TextRegion`] of the shape's class (cut by character count
//! when the chain does not loop) at once and walks only the region's exits, each from the
//! DFA state of the decoder state before its breaking byte.
//!
//! Token ends: a token is reported with the state its end leads to ([`ByteDfa::token_end`]),
//! and not at all when its end kills the input (a limited rule out of tokens). A loop region
//! is taken per [`Bulk`]: its tokens all end in the looping state, so they are all accepted
//! iff that state's token end keeps it alive, and all lead to that token end.
//!
//! # Invariants
//!
//! [`walk`] reports every text token the DFA accepts from the state exactly once — by node,
//! or in the region — with the state it leads to, and no other token. [`walk_text`] reports
//! every accepted token exactly once — by node with its state, or in the returned bulk —
//! and no other token.

use std::sync::Arc;

use sieve_vocab::{ClassRegion, TextRegion, TokenTrie};

use crate::chain::ClassChain;
use crate::dfa::{ByteDfa, DEAD};
use crate::text::{TextEnd, TextShape};

/// The fewest bytes a state's self-loop class needs for the walk to take the class region.
pub const WILDCARD_MIN: usize = 32;

/// Where the tokens accepted from a state go.
pub(crate) trait Visit {
    /// Every token of trie node `node` leads to `state`.
    fn node(&mut self, trie: &TokenTrie, node: usize, state: u32);
}

/// From which states [`walk`] takes a loop region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bulk {
    /// Only where a token end leaves the state in place: the region's tokens lead back to it
    /// (what token-level transitions need).
    InPlace,
    /// Wherever the state's token end keeps it alive: the region's tokens lead to that token
    /// end (enough for masks, and for a distance read there).
    Alive,
}

/// Walks `trie` from `state`; returns the region whose inside tokens all lead to `state`'s
/// token end (`state` itself under [`Bulk::InPlace`]), when the wildcard path was taken
/// (those tokens are not visited one by one).
pub(crate) fn walk(
    dfa: &ByteDfa,
    trie: &TokenTrie,
    state: u32,
    bulk: Bulk,
    stack: &mut Vec<u32>,
    visit: &mut impl Visit,
) -> Option<Arc<ClassRegion>> {
    let nodes = trie.nodes();
    if let Some(region) = loop_region(dfa, trie, state, bulk) {
        for &exit in &region.exits {
            let exit = exit as usize;
            subtree(
                dfa,
                trie,
                exit,
                nodes[exit].end as usize,
                state,
                stack,
                visit,
            );
        }
        return Some(region);
    }
    subtree(dfa, trie, 0, nodes.len(), state, stack, visit);
    None
}

/// Walks `trie` from the start of `shape` (the state it was detected from): the tokens of
/// [`TextShape::add_bulk`] are accepted and not visited; the region's exits are walked from
/// the row of their decoder state, past the chain's depth the deep subtrees from its last
/// boundary row, and the odd first bytes' subtrees whole from the start. Returns the region
/// and those subtrees.
pub(crate) fn walk_text(
    dfa: &ByteDfa,
    trie: &TokenTrie,
    shape: &TextShape,
    stack: &mut Vec<u32>,
    visit: &mut impl Visit,
) -> (Arc<TextRegion>, Subtrees) {
    let region = trie.text_region(&shape.class);
    let nodes = trie.nodes();
    let odd = shape.odd_subtrees(trie);
    let mut odd_at = odd.iter().peekable();
    for exit in &region.exits {
        let at = exit.node as usize;
        while odd_at.next_if(|&&(_, to)| to <= at).is_some() {}
        if odd_at.peek().is_some_and(|&&(from, _)| from <= at) {
            continue;
        }
        if let Some(state) = shape.resume(exit.chars, exit.state) {
            subtree(dfa, trie, at, nodes[at].end as usize, state, stack, visit);
        }
    }
    if shape.end == TextEnd::Open {
        let last = shape.rows.len() - 1;
        let boundary = shape.rows[last][sieve_vocab::Utf8State::Boundary as usize];
        for &deep in trie.text_deep(&region) {
            let at = deep as usize;
            subtree(
                dfa,
                trie,
                at,
                nodes[at].end as usize,
                boundary,
                stack,
                visit,
            );
        }
    }
    let start = shape.rows[0][sieve_vocab::Utf8State::Boundary as usize];
    for &(from, to) in &odd {
        subtree(dfa, trie, from, to, start, stack, visit);
    }
    (region, odd)
}

/// Walks `trie` from the start of `chain`: the tokens of [`chain_bulk`] are accepted and not
/// visited; each exit of the class region is walked from the row of its prefix's length, and
/// past the chain's depth the deep subtrees from its last row. Returns the region.
pub(crate) fn walk_chain(
    dfa: &ByteDfa,
    trie: &TokenTrie,
    chain: &ClassChain,
    stack: &mut Vec<u32>,
    visit: &mut impl Visit,
) -> Arc<ClassRegion> {
    let region = trie.class_region(&chain.class);
    let nodes = trie.nodes();
    for &exit in &region.exits {
        let at = exit as usize;
        let node = nodes[at];
        if let Some(state) = chain.resume(node.depth as usize - 1) {
            subtree(dfa, trie, at, node.end as usize, state, stack, visit);
        }
    }
    if chain.end == TextEnd::Open {
        let last = *chain.rows.last().expect("a chain has its start");
        for &deep in trie.region_deep(&region) {
            let at = deep as usize;
            subtree(dfa, trie, at, nodes[at].end as usize, last, stack, visit);
        }
    }
    region
}

/// The tokens a walk of `chain` accepts without visiting them: `region`'s inside, cut by
/// length unless the chain loops. `region` is `trie`'s class region of the chain's class.
pub(crate) fn chain_bulk<'r>(
    trie: &TokenTrie,
    chain: &ClassChain,
    region: &'r ClassRegion,
) -> &'r [u32] {
    match chain.end {
        TextEnd::Loops => &region.inside,
        TextEnd::Dies | TextEnd::Open => trie.region_upto(region, chain.rows.len() - 1),
    }
}

/// Node ranges of whole subtrees, in pre-order.
pub(crate) type Subtrees = Vec<(usize, usize)>;

/// The bytes on which `state` loops, and how many.
pub(crate) fn loop_class(dfa: &ByteDfa, state: u32) -> ([u64; 4], usize) {
    let mut class = [0u64; 4];
    let mut count = 0;
    for b in 0..=255u8 {
        if dfa.next(state, b) == state {
            class[b as usize / 64] |= 1 << (b % 64);
            count += 1;
        }
    }
    (class, count)
}

/// The class region of the bytes on which `state` loops, when there are enough of them,
/// and `bulk` allows `state`'s token end.
fn loop_region(
    dfa: &ByteDfa,
    trie: &TokenTrie,
    state: u32,
    bulk: Bulk,
) -> Option<Arc<ClassRegion>> {
    let ended = dfa.token_end(state);
    let allowed = match bulk {
        Bulk::InPlace => ended == state,
        Bulk::Alive => ended != DEAD,
    };
    if !allowed {
        return None;
    }
    let (class, count) = loop_class(dfa, state);
    if count < WILDCARD_MIN {
        return None;
    }
    Some(trie.class_region(&class))
}

/// Walks the nodes `first..end` (a run of whole sibling subtrees, `first` of the least
/// depth), the parent of `first` being in `state`; a token is visited with the state after
/// its end.
fn subtree(
    dfa: &ByteDfa,
    trie: &TokenTrie,
    first: usize,
    end: usize,
    state: u32,
    stack: &mut Vec<u32>,
    visit: &mut impl Visit,
) {
    let nodes = trie.nodes();
    let Some(top) = nodes.get(first) else {
        return;
    };
    // stack[i]: the state after the node of depth `base + i - 1` on the current path.
    let base = top.depth as usize;
    stack.clear();
    stack.push(state);
    let mut n = first;
    while n < end {
        let node = nodes[n];
        let at = node.depth as usize - base + 1;
        stack.truncate(at);
        let next = dfa.next(stack[at - 1], node.byte);
        if next == DEAD {
            n = node.end as usize;
            continue;
        }
        stack.push(next);
        if node.has_token() {
            let ended = dfa.token_end(next);
            if ended != DEAD {
                visit.node(trie, n, ended);
            }
        }
        n += 1;
    }
}
