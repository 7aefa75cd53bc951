//! Pass `flatten`: anonymous groups become rules.
//!
//! After it every body is in flat form (see [`crate::Stage::Flat`]): alternatives of sequences of atoms.
//! A choice nested inside a sequence, and a repetition of anything but a byte string, class or
//! rule reference, are moved into a fresh rule named after the rule they came from, e.g.
//! `object ::= "{" (pair ("," pair)*)? "}"` becomes
//! `object ::= "{" object_1? "}"`, `object_1 ::= pair object_2*`, `object_2 ::= "," pair`.
//! The language is unchanged: a fresh rule derives exactly what its group did.

use sieve_ir::{Expr, ExprKind, Grammar, RuleId};

use crate::{rebuild::Draft, NormalizeError};

/// Runs the pass.
pub fn flatten(grammar: &Grammar) -> Result<Grammar, NormalizeError> {
    let mut draft = Draft::from_grammar(grammar);
    for id in grammar.rule_ids() {
        let body = flatten_body(&mut draft, id, grammar.rule(id).body());
        draft.bodies[id.index()] = Some(body);
    }
    draft.finish()
}

/// A flat body with the language of `expr`, lifting groups into rules named after `owner`.
fn flatten_body(draft: &mut Draft, owner: RuleId, expr: &Expr) -> Expr {
    match expr.kind() {
        ExprKind::Choice(alts) => {
            let alts: Vec<Expr> = alts
                .iter()
                .map(|alt| flatten_sequence(draft, owner, alt))
                .collect();
            Expr::choice(alts).expect("a choice has alternatives")
        }
        _ => flatten_sequence(draft, owner, expr),
    }
}

/// A sequence of atoms with the language of `expr`.
fn flatten_sequence(draft: &mut Draft, owner: RuleId, expr: &Expr) -> Expr {
    match expr.kind() {
        ExprKind::Seq(items) => {
            let atoms: Vec<Expr> = items
                .iter()
                .map(|i| flatten_atom(draft, owner, i))
                .collect();
            Expr::seq(atoms)
        }
        _ => flatten_atom(draft, owner, expr),
    }
}

/// An atom (or `Empty`) with the language of `expr`.
fn flatten_atom(draft: &mut Draft, owner: RuleId, expr: &Expr) -> Expr {
    match expr.kind() {
        ExprKind::Empty | ExprKind::Bytes(_) | ExprKind::Class(_) | ExprKind::Ref(_) => {
            expr.clone()
        }
        ExprKind::Repeat { item, min, max } => {
            let item = if crate::flat::is_simple(item) {
                (**item).clone()
            } else {
                lift(draft, owner, item)
            };
            Expr::repeat(item, *min, *max).expect("bounds were valid")
        }
        ExprKind::Seq(_) | ExprKind::Choice(_) => lift(draft, owner, expr),
    }
}

/// A reference to a fresh rule whose body is the flattened `expr`.
fn lift(draft: &mut Draft, owner: RuleId, expr: &Expr) -> Expr {
    let base = draft.names[owner.index()].clone();
    // Reserve the id first so nested groups are numbered after their parent.
    let id = draft.add_rule(&base, Expr::empty());
    let body = flatten_body(draft, owner, expr);
    draft.bodies[id.index()] = Some(body);
    Expr::rule(id)
}
