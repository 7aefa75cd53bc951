//! Normalisation: named, ordered passes, each `Grammar -> Grammar` (the first reads its input
//! in place, the others own it), each preserving the language, that bring a front-end's IR
//! into the form the automata layer consumes.
//!
//! The order is written down once, in [`PASSES`]:
//!
//! 1. `flatten` — anonymous groups become rules; bodies are in *flat form* (alternatives of
//!    sequences of atoms; see [`Stage`]).
//! 2. `remove-useless` — rules that neither finish nor scan a byte, and unreachable rules, go.
//!    A productive infinite rule such as `B ::= "a" B` stays.
//! 3. `merge-identical` — bisimilar rules become one.
//! 4. `remove-unit-rules` — `A ::= B` disappears, references to `A` name `B`.
//! 5. `eliminate-nullable` — only the root may derive ε.
//! 6. `merge-literals` — adjacent byte strings join.
//! 7. `dedupe-alternatives` — a choice lists each alternative once.
//! 8. `repetition` — `{m,n}` expanded up to a threshold `T`, compressed past it (XGrammar 2
//!    Algorithm 3) into counted-repetition rules.
//! 9. `tail-loops` — a rule whose only self-references end alternatives becomes a loop
//!    (`R ::= α | β R` is `β* α`).
//! 10. `inline-terminals` — small rules that refer to no other rule are substituted where they
//!     are used, so lexical structure (a string's characters) lives in one automaton.
//!
//! Rules with a token limit (`Rule::max_tokens`), and shared rules (`Rule::is_shared`) whose
//! language is regular, are set aside before the passes and put back after them as one
//! reference-free regular rule each (`limits`).
//!
//! What holds after each pass is stated in its module and checked by [`check_stage`], which
//! [`normalize`] runs after every pass in debug builds (with the IR verifier); tests run it
//! always. The final form: every rule is *regular* (repetitions only `?`, `*`, `+`) or
//! *counted* (body `R{m,n}` for a rule `R`), and no rule but the root derives ε.
//!
//! # Invariant
//!
//! A [`Normalized`] is made only by [`normalize`] / [`normalize_traced`], so it always holds a
//! grammar in that final form: consumers may rely on the contract without checking it.

mod analysis;
mod components;
mod flat;
mod limits;
pub mod passes;
mod rebuild;
mod right_linear;

use sieve_ir::{ExprKind, Grammar};

/// Settings of the normalisation pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The repetition threshold `T`: `x{m,n}` with `n ≤ T` is expanded in place; larger
    /// bounds are compressed into a counted-repetition rule plus `T` explicit copies. Higher
    /// values make the automata larger (up to `T` states per repetition) and leave fewer
    /// counted rules for the runtime to track. Default 16.
    pub repetition_threshold: u32,
    /// The most rules a grammar may have after any pass. Default 65,536.
    pub max_rules: usize,
    /// The most expression nodes (over all rules) a grammar may have after any pass; bounds
    /// the growth of nullable elimination and expansion. Default 1,048,576.
    pub max_size: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            repetition_threshold: 16,
            max_rules: 1 << 16,
            max_size: 1 << 20,
        }
    }
}

/// Why normalisation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NormalizeError {
    /// The root rule derives nothing, not even an infinite string: no output is valid.
    #[error("the grammar accepts nothing: rule `{root}` can never match any input (it only recurses into itself or into rules that cannot match)")]
    EmptyLanguage {
        /// The root rule's name.
        root: String,
    },
    /// A pass made the grammar larger than the configured limits.
    #[error(
        "grammar too large after pass `{pass}`: {what} is {actual}, over the limit of {limit}"
    )]
    TooLarge {
        /// The pass.
        pass: &'static str,
        /// What was measured: "rule count" or "expression size".
        what: &'static str,
        /// The measured value.
        actual: usize,
        /// The configured limit.
        limit: usize,
    },
    /// A rule with a token limit is not regular: it still refers to itself after
    /// normalisation (the runtime counts its tokens in one automaton).
    #[error("rule `{rule}` has a token limit (max_tokens), so it must be regular, but it recurses through `{through}`")]
    NotRegular {
        /// The limited rule.
        rule: String,
        /// A rule on the cycle.
        through: String,
    },
    /// A rule with a token limit reaches another one.
    #[error("rule `{outer}` has a token limit (max_tokens) and reaches rule `{inner}`, which has one too; limits do not nest")]
    NestedTokenLimit {
        /// The outer limited rule.
        outer: String,
        /// The limited rule it reaches.
        inner: String,
    },
    /// A bug in a pass: its output broke an invariant.
    #[error("internal error in normalisation: {0}")]
    Internal(String),
}

impl NormalizeError {
    pub(crate) fn internal(what: &str) -> NormalizeError {
        NormalizeError::Internal(what.to_owned())
    }

    pub(crate) fn from_ir(error: sieve_ir::IrError) -> NormalizeError {
        NormalizeError::Internal(error.to_string())
    }
}

/// What holds after a pass, checked by [`check_stage`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Any verified grammar.
    Any,
    /// Every body is in flat form: a choice of sequences of atoms, an atom being a byte
    /// string, class, rule reference, or repetition of one of those.
    Flat,
    /// Flat form, and no rule other than the root derives ε.
    FlatNonNullable,
    /// The automata layer's contract: every rule is regular or counted; only the root may
    /// derive ε.
    Final,
}

/// A named pass.
pub struct Pass {
    /// The pass's name, as `sieve ir` and errors show it.
    pub name: &'static str,
    /// What holds after it.
    pub establishes: Stage,
    /// Whether its output can have more expression nodes than its input, so the size limit
    /// must be checked after it (the rule count is checked after every pass).
    pub may_grow: bool,
    /// The rewrite.
    pub run: fn(Grammar, &Config) -> Result<Grammar, NormalizeError>,
}

/// The passes, in the order they run.
pub const PASSES: &[Pass] = &[
    Pass {
        name: "flatten",
        establishes: Stage::Flat,
        may_grow: true,
        run: |g, _| passes::flatten::flatten(&g),
    },
    Pass {
        name: "remove-useless",
        establishes: Stage::Flat,
        may_grow: false,
        run: |g, _| passes::useless::remove_useless(g),
    },
    Pass {
        name: "merge-identical",
        establishes: Stage::Flat,
        may_grow: false,
        run: |g, _| passes::merge_identical::merge_identical(g),
    },
    Pass {
        name: "remove-unit-rules",
        establishes: Stage::Flat,
        may_grow: false,
        run: |g, _| passes::unit_rules::remove_unit_rules(g),
    },
    Pass {
        name: "eliminate-nullable",
        establishes: Stage::FlatNonNullable,
        may_grow: true,
        run: |g, _| passes::nullable::eliminate_nullable(g),
    },
    Pass {
        name: "merge-literals",
        establishes: Stage::FlatNonNullable,
        may_grow: false,
        run: |g, _| passes::merge_literals::merge_literals(g),
    },
    Pass {
        name: "dedupe-alternatives",
        establishes: Stage::FlatNonNullable,
        may_grow: false,
        run: |g, _| passes::dedupe::dedupe_alternatives(g),
    },
    Pass {
        name: "repetition",
        establishes: Stage::Final,
        may_grow: true,
        run: passes::repetition::expand_repetitions,
    },
    Pass {
        name: "tail-loops",
        establishes: Stage::Final,
        may_grow: true,
        run: |g, _| passes::tail_loops::tail_loops(g),
    },
    Pass {
        name: "inline-terminals",
        establishes: Stage::Final,
        may_grow: true,
        run: passes::inline_terminals::inline_terminals,
    },
];

/// A grammar that satisfies the output contract ([`Stage::Final`]): every rule is regular or
/// counted, and no rule but the root derives ε.
///
/// Only [`normalize`] (and [`normalize_traced`]) make one, so holding a `Normalized` is the
/// proof that the passes ran: later stages (`sieve_fsm::Builder::build_normalized`) rely on
/// the contract instead of checking it again. The passes are tested to establish it, and
/// debug builds check it after every pass. Read the grammar through `Deref` (or
/// [`Normalized::grammar`]); [`Normalized::into_grammar`] gives it up, and with it the
/// guarantee.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Normalized(Grammar);

impl Normalized {
    /// The grammar.
    pub fn grammar(&self) -> &Grammar {
        &self.0
    }

    /// The grammar, no longer marked as normalised.
    pub fn into_grammar(self) -> Grammar {
        self.0
    }
}

impl std::ops::Deref for Normalized {
    type Target = Grammar;

    fn deref(&self) -> &Grammar {
        &self.0
    }
}

impl AsRef<Grammar> for Normalized {
    fn as_ref(&self) -> &Grammar {
        &self.0
    }
}

impl std::fmt::Display for Normalized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Runs every pass in order; the result satisfies the output contract (see [`Normalized`]).
pub fn normalize(grammar: &Grammar, config: &Config) -> Result<Normalized, NormalizeError> {
    run(grammar, config, None)
}

/// Runs every pass in order, calling `after_pass` with each pass's name and output (with
/// rules that have token limits in place, as the result will hold them).
pub fn normalize_traced(
    grammar: &Grammar,
    config: &Config,
    mut after_pass: impl FnMut(&str, &Grammar),
) -> Result<Normalized, NormalizeError> {
    run(grammar, config, Some(&mut after_pass))
}

/// What [`normalize_traced`] calls after each pass.
type AfterPass<'a> = &'a mut dyn FnMut(&str, &Grammar);

fn run(
    grammar: &Grammar,
    config: &Config,
    mut after_pass: Option<AfterPass<'_>>,
) -> Result<Normalized, NormalizeError> {
    let has_limits = limits::has_regions(grammar);
    let (stand_ins, regions) = if has_limits {
        limits::set_aside(grammar, config)?
    } else {
        (Vec::new(), Vec::new())
    };
    let (first, rest) = PASSES.split_first().expect("there are passes");
    debug_assert_eq!(first.name, "flatten", "flatten runs first");
    // The first pass reads the grammar in place, with the stand-ins of the rules set aside
    // (it rebuilds every body that is not flat, so a copy made for it to own would copy those
    // bodies twice); the others own their input.
    let mut current = passes::flatten::flatten_replacing(grammar, &stand_ins)?;
    drop(stand_ins);
    let mut checked = |pass: &Pass, current: &Grammar| -> Result<(), NormalizeError> {
        check_limits(pass, current, config)?;
        if cfg!(debug_assertions) {
            check_stage(current, pass.establishes).map_err(|problem| {
                NormalizeError::Internal(format!("after `{}`: {problem}", pass.name))
            })?;
        }
        if let Some(after_pass) = after_pass.as_mut() {
            if has_limits {
                // The passes see the limited rules as placeholders; show them in place.
                let spliced = limits::splice(current.clone(), regions.clone())?;
                after_pass(pass.name, &spliced);
            } else {
                after_pass(pass.name, current);
            }
        }
        Ok(())
    };
    checked(first, &current)?;
    for pass in rest {
        current = (pass.run)(current, config)?;
        checked(pass, &current)?;
    }
    if has_limits {
        current = limits::splice(current, regions)?;
        if cfg!(debug_assertions) {
            check_stage(&current, Stage::Final).map_err(|problem| {
                NormalizeError::Internal(format!("after splicing limited rules: {problem}"))
            })?;
        }
    }
    debug_assert_eq!(
        PASSES.last().map(|pass| pass.establishes),
        Some(Stage::Final),
        "the last pass establishes the output contract"
    );
    Ok(Normalized(current))
}

fn check_limits(pass: &Pass, grammar: &Grammar, config: &Config) -> Result<(), NormalizeError> {
    let rules = grammar.rules().len();
    if rules > config.max_rules {
        return Err(NormalizeError::TooLarge {
            pass: pass.name,
            what: "rule count",
            actual: rules,
            limit: config.max_rules,
        });
    }
    // Every grammar is measured after `flatten`, the first pass, which may grow; a pass that
    // cannot grow keeps the size within the limit (the tests check that it does not grow).
    if !pass.may_grow && !cfg!(debug_assertions) {
        return Ok(());
    }
    let size = grammar.size();
    if size > config.max_size {
        return Err(NormalizeError::TooLarge {
            pass: pass.name,
            what: "expression size",
            actual: size,
            limit: config.max_size,
        });
    }
    Ok(())
}

/// Checks the IR invariants and what `stage` promises; describes the first violation. A rule
/// with a token limit is always in the final form and references no rule, whatever the
/// stage (normalisation holds it aside and splices it back whole).
pub fn check_stage(grammar: &Grammar, stage: Stage) -> Result<(), String> {
    sieve_ir::verify::verify(grammar).map_err(|problems| problems.join("; "))?;
    if matches!(stage, Stage::Flat | Stage::FlatNonNullable) {
        flat::check_flat(grammar)?;
    }
    if matches!(stage, Stage::FlatNonNullable | Stage::Final) {
        let nullable = analysis::nullable(grammar);
        if let Some(rule) = grammar
            .rule_ids()
            .find(|&id| nullable[id.index()] && id != grammar.root())
        {
            return Err(format!(
                "rule `{}` derives the empty string",
                grammar.rule(rule).name()
            ));
        }
    }
    for rule in grammar.rules().iter().filter(|r| r.max_tokens().is_some()) {
        if rule.body().ref_count() > 0 || !has_only_loop_repeats(rule.body()) {
            return Err(format!(
                "rule `{}` has a token limit but is not one reference-free regular expression",
                rule.name()
            ));
        }
    }
    if stage == Stage::Final {
        for rule in grammar.rules() {
            if !is_counted_rule(rule.body()) && !has_only_loop_repeats(rule.body()) {
                return Err(format!(
                    "rule `{}` is neither regular nor counted: {}",
                    rule.name(),
                    grammar.expr_to_string(rule.body())
                ));
            }
        }
    }
    Ok(())
}

/// Whether a body is a counted repetition `R{m,n}` of a rule reference (bounds other than
/// `?`, `*`, `+`).
pub fn is_counted_rule(body: &sieve_ir::Expr) -> bool {
    match body.kind() {
        ExprKind::Repeat { item, min, max } => {
            matches!(item.kind(), ExprKind::Ref(_)) && !is_loop_bounds(*min, *max)
        }
        _ => false,
    }
}

fn is_loop_bounds(min: u32, max: Option<u32>) -> bool {
    matches!((min, max), (0, Some(1)) | (0, None) | (1, None))
}

pub(crate) fn has_only_loop_repeats(expr: &sieve_ir::Expr) -> bool {
    let own = match expr.kind() {
        ExprKind::Repeat { min, max, .. } => is_loop_bounds(*min, *max),
        _ => true,
    };
    own && expr.children().iter().all(has_only_loop_repeats)
}
