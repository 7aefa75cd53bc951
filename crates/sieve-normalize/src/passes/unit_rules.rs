//! Pass `remove-unit-rules`: a rule whose body is just another rule's name disappears.
//!
//! For `A ::= B`, every reference to `A` becomes a reference to `B` (following chains
//! `A ::= B`, `B ::= C`); when the root is such a rule, the rule it names becomes the root.
//! Unit cycles cannot occur here, since `remove-useless` already dropped them (they derive
//! nothing). After it: no rule's body is a single rule reference.

use sieve_ir::{ExprKind, Grammar, RuleId};

use crate::{rebuild::Draft, NormalizeError};

/// Runs the pass.
pub fn remove_unit_rules(grammar: Grammar) -> Result<Grammar, NormalizeError> {
    let target = |mut id: RuleId| -> Result<RuleId, NormalizeError> {
        for _ in 0..=grammar.rules().len() {
            match grammar.rule(id).body().kind() {
                ExprKind::Ref(next) => id = *next,
                _ => return Ok(id),
            }
        }
        Err(NormalizeError::internal(
            "a cycle of unit rules survived remove-useless",
        ))
    };
    let targets = grammar
        .rule_ids()
        .map(target)
        .collect::<Result<Vec<RuleId>, _>>()?;
    let root = targets[grammar.root().index()];
    let mut draft = Draft::from_grammar(grammar);
    for body in draft.bodies.iter_mut().flatten() {
        body.rename_refs(&mut |r| targets[r.index()]);
    }
    draft.root = root;
    draft.finish()
}
