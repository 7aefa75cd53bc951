//! Key languages of `patternProperties`: the property names that match exactly a given set of
//! patterns and are none of the declared names.
//!
//! A key matching the patterns `S` (and no other) must meet the schemas of `S`; a key matching
//! none meets `additionalProperties`. With one key grammar per *region* `S` the object layout
//! gives each key its exact schema. Each region is one intersection of automata over scalar
//! values: the patterns of `S`, the complements of the other patterns and the complement of
//! the declared names, built by the subset construction of the `pattern` module.
//!
//! Invariants:
//! - the regions are pairwise disjoint and, with the declared names, cover every string;
//! - a complement is exact: the DFA is completed with an accepting sink before acceptance is
//!   flipped, over the whole scalar alphabet (no surrogates, as everywhere here);
//! - at most [`MAX_PATTERNS`] patterns (`2^n` regions).

use sieve_ir::{Expr, GrammarBuilder};

use super::pattern::{self, DState, Dfa, Nfa, SCALARS};
use super::{pattern_error, EmitError, Emitter, MAX_DFA_STATES, MAX_PATTERN_LEN};
use crate::{Error, ErrorKind, Escapes, Limits};

/// The most patterns split into regions.
pub(crate) const MAX_PATTERNS: usize = 4;

/// Per nonempty region, the set of patterns its keys match (bit `i`: `patterns[i]`) and its key
/// grammar (a whole JSON string); the region of keys matching no pattern (`0`) only when
/// `with_none`. Errors name `patternProperties` at `pointer`.
pub(crate) fn key_regions(
    builder: &mut GrammarBuilder,
    patterns: &[&str],
    names: &[&str],
    with_none: bool,
    escapes: Escapes,
    limits: &Limits,
    pointer: &str,
) -> Result<Vec<(usize, Expr)>, Error> {
    let keyword = "patternProperties";
    let err = |kind, message: String| Error::new(kind, pointer, keyword, message);
    if patterns.len() > MAX_PATTERNS {
        return Err(err(
            ErrorKind::Unsupported,
            format!(
                "{} patterns beside other keys: at most {MAX_PATTERNS} are split into exact key languages",
                patterns.len()
            ),
        ));
    }
    let budget = limits.fuel.clamp(1, 1 << 16);
    let mut matching = Vec::with_capacity(patterns.len());
    let mut missing = Vec::with_capacity(patterns.len());
    for text in patterns {
        if text.len() > MAX_PATTERN_LEN {
            return Err(err(
                ErrorKind::Limit,
                format!("a pattern of {} bytes is over the limit", text.len()),
            ));
        }
        let node = pattern::parse(text).map_err(|e| pattern_error(pointer, keyword, e))?;
        let nfa =
            Nfa::new(&node.unanchored(), budget).map_err(|e| pattern_error(pointer, keyword, e))?;
        let dfa = Dfa::build(std::slice::from_ref(&nfa), MAX_DFA_STATES)
            .map_err(|e| pattern_error(pointer, keyword, e))?;
        missing.push(complement(dfa.as_ref()).to_nfa());
        matching.push(nfa);
    }
    let not_named = (!names.is_empty()).then(|| complement(Some(&trie(names))).to_nfa());
    let mut out = Vec::new();
    for region in 0..1usize << patterns.len() {
        if region == 0 && !with_none {
            continue;
        }
        let mut nfas: Vec<Nfa> = Vec::with_capacity(patterns.len() + 1);
        for i in 0..patterns.len() {
            nfas.push(if region & 1 << i != 0 {
                matching[i].clone()
            } else {
                missing[i].clone()
            });
        }
        nfas.extend(not_named.clone());
        let Some(dfa) =
            Dfa::build(&nfas, MAX_DFA_STATES).map_err(|e| pattern_error(pointer, keyword, e))?
        else {
            continue;
        };
        let body = Emitter {
            builder,
            escapes,
            limits,
            dfa: &dfa,
            min: 0,
            max: None,
            spelled: Default::default(),
            loop_chains: Default::default(),
            fuel: 0,
        }
        .emit();
        let body = match body {
            Ok(body) => body,
            Err(EmitError::Empty) => continue,
            Err(EmitError::Limit(message)) => return Err(err(ErrorKind::Limit, message)),
        };
        let quote = || Expr::bytes(*b"\"");
        out.push((region, Expr::seq([quote(), body, quote()])));
    }
    Ok(out)
}

/// The complement of `dfa`'s language (`None`: the empty language) among all strings.
fn complement(dfa: Option<&Dfa>) -> Dfa {
    let Some(dfa) = dfa else {
        return Dfa {
            states: vec![DState {
                accept: true,
                transitions: vec![(0, SCALARS.to_vec())],
            }],
            start: 0,
            universal: Some(0),
        };
    };
    let sink = dfa.states.len();
    let mut states: Vec<DState> = dfa
        .states
        .iter()
        .map(|state| {
            let covered = pattern::normalize(
                state
                    .transitions
                    .iter()
                    .flat_map(|(_, r)| r.iter().copied())
                    .collect(),
            );
            let mut transitions = state.transitions.clone();
            let rest = pattern::complement(&covered);
            if !rest.is_empty() {
                transitions.push((sink, rest));
            }
            DState {
                accept: !state.accept,
                transitions,
            }
        })
        .collect();
    states.push(DState {
        accept: true,
        transitions: vec![(sink, SCALARS.to_vec())],
    });
    Dfa {
        states,
        start: dfa.start,
        universal: Some(sink),
    }
}

/// The automaton of exactly the strings `names`.
fn trie(names: &[&str]) -> Dfa {
    let mut states = vec![DState {
        accept: false,
        transitions: Vec::new(),
    }];
    for name in names {
        let mut q = 0;
        for c in name.chars() {
            let c = c as u32;
            let found = states[q]
                .transitions
                .iter()
                .find(|(_, r)| r == &[(c, c)])
                .map(|(t, _)| *t);
            q = match found {
                Some(t) => t,
                None => {
                    states.push(DState {
                        accept: false,
                        transitions: Vec::new(),
                    });
                    let t = states.len() - 1;
                    states[q].transitions.push((t, vec![(c, c)]));
                    t
                }
            };
        }
        states[q].accept = true;
    }
    Dfa {
        states,
        start: 0,
        universal: None,
    }
}
