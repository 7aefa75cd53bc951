//! Rebuilding a grammar after a pass has rewritten, removed or redirected rules.
//!
//! Passes compute a new body for each old rule (or drop it) and reference rules by their old
//! ids; [`rebuild`] keeps only the rules reachable from the root, renumbers them in their old
//! order, and maps every reference. Keeping the old relative order makes dumps stable.

use std::collections::HashSet;

use sieve_ir::{Expr, Grammar, GrammarBuilder, RuleId};

use crate::NormalizeError;

/// A grammar under rewrite: names and bodies indexed by old rule id. Rules may be appended.
#[derive(Clone, Debug)]
pub(crate) struct Draft {
    pub names: Vec<String>,
    pub bodies: Vec<Option<Expr>>,
    pub root: RuleId,
    /// Every name in `names`, for finding fresh ones quickly.
    taken: HashSet<String>,
}

impl Draft {
    /// A draft holding the grammar's rules unchanged.
    pub fn from_grammar(grammar: &Grammar) -> Draft {
        Draft {
            names: grammar
                .rules()
                .iter()
                .map(|r| r.name().to_owned())
                .collect(),
            bodies: grammar
                .rules()
                .iter()
                .map(|r| Some(r.body().clone()))
                .collect(),
            root: grammar.root(),
            taken: grammar
                .rules()
                .iter()
                .map(|r| r.name().to_owned())
                .collect(),
        }
    }

    /// Appends a rule with a name derived from `base` that no other rule has.
    pub fn add_rule(&mut self, base: &str, body: Expr) -> RuleId {
        let mut name = base.to_owned();
        let mut n = 1usize;
        while self.taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        self.names.push(name);
        self.bodies.push(Some(body));
        RuleId::new(self.names.len() - 1).expect("rule count is limited by the config")
    }

    /// Keeps the rules reachable from the root, renumbered in their order here.
    pub fn finish(self) -> Result<Grammar, NormalizeError> {
        let count = self.names.len();
        let mut reachable = vec![false; count];
        let mut stack = vec![self.root];
        reachable[self.root.index()] = true;
        while let Some(id) = stack.pop() {
            let body = self.bodies[id.index()]
                .as_ref()
                .ok_or_else(|| NormalizeError::internal("a removed rule is still referenced"))?;
            body.for_each_ref(&mut |r| {
                if !reachable[r.index()] {
                    reachable[r.index()] = true;
                    stack.push(r);
                }
            });
        }
        let mut builder = GrammarBuilder::new();
        let mut new_id = vec![None; count];
        for old in 0..count {
            if reachable[old] {
                let id = builder
                    .declare(&self.names[old])
                    .map_err(NormalizeError::from_ir)?;
                new_id[old] = Some(id);
            }
        }
        for old in 0..count {
            let Some(id) = new_id[old] else { continue };
            let body = self.bodies[old]
                .as_ref()
                .expect("reachable rules have bodies");
            let mapped = body
                .map_refs(&mut |r| new_id[r.index()].map(Expr::rule))
                .ok_or_else(|| NormalizeError::internal("reference to an unreachable rule"))?;
            builder.define(id, mapped);
        }
        let root = new_id[self.root.index()].expect("the root is reachable");
        builder.build(root).map_err(NormalizeError::from_ir)
    }
}
