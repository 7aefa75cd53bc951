//! Pass `inline-terminals`: a small rule that refers to no other rule — a *terminal rule*,
//! such as `hex ::= [0-9a-fA-F]` or a string's `char` — is substituted at every reference,
//! bottom-up (once `hex` is inlined into `char`, `char` is terminal too).
//!
//! Why: the runtime's token-mask cache decides a token from one automaton state as long as
//! the token stays inside that rule's automaton; a reference to a sub-rule is a point where
//! the token could leave it, and every such token must be checked against the whole Earley
//! set. With `string ::= "\"" char* "\""` and `char` a rule, that is every token inside a
//! string; with `char` inlined, the string is one automaton and almost every token is decided
//! by the cache (XGrammar's "context-independent" tokens).
//!
//! A rule holding the placeholder of a limited or shared rule (`crate::limits`) is not
//! terminal, unless it is only that placeholder: the placeholder becomes a reference once
//! spliced back.
//!
//! Not inlined: the root, rules larger than [`MAX_INLINED_SIZE`] expression nodes (so the
//! grammar grows by at most that much per reference), counted rules, and nothing is inlined
//! *into* a counted rule (its body must stay `R{m,n}`). Inlining only ever saves runtime work,
//! so it has a budget: a rule whose inlined body would take the grammar past half of
//! [`Config::max_size`](crate::Config) keeps its references (one rule is used by thousands
//! in some schemas, and inlining it everywhere would fail the size limit instead of
//! compiling). Rules no longer referenced are dropped.
//! After it: the `Final` stage still holds — an inlined body is regular with loop repetitions
//! only, and it is not nullable (only the root is), so the rule it lands in is not made
//! nullable.

use sieve_ir::{Expr, Grammar};

use crate::{components::Components, is_counted_rule, rebuild::Draft, Config, NormalizeError};

/// The largest terminal rule body, in expression nodes, that is inlined.
pub const MAX_INLINED_SIZE: usize = 128;

/// Runs the pass: one sweep over the rules, callees first, so a rule's callees are final
/// (their own terminal callees inlined) before it is rewritten.
pub fn inline_terminals(grammar: Grammar, config: &Config) -> Result<Grammar, NormalizeError> {
    let budget = config.max_size / 2;
    let mut size = grammar.size();
    let components = Components::of(&grammar);
    let mut draft = Draft::from_grammar(grammar);
    let root = draft.root.index();
    let mut inlinable = vec![false; draft.bodies.len()];
    for (members, _) in components.iter() {
        for &id in members {
            let Some(body) = &draft.bodies[id] else {
                continue;
            };
            if is_counted_rule(body) {
                continue;
            }
            let mut body_size = body.size();
            if refers_to(body, &inlinable) {
                let inlined = body
                    .map_refs(&mut |r| {
                        if inlinable[r.index()] {
                            draft.bodies[r.index()].clone()
                        } else {
                            Some(Expr::rule(r))
                        }
                    })
                    .ok_or_else(|| {
                        NormalizeError::internal("inlining removed every alternative")
                    })?;
                let inlined_size = inlined.size();
                let grown = size - body_size + inlined_size;
                if grown <= budget.max(size) {
                    size = grown;
                    body_size = inlined_size;
                    draft.bodies[id] = Some(inlined);
                }
            }
            let body = draft.bodies[id].as_ref().expect("set above");
            inlinable[id] = id != root
                && body_size <= MAX_INLINED_SIZE
                && body.ref_count() == 0
                && !crate::limits::refers_to_region(body);
        }
    }
    draft.finish()
}

fn refers_to(body: &Expr, rules: &[bool]) -> bool {
    let mut any = false;
    body.for_each_ref(&mut |r| any |= rules[r.index()]);
    any
}
