//! Pass `merge-literals`: adjacent byte strings in a sequence become one.
//!
//! `"a" "b" [0-9]` becomes `"ab" [0-9]`. The language is unchanged. After it: no sequence has
//! two byte strings next to each other. Flat form is kept.

use sieve_ir::{Expr, ExprKind, Grammar};

use crate::{rebuild::rewrite_keeping_references, NormalizeError};

/// Runs the pass. Joining byte strings changes no reference.
pub fn merge_literals(grammar: Grammar) -> Result<Grammar, NormalizeError> {
    rewrite_keeping_references(grammar, |_, body| {
        has_adjacent_bytes(body).then(|| merge(body))
    })
}

/// Whether some sequence in `expr` has two byte strings side by side.
pub(crate) fn has_adjacent_bytes(expr: &Expr) -> bool {
    let adjacent = match expr.kind() {
        ExprKind::Seq(items) => items.windows(2).any(|pair| {
            matches!(
                (pair[0].kind(), pair[1].kind()),
                (ExprKind::Bytes(_), ExprKind::Bytes(_))
            )
        }),
        _ => false,
    };
    adjacent || expr.children().iter().any(has_adjacent_bytes)
}

/// `expr` with adjacent byte strings in every sequence joined.
pub(crate) fn merge(expr: &Expr) -> Expr {
    match expr.kind() {
        ExprKind::Seq(items) => {
            let mut out: Vec<Expr> = Vec::with_capacity(items.len());
            for item in items.iter().map(merge) {
                let joined = match (out.last().map(Expr::kind), item.kind()) {
                    (Some(ExprKind::Bytes(a)), ExprKind::Bytes(b)) => {
                        Some(Expr::bytes([a.as_slice(), b.as_slice()].concat()))
                    }
                    _ => None,
                };
                match joined {
                    Some(joined) => *out.last_mut().expect("checked above") = joined,
                    None => out.push(item),
                }
            }
            Expr::seq(out)
        }
        ExprKind::Choice(alts) => {
            Expr::choice(alts.iter().map(merge).collect::<Vec<_>>()).expect("non-empty")
        }
        ExprKind::Repeat { item, min, max } => {
            Expr::repeat(merge(item), *min, *max).expect("bounds were valid")
        }
        _ => expr.clone(),
    }
}
