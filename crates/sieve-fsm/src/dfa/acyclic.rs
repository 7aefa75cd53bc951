//! Minimisation of an acyclic DFA in linear time (Revuz's algorithm).
//!
//! Most rule automata are acyclic: a JSON object's members in order, a bounded string, a tool
//! list's names. In an acyclic DFA without dead states, two states are equivalent exactly when
//! both accept or both reject and their transitions are on the same symbols to equivalent
//! states. Visiting states after all their successors (the post-order of a depth-first walk)
//! decides each state by looking its signature — acceptance and transitions to the classes
//! already found — up in a register of the classes so far: one look per state, where
//! Hopcroft's refinement splits blocks `O(n log n)` times over.
//!
//! # Invariants
//!
//! - The input is a [`Dfa`] as [`super::determinize`] makes it (every state reachable from
//!   state `0`, none dead); the output is its minimal DFA, starting at state `0`, with each
//!   state's transitions sorted by symbol — the automaton [`super::minimize_with`] gives, up to
//!   the numbering of states, which canonicalisation settles.
//! - A cycle is found during the same walk; the answer is then `None` and the caller refines.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

use super::Dfa;

/// Working memory kept between calls (capacity only).
#[derive(Default)]
pub(super) struct Acyclic {
    /// Per state: 0 unvisited, 1 on the walk's stack, 2 done.
    color: Vec<u8>,
    /// The walk's stack: a state and the index of its next transition to follow.
    stack: Vec<(u32, u32)>,
    /// Per state, its class once decided.
    class: Vec<u32>,
    /// Per class, the state that first had its signature.
    representative: Vec<u32>,
    /// The classes' signatures one after another: class `c`'s is
    /// `signatures[signature_start[c]..signature_start[c + 1]]`.
    signatures: Vec<u32>,
    signature_start: Vec<u32>,
    /// Per class, its signature's hash.
    hashes: Vec<u64>,
    /// The signature being looked up.
    key: Vec<u32>,
    /// The classes by signature.
    register: HashTable<u32>,
}

impl Acyclic {
    /// Whether a buffer grew past `limit` elements.
    pub(super) fn is_large(&self, limit: usize) -> bool {
        self.signatures.capacity() > limit || self.color.capacity() > limit
    }
}

/// The minimal DFA of `dfa`, or `None` when `dfa` has a cycle.
pub(super) fn minimize_acyclic(dfa: &Dfa, scratch: &mut Acyclic) -> Option<Dfa> {
    let n = dfa.len();
    let Acyclic {
        color,
        stack,
        class,
        representative,
        signatures,
        signature_start,
        hashes,
        key,
        register,
    } = scratch;
    color.clear();
    color.resize(n, 0);
    class.clear();
    class.resize(n, u32::MAX);
    representative.clear();
    signatures.clear();
    signature_start.clear();
    signature_start.push(0);
    hashes.clear();
    register.clear();
    stack.clear();
    let hasher = FixedState::default();

    stack.push((0, 0));
    color[0] = 1;
    while let Some(&mut (state, ref mut next)) = stack.last_mut() {
        let out = dfa.out(state as usize);
        if let Some(&(_, target)) = out.get(*next as usize) {
            *next += 1;
            match color[target as usize] {
                0 => {
                    color[target as usize] = 1;
                    stack.push((target, 0));
                }
                1 => return None,
                _ => {}
            }
            continue;
        }
        // Every successor is decided: the signature, then its class.
        stack.pop();
        color[state as usize] = 2;
        key.clear();
        key.push(u32::from(dfa.accepting[state as usize]));
        for &(symbol, target) in out {
            key.push(symbol);
            key.push(class[target as usize]);
        }
        let hash = hasher.hash_one(&key[..]);
        let found = register.find(hash, |&c| {
            let c = c as usize;
            signatures[signature_start[c] as usize..signature_start[c + 1] as usize] == key[..]
        });
        class[state as usize] = match found {
            Some(&c) => c,
            None => {
                let c = u32::try_from(representative.len()).expect("bounded by the DFA");
                representative.push(state);
                signatures.extend_from_slice(key);
                signature_start.push(u32::try_from(signatures.len()).expect("bounded by the DFA"));
                hashes.push(hash);
                register.insert_unique(hash, c, |&c| hashes[c as usize]);
                c
            }
        };
    }

    // Output state `i` is class `swap(i)`: the start's class first, the others in order (a
    // swap is its own inverse, so class `c` is output state `swap(c)`).
    let classes = representative.len();
    let start = class[0] as usize;
    let swap = |c: usize| match c {
        0 => start,
        c if c == start => 0,
        c => c,
    };
    let mut min = Dfa {
        first: Vec::with_capacity(classes + 1),
        edges: Vec::with_capacity(dfa.edges.len().min(signatures.len())),
        accepting: Vec::with_capacity(classes),
        labels: dfa.labels.clone(),
    };
    min.first.push(0);
    for c in (0..classes).map(swap) {
        let rep = representative[c] as usize;
        min.edges
            .extend(dfa.out(rep).iter().map(|&(symbol, target)| {
                let target = swap(class[target as usize] as usize);
                (symbol, u32::try_from(target).expect("bounded by the DFA"))
            }));
        min.end_state();
        min.accepting.push(dfa.accepting[rep]);
    }
    Some(min)
}
