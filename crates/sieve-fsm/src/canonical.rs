//! Canonical form: merge byte ranges, number states breadth-first, freeze into an [`Fsm`].
//!
//! # Invariants
//!
//! The result keeps the invariants listed in [`crate::fsm`]. For a deterministic input the
//! numbering depends only on the automaton's structure (each state's labels are distinct, so
//! sorting by label alone orders its edges); for a non-deterministic one, ties between equal
//! labels are broken by the input's numbering, which [`crate::nfa`] derives from the
//! expression alone.

use crate::fsm::{Edge, Fsm, Label, StateId};

/// Freezes an automaton given as per-state `(label, target)` lists into canonical form,
/// dropping states unreachable from `start`.
pub(crate) fn canonicalize(
    start: usize,
    accepting: &[bool],
    edges: &[Vec<(Label, u32)>],
    deterministic: bool,
) -> Fsm {
    let merged: Vec<Vec<(Label, u32)>> = edges.iter().map(|out| merge(out)).collect();
    let mut new_id = vec![u32::MAX; edges.len()];
    let mut order = vec![start];
    new_id[start] = 0;
    let mut next = 0;
    while next < order.len() {
        for &(_, t) in &merged[order[next]] {
            if new_id[t as usize] == u32::MAX {
                new_id[t as usize] = u32::try_from(order.len()).expect("bounded by the limits");
                order.push(t as usize);
            }
        }
        next += 1;
    }
    let states = order
        .iter()
        .map(|&s| {
            let mut out: Vec<Edge> = merged[s]
                .iter()
                .map(|&(label, t)| Edge {
                    label,
                    target: StateId::from_index(new_id[t as usize] as usize),
                })
                .collect();
            out.sort_unstable();
            (accepting[s], out)
        })
        .collect();
    Fsm::from_parts(states, deterministic)
}

/// One state's edges with byte ranges to the same target merged into maximal ranges,
/// duplicates removed, sorted by `(label, target)`.
fn merge(edges: &[(Label, u32)]) -> Vec<(Label, u32)> {
    // (target, lo, hi) for byte edges, sorted so that each target's ranges are consecutive and
    // ascending; other labels go straight to the output.
    let mut ranges: Vec<(u32, u8, u8)> = Vec::new();
    let mut out = Vec::with_capacity(edges.len());
    for &(label, t) in edges {
        match label {
            Label::Bytes { lo, hi } => ranges.push((t, lo, hi)),
            _ => out.push((label, t)),
        }
    }
    ranges.sort_unstable();
    let mut current: Option<(u32, u8, u8)> = None;
    for (t, lo, hi) in ranges {
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
    out
}
