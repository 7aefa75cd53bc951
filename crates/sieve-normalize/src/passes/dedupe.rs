//! Pass `dedupe-alternatives`: a choice lists each alternative once.
//!
//! `"a" | b | "a"` becomes `"a" | b`; the first occurrence keeps its place. The language is
//! unchanged. After it: no choice has two equal alternatives. Flat form is kept.

use foldhash::HashSet;

use sieve_ir::{Expr, ExprKind, Grammar};

use crate::{rebuild::Draft, NormalizeError};

/// Runs the pass.
pub fn dedupe_alternatives(grammar: &Grammar) -> Result<Grammar, NormalizeError> {
    let mut draft = Draft::from_grammar(grammar);
    for id in grammar.rule_ids() {
        draft.bodies[id.index()] = Some(dedupe(grammar.rule(id).body()));
    }
    draft.finish()
}

fn dedupe(expr: &Expr) -> Expr {
    match expr.kind() {
        ExprKind::Choice(alts) => {
            let mut seen = HashSet::default();
            let unique: Vec<Expr> = alts
                .iter()
                .map(dedupe)
                .filter(|alt| seen.insert(alt.clone()))
                .collect();
            Expr::choice(unique).expect("at least the first alternative")
        }
        ExprKind::Seq(items) => Expr::seq(items.iter().map(dedupe).collect::<Vec<_>>()),
        ExprKind::Repeat { item, min, max } => {
            Expr::repeat(dedupe(item), *min, *max).expect("bounds were valid")
        }
        _ => expr.clone(),
    }
}
