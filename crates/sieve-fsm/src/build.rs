//! [`Config`], [`Builder`] and what they build: [`GrammarFsms`] of [`RuleAutomaton`]s.
//!
//! The pipeline for one grammar:
//!
//! 1. **Check and classify** every rule against the normalised-form contract (see
//!    [`Builder::build`]): a counted repetition becomes [`RuleAutomaton::Counted`]; a regular
//!    body becomes a Thompson NFA ([`crate::nfa`]).
//! 2. **Nullability**: a fixpoint over the NFAs; a rule other than the root that derives the
//!    empty string is an error. [`Builder::build_normalized`] skips it in release builds: its
//!    input is a [`sieve_normalize::Normalized`], which satisfies the contract by construction.
//! 3. **Per regular rule**: subset construction capped at [`Config::dfa_state_limit`], Hopcroft
//!    minimisation ([`crate::dfa`]), canonical numbering ([`crate::canonical`]); past the cap,
//!    the epsilon-free NFA in canonical form instead. Rules whose bodies differ only in which
//!    rules they reference, in the same order (`key_1 ":" string` and `key_2 ":" string`), are
//!    built once ([`crate::memo`]): the automaton is a function of the body, and renaming
//!    references monotonically keeps every edge's order and so the canonical numbering. A
//!    body's leading literal is set apart, so `"\"city\"" ws? ":" ws? string` and
//!    `"\"country\"" ws? ":" ws? string` share the construction of the rest
//!    ([`crate::head`]); the DFA cap applies to that rest.
//! 4. **Hash** every rule ([`crate::hash`]).
//!
//! # Invariants
//!
//! A [`GrammarFsms`] has one automaton per rule of its grammar, indexed by [`RuleId`]; its
//! state and edge totals are within the configured limits.

use std::sync::Arc;

use sieve_ir::{Expr, ExprKind, Grammar, RuleId};

use crate::canonical::{canonicalize, canonicalize_dfa};
use crate::dfa::{determinize, minimize};
use crate::error::BuildError;
use crate::fragment::Fragments;
use crate::fsm::Fsm;
use crate::hash::hash_rules;
use crate::memo::{RuleMemo, Shape, ShapeKey};
use crate::nfa::{accepts_empty, is_regular_repeat, remove_epsilons, thompson, Nfa};
use crate::shared::AutomatonCache;
use hashbrown::HashTable;

/// Knobs for [`Builder`]. Each documents its default and what raising it costs.
#[derive(Clone, Debug)]
pub struct Config {
    dfa_state_limit: usize,
    state_limit: usize,
    edge_limit: usize,
    minimize: bool,
    parallel: bool,
}

/// How many rules [`Config::parallel`] builds hand to rayon at once; the totals are checked
/// after each such chunk, so a grammar past [`Config::state_limit`] stops within a chunk of it.
const PARALLEL_CHUNK: usize = 256;

impl Default for Config {
    fn default() -> Config {
        Config {
            dfa_state_limit: 4096,
            state_limit: 1 << 22,
            edge_limit: 1 << 24,
            minimize: true,
            parallel: false,
        }
    }
}

impl Config {
    /// The default configuration.
    pub fn new() -> Config {
        Config::default()
    }

    /// The most DFA states the subset construction may create for one rule before giving up
    /// and keeping the rule's epsilon-free NFA (marked non-deterministic). The effective limit
    /// of a rule is the larger of this and the size of its Thompson NFA, so a DFA no larger than
    /// the NFA it comes from is never refused. A rule whose body starts with a literal counts
    /// the body after it (the literal adds one state per byte, in a chain).
    ///
    /// Default 4,096. Raising it lets more rules be deterministic (cheaper to run) at the cost
    /// of construction time and memory proportional to the DFA's size times its alphabet.
    pub fn dfa_state_limit(mut self, limit: usize) -> Config {
        self.dfa_state_limit = limit;
        self
    }

    /// The most states all automata of one grammar may hold together; over it, building fails.
    /// Also bounds each rule's Thompson NFA.
    ///
    /// Default 4,194,304 (about 32 MiB of state records). Raising it admits larger grammars at
    /// the cost of memory.
    pub fn state_limit(mut self, limit: usize) -> Config {
        self.state_limit = limit;
        self
    }

    /// The most edges all automata of one grammar may hold together; over it, building fails.
    /// Removing epsilon edges from a non-deterministic rule can multiply its edges, and this is
    /// what bounds that.
    ///
    /// Default 16,777,216 (about 192 MiB of edges). Raising it admits larger grammars at the
    /// cost of memory.
    pub fn edge_limit(mut self, limit: usize) -> Config {
        self.edge_limit = limit;
        self
    }

    /// Whether to minimise DFAs (Hopcroft's algorithm).
    ///
    /// Default `true`. Turning it off saves construction time of O(n log n) per rule of n DFA
    /// states, but leaves larger automata and hashes that differ between equivalent rules.
    pub fn minimize(mut self, yes: bool) -> Config {
        self.minimize = yes;
        self
    }

    /// Whether the automata of a grammar's rules are built across rayon's threads (in the
    /// pool the build is called in), a chunk of rules at a time. The automata are the same
    /// either way; a limit error names the same rule.
    ///
    /// Default `false`: a server that compiles one grammar per request on its own thread may
    /// not want a compile to take more than that thread.
    pub fn parallel(mut self, yes: bool) -> Config {
        self.parallel = yes;
        self
    }

    /// See [`Config::parallel`].
    pub fn get_parallel(&self) -> bool {
        self.parallel
    }

    /// See [`Config::dfa_state_limit`].
    pub fn get_dfa_state_limit(&self) -> usize {
        self.dfa_state_limit
    }

    /// See [`Config::state_limit`].
    pub fn get_state_limit(&self) -> usize {
        self.state_limit
    }

    /// See [`Config::edge_limit`].
    pub fn get_edge_limit(&self) -> usize {
        self.edge_limit
    }

    /// See [`Config::minimize`].
    pub fn get_minimize(&self) -> bool {
        self.minimize
    }
}

/// The automaton of one rule.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RuleAutomaton {
    /// A regular rule: a byte FSM whose edges may reference rules.
    Regular(Fsm),
    /// A counted repetition `item{min,max}` (`max` `None` for unbounded), left for the backend
    /// to run with a counter.
    Counted {
        /// The repeated rule.
        item: RuleId,
        /// The least number of repetitions.
        min: u32,
        /// The most repetitions, `None` for unbounded.
        max: Option<u32>,
    },
}

impl RuleAutomaton {
    /// The FSM of a regular rule.
    pub fn fsm(&self) -> Option<&Fsm> {
        match self {
            RuleAutomaton::Regular(fsm) => Some(fsm),
            RuleAutomaton::Counted { .. } => None,
        }
    }

    /// The rules this automaton references, sorted, without repeats.
    pub fn references(&self) -> Vec<RuleId> {
        match self {
            RuleAutomaton::Regular(fsm) => fsm.references(),
            RuleAutomaton::Counted { item, .. } => vec![*item],
        }
    }
}

/// The automata of a grammar, one per rule, with their structural hashes.
#[derive(Clone, Debug)]
pub struct GrammarFsms {
    automata: Vec<RuleAutomaton>,
    hashes: Vec<Option<u64>>,
    names: Vec<String>,
    /// Per rule, its token limit (`sieve_ir::Rule::max_tokens`).
    token_limits: Vec<Option<u32>>,
    root: RuleId,
    state_count: usize,
    edge_count: usize,
}

impl GrammarFsms {
    /// The automaton of `rule`.
    ///
    /// # Panics
    /// When `rule` is not a rule of the grammar these automata were built from.
    pub fn automaton(&self, rule: RuleId) -> &RuleAutomaton {
        &self.automata[rule.index()]
    }

    /// Every rule's automaton, indexed by [`RuleId::index`].
    pub fn automata(&self) -> &[RuleAutomaton] {
        &self.automata
    }

    /// The structural hash of `rule` (stable across runs and machines), or `None` when the rule
    /// is in, or references, a cycle of rules that is not simple. See the crate docs.
    ///
    /// # Panics
    /// When `rule` is not a rule of the grammar these automata were built from.
    pub fn hash(&self, rule: RuleId) -> Option<u64> {
        self.hashes[rule.index()]
    }

    /// The name of `rule`, as in the grammar.
    ///
    /// # Panics
    /// When `rule` is not a rule of the grammar these automata were built from.
    pub fn name(&self, rule: RuleId) -> &str {
        &self.names[rule.index()]
    }

    /// The token limit of `rule` (`sieve_ir::Rule::max_tokens`). A normalised grammar's
    /// limited rules reference no rule, so their automata have byte edges only.
    ///
    /// # Panics
    /// When `rule` is not a rule of the grammar these automata were built from.
    pub fn token_limit(&self, rule: RuleId) -> Option<u32> {
        self.token_limits[rule.index()]
    }

    /// Whether some rule has a token limit.
    pub fn has_token_limits(&self) -> bool {
        self.token_limits.iter().any(Option::is_some)
    }

    /// The grammar's root rule.
    pub fn root(&self) -> RuleId {
        self.root
    }

    /// The number of rules.
    pub fn rule_count(&self) -> usize {
        self.automata.len()
    }

    /// Every rule id, ascending.
    pub fn rule_ids(&self) -> impl ExactSizeIterator<Item = RuleId> + '_ {
        (0..self.automata.len()).map(|i| RuleId::new(i).expect("from a grammar"))
    }

    /// The total number of FSM states over all rules.
    pub fn state_count(&self) -> usize {
        self.state_count
    }

    /// The total number of FSM edges over all rules.
    pub fn edge_count(&self) -> usize {
        self.edge_count
    }

    /// Whether the FSM of `rule` accepts exactly `input`; `None` when `rule` is a counted
    /// repetition or its FSM references rules. For tests and tools.
    ///
    /// # Panics
    /// When `rule` is not a rule of the grammar these automata were built from.
    pub fn matches(&self, rule: RuleId, input: &[u8]) -> Option<bool> {
        self.automaton(rule).fsm()?.matches(input)
    }
}

/// Builds [`GrammarFsms`] from a normalised grammar.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    config: Config,
    cache: Option<Arc<AutomatonCache>>,
}

/// A rule after step 1 of the pipeline.
enum Classified {
    /// A regular rule: its NFA is built in step 3, and only when no rule of the same shape
    /// was built before.
    Regular,
    Counted {
        item: RuleId,
        min: u32,
        max: Option<u32>,
    },
}

impl Builder {
    /// A builder with the given configuration.
    pub fn new(config: Config) -> Builder {
        Builder {
            config,
            cache: None,
        }
    }

    /// A builder that takes rule automata from `cache` when a build of the same rule shape
    /// put them there, and adds the ones it builds (see [`AutomatonCache`]). The automata are
    /// exactly those a build without the cache gives.
    pub fn with_cache(mut self, cache: Arc<AutomatonCache>) -> Builder {
        self.cache = Some(cache);
        self
    }

    /// The builder's configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Builds the automata of `grammar`, which must be in normalised form:
    ///
    /// - every rule is either **regular** — its body built from bytes, classes, rule
    ///   references, sequence, choice, the empty string and `?`/`*`/`+` repetition — or a
    ///   **counted repetition** — its whole body `Repeat { item: Ref(r), min, max }` with other
    ///   bounds;
    /// - no rule but the root derives the empty string.
    ///
    /// # Errors
    /// A [`BuildError`] naming the first offending rule (in rule order) when the contract does
    /// not hold, or when the automata exceed [`Config::state_limit`] or [`Config::edge_limit`].
    pub fn build(&self, grammar: &Grammar) -> Result<GrammarFsms, BuildError> {
        self.build_checked(grammar, true)
    }

    /// Builds the automata of a grammar that [`sieve_normalize::normalize`] produced, relying
    /// on its output contract instead of checking it: step 2 (the nullability fixpoint over
    /// every rule's NFA) is skipped in release builds (debug builds still run it, as
    /// normalisation checks its own stages there). The shape checks of step 1 are part of
    /// classifying the rules and still run; on a normalised grammar they never fire.
    ///
    /// # Errors
    /// A [`BuildError`] when the automata exceed [`Config::state_limit`] or
    /// [`Config::edge_limit`].
    pub fn build_normalized(
        &self,
        grammar: &sieve_normalize::Normalized,
    ) -> Result<GrammarFsms, BuildError> {
        self.build_checked(grammar, cfg!(debug_assertions))
    }

    /// [`Builder::build`], with step 2 only when `check_contract`.
    fn build_checked(
        &self,
        grammar: &Grammar,
        check_contract: bool,
    ) -> Result<GrammarFsms, BuildError> {
        let classified = self.classify(grammar)?;
        if check_contract {
            check_nullability(grammar, &classified)?;
        }

        let mut automata = Vec::with_capacity(classified.len());
        let mut memo = match &self.cache {
            Some(cache) => {
                RuleMemo::sharing(cache, self.config.dfa_state_limit, self.config.minimize)
            }
            None => RuleMemo::new(self.config.minimize),
        };
        let fragments = Fragments::default();
        let mut state_count = 0usize;
        let mut edge_count = 0usize;
        let chunk = if self.config.parallel {
            PARALLEL_CHUNK
        } else {
            1
        };
        let rules: Vec<(&sieve_ir::Rule, Classified)> =
            grammar.rules().iter().zip(classified).collect();
        for rules in rules.chunks(chunk) {
            // The chunk's regular rules: taken from the memo, or built (each new shape once,
            // across threads when allowed); the rule's position in the chunk names the
            // automaton it gets.
            let mut shapes: Vec<Option<Shape>> = Vec::with_capacity(rules.len());
            let mut found: Vec<Option<Fsm>> = Vec::with_capacity(rules.len());
            // The chunk's new shapes: the ranked tail of the first rule of each, written out
            // to be built, and per rule the index of its shape's first rule when the shape
            // is new.
            let mut keys: Vec<Option<ShapeKey>> = vec![None; rules.len()];
            let mut first_of: HashTable<usize> = HashTable::new();
            let mut builds: Vec<usize> = Vec::new();
            let mut built_by: Vec<Option<usize>> = vec![None; rules.len()];
            for (i, (rule, class)) in rules.iter().enumerate() {
                if !matches!(class, Classified::Regular) {
                    shapes.push(None);
                    found.push(None);
                    continue;
                }
                let shape = Shape::of(rule.body());
                let is_first =
                    |&first: &usize| keys[first].as_ref().is_some_and(|key| key.matches(&shape));
                if let Some(&first) = first_of.find(shape.hash(), is_first) {
                    built_by[i] = Some(first);
                    found.push(None);
                } else {
                    let fsm = memo.get(&shape);
                    if fsm.is_none() {
                        let key = shape.key();
                        first_of.insert_unique(key.hash(), i, |&first| {
                            keys[first].as_ref().map_or(0, ShapeKey::hash)
                        });
                        keys[i] = Some(key);
                        built_by[i] = Some(i);
                        builds.push(i);
                    }
                    found.push(fsm);
                }
                shapes.push(Some(shape));
            }
            let edges_left = self.config.edge_limit.saturating_sub(edge_count);
            let build = |&i: &usize| {
                let key = keys[i]
                    .as_ref()
                    .expect("a rule to build has its tail written out");
                self.ranked_fsm(key.ranked(), rules[i].0.name(), &fragments, edges_left)
            };
            let built: Vec<Result<Fsm, BuildError>> = if self.config.parallel && builds.len() > 1 {
                use rayon::prelude::*;
                builds.par_iter().map(build).collect()
            } else {
                builds.iter().map(build).collect()
            };
            let mut built: Vec<Option<Result<Fsm, BuildError>>> =
                built.into_iter().map(Some).collect();
            for (i, (rule, class)) in rules.iter().enumerate() {
                let automaton = match *class {
                    Classified::Counted { item, min, max } => {
                        RuleAutomaton::Counted { item, min, max }
                    }
                    Classified::Regular => {
                        let shape = shapes[i].take().expect("a regular rule has a shape");
                        let fsm = match (found[i].take(), built_by[i]) {
                            (Some(fsm), _) => fsm,
                            (None, Some(first)) if first == i => {
                                let at = builds.binary_search(&i).expect("listed for building");
                                let fsm = built[at].take().expect("taken once")?;
                                let key = keys[i].take().expect("written out to be built");
                                memo.insert(&shape, key, fsm)
                            }
                            (None, _) => memo
                                .get(&shape)
                                .expect("its shape was built for an earlier rule of the chunk"),
                        };
                        state_count += fsm.state_count();
                        edge_count += fsm.edge_count();
                        if state_count > self.config.state_limit {
                            return Err(BuildError::state_limit(
                                rule.name(),
                                self.config.state_limit,
                            ));
                        }
                        if edge_count > self.config.edge_limit {
                            return Err(BuildError::edge_limit(
                                rule.name(),
                                self.config.edge_limit,
                            ));
                        }
                        RuleAutomaton::Regular(fsm)
                    }
                };
                automata.push(automaton);
            }
        }
        let hashes = hash_rules(&automata);
        Ok(GrammarFsms {
            automata,
            hashes,
            names: grammar
                .rules()
                .iter()
                .map(|r| r.name().to_owned())
                .collect(),
            token_limits: grammar.rules().iter().map(|r| r.max_tokens()).collect(),
            root: grammar.root(),
            state_count,
            edge_count,
        })
    }

    /// Step 1: checks each rule's shape: counted, or regular (the NFA's limits are checked when
    /// it is built, in [`Builder::rule_nfa`]).
    fn classify(&self, grammar: &Grammar) -> Result<Vec<Classified>, BuildError> {
        let mut out = Vec::with_capacity(grammar.rules().len());
        for rule in grammar.rules() {
            let class = match rule.body().kind() {
                ExprKind::Repeat { item, min, max } if !is_regular_repeat(*min, *max) => {
                    match item.kind() {
                        ExprKind::Ref(item) => Classified::Counted {
                            item: *item,
                            min: *min,
                            max: *max,
                        },
                        _ => return Err(BuildError::counted_repetition(rule.name(), *min, *max)),
                    }
                }
                _ => Classified::Regular,
            };
            out.push(class);
        }
        Ok(out)
    }

    /// The Thompson NFA of `body`, part of `rule`, within the state and edge limits.
    fn rule_nfa(&self, body: &Expr, rule: &str, fragments: &Fragments) -> Result<Nfa, BuildError> {
        let nfa = thompson(body, rule, Some(fragments))?;
        if nfa.thompson_len > self.config.state_limit {
            return Err(BuildError::state_limit(rule, self.config.state_limit));
        }
        if nfa.edge_count() > self.config.edge_limit {
            return Err(BuildError::edge_limit(rule, self.config.edge_limit));
        }
        Ok(nfa)
    }

    /// Step 3 for one shape: the automaton of a regular rule's ranked tail (the body after its
    /// leading literal, references as ranks; see [`crate::memo`]).
    fn ranked_fsm(
        &self,
        tail: &Expr,
        rule: &str,
        fragments: &Fragments,
        edges_left: usize,
    ) -> Result<Fsm, BuildError> {
        let nfa = self.rule_nfa(tail, rule, fragments)?;
        self.regular_fsm(&nfa, edges_left)
            .ok_or_else(|| BuildError::edge_limit(rule, self.config.edge_limit))
    }

    /// Step 3 for one rule; `None` when the epsilon-free fallback exceeds `edges_left`.
    fn regular_fsm(&self, nfa: &Nfa, edges_left: usize) -> Option<Fsm> {
        let cap = self.config.dfa_state_limit.max(nfa.thompson_len);
        if let Some(dfa) = determinize(nfa, cap) {
            let dfa = if self.config.minimize {
                minimize(&dfa)
            } else {
                dfa
            };
            return Some(canonicalize_dfa(&dfa));
        }
        let (start, accepting, edges) = remove_epsilons(nfa, edges_left)?;
        Some(canonicalize(start, &accepting, &edges, false))
    }
}

/// Step 2: the least fixpoint of "derives the empty string"; only the root may.
fn check_nullability(grammar: &Grammar, classified: &[Classified]) -> Result<(), BuildError> {
    let nfas = grammar
        .rules()
        .iter()
        .zip(classified)
        .map(|(rule, class)| match class {
            Classified::Regular => thompson(rule.body(), rule.name(), None).map(Some),
            Classified::Counted { .. } => Ok(None),
        })
        .collect::<Result<Vec<Option<Nfa>>, BuildError>>()?;
    let mut nullable = vec![false; classified.len()];
    loop {
        let mut changed = false;
        for (index, (class, nfa)) in classified.iter().zip(&nfas).enumerate() {
            if nullable[index] {
                continue;
            }
            let derives_empty = match class {
                Classified::Counted { item, min, .. } => *min == 0 || nullable[item.index()],
                Classified::Regular => nfa
                    .as_ref()
                    .is_some_and(|nfa| accepts_empty(nfa, |r| nullable[r.index()])),
            };
            if derives_empty {
                // Monotone from below: whatever is marked here truly derives the empty string.
                if index != grammar.root().index() {
                    return Err(BuildError::nullable(grammar.rules()[index].name()));
                }
                nullable[index] = true;
                changed = true;
            }
        }
        if !changed {
            return Ok(());
        }
    }
}
