//! Pass `merge-identical`: rules with the same language by construction become one.
//!
//! Rules are partitioned by bisimulation: start with every rule in one class, then split
//! classes by the body each rule has once references are replaced by the class of the rule
//! they name, until no class splits. Rules left in one class derive the same strings
//! (`A ::= "a" A | "b"` and `B ::= "a" B | "b"` included, which plain body equality misses).
//! Each class keeps one rule, the root if the class has it, otherwise the first; references
//! are redirected to it. After it: no two rules have bodies equal up to that renaming.

use std::collections::HashMap;

use sieve_ir::{Expr, Grammar, RuleId};

use crate::{rebuild::Draft, NormalizeError};

/// Runs the pass.
pub fn merge_identical(grammar: &Grammar) -> Result<Grammar, NormalizeError> {
    let class_of = bisimulation_classes(grammar);
    let mut representative: HashMap<usize, RuleId> = HashMap::new();
    representative.insert(class_of[grammar.root().index()], grammar.root());
    for id in grammar.rule_ids() {
        representative.entry(class_of[id.index()]).or_insert(id);
    }
    let mut draft = Draft::from_grammar(grammar);
    for id in grammar.rule_ids() {
        let body = grammar
            .rule(id)
            .body()
            .map_refs(&mut |r| Some(Expr::rule(representative[&class_of[r.index()]])))
            .expect("redirecting references keeps every alternative");
        draft.bodies[id.index()] = Some(body);
    }
    draft.finish()
}

/// The coarsest partition of the rules into classes whose members have equal bodies up to
/// replacing each reference by its class. Class numbers are assigned in rule order.
fn bisimulation_classes(grammar: &Grammar) -> Vec<usize> {
    let mut class_of = vec![0usize; grammar.rules().len()];
    let mut class_count = 1;
    loop {
        let mut signatures: HashMap<(usize, Expr), usize> = HashMap::new();
        let mut next = Vec::with_capacity(class_of.len());
        for rule in grammar.rules() {
            let signature = rule
                .body()
                .map_refs(&mut |r| {
                    Some(Expr::rule(RuleId::new(class_of[r.index()]).expect("fits")))
                })
                .expect("renaming keeps every alternative");
            let index = next.len();
            let fresh = signatures.len();
            let class = *signatures
                .entry((class_of[index], signature))
                .or_insert(fresh);
            next.push(class);
        }
        let count = signatures.len();
        class_of = next;
        if count == class_count {
            return class_of;
        }
        class_count = count;
    }
}
