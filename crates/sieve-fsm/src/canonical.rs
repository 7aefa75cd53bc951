//! Canonical form: merge byte ranges, number states breadth-first, freeze into an [`Fsm`].
//!
//! # Invariants
//!
//! The result keeps the invariants listed in [`crate::fsm`]. For a deterministic input the
//! numbering depends only on the automaton's structure (each state's labels are distinct, so
//! sorting by label alone orders its edges); for a non-deterministic one, ties between equal
//! labels are broken by the input's numbering, which [`crate::nfa`] derives from the
//! expression alone.

use crate::dfa::Dfa;
use crate::fsm::{Edge, Fsm, Label, StateId};

/// Freezes an automaton given as per-state `(label, target)` lists into canonical form,
/// dropping states unreachable from `start`.
pub(crate) fn canonicalize(
    start: usize,
    accepting: &[bool],
    edges: &[Vec<(Label, u32)>],
    deterministic: bool,
) -> Fsm {
    canonicalize_with(
        start,
        accepting,
        |s, out| out.extend_from_slice(&edges[s]),
        deterministic,
    )
}

/// [`canonicalize`] for a DFA from [`crate::dfa`], reading its symbols' labels in place.
pub(crate) fn canonicalize_dfa(dfa: &Dfa) -> Fsm {
    canonicalize_with(
        0,
        &dfa.accepting,
        |s, out| {
            out.extend(
                dfa.out(s)
                    .iter()
                    .map(|&(sym, t)| (dfa.labels[sym as usize], t)),
            );
        },
        true,
    )
}

/// The canonical form, breadth first from `start`: each state's edges (written by `edges`
/// into the buffer it is given) are merged when the state is reached, its targets numbered
/// in the merged order, and its edges emitted at once, so no state's edges are held twice.
fn canonicalize_with(
    start: usize,
    accepting: &[bool],
    edges: impl Fn(usize, &mut Vec<(Label, u32)>),
    deterministic: bool,
) -> Fsm {
    let mut new_id = vec![u32::MAX; accepting.len()];
    let mut order = vec![start];
    new_id[start] = 0;
    let mut fsm = Fsm::with_capacity(accepting.len(), deterministic);
    let (mut raw, mut ranges, mut merged) = (Vec::new(), Vec::new(), Vec::new());
    let mut next = 0;
    while next < order.len() {
        let s = order[next];
        raw.clear();
        edges(s, &mut raw);
        merge(&raw, &mut ranges, &mut merged);
        fsm.push_state(accepting[s], |out| {
            let first = out.len();
            for &(label, t) in &merged {
                let t = t as usize;
                if new_id[t] == u32::MAX {
                    new_id[t] = u32::try_from(order.len()).expect("bounded by the limits");
                    order.push(t);
                }
                out.push(Edge {
                    label,
                    target: StateId::from_index(new_id[t] as usize),
                });
            }
            out[first..].sort_unstable();
        });
        next += 1;
    }
    fsm.finish()
}

/// One state's edges with byte ranges to the same target merged into maximal ranges,
/// duplicates removed, sorted by `(label, target)`, written into `out` (`ranges` is scratch).
fn merge(edges: &[(Label, u32)], ranges: &mut Vec<(u32, u8, u8)>, out: &mut Vec<(Label, u32)>) {
    // (target, lo, hi) for byte edges, sorted so that each target's ranges are consecutive and
    // ascending; other labels go straight to the output.
    ranges.clear();
    out.clear();
    for &(label, t) in edges {
        match label {
            Label::Bytes { lo, hi } => ranges.push((t, lo, hi)),
            _ => out.push((label, t)),
        }
    }
    ranges.sort_unstable();
    let mut current: Option<(u32, u8, u8)> = None;
    for &(t, lo, hi) in ranges.iter() {
        current = match current {
            // Overlapping or adjacent to the open range of the same target: extend it.
            Some((ct, clo, chi)) if ct == t && u16::from(lo) <= u16::from(chi) + 1 => {
                Some((ct, clo, chi.max(hi)))
            }
            Some((ct, clo, chi)) => {
                out.push((Label::Bytes { lo: clo, hi: chi }, ct));
                Some((t, lo, hi))
            }
            None => Some((t, lo, hi)),
        };
    }
    if let Some((t, lo, hi)) = current {
        out.push((Label::Bytes { lo, hi }, t));
    }
    out.sort_unstable();
    out.dedup();
}
