//! The IR verifier: checks every invariant of a [`Grammar`] and reports all violations.
//!
//! Construction through [`crate::Expr`]'s constructors and [`crate::GrammarBuilder`] already
//! keeps these invariants; the verifier re-checks them after each normalisation pass in tests
//! and debug builds, and on deserialisation, where the data did not come through constructors.

use foldhash::HashSet;

use crate::{Expr, ExprKind, Grammar};

/// Checks the local invariants of one expression node (not its children); describes the first
/// violation.
pub(crate) fn check_node(expr: &Expr) -> Option<String> {
    match expr.kind() {
        ExprKind::Empty | ExprKind::Ref(_) => None,
        ExprKind::Bytes(bytes) if bytes.is_empty() => Some("empty byte string".into()),
        ExprKind::Bytes(_) => None,
        ExprKind::Class(class) if class.len() < 2 => {
            Some(format!("class {class} has fewer than two bytes"))
        }
        ExprKind::Class(_) => None,
        ExprKind::Seq(items) => {
            if items.len() < 2 {
                Some("sequence of fewer than two items".into())
            } else if items
                .iter()
                .any(|i| matches!(i.kind(), ExprKind::Seq(_) | ExprKind::Empty))
            {
                Some("sequence holding a sequence or an empty item".into())
            } else {
                None
            }
        }
        ExprKind::Choice(alts) => {
            if alts.len() < 2 {
                Some("choice of fewer than two alternatives".into())
            } else if alts.iter().any(|a| matches!(a.kind(), ExprKind::Choice(_))) {
                Some("choice holding a choice".into())
            } else {
                None
            }
        }
        ExprKind::Repeat { item, min, max } => match *max {
            Some(max) if *min > max => Some(format!("repetition {{{min},{max}}} with min > max")),
            Some(0) => Some("repetition with max 0".into()),
            Some(1) if *min == 1 => Some("repetition {1,1}".into()),
            _ if item.is_empty_string() => Some("repetition of the empty string".into()),
            _ => None,
        },
    }
}

/// Checks every invariant of `grammar`; on failure, returns every violation found.
pub fn verify(grammar: &Grammar) -> Result<(), Vec<String>> {
    check(grammar, true)
}

/// The checks of [`verify`] that construction does not already guarantee, for a grammar
/// assembled by [`crate::GrammarBuilder`]: its bodies were made by [`Expr`]'s constructors
/// (which keep every node invariant) and its names declared once each, so what is left is
/// the root, empty names, token limits of 0 and references to rules that do not exist (a
/// [`crate::RuleId`] can be made by hand). Debug builds check everything.
pub(crate) fn verify_assembled(grammar: &Grammar) -> Result<(), Vec<String>> {
    check(grammar, cfg!(debug_assertions))
}

/// The root, names, token limits and references of `grammar`, and with `everything` also
/// every node's invariants and the uniqueness of names.
fn check(grammar: &Grammar, everything: bool) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    let rule_count = grammar.rules().len();
    if grammar.root().index() >= rule_count {
        problems.push(format!("root {} is not a rule", grammar.root()));
    }
    let mut names = everything.then(HashSet::default);
    for rule in grammar.rules() {
        if rule.name().is_empty() {
            problems.push("a rule has an empty name".into());
        }
        if names
            .as_mut()
            .is_some_and(|names| !names.insert(rule.name()))
        {
            problems.push(format!("rule `{}` is defined twice", rule.name()));
        }
        if everything {
            check_tree(rule.body(), rule_count, rule.name(), &mut problems);
        } else {
            let mut missing = None;
            rule.body().for_each_ref(&mut |id| {
                if id.index() >= rule_count {
                    missing.get_or_insert(id);
                }
            });
            if let Some(id) = missing {
                problems.push(format!(
                    "in rule `{}`: reference to missing rule {id}",
                    rule.name()
                ));
            }
        }
        if rule.max_tokens() == Some(0) {
            problems.push(format!(
                "rule `{}` has a token limit of 0 (the least is 1)",
                rule.name()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn check_tree(expr: &Expr, rule_count: usize, rule: &str, problems: &mut Vec<String>) {
    // An explicit stack: expression depth is bounded by front-ends, but the verifier must not
    // overflow on deserialised data that never went through one.
    let mut stack = vec![expr];
    while let Some(node) = stack.pop() {
        if let Some(problem) = check_node(node) {
            problems.push(format!("in rule `{rule}`: {problem}"));
        }
        if let ExprKind::Ref(id) = node.kind() {
            if id.index() >= rule_count {
                problems.push(format!("in rule `{rule}`: reference to missing rule {id}"));
            }
        }
        stack.extend(node.children());
    }
}
