//! Pass `dedupe-alternatives`: a choice lists each alternative once.
//!
//! `"a" | b | "a"` becomes `"a" | b`; the first occurrence keeps its place. The language is
//! unchanged. After it: no choice has two equal alternatives. Flat form is kept.

use foldhash::HashSet;

use sieve_ir::{Expr, ExprKind, Grammar};

use crate::{rebuild::Draft, NormalizeError};

/// Runs the pass.
pub fn dedupe_alternatives(grammar: Grammar) -> Result<Grammar, NormalizeError> {
    let mut draft = Draft::from_grammar(grammar);
    for body in draft.bodies.iter_mut() {
        *body = body.take().map(dedupe);
    }
    draft.finish()
}

fn dedupe(expr: Expr) -> Expr {
    if !has_choice(&expr) {
        return expr;
    }
    match expr.into_kind() {
        ExprKind::Choice(alts) => {
            let alts: Vec<Expr> = alts.into_iter().map(dedupe).collect();
            let mut seen = HashSet::default();
            let keep: Vec<bool> = alts.iter().map(|alt| seen.insert(alt)).collect();
            drop(seen);
            let unique = alts
                .into_iter()
                .zip(keep)
                .filter_map(|(alt, keep)| keep.then_some(alt));
            Expr::choice(unique).expect("at least the first alternative")
        }
        ExprKind::Seq(items) => Expr::seq(items.into_iter().map(dedupe)),
        ExprKind::Repeat { item, min, max } => {
            Expr::repeat(dedupe(*item), min, max).expect("bounds were valid")
        }
        kind => Expr::try_from(kind).expect("a leaf taken from a valid expression"),
    }
}

/// Whether `expr` has a choice anywhere: only those can have alternatives to drop.
fn has_choice(expr: &Expr) -> bool {
    matches!(expr.kind(), ExprKind::Choice(_)) || expr.children().iter().any(has_choice)
}
