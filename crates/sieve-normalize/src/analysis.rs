//! Per-rule facts computed as least fixpoints: nullable, productive, able to scan a byte,
//! able to derive a non-empty string.
//!
//! Each fact is a property of an expression given the property of every rule; a rule has it
//! when its body does. Iteration starts from "no rule has it" and stops when nothing changes,
//! which is the least fixpoint: recursion alone never establishes a fact. Rules are visited
//! callees first, one strongly connected component at a time, so the work is linear in the
//! grammar outside cycles.

use sieve_ir::{Expr, ExprKind, Grammar};

use crate::components::Components;

fn least_fixpoint(grammar: &Grammar, holds: impl Fn(&Expr, &[bool]) -> bool) -> Vec<bool> {
    let rules = grammar.rules();
    let mut facts = vec![false; rules.len()];
    // Callees first: a rule outside any cycle is decided in one look, a cycle is iterated on
    // its own until nothing changes.
    for (members, cyclic) in Components::of(grammar).iter() {
        loop {
            let mut changed = false;
            for &index in members {
                if !facts[index] && holds(rules[index].body(), &facts) {
                    facts[index] = true;
                    changed = true;
                }
            }
            if !changed || !cyclic {
                break;
            }
        }
    }
    facts
}

/// Whether `expr` derives the empty string, given which rules do.
pub(crate) fn expr_nullable(expr: &Expr, nullable: &[bool]) -> bool {
    match expr.kind() {
        ExprKind::Empty => true,
        ExprKind::Bytes(_) | ExprKind::Class(_) => false,
        ExprKind::Ref(id) => nullable[id.index()],
        ExprKind::Seq(items) => items.iter().all(|i| expr_nullable(i, nullable)),
        ExprKind::Choice(alts) => alts.iter().any(|a| expr_nullable(a, nullable)),
        ExprKind::Repeat { item, min, .. } => *min == 0 || expr_nullable(item, nullable),
    }
}

/// Which rules derive the empty string.
pub(crate) fn nullable(grammar: &Grammar) -> Vec<bool> {
    least_fixpoint(grammar, expr_nullable)
}

fn expr_productive(expr: &Expr, productive: &[bool]) -> bool {
    match expr.kind() {
        ExprKind::Empty | ExprKind::Bytes(_) | ExprKind::Class(_) => true,
        ExprKind::Ref(id) => productive[id.index()],
        ExprKind::Seq(items) => items.iter().all(|i| expr_productive(i, productive)),
        ExprKind::Choice(alts) => alts.iter().any(|a| expr_productive(a, productive)),
        ExprKind::Repeat { item, min, .. } => *min == 0 || expr_productive(item, productive),
    }
}

/// Which rules derive at least one finite byte string.
pub(crate) fn productive(grammar: &Grammar) -> Vec<bool> {
    least_fixpoint(grammar, expr_productive)
}

/// Whether `expr` derives a finite non-empty string, given which rules are productive and
/// which derive a finite non-empty string.
pub(crate) fn expr_nonempty_finite(expr: &Expr, nonempty: &[bool], productive: &[bool]) -> bool {
    match expr.kind() {
        ExprKind::Empty => false,
        ExprKind::Bytes(_) | ExprKind::Class(_) => true,
        ExprKind::Ref(id) => nonempty[id.index()],
        ExprKind::Seq(items) => {
            items.iter().all(|i| expr_productive(i, productive))
                && items
                    .iter()
                    .any(|i| expr_nonempty_finite(i, nonempty, productive))
        }
        ExprKind::Choice(alts) => alts
            .iter()
            .any(|a| expr_nonempty_finite(a, nonempty, productive)),
        ExprKind::Repeat { item, .. } => expr_nonempty_finite(item, nonempty, productive),
    }
}

/// Which rules derive a finite non-empty string.
pub(crate) fn nonempty_finite(grammar: &Grammar, productive: &[bool]) -> Vec<bool> {
    least_fixpoint(grammar, |expr, nonempty| {
        expr_nonempty_finite(expr, nonempty, productive)
    })
}

/// Whether `expr` derives a finite string, given which rules do.
pub(crate) fn is_productive(expr: &Expr, productive: &[bool]) -> bool {
    expr_productive(expr, productive)
}

fn expr_derives_nonempty(expr: &Expr, facts: &[bool]) -> bool {
    match expr.kind() {
        ExprKind::Empty => false,
        ExprKind::Bytes(_) | ExprKind::Class(_) => true,
        ExprKind::Ref(id) => facts[id.index()],
        ExprKind::Seq(items) | ExprKind::Choice(items) => {
            items.iter().any(|i| expr_derives_nonempty(i, facts))
        }
        ExprKind::Repeat { item, .. } => expr_derives_nonempty(item, facts),
    }
}

/// Which rules derive something other than the empty string. Exact once useless rules are
/// gone (every atom left can then be reached and used); before that, an over-approximation.
pub(crate) fn derives_nonempty(grammar: &Grammar) -> Vec<bool> {
    least_fixpoint(grammar, expr_derives_nonempty)
}
