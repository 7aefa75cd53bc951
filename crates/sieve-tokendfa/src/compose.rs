//! The whole constraint as one byte DFA: every rule's automaton with its references inlined,
//! callees first.
//!
//! 1. **Order**: a depth-first walk of the references from the root gives the rules it
//!    reaches, callees before callers; a reference back to a rule on the walk's path is a
//!    cycle, reported with the rules along it ([`TokenDfaError::Recursive`]).
//! 2. **Per rule**, in that order: an [`Nfa`] of the rule's automaton (a DFA, or an NFA past
//!    sieve-fsm's cap) in which each reference edge `s —r→ t` becomes an epsilon edge into a
//!    copy of `r`'s finished DFA and epsilon edges from the copy's accepting states to `t`;
//!    a counted repetition `item{min,max}` becomes `max` (or `min + 1` looping) chained copies
//!    of the item's DFA. Then subset construction and minimisation ([`crate::dfa`]).
//!
//! # Invariants
//!
//! - No automaton built on the way has more than [`Config::get_state_limit`] DFA states or
//!   four times that many NFA states; past either, [`TokenDfaError::StateLimit`] names the
//!   rule. Work and memory are therefore bounded by the limit, whatever the grammar.
//! - The result accepts exactly the root rule's language.
//! - Nothing recurses on the grammar's depth (the walk keeps its own stack).

use sieve_fsm::{GrammarFsms, Label, RuleAutomaton};
use sieve_ir::RuleId;

use crate::dfa::{determinize, minimize, ByteDfa};
use crate::nfa::Nfa;
use crate::{Config, TokenDfaError};

/// The minimal byte DFA of `fsms`'s root rule with every reference inlined.
pub(crate) fn whole_dfa(fsms: &GrammarFsms, config: &Config) -> Result<ByteDfa, TokenDfaError> {
    let order = callees_first(fsms)?;
    let mut built: Vec<Option<ByteDfa>> = vec![None; fsms.rule_count()];
    for rule in order {
        let dfa = rule_dfa(fsms, rule, &built, config)?;
        built[rule.index()] = Some(dfa);
    }
    Ok(built[fsms.root().index()]
        .take()
        .expect("the root comes last in the order"))
}

/// The rules the root reaches, each after every rule it references.
fn callees_first(fsms: &GrammarFsms) -> Result<Vec<RuleId>, TokenDfaError> {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let mut mark = vec![NEW; fsms.rule_count()];
    let mut order = Vec::new();
    // The walk's path: each rule with its references and how many were followed.
    let mut path: Vec<(RuleId, Vec<RuleId>, usize)> = Vec::new();
    let root = fsms.root();
    mark[root.index()] = ON_PATH;
    path.push((root, fsms.automaton(root).references(), 0));
    while let Some((rule, refs, next)) = path.last_mut() {
        let Some(&callee) = refs.get(*next) else {
            mark[rule.index()] = DONE;
            order.push(*rule);
            path.pop();
            continue;
        };
        *next += 1;
        match mark[callee.index()] {
            NEW => {
                mark[callee.index()] = ON_PATH;
                path.push((callee, fsms.automaton(callee).references(), 0));
            }
            ON_PATH => {
                let from = path
                    .iter()
                    .position(|(r, _, _)| *r == callee)
                    .expect("a rule on the path is in it");
                let mut cycle: Vec<String> = path[from..]
                    .iter()
                    .map(|(r, _, _)| fsms.name(*r).to_owned())
                    .collect();
                cycle.push(fsms.name(callee).to_owned());
                return Err(TokenDfaError::Recursive { cycle });
            }
            _ => {}
        }
    }
    Ok(order)
}

/// The minimal DFA of `rule`, its references (already in `built`) inlined.
fn rule_dfa(
    fsms: &GrammarFsms,
    rule: RuleId,
    built: &[Option<ByteDfa>],
    config: &Config,
) -> Result<ByteDfa, TokenDfaError> {
    let limit = config.get_state_limit();
    let too_big = || TokenDfaError::StateLimit {
        rule: fsms.name(rule).to_owned(),
        limit,
    };
    let nfa_limit = limit.saturating_mul(4);
    let callee = |r: RuleId| {
        built[r.index()]
            .as_ref()
            .expect("callees are built before their callers")
    };
    let mut nfa = Nfa::new();
    let mut accepting = Vec::new();
    match fsms.automaton(rule) {
        RuleAutomaton::Regular(fsm) => {
            // The rule's own states first, so state `s` of the FSM is NFA state `s`.
            let own: usize = fsm.state_count();
            let inlined: usize = fsm
                .states()
                .flat_map(|s| fsm.edges(s))
                .filter_map(|e| match e.label {
                    Label::Rule(r) => Some(callee(r).state_count()),
                    _ => None,
                })
                .sum();
            if own + inlined > nfa_limit {
                return Err(too_big());
            }
            for _ in 1..own {
                nfa.add_state();
            }
            for s in fsm.states() {
                let from = s.index();
                nfa.accepting[from] = fsm.is_accepting(s);
                for edge in fsm.edges(s) {
                    let to = edge.target.index() as u32;
                    match edge.label {
                        Label::Bytes { lo, hi } => nfa.bytes[from].push((lo, hi, to)),
                        Label::Rule(r) => {
                            accepting.clear();
                            let start = nfa.embed(callee(r), &mut accepting);
                            nfa.eps[from].push(start);
                            for &a in &accepting {
                                nfa.eps[a as usize].push(to);
                            }
                        }
                        Label::Epsilon => nfa.eps[from].push(to),
                    }
                }
            }
        }
        &RuleAutomaton::Counted { item, min, max } => {
            let item = callee(item);
            let copies = match max {
                Some(max) => max as usize,
                None => min as usize + 1,
            };
            if copies.saturating_mul(item.state_count() + 1) > nfa_limit {
                return Err(too_big());
            }
            // `current`: the state after the copies so far.
            let mut current = 0u32;
            for i in 0..copies {
                if i >= min as usize {
                    nfa.accepting[current as usize] = true;
                }
                accepting.clear();
                let start = nfa.embed(item, &mut accepting);
                nfa.eps[current as usize].push(start);
                if max.is_none() && i == min as usize {
                    // The last copy loops back: any number of further repetitions.
                    for &a in &accepting {
                        nfa.eps[a as usize].push(current);
                    }
                    break;
                }
                let after = nfa.add_state();
                for &a in &accepting {
                    nfa.eps[a as usize].push(after);
                }
                current = after;
            }
            if max.is_some() {
                nfa.accepting[current as usize] = true;
            }
        }
        _ => {
            return Err(TokenDfaError::Unsupported {
                rule: fsms.name(rule).to_owned(),
            })
        }
    }
    let dfa = determinize(&nfa, limit).ok_or_else(too_big)?;
    Ok(minimize(&dfa))
}
