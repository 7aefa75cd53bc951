//! Pass `dedupe-alternatives`: a choice lists each alternative once.
//!
//! `"a" | b | "a"` becomes `"a" | b`; the first occurrence keeps its place. The language is
//! unchanged. After it: no choice has two equal alternatives. Flat form is kept.

use foldhash::HashSet;

use sieve_ir::{Expr, ExprKind, Grammar};

use crate::{rebuild::rewrite_keeping_references, NormalizeError};

/// Choices with at most this many alternatives are searched for equal ones pair by pair,
/// larger ones through a hash set.
const SMALL_CHOICE: usize = 16;

/// Runs the pass. Dropping an alternative equal to one that stays changes no reference, and
/// only bodies with a repeated alternative are rebuilt.
pub fn dedupe_alternatives(grammar: Grammar) -> Result<Grammar, NormalizeError> {
    rewrite_keeping_references(grammar, |_, body| {
        has_repeated_alternative(body).then(|| dedupe(body.clone()))
    })
}

fn dedupe(expr: Expr) -> Expr {
    if !has_repeated_alternative(&expr) {
        return expr;
    }
    match expr.into_kind() {
        ExprKind::Choice(alts) => {
            let alts: Vec<Expr> = alts.into_iter().map(dedupe).collect();
            let keep = first_occurrences(&alts);
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

/// Per alternative, whether no earlier one equals it.
fn first_occurrences(alts: &[Expr]) -> Vec<bool> {
    if alts.len() <= SMALL_CHOICE {
        return (0..alts.len())
            .map(|i| !alts[..i].contains(&alts[i]))
            .collect();
    }
    let mut seen = HashSet::default();
    alts.iter().map(|alt| seen.insert(alt)).collect()
}

/// Whether some choice in `expr` lists an alternative twice: a body without one is left as it
/// is (its alternatives' own choices have none either, so deduplicating them changes nothing).
fn has_repeated_alternative(expr: &Expr) -> bool {
    let here = match expr.kind() {
        ExprKind::Choice(alts) => first_occurrences(alts).contains(&false),
        _ => false,
    };
    here || expr.children().iter().any(has_repeated_alternative)
}
