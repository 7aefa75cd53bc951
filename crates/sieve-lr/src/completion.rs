//! Completion bounds: how many single-byte tokens still reach a sentence, at most.
//!
//! [`LrCompletion`] holds, for one vocabulary, the byte distance of every automaton state to
//! its rule's end over the bytes that are text tokens on their own (`B`), rule edges costing
//! their rule's shortest sentence over `B`. The bound of a parser is the length of a shortest
//! completion over `B` that follows the parser's frames: an item of the top state finishes its
//! rule, the rule's instance returns to its origin frame, where each item the goto advances
//! finishes its own rule, and so on down to the augmented start rule. That is a shortest path
//! over pairs (frame, rule) with non-negative weights (Dijkstra).
//!
//! # Why it is a completion bound
//!
//! Every item of an LR state, with the origin its frame records, is a valid partial
//! derivation of the bytes so far (the item sets' cores are exactly the valid items), so
//! every path is a real completion: the bytes so far followed by it form a sentence, which
//! the parser accepts. A path of length `u > 0` starts with a byte of `B`, a text token the
//! parser accepts; after it, the rest of the path is a completion of length `u - 1` that
//! again follows the frames, so the bound drops to at most `u - 1`. A bound of `0` is a
//! path of empty rule ends: the bytes so far are a sentence. That is the seam's descent
//! contract.
//!
//! # Token limits
//!
//! Inside a limited rule each single-byte token is a byte followed by a token end, so there a
//! state's distance follows the byte and then the token end (a byte whose token end kills the
//! state is no step): the path's tokens are then accepted with their ends too. A limited
//! state's distance is also at most its `rest` when that fits in the tokens its level has
//! left: `rest` counts genuine tokens of the vocabulary along the rule's own automaton, each
//! of which the parser accepts (the grammar is LR(1), so bytes that continue the rule are
//! shifted) and whose end keeps the thread, one step nearer the end. A parser's bound is read
//! as if its last token had ended (see [`crate::LrParser::end_token`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use foldhash::{HashSet, HashSetExt};
use sieve_backend::token_limits::NO_REST;
use sieve_vocab::TokenTrie;

use crate::machine::Frames;
use crate::rules::{Rules, DEAD, STAY};
use crate::tables::Tables;

/// Unreachable.
const FAR: u64 = u64::MAX;

/// Per automaton state, the fewest single-byte tokens to its rule's end, for one
/// vocabulary. Built by [`crate::LrGrammar::completion`].
#[derive(Clone, Debug)]
pub struct LrCompletion {
    dist: Vec<u64>,
}

impl LrCompletion {
    pub(crate) fn new(rules: &Rules, trie: &TokenTrie) -> LrCompletion {
        let mut usable = [false; 256];
        for (b, slot) in usable.iter_mut().enumerate() {
            *slot = trie.find(&[b as u8]).is_some();
        }
        let mut dist: Vec<u64> = rules
            .states
            .iter()
            .map(|s| match (s.accepting, s.rest) {
                (true, _) => 0,
                (false, NO_REST) => FAR,
                (false, rest) => u64::from(rest),
            })
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            for s in (0..rules.states.len()).rev() {
                let state = &rules.states[s];
                let mut best = dist[s];
                for &(lo, hi, target) in &state.bytes {
                    let after_end = match rules.states[target as usize].token_end {
                        STAY => target,
                        DEAD => continue,
                        next => next,
                    };
                    if (lo..=hi).any(|b| usable[usize::from(b)]) {
                        best = best.min(dist[after_end as usize].saturating_add(1));
                    }
                }
                for &(callee, target) in &state.calls {
                    let callee_len = dist[rules.rule_start[callee as usize] as usize];
                    best = best.min(dist[target as usize].saturating_add(callee_len));
                }
                if best < dist[s] {
                    dist[s] = best;
                    changed = true;
                }
            }
        }
        LrCompletion { dist }
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.dist.len() * 8
    }
}

/// A node of the search: the instance of `rule` that started at `frame` has just ended.
type Node = (u32, u32);

/// The bound of the parser whose frames are `stack` (see the module docs); `None` when no
/// completion over single-byte tokens exists or it is longer than `u32::MAX - 1`.
pub(crate) fn bound<F: Frames>(
    tables: &Tables,
    start_rule: u32,
    table: &LrCompletion,
    stack: &F,
) -> Option<u32> {
    let mut heap: BinaryHeap<Reverse<(u64, Node)>> = BinaryHeap::new();
    let mut done: HashSet<Node> = HashSet::new();
    let mut best = FAR;
    let top = stack.frame_count() - 1;
    // Each item of `frame`'s state `items` of which advanced from `from` (their origins are
    // `from`'s, or `from` for its closure items) finishes its rule with `base` spent.
    let offer = |heap: &mut BinaryHeap<Reverse<(u64, Node)>>,
                 best: &mut u64,
                 base: u64,
                 state: u32,
                 item: usize,
                 origin: u32| {
        let d = table.dist[tables.item_state(state, item) as usize];
        let cost = base.saturating_add(d);
        if d == FAR || cost >= *best {
            return;
        }
        let rule = tables.item_rule(state, item);
        if rule == start_rule {
            *best = cost;
        } else {
            heap.push(Reverse((cost, (origin, rule))));
        }
    };
    let frame = stack.frame(top);
    let kernel = tables.kernel_len(frame.state);
    for item in 0..tables.item_count(frame.state) {
        let origin = if item < kernel {
            stack.origin(frame.origins + item as u32)
        } else {
            top
        };
        offer(&mut heap, &mut best, 0, frame.state, item, origin);
    }
    while let Some(Reverse((cost, node))) = heap.pop() {
        if cost >= best {
            break;
        }
        if !done.insert(node) {
            continue;
        }
        let (at, rule) = node;
        let from = stack.frame(at);
        let Some(trans) = tables.goto(from.state, rule) else {
            continue;
        };
        let target = tables.trans_target(trans);
        let kernel = tables.kernel_len(from.state);
        for (item, &source) in tables.trans_sources(trans).iter().enumerate() {
            let origin = if usize::from(source) < kernel {
                stack.origin(from.origins + u32::from(source))
            } else {
                at
            };
            offer(&mut heap, &mut best, cost, target, item, origin);
        }
    }
    u32::try_from(best).ok().filter(|&b| b != u32::MAX)
}
