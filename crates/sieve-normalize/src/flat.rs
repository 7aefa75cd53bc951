//! The *flat form* of rule bodies, shared by the passes between `flatten` and `repetition`.
//!
//! A flat body is a choice of alternatives, each a sequence of atoms, where an atom is a byte
//! string, a byte class, a rule reference, or a repetition of one of those three. In the
//! `Expr` tree: `Choice` (or a single alternative), of `Seq` (or a single atom, or `Empty`),
//! of atoms. [`alternatives`] reads that shape and [`from_alternatives`] writes it.

use sieve_ir::{Expr, ExprKind, Grammar};

/// Whether `expr` is a byte string, class or rule reference.
pub(crate) fn is_simple(expr: &Expr) -> bool {
    matches!(
        expr.kind(),
        ExprKind::Bytes(_) | ExprKind::Class(_) | ExprKind::Ref(_)
    )
}

/// Whether `expr` is an atom: simple, or a repetition of something simple.
pub(crate) fn is_atom(expr: &Expr) -> bool {
    match expr.kind() {
        ExprKind::Repeat { item, .. } => is_simple(item),
        _ => is_simple(expr),
    }
}

/// The atoms of one alternative of a flat body.
pub(crate) fn atoms(alternative: &Expr) -> Vec<Expr> {
    match alternative.kind() {
        ExprKind::Empty => Vec::new(),
        ExprKind::Seq(items) => items.clone(),
        _ => vec![alternative.clone()],
    }
}

/// The alternatives of a flat body, each as its list of atoms.
pub(crate) fn alternatives(body: &Expr) -> Vec<Vec<Expr>> {
    match body.kind() {
        ExprKind::Choice(alts) => alts.iter().map(atoms).collect(),
        _ => vec![atoms(body)],
    }
}

/// A flat body from its alternatives; `None` when there are none (the empty language).
pub(crate) fn from_alternatives(alternatives: Vec<Vec<Expr>>) -> Option<Expr> {
    Expr::choice(alternatives.into_iter().map(Expr::seq).collect::<Vec<_>>())
}

/// Whether a body is in flat form.
pub(crate) fn is_flat(body: &Expr) -> bool {
    let alternative_is_flat = |alt: &Expr| match alt.kind() {
        ExprKind::Empty => true,
        ExprKind::Seq(items) => items.iter().all(is_atom),
        _ => is_atom(alt),
    };
    match body.kind() {
        ExprKind::Choice(alts) => alts.iter().all(alternative_is_flat),
        _ => alternative_is_flat(body),
    }
}

/// Describes the first rule of `grammar` whose body is not flat.
pub(crate) fn check_flat(grammar: &Grammar) -> Result<(), String> {
    // A rule with a token limit is held whole, in the final form (see `limits.rs`).
    match grammar
        .rules()
        .iter()
        .find(|r| r.max_tokens().is_none() && !is_flat(r.body()))
    {
        Some(rule) => Err(format!(
            "rule `{}` is not in flat form: {}",
            rule.name(),
            grammar.expr_to_string(rule.body())
        )),
        None => Ok(()),
    }
}
