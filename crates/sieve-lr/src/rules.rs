//! [`Rules`]: the rule automata of a grammar in one global state space, plus the augmented
//! start rule, with the FIRST sets, nullability and shortest sentences the LR construction
//! reads.
//!
//! Every rule automaton becomes a run of global states (its FSM states in order, so the
//! rule's start is the first of the run). Counted rules `X{m,n}` are expanded into a chain of
//! `X` edges when the chain is at most [`crate::Config::max_counted_states`] long; rules the
//! FSM stage kept as NFAs are refused (LR items need one automaton state per rule instance).
//! The last rule is `START ::= root`, whose accepting state is where the parser accepts.
//!
//! # Token limits
//!
//! A rule with a token limit `k` (`max_tokens`; a normalised limited rule references no rule)
//! becomes its automaton times the number of tokens its occurrence has ended, as in the token
//! DFA: an *entry* (the rule's start before its first byte, whose bytes lead to level 0), the
//! automaton's states at each level `0..k`, and an *ended* state `E`. A token end (`⊥`,
//! [`State::token_end`]) moves a state at level `ℓ` up one level when
//! [`keeps`]`(rest, k − ℓ − 1)`; otherwise an accepting state goes to `E` (the occurrence is
//! over and waits for its reduction, which LR makes only at the next byte) and any other dies.
//! `E` is accepting and has no edges. States of other rules, and `E`, stay put on `⊥`; the
//! entry dies (a token that ends before the occurrence's first byte is not one of its
//! tokens; the entry is only ever a closure item, which the caller makes afresh).
//!
//! # Invariants
//!
//! - Each state's byte edges are disjoint ranges and its rule edges name distinct rules (the
//!   automata are deterministic).
//! - Only the root may derive ε (the normalised form); `nullable` is exact under that.
//! - `first[s]` is exactly the set of bytes that can start a non-empty string derived from
//!   state `s` of its rule (bounded by the rule's end).

use sieve_backend::token_limits::{keeps, RuleLimit, NO_REST};
use sieve_fsm::{Fsm, GrammarFsms, Label, RuleAutomaton};

use crate::error::LrError;
use crate::lookahead::La;
use crate::Config;

/// One global automaton state.
#[derive(Clone, Debug)]
pub(crate) struct State {
    /// The rule it belongs to.
    pub rule: u32,
    /// Its number within the rule's own automaton (for messages).
    pub local: u32,
    pub accepting: bool,
    /// `(lo, hi, target)`, disjoint ranges.
    pub bytes: Vec<(u8, u8, u32)>,
    /// `(rule, target)`, distinct rules.
    pub calls: Vec<(u32, u32)>,
    /// Where a token end takes it: [`STAY`], [`DEAD`] or a state of its rule.
    pub token_end: u32,
    /// In a limited rule, the fewest token steps (`sieve_backend::token_limits::token_rest`)
    /// that finish it from here within the tokens its level has left; [`NO_REST`] elsewhere
    /// or when they do not fit.
    pub rest: u32,
}

/// [`State::token_end`] of a state a token end leaves in place.
pub(crate) const STAY: u32 = u32::MAX;
/// [`State::token_end`] of a state a token end kills.
pub(crate) const DEAD: u32 = u32::MAX - 1;

/// The global state space (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Rules {
    pub states: Vec<State>,
    /// Each rule's start state; index `start_rule` is the augmented start rule.
    pub rule_start: Vec<u32>,
    pub names: Vec<String>,
    /// The augmented rule `START ::= root`.
    pub start_rule: u32,
    /// FIRST of each state.
    pub first: Vec<La>,
    /// Whether each state can reach its rule's end deriving ε.
    pub nullable: Vec<bool>,
    /// The shortest sentence length of each rule, saturated.
    pub shortest: Vec<u64>,
    /// Per state, the shortest length to the rule's end, saturated.
    dist: Vec<u64>,
    /// Whether some rule has a token limit (some state's `token_end` is not [`STAY`]).
    pub has_token_limits: bool,
}

impl Rules {
    /// Flattens `fsms`. `root_nullable`: whether the root derives ε. `limits`: per rule, its
    /// token limit (none when empty).
    pub(crate) fn new(
        fsms: &GrammarFsms,
        root_nullable: bool,
        config: &Config,
        limits: &[Option<RuleLimit>],
    ) -> Result<Rules, LrError> {
        let mut states: Vec<State> = Vec::new();
        let mut rule_start = Vec::with_capacity(fsms.rule_count() + 1);
        let mut names = Vec::with_capacity(fsms.rule_count() + 1);
        // Global ids are assigned rule by rule; targets are offset by the rule's first id.
        for rule in fsms.rule_ids() {
            let base = states.len() as u32;
            rule_start.push(base);
            names.push(fsms.name(rule).to_owned());
            let r = rule.index() as u32;
            let limit = limits.get(rule.index()).and_then(Option::as_ref);
            match fsms.automaton(rule) {
                RuleAutomaton::Regular(fsm) => {
                    if !fsm.is_deterministic() {
                        return Err(LrError::unsupported(
                            fsms.name(rule),
                            "the FSM stage kept this rule as an NFA (its DFA would exceed \
                             the automata stage's dfa_state_limit), and LR items need one \
                             automaton state per rule instance",
                        ));
                    }
                    if let Some(limit) = limit {
                        limited_states(fsms.name(rule), fsm, limit, r, base, config, &mut states)?;
                        continue;
                    }
                    for s in fsm.states() {
                        let mut state = State {
                            rule: r,
                            local: s.index() as u32,
                            accepting: fsm.is_accepting(s),
                            bytes: Vec::new(),
                            calls: Vec::new(),
                            token_end: STAY,
                            rest: NO_REST,
                        };
                        for edge in fsm.edges(s) {
                            let target = base + edge.target.index() as u32;
                            match edge.label {
                                Label::Bytes { lo, hi } => state.bytes.push((lo, hi, target)),
                                Label::Rule(callee) => {
                                    state.calls.push((callee.index() as u32, target))
                                }
                                Label::Epsilon => {
                                    return Err(LrError::unsupported(
                                        fsms.name(rule),
                                        "the automaton has an ε edge",
                                    ))
                                }
                            }
                        }
                        states.push(state);
                    }
                }
                RuleAutomaton::Counted { item, min, max } => {
                    let item = item.index() as u32;
                    let chain = max.unwrap_or(*min) as usize;
                    if chain > config.max_counted_states {
                        return Err(LrError::unsupported(
                            fsms.name(rule),
                            format!(
                                "a counted repetition {{{min},{}}} would expand to {} states, \
                                 over max_counted_states ({})",
                                max.map_or(String::new(), |m| m.to_string()),
                                chain + 1,
                                config.max_counted_states
                            ),
                        ));
                    }
                    for i in 0..=chain {
                        let target = if i < chain {
                            Some(base + i as u32 + 1)
                        } else if max.is_none() {
                            Some(base + i as u32)
                        } else {
                            None
                        };
                        states.push(State {
                            rule: r,
                            local: i as u32,
                            accepting: i as u32 >= *min,
                            bytes: Vec::new(),
                            calls: target.map(|t| (item, t)).into_iter().collect(),
                            token_end: STAY,
                            rest: NO_REST,
                        });
                    }
                }
                _ => {
                    return Err(LrError::unsupported(
                        fsms.name(rule),
                        "an automaton kind this backend does not know",
                    ))
                }
            }
            if states.len() > config.max_states.saturating_mul(16) {
                return Err(LrError::limit(
                    "max_states",
                    config.max_states,
                    "the expanded rule automata",
                ));
            }
        }
        let start_rule = rule_start.len() as u32;
        let base = states.len() as u32;
        rule_start.push(base);
        names.push("START".to_owned());
        let root = fsms.root().index() as u32;
        states.push(State {
            rule: start_rule,
            local: 0,
            accepting: false,
            bytes: Vec::new(),
            calls: vec![(root, base + 1)],
            token_end: STAY,
            rest: NO_REST,
        });
        states.push(State {
            rule: start_rule,
            local: 1,
            accepting: true,
            bytes: Vec::new(),
            calls: Vec::new(),
            token_end: STAY,
            rest: NO_REST,
        });
        let mut rules = Rules {
            has_token_limits: limits.iter().any(Option::is_some),
            first: vec![La::EMPTY; states.len()],
            nullable: vec![false; states.len()],
            shortest: vec![u64::MAX; rule_start.len()],
            dist: vec![u64::MAX; states.len()],
            states,
            rule_start,
            names,
            start_rule,
        };
        rules.analyse(root, root_nullable);
        Ok(rules)
    }

    /// Whether `rule` derives ε.
    fn rule_nullable(root: u32, root_nullable: bool, rule: u32) -> bool {
        rule == root && root_nullable
    }

    /// FIRST, nullability and shortest lengths, by fixpoints over all states.
    fn analyse(&mut self, root: u32, root_nullable: bool) {
        for (s, state) in self.states.iter().enumerate() {
            self.nullable[s] = state.accepting;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for s in (0..self.states.len()).rev() {
                let state = &self.states[s];
                let mut first = self.first[s];
                let mut nullable = self.nullable[s];
                for &(lo, hi, _) in &state.bytes {
                    first.insert_range(lo, hi);
                }
                for &(callee, target) in &state.calls {
                    first.union_with(&self.first[self.rule_start[callee as usize] as usize]);
                    if Self::rule_nullable(root, root_nullable, callee) {
                        first.union_with(&self.first[target as usize]);
                        nullable |= self.nullable[target as usize];
                    }
                }
                if first != self.first[s] || nullable != self.nullable[s] {
                    self.first[s] = first;
                    self.nullable[s] = nullable;
                    changed = true;
                }
            }
        }
        for (s, state) in self.states.iter().enumerate() {
            if state.accepting {
                self.dist[s] = 0;
            }
        }
        let mut changed = true;
        while changed {
            changed = false;
            for s in (0..self.states.len()).rev() {
                let state = &self.states[s];
                let mut best = self.dist[s];
                for &(_, _, target) in &state.bytes {
                    best = best.min(self.dist[target as usize].saturating_add(1));
                }
                for &(callee, target) in &state.calls {
                    let callee_len = self.dist[self.rule_start[callee as usize] as usize];
                    best = best.min(self.dist[target as usize].saturating_add(callee_len));
                }
                if best < self.dist[s] {
                    self.dist[s] = best;
                    changed = true;
                }
            }
        }
        for (r, &start) in self.rule_start.iter().enumerate() {
            self.shortest[r] = self.dist[start as usize];
        }
    }

    /// Appends to `out` a shortest sentence of `rule`, stopping once `out` holds `cap` bytes
    /// (or after `8 * cap` steps). A rule with no finite sentence (a pumping rule) gets a
    /// prefix of an infinite derivation.
    pub(crate) fn sample_sentence(&self, rule: u32, out: &mut Vec<u8>, cap: usize) {
        // An explicit stack of states still to run to their rule's end.
        let mut stack = vec![self.rule_start[rule as usize]];
        let mut steps = 0;
        while let Some(s) = stack.pop() {
            steps += 1;
            if out.len() >= cap || steps > 8 * cap || stack.len() > cap {
                return;
            }
            let state = &self.states[s as usize];
            let here = self.dist[s as usize];
            if here == 0 && state.accepting {
                continue;
            }
            let finite = here != u64::MAX;
            if let Some(&(lo, _, target)) = state
                .bytes
                .iter()
                .find(|&&(_, _, t)| !finite || self.dist[t as usize].saturating_add(1) == here)
            {
                out.push(lo);
                stack.push(target);
                continue;
            }
            let call = state.calls.iter().find(|&&(callee, target)| {
                !finite
                    || self.dist[target as usize]
                        .saturating_add(self.dist[self.rule_start[callee as usize] as usize])
                        == here
            });
            if let Some(&(callee, target)) = call {
                stack.push(target);
                stack.push(self.rule_start[callee as usize]);
            }
        }
    }
}

/// Appends the states of limited rule `r` (named `name`, automaton `fsm`, first global id
/// `base`): the entry, `k` levels of `fsm`'s states and the ended state (see the module docs).
fn limited_states(
    name: &str,
    fsm: &Fsm,
    limit: &RuleLimit,
    r: u32,
    base: u32,
    config: &Config,
    states: &mut Vec<State>,
) -> Result<(), LrError> {
    let n = fsm.state_count();
    let k = limit.k as usize;
    let count = n.saturating_mul(k).saturating_add(2);
    if states.len().saturating_add(count) > config.max_states.saturating_mul(16) {
        return Err(LrError::limit(
            "max_states",
            config.max_states,
            format!("rule `{name}` with its token limit ({k} copies of its automaton)"),
        ));
    }
    let at = |s: usize, level: usize| base + (1 + level * n + s) as u32;
    let ended = base + 1 + (k * n) as u32;
    let bytes = |s, level| -> Result<Vec<(u8, u8, u32)>, LrError> {
        fsm.edges(s)
            .iter()
            .map(|edge| match edge.label {
                Label::Bytes { lo, hi } => Ok((lo, hi, at(edge.target.index(), level))),
                _ => Err(LrError::unsupported(
                    name,
                    "a rule with a token limit must be an automaton over bytes",
                )),
            })
            .collect()
    };
    let start = fsm.start();
    states.push(State {
        rule: r,
        local: start.index() as u32,
        accepting: fsm.is_accepting(start),
        bytes: bytes(start, 0)?,
        calls: Vec::new(),
        token_end: DEAD,
        // At most `M < k`: the limit check refuses the rest.
        rest: limit.rest[start.index()],
    });
    for level in 0..k {
        let allowance = i64::from(limit.k) - level as i64 - 1;
        for s in fsm.states() {
            let accepting = fsm.is_accepting(s);
            let token_end = if keeps(limit.rest[s.index()], allowance) {
                at(s.index(), level + 1)
            } else if accepting {
                ended
            } else {
                DEAD
            };
            let rest = limit.rest[s.index()];
            states.push(State {
                rule: r,
                local: s.index() as u32,
                accepting,
                bytes: bytes(s, level)?,
                calls: Vec::new(),
                token_end,
                // Each of its steps keeps the thread iff it fits in the tokens left.
                rest: if i64::from(rest) <= allowance + 1 {
                    rest
                } else {
                    NO_REST
                },
            });
        }
    }
    states.push(State {
        rule: r,
        local: n as u32,
        accepting: true,
        bytes: Vec::new(),
        calls: Vec::new(),
        token_end: STAY,
        rest: 0,
    });
    Ok(())
}
