//! A rule that starts with a literal, built from the automaton of the rest of its body.
//!
//! JSON Schema grammars have one member rule per property, `"\"city\"" ws? ":" ws? string`,
//! `"\"country\"" ws? ":" ws? string`, … : bodies equal but for the literal they start with.
//! [`crate::memo`] keys automata by the body after that literal (the *tail*), and
//! [`with_head`] puts the literal back in front, so each distinct tail goes through subset
//! construction and minimisation once.
//!
//! # Invariant
//!
//! For a minimal DFA `tail`, [`with_head`] returns the minimal DFA of `head · L(tail)` in
//! canonical numbering: exactly what building the whole body from scratch gives. The reason:
//! the automaton is a chain of states `q_0 … q_{n-1}` reading `head` one byte at a time into
//! `tail`'s start. It is deterministic and trim; it is minimal unless a chain state has the
//! language of a `tail` state. Chain states cannot share one with each other (their shortest
//! words have different lengths). `q_i` has the language of a `tail` state `r` exactly when
//! `r` is not accepting, its one edge reads `head[i]` alone, and it leads to the state with
//! `q_{i+1}`'s language (`tail`'s start after `q_{n-1}`): `tail` being minimal, that state is
//! unique, so those chain states are found from the end and replaced by the `tail` states they
//! equal. Breadth-first numbering then gives the chain `0 … k-1` and `tail`'s states after it,
//! in `tail`'s own order when no chain state was replaced.
//!
//! A non-deterministic `tail` (past the DFA cap) or one built without minimisation gets the
//! chain in front as it is: the result accepts the same language, without a minimality claim.

use foldhash::HashMap;

use crate::canonical::canonicalize;
use crate::fsm::{Fsm, Label, StateId};

/// The automaton of `head` followed by `tail`'s language; `minimal` says `tail` is a minimal
/// DFA (see the module docs). `head` is not empty.
pub(crate) fn with_head(tail: &Fsm, head: &[u8], minimal: bool) -> Fsm {
    debug_assert!(!head.is_empty(), "a head has at least one byte");
    let (kept, entry) = if minimal && tail.is_deterministic() {
        equal_chain_suffix(tail, head)
    } else {
        (head.len(), tail.start())
    };
    if kept == head.len() {
        return tail.after_chain(head);
    }
    // Some chain states equal `tail` states: the kept ones lead into `entry`.
    let offset = kept;
    let shifted = |state: StateId| u32::try_from(offset + state.index()).expect("bounded");
    let mut accepting = vec![false; kept];
    let mut edges: Vec<Vec<(Label, u32)>> = Vec::with_capacity(kept + tail.state_count());
    for (i, &byte) in head[..kept].iter().enumerate() {
        let next = if i + 1 < kept {
            u32::try_from(i + 1).expect("bounded")
        } else {
            shifted(entry)
        };
        edges.push(vec![(Label::Bytes { lo: byte, hi: byte }, next)]);
    }
    for state in tail.states() {
        accepting.push(tail.is_accepting(state));
        edges.push(
            tail.edges(state)
                .iter()
                .map(|edge| (edge.label, shifted(edge.target)))
                .collect(),
        );
    }
    let start = if kept == 0 {
        shifted(entry) as usize
    } else {
        0
    };
    canonicalize(start, &accepting, &edges, true)
}

/// How many leading chain states stay (`k`), and the `tail` state the last of them reads
/// into (the one with `q_k`'s language; `tail`'s start when `k` is `head.len()`).
fn equal_chain_suffix(tail: &Fsm, head: &[u8]) -> (usize, StateId) {
    // A state whose language is `byte · L(target)`: not accepting, one edge, reading `byte`
    // alone, to `target`.
    let reads_one = |state: StateId| -> Option<(u8, StateId)> {
        match tail.edges(state) {
            [edge] if !tail.is_accepting(state) => match edge.label {
                Label::Bytes { lo, hi } if lo == hi => Some((lo, edge.target)),
                _ => None,
            },
            _ => None,
        }
    };
    let last = head.len() - 1;
    let start = tail.start();
    // The common case: no state equals the last chain state, found in one scan.
    let Some(first) = tail
        .states()
        .find(|&state| reads_one(state) == Some((head[last], start)))
    else {
        return (head.len(), start);
    };
    let by_edge: HashMap<(u8, StateId), StateId> = tail
        .states()
        .filter_map(|state| reads_one(state).map(|edge| (edge, state)))
        .collect();
    let mut entry = first;
    let mut kept = last;
    while kept > 0 {
        match by_edge.get(&(head[kept - 1], entry)) {
            Some(&state) => {
                entry = state;
                kept -= 1;
            }
            None => break,
        }
    }
    (kept, entry)
}
