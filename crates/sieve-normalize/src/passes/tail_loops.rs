//! Pass `tail-loops`: a rule whose only references to itself are at the very end of some of
//! its alternatives becomes a loop, by Arden's lemma.
//!
//! `R ::= α₁ | … | β₁ R | …`, with no `R` inside any `α` or `β`, has the least solution
//! `R ::= (β₁ | …)* (α₁ | …)`. The right-recursive style of writing a string body
//! (`strtail ::= "\"" | char strtail`) thus becomes one automaton with a loop, which the
//! token-mask cache can decide, and the recogniser no longer needs a completion chain per
//! character. Rules with any other self-reference, mutual recursion, and counted rules are
//! left alone.
//!
//! After it: the `Final` stage still holds (loops only; the body's language is unchanged, so
//! nullability is too).

use sieve_ir::{Expr, ExprKind, Grammar, RuleId};

use crate::{is_counted_rule, rebuild::rewrite_keeping_references, NormalizeError};

/// Runs the pass. A loop drops only the rule's references to itself.
pub fn tail_loops(grammar: Grammar) -> Result<Grammar, NormalizeError> {
    rewrite_keeping_references(grammar, |id, body| {
        if is_counted_rule(body) {
            return None;
        }
        as_loop(id, body)
    })
}

/// `β* α` for a body `α | β R` (each side possibly several alternatives), or `None` when
/// the body refers to `rule` anywhere but at the end of an alternative, or not at all.
fn as_loop(rule: RuleId, body: &Expr) -> Option<Expr> {
    let alternatives: &[Expr] = match body.kind() {
        ExprKind::Choice(alternatives) => alternatives,
        _ => std::slice::from_ref(body),
    };
    let ends_in_rule = |items: &[Expr]| matches!(items.last().map(Expr::kind), Some(ExprKind::Ref(r)) if *r == rule);
    // Most rules have no tail reference: nothing to copy then.
    if !alternatives.iter().any(|a| ends_in_rule(items(a))) {
        return None;
    }
    let mut exits = Vec::new();
    let mut steps = Vec::new();
    for alternative in alternatives {
        let items = items(alternative);
        match items.split_last() {
            Some((last, init)) if matches!(last.kind(), ExprKind::Ref(r) if *r == rule) => {
                if init.iter().any(|e| mentions(e, rule)) {
                    return None;
                }
                steps.push(Expr::seq(init.iter().cloned()));
            }
            _ => {
                if mentions(alternative, rule) {
                    return None;
                }
                exits.push(alternative.clone());
            }
        }
    }
    if steps.is_empty() {
        return None;
    }
    let step = Expr::choice(steps)?;
    let exit = Expr::choice(exits)?;
    Some(Expr::seq([Expr::star(step), exit]))
}

/// The items of an alternative: a sequence's, or the alternative alone.
fn items(alternative: &Expr) -> &[Expr] {
    match alternative.kind() {
        ExprKind::Seq(items) => items,
        _ => std::slice::from_ref(alternative),
    }
}

fn mentions(expr: &Expr, rule: RuleId) -> bool {
    let mut found = false;
    expr.for_each_ref(&mut |r| found |= r == rule);
    found
}
