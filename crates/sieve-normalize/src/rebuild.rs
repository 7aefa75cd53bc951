//! Rebuilding a grammar after a pass has rewritten, removed or redirected rules.
//!
//! Passes compute a new body for each old rule (or drop it) and reference rules by their old
//! ids; [`Draft::finish`] keeps only the rules reachable from the root, renumbers them in
//! their old order, and maps every reference. Keeping the old relative order makes dumps
//! stable. Passes that can make no rule unreachable use [`rewrite_keeping_references`]
//! instead, which needs no walk.

use foldhash::HashSet;

use sieve_ir::{Expr, FreshNames, Grammar, RuleId};

use crate::NormalizeError;

/// A grammar under rewrite: names and bodies indexed by old rule id. Rules may be appended.
///
/// A draft owns the grammar it was made from, so a pass rewrites bodies in place or takes
/// them out ([`Draft::take_bodies`]) instead of copying every rule.
#[derive(Clone, Debug)]
pub(crate) struct Draft {
    pub names: Vec<String>,
    pub bodies: Vec<Option<Expr>>,
    pub root: RuleId,
    /// Every name in `names`, for finding fresh ones quickly; built on the first
    /// [`Draft::add_rule`], since most passes add none.
    taken: Option<HashSet<String>>,
    fresh_names: FreshNames,
}

impl Draft {
    /// A draft holding the grammar's rules unchanged.
    pub fn from_grammar(grammar: Grammar) -> Draft {
        let (rules, root) = grammar.into_rewrite();
        let (names, bodies) = rules
            .into_iter()
            .map(|(name, body)| (name, Some(body)))
            .unzip();
        Draft {
            names,
            bodies,
            root,
            taken: None,
            fresh_names: FreshNames::default(),
        }
    }

    /// A draft with the grammar's rule names and root and no body yet: for a pass that
    /// reads the grammar in place and sets every body.
    pub fn with_names_of(grammar: &Grammar) -> Draft {
        Draft {
            names: grammar
                .rules()
                .iter()
                .map(|r| r.name().to_owned())
                .collect(),
            bodies: vec![None; grammar.rules().len()],
            root: grammar.root(),
            taken: None,
            fresh_names: FreshNames::default(),
        }
    }

    /// Takes every body out, leaving none: for passes that compute each new body from the
    /// old ones and set every rule they keep.
    pub fn take_bodies(&mut self) -> Vec<Option<Expr>> {
        let count = self.bodies.len();
        std::mem::replace(&mut self.bodies, vec![None; count])
    }

    /// Appends a rule with a name derived from `base` that no other rule has.
    pub fn add_rule(&mut self, base: &str, body: Expr) -> RuleId {
        let names = &self.names;
        let taken = self
            .taken
            .get_or_insert_with(|| names.iter().cloned().collect());
        let name = self.fresh_names.next(base, |name| taken.contains(name));
        taken.insert(name.clone());
        self.names.push(name);
        self.bodies.push(Some(body));
        RuleId::new(self.names.len() - 1).expect("rule count is limited by the config")
    }

    /// Keeps the rules reachable from the root, renumbered in their order here. When every
    /// rule is kept, ids do not change and the bodies move into the grammar as they are.
    pub fn finish(self) -> Result<Grammar, NormalizeError> {
        let Draft {
            names,
            bodies,
            root,
            ..
        } = self;
        let count = names.len();
        if root.index() >= count {
            return Err(NormalizeError::internal("the root is not a rule"));
        }
        let mut reachable = vec![false; count];
        let mut stack = vec![root];
        reachable[root.index()] = true;
        let mut dangling = false;
        while let Some(id) = stack.pop() {
            let body = bodies[id.index()]
                .as_ref()
                .ok_or_else(|| NormalizeError::internal("a removed rule is still referenced"))?;
            body.for_each_ref(&mut |r| match reachable.get_mut(r.index()) {
                Some(seen) if !*seen => {
                    *seen = true;
                    stack.push(r);
                }
                Some(_) => {}
                None => dangling = true,
            });
        }
        if dangling {
            return Err(NormalizeError::internal(
                "a rule refers to a rule that does not exist",
            ));
        }
        let renumbered = reachable.contains(&false);
        let mut new_id = vec![None; count];
        let mut kept = 0;
        for (old, &keep) in reachable.iter().enumerate() {
            if keep {
                new_id[old] = Some(RuleId::new(kept).expect("fewer rules than before"));
                kept += 1;
            }
        }
        let mut rules = Vec::with_capacity(kept);
        for ((name, body), keep) in names.into_iter().zip(bodies).zip(reachable) {
            if !keep {
                continue;
            }
            let mut body = body.expect("reachable rules have bodies");
            if renumbered {
                // Every rule a reachable body names is reachable, so each has a new id.
                body.rename_refs(&mut |r| new_id[r.index()].expect("a reachable rule"));
            }
            rules.push((name, body));
        }
        let root = new_id[root.index()].expect("the root is reachable");
        // Every reference of a kept body was checked by the walk above.
        Grammar::from_checked_rewrite(rules, root).map_err(NormalizeError::from_ir)
    }
}

/// Rewrites the bodies for which `rewrite` (given the rule and its body) returns a new one,
/// for passes whose rewrites reference no new rule and drop only references that no rule's
/// reachability depends on:
/// joining byte strings, dropping an alternative equal to one that stays, a rule's reference
/// to itself (no shortest path from the root goes through one). Every rule then stays
/// reachable and every reference valid, so the reachability walk and renumbering of
/// [`Draft::finish`] are not needed; when no body changes, the grammar itself is returned.
pub(crate) fn rewrite_keeping_references(
    grammar: Grammar,
    mut rewrite: impl FnMut(RuleId, &Expr) -> Option<Expr>,
) -> Result<Grammar, NormalizeError> {
    let rewritten: Vec<(usize, Expr)> = grammar
        .rule_ids()
        .filter_map(|id| Some((id.index(), rewrite(id, grammar.rule(id).body())?)))
        .collect();
    if rewritten.is_empty() {
        return Ok(grammar);
    }
    let (mut rules, root) = grammar.into_rewrite();
    for (index, body) in rewritten {
        rules[index].1 = body;
    }
    Grammar::from_checked_rewrite(rules, root).map_err(NormalizeError::from_ir)
}

#[cfg(test)]
mod tests {
    use sieve_ir::{Expr, GrammarBuilder};

    use super::Draft;

    /// A faulty rewrite that leaves a reference to no rule, or a root past the rules, is an
    /// error from `finish`, not a panic or a grammar that breaks later.
    #[test]
    fn finish_refuses_dangling_references() {
        let mut builder = GrammarBuilder::new();
        let root = builder.declare("r").unwrap();
        let item = builder.declare("s").unwrap();
        builder.define(root, Expr::rule(item));
        builder.define(item, Expr::bytes(b"x".to_vec()));
        let grammar = builder.build(root).unwrap();

        let mut dangling = Draft::from_grammar(grammar.clone());
        dangling.bodies[1] = Some(Expr::rule(sieve_ir::RuleId::new(7).unwrap()));
        assert!(dangling.finish().is_err());
        let mut rootless = Draft::from_grammar(grammar.clone());
        rootless.root = sieve_ir::RuleId::new(2).unwrap();
        assert!(rootless.finish().is_err());
        assert_eq!(
            Draft::from_grammar(grammar.clone()).finish().unwrap(),
            grammar
        );
    }

    /// Fresh names are the smallest free `{base}_{n}`, whatever was taken before and in
    /// whatever order rules are added: the suffix cursor must not change a single name.
    #[test]
    fn fresh_names_take_the_smallest_free_suffix() {
        let mut builder = GrammarBuilder::new();
        let root = builder.declare("r").unwrap();
        let taken = builder.declare("r_2").unwrap();
        builder.define(root, Expr::rule(taken));
        builder.define(taken, Expr::bytes(b"x".to_vec()));
        let grammar = builder.build(root).unwrap();

        let mut draft = Draft::from_grammar(grammar);
        let names: Vec<String> = (0..4)
            .map(|_| {
                let id = draft.add_rule("r", Expr::empty());
                draft.names[id.index()].clone()
            })
            .collect();
        assert_eq!(names, ["r_1", "r_3", "r_4", "r_5"]);
        let other = draft.add_rule("s", Expr::empty());
        assert_eq!(draft.names[other.index()], "s");
        let other = draft.add_rule("s", Expr::empty());
        assert_eq!(draft.names[other.index()], "s_1");
    }
}
