//! Right-linear recursion solved into regular expressions (for the token-limit step).
//!
//! A set of rules that reach one another only through their *last* item — the rules a
//! free-text automaton or an Aho–Corasick exclusion is written as, `s0 ::= [^<] s0 | "<" s1
//! | ε` — is a right-linear system `Xᵢ = Σⱼ Aᵢⱼ Xⱼ + Bᵢ` whose coefficients do not mention
//! the system's rules. [`solve`] replaces each such rule's body by its least solution, a
//! regular expression over the rules outside its strongly connected component, by Gaussian
//! elimination with Arden's lemma (`X = A X + B` has least solution `X = A* B`).
//!
//! Invariants:
//!
//! - Finite languages are kept: every rule of the result derives the strings it derived
//!   before. What only infinite derivations reach (pumping rules such as `x ::= "c" x`,
//!   which normalisation keeps so that their prefixes stay viable) is dropped: a limited
//!   rule can never close it.
//! - After it no rule reaches itself, or [`solve`] failed with
//!   [`NormalizeError::NotRegular`] naming a rule on a cycle that is not right-linear.
//! - The result stays within the caller's size limit ([`NormalizeError::TooLarge`]):
//!   elimination may grow expressions, and the limit bounds the work too.

use sieve_ir::{Expr, ExprKind, Grammar, RuleId};

use crate::components::Components;
use crate::NormalizeError;

/// One rule's equation over the rules of its component: `terms[j]` is the choice of prefixes
/// followed by rule `members[j]` (`None`: no such alternative), `exit` the alternatives that
/// end outside the component.
#[derive(Clone)]
struct Equation {
    terms: Vec<Option<Expr>>,
    exit: Option<Expr>,
}

/// `grammar` with every right-linear cycle solved (see the module docs); `limited` names the
/// limited rule in errors.
pub(crate) fn solve(
    grammar: &Grammar,
    limited: &str,
    size_limit: usize,
) -> Result<Grammar, NormalizeError> {
    let n = grammar.rules().len();
    let mut bodies: Vec<Expr> = (0..n)
        .map(|i| grammar.rule(rule_id(i)).body().clone())
        .collect();
    let mut dead = vec![false; n];
    for (members, cyclic) in Components::of(grammar).iter() {
        if !cyclic {
            continue;
        }
        let mut members = members.to_vec();
        members.sort_unstable();
        let not_regular = |i: usize| NormalizeError::NotRegular {
            rule: limited.to_owned(),
            through: grammar.rule(rule_id(i)).name().to_owned(),
        };
        let mut equations = Vec::with_capacity(members.len());
        for &i in &members {
            equations.push(equation(&bodies[i], &members).ok_or_else(|| not_regular(i))?);
        }
        let solutions = eliminate(equations, size_limit)?;
        for (&i, solution) in members.iter().zip(solutions) {
            match solution {
                Some(solution) => bodies[i] = solution,
                // Only infinite derivations (normalisation keeps such pumping rules, whose
                // prefixes are viable without a limit): nothing a limit can close.
                None => dead[i] = true,
            }
        }
    }
    // Drop what reaches only dead rules, until nothing more dies.
    let mut changed = dead.iter().any(|&d| d);
    while changed {
        changed = false;
        for i in 0..n {
            if dead[i] {
                continue;
            }
            match prune(&bodies[i], &dead) {
                Some(body) => bodies[i] = body,
                None => {
                    dead[i] = true;
                    changed = true;
                }
            }
        }
    }
    let rules = bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| (grammar.rule(rule_id(i)).name().to_owned(), body))
        .collect();
    Grammar::from_rewrite(rules, grammar.root()).map_err(NormalizeError::from_ir)
}

/// `expr` without the alternatives that need a rule of `dead`; `None` when nothing is left.
fn prune(expr: &Expr, dead: &[bool]) -> Option<Expr> {
    match expr.kind() {
        ExprKind::Ref(r) => (!dead[r.index()]).then(|| expr.clone()),
        ExprKind::Empty | ExprKind::Bytes(_) | ExprKind::Class(_) => Some(expr.clone()),
        ExprKind::Seq(items) => Some(Expr::seq(
            items
                .iter()
                .map(|item| prune(item, dead))
                .collect::<Option<Vec<_>>>()?,
        )),
        ExprKind::Choice(items) => Expr::choice(items.iter().filter_map(|item| prune(item, dead))),
        ExprKind::Repeat { item, min, max } => match prune(item, dead) {
            Some(item) => Expr::repeat(item, *min, *max).ok(),
            None => (*min == 0).then(Expr::empty),
        },
    }
}

fn rule_id(index: usize) -> RuleId {
    RuleId::new(index).expect("an existing rule")
}

/// `body` as an equation over `members`, or `None` when a member appears anywhere but at
/// the end of an alternative (an optional or a choice at the end is opened up:
/// `α X?` is `α X | α`).
fn equation(body: &Expr, members: &[usize]) -> Option<Equation> {
    let mut terms: Vec<Vec<Expr>> = vec![Vec::new(); members.len()];
    let mut exits = Vec::new();
    for (prefix, tail) in tails(body, members)? {
        match tail {
            Some(j) => terms[j].push(prefix),
            None => exits.push(prefix),
        }
    }
    Some(Equation {
        terms: terms.into_iter().map(Expr::choice).collect(),
        exit: Expr::choice(exits),
    })
}

/// `expr` as alternatives `prefix member?` whose prefixes mention no member (the member by
/// its index in `members`); `None` when it cannot be written so.
fn tails(expr: &Expr, members: &[usize]) -> Option<Vec<(Expr, Option<usize>)>> {
    let mentions = |expr: &Expr| {
        let mut found = false;
        expr.for_each_ref(&mut |r| found |= members.contains(&r.index()));
        found
    };
    if !mentions(expr) {
        return Some(vec![(expr.clone(), None)]);
    }
    match expr.kind() {
        ExprKind::Ref(r) => {
            let j = members.iter().position(|&m| m == r.index())?;
            Some(vec![(Expr::empty(), Some(j))])
        }
        ExprKind::Choice(alternatives) => {
            let mut all = Vec::new();
            for alternative in alternatives {
                all.extend(tails(alternative, members)?);
            }
            Some(all)
        }
        ExprKind::Seq(items) => {
            let (last, init) = items.split_last()?;
            if init.iter().any(mentions) {
                return None;
            }
            let init = Expr::seq(init.iter().cloned());
            Some(
                tails(last, members)?
                    .into_iter()
                    .map(|(prefix, tail)| (Expr::seq([init.clone(), prefix]), tail))
                    .collect(),
            )
        }
        ExprKind::Repeat {
            item,
            min: 0,
            max: Some(1),
        } => {
            let mut all = tails(item, members)?;
            all.push((Expr::empty(), None));
            Some(all)
        }
        ExprKind::Repeat { .. } | ExprKind::Empty | ExprKind::Bytes(_) | ExprKind::Class(_) => None,
    }
}

/// `a b`, where either side may be the empty language (`None`).
fn then(a: &Option<Expr>, b: &Option<Expr>) -> Option<Expr> {
    Some(Expr::seq([a.clone()?, b.clone()?]))
}

/// `a | b` over possibly empty languages.
fn or(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (None, b) => b,
        (a, None) => a,
        (Some(a), Some(b)) => Expr::choice([a, b]),
    }
}

fn check(expr: &Option<Expr>, limit: usize) -> Result<(), NormalizeError> {
    match expr {
        Some(expr) if expr.size() > limit => Err(NormalizeError::TooLarge {
            pass: "token-limits",
            what: "expression size",
            actual: expr.size(),
            limit,
        }),
        _ => Ok(()),
    }
}

/// The least solution of each equation, in order (`None`: the empty language).
fn eliminate(
    mut equations: Vec<Equation>,
    limit: usize,
) -> Result<Vec<Option<Expr>>, NormalizeError> {
    let n = equations.len();
    // Forward: X_k, freed of its self-loop, is substituted into every earlier equation, so
    // X_k refers only to X_j with j < k.
    for k in (0..n).rev() {
        if let Some(own) = equations[k].terms[k].take() {
            let star = Some(Expr::star(own));
            let eq = &mut equations[k];
            for term in eq.terms.iter_mut().take(k) {
                *term = then(&star, term);
            }
            eq.exit = then(&star, &eq.exit);
        }
        let pivot = equations[k].clone();
        for eq in equations.iter_mut().take(k) {
            let Some(via) = eq.terms[k].take() else {
                continue;
            };
            let via = Some(via);
            for j in 0..k {
                let through = then(&via, &pivot.terms[j]);
                eq.terms[j] = or(eq.terms[j].take(), through);
                check(&eq.terms[j], limit)?;
            }
            eq.exit = or(eq.exit.take(), then(&via, &pivot.exit));
            check(&eq.exit, limit)?;
        }
    }
    // Back: X_0 has no term left; each later X_k is its exit plus its terms over solved X_j.
    let mut solutions: Vec<Option<Expr>> = Vec::with_capacity(n);
    for eq in equations {
        let mut solution = eq.exit;
        for (term, solved) in eq.terms.iter().zip(&solutions) {
            solution = or(solution, then(term, solved));
        }
        check(&solution, limit)?;
        solutions.push(solution);
    }
    Ok(solutions)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string over `alphabet` up to `len` bytes.
    fn strings(alphabet: &[u8], len: usize) -> Vec<Vec<u8>> {
        let mut all = vec![Vec::new()];
        let mut layer = vec![Vec::new()];
        for _ in 0..len {
            layer = layer
                .iter()
                .flat_map(|s: &Vec<u8>| {
                    alphabet.iter().map(move |&b| {
                        let mut t = s.clone();
                        t.push(b);
                        t
                    })
                })
                .collect();
            all.extend(layer.iter().cloned());
        }
        all
    }

    fn assert_same_language(text: &str) {
        let grammar = sieve_gbnf::compile(text, &Default::default()).unwrap();
        let solved = solve(&grammar, "root", 100_000).unwrap();
        let root = solved.rule(solved.root()).body();
        let mut reaches_member = false;
        root.for_each_ref(&mut |r| reaches_member |= r == solved.root());
        assert!(
            !reaches_member,
            "{text}: the root still recurses:\n{solved}"
        );
        let before = sieve_ir::reference::Recognizer::new(&grammar).unwrap();
        let after = sieve_ir::reference::Recognizer::new(&solved).unwrap();
        for s in strings(b"abc<", 7) {
            assert_eq!(
                before.accepts(&s),
                after.accepts(&s),
                "{text}: {:?}\n{solved}",
                String::from_utf8_lossy(&s)
            );
        }
    }

    /// Text without `ab` as an automaton, mutual recursion with a self-loop on each side,
    /// three rules in a cycle with exits, and a cycle below a non-recursive root.
    #[test]
    fn right_linear_systems_keep_their_language() {
        assert_same_language(
            "root ::= [^a] root | \"a\" s1 | \"\"\ns1 ::= \"a\" s1 | [^ab] root | \"\"",
        );
        assert_same_language(
            "root ::= \"a\" x | \"c\"\nx ::= \"b\" y | \"<\"\ny ::= \"c\" root | \"a\" x | \"b\"",
        );
        assert_same_language("root ::= \"<\" t\nt ::= [ab] t | \"c\" u\nu ::= \"c\" t | \"<\"");
        // A pumping rule (only infinite derivations) drops out with what needs it.
        assert_same_language(
            "root ::= \"a\" | \"b\" x | \"c\" y\nx ::= \"c\" x\ny ::= \"a\" x | \"b\"",
        );
        // Optional and grouped tails, as normalisation writes free text.
        assert_same_language(
            "root ::= \"b\"+ t? | t\nt ::= [ac] root? | \"<\" (\"a\" t | \"c\" root)",
        );
    }

    #[test]
    fn recursion_not_at_the_end_is_not_regular() {
        let grammar =
            sieve_gbnf::compile("root ::= \"a\" root \"b\" | \"c\"", &Default::default()).unwrap();
        let error = solve(&grammar, "root", 100_000).unwrap_err();
        assert!(matches!(error, NormalizeError::NotRegular { through, .. } if through == "root"));
    }
}
