//! The classification of a key's tokens: the trie walked byte by byte with the DPDA step
//! from the key's known frames, the stack below them unknown.
//!
//! A key is an LR state (the top of the stack) and, with a context, the states of up to
//! [`Key::MAX_CONTEXT`] frames below it, innermost first. Each context word pair is
//! `(state of the frame below, origins of the frame above)`, the origins packed four bits
//! per kernel item (the first [`PACKED`] items): the distance down the chain to the item's
//! origin frame, `0` when it is not among the known frames. Unpacked origins and the origins
//! of the deepest known frame are unknown.
//!
//! The walk visits trie nodes in pre-order, one step per node, keeping the arena lengths per
//! depth so a node is stepped from its parent's state by truncation: a node whose byte is
//! shifted accepts the tokens spelled there and goes on into its subtree, a rejected node
//! rejects its subtree, and a node whose reductions need an unknown frame (or run out of
//! fuel) leaves its subtree uncertain.
//!
//! # Invariant
//!
//! A step that reads only known frames is the step the parser takes from any stack whose
//! top frames are the key's (see [`crate::machine`]): accepted tokens are accepted and
//! rejected tokens rejected by every parser with this key.

use sieve_backend::{push_range, Classification, Key, TokenSet};
use sieve_vocab::TokenTrie;

use crate::machine::{step, Frame, Stack, Step, UNKNOWN};
use crate::tables::Tables;

/// How many kernel items' origins a context word packs (four bits each).
pub(crate) const PACKED: usize = 8;

/// The known frames of `key`, the top last.
fn seed(tables: &Tables, key: &Key) -> Stack {
    let context = key.context();
    let known = context.len();
    let mut stack = Stack::default();
    // Frame `i` of the chain (0 = top) sits at arena index `known - i`.
    for i in (0..=known).rev() {
        let state = if i == 0 { key.state } else { context[i - 1].0 };
        let parent = if i == known {
            UNKNOWN
        } else {
            (known - i - 1) as u32
        };
        let origins = stack.origins.len() as u32;
        for k in 0..tables.kernel_len(state) {
            let origin = if i < known && k < PACKED {
                let distance = ((context[i].1 >> (4 * k)) & 0xf) as usize;
                let at = i + distance;
                if distance > 0 && at <= known {
                    (known - at) as u32
                } else {
                    UNKNOWN
                }
            } else {
                UNKNOWN
            };
            stack.origins.push(origin);
        }
        stack.frames.push(Frame {
            state,
            parent,
            origins,
        });
    }
    stack
}

/// Sorts every text token of `trie` from `key` (see the module docs).
pub(crate) fn classify(tables: &Tables, key: Key, trie: &TokenTrie, fuel: usize) -> Classification {
    let mut stack = seed(tables, &key);
    let nodes = trie.nodes();
    let mut accepted = vec![0u32; trie.n_vocab().div_ceil(32)];
    let mut uncertain = Vec::new();
    // marks[d]: the arena after the first `d` bytes of the current node's prefix.
    let mut marks = vec![stack.mark()];
    let mut n = 0;
    while n < nodes.len() {
        let node = nodes[n];
        let depth = node.depth as usize;
        marks.truncate(depth);
        stack.truncate(marks[depth - 1]);
        let mut left = fuel;
        match step(tables, &mut stack, usize::from(node.byte), &mut left) {
            Step::Shifted => {
                if node.has_token() {
                    for p in trie.tokens_at_node(n) {
                        let id = trie.token(p).index();
                        accepted[id / 32] |= 1 << (id % 32);
                    }
                }
                marks.push(stack.mark());
                n += 1;
            }
            Step::Rejected | Step::Accepted => n = node.end as usize,
            Step::Unknown | Step::OutOfFuel => {
                push_range(&mut uncertain, node.pos..trie.node_pos_end(n) as u32);
                n = node.end as usize;
            }
        }
    }
    Classification {
        accepted: TokenSet::from_bits(accepted),
        uncertain,
    }
}
