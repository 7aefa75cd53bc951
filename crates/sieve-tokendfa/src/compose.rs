//! The whole constraint as one byte DFA: every rule's automaton with its references inlined,
//! callees first.
//!
//! 1. **Order**: the strongly connected components of the references the root reaches
//!    (Tarjan's algorithm), callees first. A component with a cycle is regular when every
//!    reference between its members is a *tail* reference — its edge ends in an accepting
//!    state with no edges out (`a ::= "x" a | "y"`, the right-linear rules the JSON Schema
//!    front-end writes for a string `pattern`); any other cycle is refused with the rules
//!    along it ([`TokenDfaError::Recursive`]).
//! 2. **Per rule**, in that order: an [`Nfa`] of the rule's automaton (a DFA, or an NFA past
//!    sieve-fsm's cap) in which each reference edge `s —r→ t` becomes an epsilon edge into a
//!    copy of `r`'s finished DFA and epsilon edges from the copy's accepting states to `t`;
//!    a counted repetition `item{min,max}` becomes `max` (or `min + 1` looping) chained copies
//!    of the item's DFA. The members of a tail-recursive component share one NFA holding
//!    each member's automaton once, a tail reference becoming an epsilon edge to the
//!    callee's start and every member's accepting states accepting (what follows a tail
//!    call is the caller's end). Then subset construction and minimisation
//!    ([`crate::dfa`]).
//!
//! 3. **Token limits**: a rule with `max_tokens = k` (which references no rule, by the
//!    normalised form) is built as the product of its automaton with the number of tokens
//!    its occurrence has ended ([`limited_dfa`]), reading token ends (`⊥`, see [`crate::nfa`])
//!    besides bytes; a token end moves a thread one level up when
//!    [`sieve_backend::token_limits::keeps`] allows, and kills it otherwise. Every other
//!    state stays where it is on a token end, so the whole DFA applies the rule the other
//!    backends apply to their items.
//!
//! # Invariants
//!
//! - No automaton built on the way has more than [`Config::get_state_limit`] DFA states or
//!   four times that many NFA states; past either, [`TokenDfaError::StateLimit`] names the
//!   rule. Work and memory are therefore bounded by the limit, whatever the grammar.
//! - The result accepts exactly the root rule's language.
//! - Nothing recurses on the grammar's depth (the walk keeps its own stack).

use sieve_backend::token_limits::{keeps, RuleLimit};
use sieve_fsm::{GrammarFsms, Label, RuleAutomaton};
use sieve_ir::RuleId;

use crate::dfa::{determinize, minimize, ByteDfa, DEAD};
use crate::nfa::Nfa;
use crate::{Config, TokenDfaError};

/// The minimal byte DFA of `fsms`'s root rule with every reference inlined; `limits[r]` is
/// rule `r`'s token limit, to be counted.
pub(crate) fn whole_dfa(
    fsms: &GrammarFsms,
    config: &Config,
    limits: &[Option<RuleLimit>],
) -> Result<ByteDfa, TokenDfaError> {
    let mut built: Vec<Option<ByteDfa>> = vec![None; fsms.rule_count()];
    let components = components(fsms);
    // A member of a recursive component needs a DFA of its own only when something outside
    // the component references it (or it is the root): inside, references become epsilons.
    let mut component_of = vec![usize::MAX; fsms.rule_count()];
    for (c, component) in components.iter().enumerate() {
        for &rule in component {
            component_of[rule.index()] = c;
        }
    }
    let mut entered = vec![false; fsms.rule_count()];
    entered[fsms.root().index()] = true;
    for component in &components {
        for &rule in component {
            for callee in fsms.automaton(rule).references() {
                if component_of[callee.index()] != component_of[rule.index()] {
                    entered[callee.index()] = true;
                }
            }
        }
    }
    for component in components {
        if let [rule] = component[..] {
            if let Some(limit) = &limits[rule.index()] {
                built[rule.index()] = Some(limited_dfa(fsms, rule, limit, config)?);
                continue;
            }
            if !fsms.automaton(rule).references().contains(&rule) {
                let dfa = rule_dfa(fsms, rule, &built, config)?;
                built[rule.index()] = Some(dfa);
                continue;
            }
        }
        check_tail_only(fsms, &component)?;
        for &entry in component.iter().filter(|r| entered[r.index()]) {
            let dfa = component_dfa(fsms, &component, entry, &built, config)?;
            built[entry.index()] = Some(dfa);
        }
    }
    Ok(built[fsms.root().index()]
        .take()
        .expect("the root's component comes last"))
}

/// The strongly connected components of the rules the root reaches, callees first
/// (Tarjan's algorithm with an explicit stack).
fn components(fsms: &GrammarFsms) -> Vec<Vec<RuleId>> {
    let mut tarjan = Tarjan {
        fsms,
        index: vec![usize::MAX; fsms.rule_count()],
        low: vec![0; fsms.rule_count()],
        on_stack: vec![false; fsms.rule_count()],
        stack: Vec::new(),
        path: Vec::new(),
        next_index: 0,
    };
    let mut out = Vec::new();
    tarjan.open(fsms.root());
    while let Some((rule, refs, next)) = tarjan.path.last_mut() {
        let rule = *rule;
        if let Some(&callee) = refs.get(*next) {
            *next += 1;
            if tarjan.index[callee.index()] == usize::MAX {
                tarjan.open(callee);
            } else if tarjan.on_stack[callee.index()] {
                let low = tarjan.low[rule.index()].min(tarjan.index[callee.index()]);
                tarjan.low[rule.index()] = low;
            }
            continue;
        }
        tarjan.path.pop();
        if let Some(&(caller, _, _)) = tarjan.path.last() {
            let low = tarjan.low[caller.index()].min(tarjan.low[rule.index()]);
            tarjan.low[caller.index()] = low;
        }
        if tarjan.low[rule.index()] == tarjan.index[rule.index()] {
            let mut component = Vec::new();
            loop {
                let member = tarjan.stack.pop().expect("the rule is on the stack");
                tarjan.on_stack[member.index()] = false;
                component.push(member);
                if member == rule {
                    break;
                }
            }
            component.reverse();
            out.push(component);
        }
    }
    out
}

/// Tarjan's bookkeeping.
struct Tarjan<'a> {
    fsms: &'a GrammarFsms,
    index: Vec<usize>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<RuleId>,
    /// The walk: each rule with its references and how many were followed.
    path: Vec<(RuleId, Vec<RuleId>, usize)>,
    next_index: usize,
}

impl Tarjan<'_> {
    fn open(&mut self, rule: RuleId) {
        self.index[rule.index()] = self.next_index;
        self.low[rule.index()] = self.next_index;
        self.next_index += 1;
        self.stack.push(rule);
        self.on_stack[rule.index()] = true;
        self.path
            .push((rule, self.fsms.automaton(rule).references(), 0));
    }
}

/// Whether the edge `edge` of `fsm` ends in an accepting state with no edges out.
fn is_tail(fsm: &sieve_fsm::Fsm, edge: &sieve_fsm::Edge) -> bool {
    fsm.is_accepting(edge.target) && fsm.edges(edge.target).is_empty()
}

/// Refuses a component with a cycle unless every reference between its members is a tail
/// reference, naming a cycle through the first offending member.
fn check_tail_only(fsms: &GrammarFsms, component: &[RuleId]) -> Result<(), TokenDfaError> {
    let inside = |r: RuleId| component.contains(&r);
    let offending = component
        .iter()
        .copied()
        .find(|&rule| match fsms.automaton(rule) {
            RuleAutomaton::Regular(fsm) => fsm.states().any(|s| {
                fsm.edges(s)
                    .iter()
                    .any(|e| matches!(e.label, Label::Rule(r) if inside(r)) && !is_tail(fsm, e))
            }),
            _ => true,
        });
    match offending {
        None => Ok(()),
        Some(rule) => Err(TokenDfaError::Recursive {
            cycle: cycle_through(fsms, component, rule),
        }),
    }
}

/// The names of a shortest reference cycle from `rule` back to itself within `component`.
fn cycle_through(fsms: &GrammarFsms, component: &[RuleId], rule: RuleId) -> Vec<String> {
    let mut parent: Vec<Option<RuleId>> = vec![None; fsms.rule_count()];
    let mut queue = std::collections::VecDeque::from([rule]);
    let mut last = rule;
    'search: while let Some(r) = queue.pop_front() {
        for callee in fsms.automaton(r).references() {
            if !component.contains(&callee) {
                continue;
            }
            if callee == rule {
                last = r;
                break 'search;
            }
            if parent[callee.index()].is_none() {
                parent[callee.index()] = Some(r);
                queue.push_back(callee);
            }
        }
    }
    let mut chain = Vec::new();
    let mut at = last;
    while at != rule {
        chain.push(at);
        at = parent[at.index()].expect("every rule on the path has a parent");
    }
    chain.reverse();
    let mut names = vec![fsms.name(rule).to_owned()];
    names.extend(chain.iter().map(|&r| fsms.name(r).to_owned()));
    names.push(fsms.name(rule).to_owned());
    names
}

/// The minimal DFA of `entry`, a member of the tail-recursive `component`: one NFA with every
/// member's automaton (entry first), tail references as epsilon edges to the callee's start.
fn component_dfa(
    fsms: &GrammarFsms,
    component: &[RuleId],
    entry: RuleId,
    built: &[Option<ByteDfa>],
    config: &Config,
) -> Result<ByteDfa, TokenDfaError> {
    let limit = config.get_state_limit();
    let too_big = || TokenDfaError::StateLimit {
        rule: fsms.name(entry).to_owned(),
        limit,
    };
    let members: Vec<RuleId> = std::iter::once(entry)
        .chain(component.iter().copied().filter(|&r| r != entry))
        .collect();
    let fsm_of = |r: RuleId| {
        fsms.automaton(r)
            .fsm()
            .expect("check_tail_only admits only regular members")
    };
    // Each member's states at a base offset, in `members` order (the callees' copies come
    // after all of them); `total` counts the copies too, for the limit.
    let mut base = Vec::with_capacity(members.len());
    let mut own = 0usize;
    let mut total = 0usize;
    for &m in &members {
        base.push(own as u32);
        let fsm = fsm_of(m);
        own += fsm.state_count();
        total += fsm.state_count();
        for s in fsm.states() {
            for e in fsm.edges(s) {
                if let Label::Rule(r) = e.label {
                    if !component.contains(&r) {
                        total += callee_dfa(built, r).state_count();
                    }
                }
            }
        }
        if total > limit.saturating_mul(4) {
            return Err(too_big());
        }
    }
    let start_of = |r: RuleId| base[members.iter().position(|&m| m == r).expect("a member")];
    let mut nfa = Nfa::new();
    for _ in 1..own {
        nfa.add_state();
    }
    let mut accepting = Vec::new();
    for (i, &m) in members.iter().enumerate() {
        let fsm = fsm_of(m);
        for s in fsm.states() {
            let from = (base[i] + s.index() as u32) as usize;
            nfa.accepting[from] = fsm.is_accepting(s);
            for edge in fsm.edges(s) {
                let to = base[i] + edge.target.index() as u32;
                match edge.label {
                    Label::Bytes { lo, hi } => nfa.bytes[from].push((lo, hi, to)),
                    Label::Rule(r) if component.contains(&r) => nfa.eps[from].push(start_of(r)),
                    Label::Rule(r) => {
                        accepting.clear();
                        let start = nfa.embed(callee_dfa(built, r), &mut accepting);
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
    let dfa = determinize(&nfa, limit).ok_or_else(too_big)?;
    Ok(minimize(&dfa))
}

/// The minimal DFA of `rule`, limited to `limit.k` tokens per occurrence, reading token
/// ends: its automaton copied once per number of tokens the occurrence has ended (`0..k`), a
/// token end taking state `s` at level `l` to `s` at level `l + 1` when `keeps(rest[s],
/// k − l − 1)` and killing it otherwise, and a fresh entry (the start before any byte) that
/// a token end kills: a token that ends before the occurrence's first byte is not one of its
/// tokens (the caller, which stays, enters the rule again after it).
fn limited_dfa(
    fsms: &GrammarFsms,
    rule: RuleId,
    limit: &RuleLimit,
    config: &Config,
) -> Result<ByteDfa, TokenDfaError> {
    let state_limit = config.get_state_limit();
    let too_big = || TokenDfaError::StateLimit {
        rule: fsms.name(rule).to_owned(),
        limit: state_limit,
    };
    let unsupported = || TokenDfaError::Unsupported {
        rule: fsms.name(rule).to_owned(),
    };
    let fsm = fsms.automaton(rule).fsm().ok_or_else(unsupported)?;
    let n = fsm.state_count();
    let k = limit.k as usize;
    if n.saturating_mul(k).saturating_add(1) > state_limit.saturating_mul(4) {
        return Err(too_big());
    }
    let at = |s: usize, level: usize| (1 + level * n + s) as u32;
    let mut nfa = Nfa::new();
    for _ in 0..n * k {
        nfa.add_state();
    }
    let start = fsm.start();
    nfa.accepting[0] = fsm.is_accepting(start);
    nfa.token_end[0] = DEAD;
    for edge in fsm.edges(start) {
        let Label::Bytes { lo, hi } = edge.label else {
            return Err(unsupported());
        };
        nfa.bytes[0].push((lo, hi, at(edge.target.index(), 0)));
    }
    for level in 0..k {
        let allowance = i64::from(limit.k) - level as i64 - 1;
        for s in fsm.states() {
            let from = at(s.index(), level) as usize;
            nfa.accepting[from] = fsm.is_accepting(s);
            nfa.token_end[from] = if keeps(limit.rest[s.index()], allowance) {
                at(s.index(), level + 1)
            } else {
                DEAD
            };
            for edge in fsm.edges(s) {
                let Label::Bytes { lo, hi } = edge.label else {
                    return Err(unsupported());
                };
                nfa.bytes[from].push((lo, hi, at(edge.target.index(), level)));
            }
        }
    }
    let dfa = determinize(&nfa, state_limit).ok_or_else(too_big)?;
    Ok(minimize(&dfa))
}

/// The finished DFA of a callee.
fn callee_dfa(built: &[Option<ByteDfa>], rule: RuleId) -> &ByteDfa {
    built[rule.index()]
        .as_ref()
        .expect("callees are built before their callers")
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
    let callee = |r: RuleId| callee_dfa(built, r);
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
