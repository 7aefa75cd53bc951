//! [`EarleyGrammar`]: the rule automata flattened into one global state space.
//!
//! # Invariants
//!
//! - Global state ids are dense: rule `r`'s regular states are `start[r] .. start[r] + n`, in
//!   the FSM's own order; a counted rule has exactly one state, `start[r]`.
//! - Each state's byte, rule and ε edges are contiguous ranges of three shared edge vectors,
//!   in the FSM's order, with targets already translated to global ids.
//! - `class` of a state is the union of its byte edges (deduplicated into a table), or
//!   [`NO_CLASS`] when it has none; `final_only` means accepting with no edge of any kind.
//! - `nullable[r]` is the least fixpoint of "some accepting state is reachable from the start
//!   by ε edges and edges of nullable rules" (counted: `min == 0` or the item is nullable).

use foldhash::HashMap;

use sieve_fsm::{GrammarFsms, Label, RuleAutomaton};
use sieve_ir::ByteClass;

use crate::Config;

/// The `max` of an unbounded counted repetition.
pub(crate) const UNBOUNDED: u32 = u32::MAX;
/// The `class` of a state without byte edges.
pub(crate) const NO_CLASS: u32 = u32::MAX;
/// The `counted` of a regular state.
pub(crate) const NOT_COUNTED: u32 = u32::MAX;

/// One global state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StateInfo {
    /// The rule the state belongs to.
    pub(crate) rule: u32,
    pub(crate) accepting: bool,
    pub(crate) final_only: bool,
    /// Index into `classes`, or [`NO_CLASS`].
    pub(crate) class: u32,
    /// Index into `counted`, or [`NOT_COUNTED`].
    pub(crate) counted: u32,
    pub(crate) bytes: (u32, u32),
    pub(crate) rules: (u32, u32),
    pub(crate) eps: (u32, u32),
}

/// A byte-range edge.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ByteEdge {
    pub(crate) lo: u8,
    pub(crate) hi: u8,
    pub(crate) target: u32,
}

/// A rule-reference edge.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RuleEdge {
    pub(crate) rule: u32,
    pub(crate) target: u32,
}

/// A counted rule `item{min,max}`; `max` is [`UNBOUNDED`] for `{min,}`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counted {
    pub(crate) item: u32,
    pub(crate) min: u32,
    pub(crate) max: u32,
}

impl Counted {
    /// The count after one more item, clamped to `min` when unbounded (all counts `≥ min`
    /// behave alike then).
    pub(crate) fn next(&self, count: u32) -> u32 {
        if self.max == UNBOUNDED {
            count.saturating_add(1).min(self.min)
        } else {
            count + 1
        }
    }
}

/// A grammar compiled for the Earley recogniser: every rule automaton in one flat global state
/// space. Built once per grammar, immutable, `Send + Sync`; share it between parsers with an
/// `Arc`.
#[derive(Clone, Debug)]
pub struct EarleyGrammar {
    pub(crate) states: Vec<StateInfo>,
    pub(crate) byte_edges: Vec<ByteEdge>,
    pub(crate) rule_edges: Vec<RuleEdge>,
    pub(crate) eps_edges: Vec<u32>,
    pub(crate) classes: Vec<ByteClass>,
    pub(crate) counted: Vec<Counted>,
    /// The global start state of each rule.
    pub(crate) start: Vec<u32>,
    pub(crate) nullable: Vec<bool>,
    pub(crate) root: u32,
    pub(crate) config: Config,
    /// Per rule, FIRST and FOLLOW over bytes (see `within.rs`).
    pub(crate) first: Vec<ByteClass>,
    pub(crate) follow: Vec<ByteClass>,
    /// Per rule, its structural hash (`sieve_fsm::GrammarFsms::hash`).
    pub(crate) rule_hash: Vec<Option<u64>>,
    /// The byte classes, computed by the first classification (see `alphabet.rs`).
    pub(crate) alphabet: std::sync::OnceLock<crate::alphabet::Alphabet>,
    /// The classification walk's rows, kept between classifications (see `classify.rs`).
    pub(crate) walk_tables: crate::classify::SharedTables,
    /// The residual hashes found so far (see `residual.rs`).
    pub(crate) residuals: crate::residual::ResidualMemo,
    /// Per rule, its name (for errors).
    pub(crate) rule_names: Vec<String>,
    /// The rules with a token limit (see `limits.rs`).
    pub(crate) limits: crate::limits::Limits,
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).expect("sieve-fsm bounds states and edges well below 2^32")
}

impl EarleyGrammar {
    /// Compiles the automata of a normalised grammar (see `sieve_normalize::normalize` and
    /// `sieve_fsm::Builder`). `root_nullable` says whether the root derives the empty string;
    /// it is also recomputed from the automata, and either being true makes the empty input a
    /// sentence.
    ///
    /// The grammar should satisfy the normalised-form contract (only the root derives ε, no
    /// useless rules); other grammars are still recognised correctly, but a byte may then be
    /// accepted whose set can never finish.
    pub fn new(fsms: &GrammarFsms, root_nullable: bool, config: Config) -> EarleyGrammar {
        let automata = fsms.automata();
        let mut start = Vec::with_capacity(automata.len());
        let mut next = 0usize;
        for automaton in automata {
            start.push(to_u32(next));
            next += match automaton {
                RuleAutomaton::Regular(fsm) => fsm.state_count(),
                _ => 1,
            };
        }
        let mut g = EarleyGrammar {
            states: Vec::with_capacity(next),
            byte_edges: Vec::new(),
            rule_edges: Vec::new(),
            eps_edges: Vec::new(),
            classes: Vec::new(),
            counted: Vec::new(),
            start,
            nullable: vec![false; automata.len()],
            root: to_u32(fsms.root().index()),
            config,
            first: Vec::new(),
            follow: Vec::new(),
            rule_hash: fsms.rule_ids().map(|r| fsms.hash(r)).collect(),
            alphabet: std::sync::OnceLock::new(),
            walk_tables: crate::classify::SharedTables::default(),
            residuals: crate::residual::ResidualMemo::default(),
            rule_names: fsms.rule_ids().map(|r| fsms.name(r).to_owned()).collect(),
            limits: crate::limits::Limits::default(),
        };
        // Every edge is a byte, rule or ε edge: the total bounds each vector (an FSM's edges
        // are mostly byte edges).
        let edges: usize = automata
            .iter()
            .map(|automaton| match automaton {
                RuleAutomaton::Regular(fsm) => fsm.edge_count(),
                _ => 0,
            })
            .sum();
        g.byte_edges.reserve(edges);
        let mut class_ids: HashMap<ByteClass, u32> = HashMap::default();
        for (rule, automaton) in automata.iter().enumerate() {
            let base = g.start[rule];
            match automaton {
                RuleAutomaton::Regular(fsm) => {
                    for state in fsm.states() {
                        let (b0, r0, e0) =
                            (g.byte_edges.len(), g.rule_edges.len(), g.eps_edges.len());
                        let mut class = ByteClass::EMPTY;
                        let edges = fsm.edges(state);
                        for edge in edges {
                            let target = base + to_u32(edge.target.index());
                            match edge.label {
                                Label::Bytes { lo, hi } => {
                                    class.add_range(lo, hi);
                                    g.byte_edges.push(ByteEdge { lo, hi, target });
                                }
                                Label::Rule(r) => g.rule_edges.push(RuleEdge {
                                    rule: to_u32(r.index()),
                                    target,
                                }),
                                Label::Epsilon => g.eps_edges.push(target),
                            }
                        }
                        let class = if class.is_empty() {
                            NO_CLASS
                        } else {
                            let fresh = to_u32(class_ids.len());
                            *class_ids.entry(class).or_insert_with(|| {
                                g.classes.push(class);
                                fresh
                            })
                        };
                        let accepting = fsm.is_accepting(state);
                        let no_edges = edges.is_empty();
                        g.states.push(StateInfo {
                            rule: to_u32(rule),
                            accepting,
                            final_only: accepting && no_edges,
                            class,
                            counted: NOT_COUNTED,
                            bytes: (to_u32(b0), to_u32(g.byte_edges.len())),
                            rules: (to_u32(r0), to_u32(g.rule_edges.len())),
                            eps: (to_u32(e0), to_u32(g.eps_edges.len())),
                        });
                    }
                }
                RuleAutomaton::Counted { item, min, max } => {
                    g.counted.push(Counted {
                        item: to_u32(item.index()),
                        min: *min,
                        max: max.unwrap_or(UNBOUNDED),
                    });
                    g.states.push(StateInfo {
                        rule: to_u32(rule),
                        accepting: false,
                        final_only: false,
                        class: NO_CLASS,
                        counted: to_u32(g.counted.len() - 1),
                        bytes: (0, 0),
                        rules: (0, 0),
                        eps: (0, 0),
                    });
                }
                // `RuleAutomaton` is non-exhaustive; an unknown kind is a rule that matches
                // nothing (a state with no edges that does not accept).
                _ => {
                    g.states.push(StateInfo {
                        rule: to_u32(rule),
                        accepting: false,
                        final_only: false,
                        class: NO_CLASS,
                        counted: NOT_COUNTED,
                        bytes: (0, 0),
                        rules: (0, 0),
                        eps: (0, 0),
                    });
                }
            }
        }
        g.compute_nullable();
        if root_nullable && !g.nullable[g.root as usize] {
            // Nullability the automata do not show: a structural fingerprint would miss it.
            g.rule_hash.fill(None);
            g.nullable[g.root as usize] = true;
        }
        (g.first, g.follow) = crate::first_follow::first_and_follow(&g);
        let limits = fsms
            .rule_ids()
            .map(|r| fsms.token_limit(r).unwrap_or(0))
            .collect();
        g.limits = crate::limits::Limits::new(&g, limits);
        g
    }

    /// The least fixpoint described in the module docs; iterative, no recursion.
    fn compute_nullable(&mut self) {
        let rules = self.start.len();
        let mut seen = vec![false; self.states.len()];
        let mut stack = Vec::new();
        loop {
            let mut changed = false;
            for rule in 0..rules {
                if self.nullable[rule] {
                    continue;
                }
                let start = self.start[rule] as usize;
                let info = self.states[start];
                let nullable = if info.counted != NOT_COUNTED {
                    let c = self.counted[info.counted as usize];
                    c.min == 0 || self.nullable[c.item as usize]
                } else {
                    let mut found = false;
                    stack.clear();
                    stack.push(start);
                    let mut visited = Vec::new();
                    seen[start] = true;
                    visited.push(start);
                    while let Some(s) = stack.pop() {
                        let info = self.states[s];
                        if info.accepting {
                            found = true;
                            break;
                        }
                        let eps = &self.eps_edges[info.eps.0 as usize..info.eps.1 as usize];
                        let via_rules = self.rule_edges
                            [info.rules.0 as usize..info.rules.1 as usize]
                            .iter()
                            .filter(|e| self.nullable[e.rule as usize])
                            .map(|e| e.target);
                        for t in eps.iter().copied().chain(via_rules) {
                            if !seen[t as usize] {
                                seen[t as usize] = true;
                                visited.push(t as usize);
                                stack.push(t as usize);
                            }
                        }
                    }
                    for s in visited {
                        seen[s] = false;
                    }
                    found
                };
                if nullable {
                    self.nullable[rule] = true;
                    changed = true;
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// The configuration parsers of this grammar run under.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The number of global states (FSM states of all rules, one per counted rule).
    pub fn state_count(&self) -> usize {
        self.states.len()
    }

    /// The heap bytes of the tables (what a backend comparison reports as their memory).
    pub fn heap_bytes(&self) -> usize {
        fn bytes<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        bytes(&self.states)
            + bytes(&self.byte_edges)
            + bytes(&self.rule_edges)
            + bytes(&self.eps_edges)
            + bytes(&self.classes)
            + bytes(&self.counted)
            + bytes(&self.start)
            + bytes(&self.nullable)
            + bytes(&self.first)
            + bytes(&self.follow)
            + bytes(&self.rule_hash)
    }

    /// Whether the empty input is a sentence.
    pub fn root_nullable(&self) -> bool {
        self.nullable[self.root as usize]
    }

    pub(crate) fn byte_edges(&self, info: &StateInfo) -> &[ByteEdge] {
        &self.byte_edges[info.bytes.0 as usize..info.bytes.1 as usize]
    }

    pub(crate) fn rule_edges(&self, info: &StateInfo) -> &[RuleEdge] {
        &self.rule_edges[info.rules.0 as usize..info.rules.1 as usize]
    }

    pub(crate) fn eps_edges(&self, info: &StateInfo) -> &[u32] {
        &self.eps_edges[info.eps.0 as usize..info.eps.1 as usize]
    }

    /// Whether an item in `state` with `count` can only complete (it has nothing to scan,
    /// predict or follow).
    pub(crate) fn is_final_only(&self, state: u32, count: u32) -> bool {
        let info = &self.states[state as usize];
        if info.counted != NOT_COUNTED {
            let c = self.counted[info.counted as usize];
            c.max != UNBOUNDED && count >= c.max
        } else {
            info.final_only
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sieve_ir::{Expr, GrammarBuilder};

    #[test]
    fn nullable_fixpoint_and_layout() {
        // root ::= "a" x | "" ; x ::= "b"{2,9}  (counted after the repetition pass)
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let x = b.declare("x").unwrap();
        let item = b.declare("item").unwrap();
        b.define(
            root,
            Expr::choice([Expr::seq([Expr::bytes("a"), Expr::rule(x)]), Expr::empty()]).unwrap(),
        );
        b.define(x, Expr::repeat(Expr::rule(item), 2, Some(9)).unwrap());
        b.define(item, Expr::bytes("b"));
        let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
            .build(&b.build(root).unwrap())
            .unwrap();
        let g = EarleyGrammar::new(&fsms, false, Config::default());
        assert_eq!(g.nullable, vec![true, false, false]);
        assert!(g.root_nullable());
        let counted = g.states[g.start[1] as usize];
        assert_ne!(counted.counted, NOT_COUNTED);
        assert!(g.is_final_only(g.start[1], 9));
        assert!(!g.is_final_only(g.start[1], 8));
        let c = g.counted[counted.counted as usize];
        assert_eq!((c.item, c.min, c.max, c.next(3)), (2, 2, 9, 4));
    }
}
