//! Pass `eliminate-nullable`: no rule but the root derives the empty string.
//!
//! Nullable analysis finds the rules that derive ε. Each such rule `M` is rewritten to derive
//! exactly its old language without ε, and a reference to it that could have matched ε
//! becomes optional (`M?`); a rule that derives only ε disappears along with its references.
//! In a sequence `a₁ … aₙ` whose leading atoms are nullable, the non-empty strings are those
//! that take their first byte from some `aᵢ`, so the rewrite lists, for each such `i`, the
//! alternative `ne(aᵢ) aᵢ₊₁ … aₙ` (the atoms before it matched ε): quadratic in the worst
//! case, never exponential, unlike expanding every subset. Repetitions are handled in place:
//! `M{m,n}` with `M` nullable is `M'{0,n}`; `x{0,n}` minus ε is `x{1,n}`.
//!
//! If the root is nullable it keeps an explicit empty alternative; if other rules also
//! reference it, they reference a fresh non-nullable copy instead.
//!
//! Requires flat form and live rules (run after `remove-useless`). After it: flat form, and
//! only the root may be nullable; the root's body is then `… | ""`.

use sieve_ir::{Expr, ExprKind, Grammar, RuleId};

use crate::{analysis, flat, rebuild::Draft, NormalizeError};

struct Facts {
    nullable: Vec<bool>,
    /// The rule derives some non-empty string.
    nonempty: Vec<bool>,
    /// Where references to each rule point after the rewrite.
    redirect: Vec<RuleId>,
}

impl Facts {
    fn atom_nullable(&self, atom: &Expr) -> bool {
        analysis::expr_nullable(atom, &self.nullable)
    }

    fn simple_nonempty(&self, simple: &Expr) -> bool {
        match simple.kind() {
            ExprKind::Ref(id) => self.nonempty[id.index()],
            _ => true,
        }
    }

    fn simple_nullable(&self, simple: &Expr) -> bool {
        matches!(simple.kind(), ExprKind::Ref(id) if self.nullable[id.index()])
    }

    fn redirected(&self, simple: &Expr) -> Expr {
        match simple.kind() {
            ExprKind::Ref(id) => Expr::rule(self.redirect[id.index()]),
            _ => simple.clone(),
        }
    }

    /// Whether rule `id`'s body is its own rewrite: the rule is not nullable, and every rule
    /// it references derives a non-empty string, not ε, and keeps its id. Then each atom is
    /// rewritten to itself, and the body is kept as it is instead of rebuilt.
    fn unchanged(&self, id: RuleId, body: &Expr) -> bool {
        if self.nullable[id.index()] {
            return false;
        }
        let mut unchanged = true;
        body.for_each_ref(&mut |r| {
            let r_index = r.index();
            unchanged &=
                self.nonempty[r_index] && !self.nullable[r_index] && self.redirect[r_index] == r;
        });
        debug_assert!(
            !unchanged || {
                let rebuilt = flat::from_alternatives(
                    flat::alternatives(body)
                        .iter()
                        .map(|atoms| atoms.iter().filter_map(|a| self.rewrite(a)).collect())
                        .collect(),
                );
                rebuilt.as_ref() == Some(body)
            },
            "a body the pass keeps is its own rewrite"
        );
        unchanged
    }

    /// The atom with the same language over the rewritten rules; `None` when it is only ε.
    fn rewrite(&self, atom: &Expr) -> Option<Expr> {
        let (item, min, max) = split_repeat(atom);
        if !self.simple_nonempty(item) {
            return None;
        }
        let item_out = self.redirected(item);
        if self.simple_nullable(item) {
            // The rewritten rule lost ε, so each repetition may also be skipped.
            return Some(Expr::repeat(item_out, 0, max).expect("0 <= max"));
        }
        Some(Expr::repeat(item_out, min, max).expect("bounds were valid"))
    }

    /// The atom's language without ε; `None` when that is empty.
    fn nonempty_part(&self, atom: &Expr) -> Option<Expr> {
        let (item, min, max) = split_repeat(atom);
        if !self.simple_nonempty(item) {
            return None;
        }
        let item_out = self.redirected(item);
        let min = if self.simple_nullable(item) {
            1
        } else {
            min.max(1)
        };
        Some(Expr::repeat(item_out, min, max).expect("1 <= max"))
    }

    /// The alternatives deriving the non-empty strings of the sequence `atoms`.
    fn nonempty_alternatives(&self, atoms: &[Expr]) -> Vec<Vec<Expr>> {
        let mut out = Vec::new();
        for (i, atom) in atoms.iter().enumerate() {
            if !self.atom_nullable(atom) {
                out.push(atoms[i..].iter().filter_map(|a| self.rewrite(a)).collect());
                break;
            }
            if let Some(first) = self.nonempty_part(atom) {
                let mut alt = vec![first];
                alt.extend(atoms[i + 1..].iter().filter_map(|a| self.rewrite(a)));
                out.push(alt);
            }
        }
        out
    }
}

/// An atom as `(item, min, max)`; a simple atom is `{1,1}`.
fn split_repeat(atom: &Expr) -> (&Expr, u32, Option<u32>) {
    match atom.kind() {
        ExprKind::Repeat { item, min, max } => (item, *min, *max),
        _ => (atom, 1, Some(1)),
    }
}

/// Runs the pass.
pub fn eliminate_nullable(grammar: Grammar) -> Result<Grammar, NormalizeError> {
    let nullable = analysis::nullable(&grammar);
    let nonempty = analysis::derives_nonempty(&grammar);
    let root = grammar.root();
    if !nullable.contains(&true) && !nonempty.contains(&false) {
        // Every atom is rewritten to itself: nothing to do.
        return Ok(grammar);
    }
    let root_referenced = grammar.references().iter().any(|refs| refs.contains(&root));
    let mut redirect: Vec<RuleId> = grammar.rule_ids().collect();
    let mut draft = Draft::from_grammar(grammar);
    let old = draft.take_bodies();
    let root_copy = if nullable[root.index()] && nonempty[root.index()] && root_referenced {
        let name = format!("{}_nonempty", draft.names[root.index()]);
        let id = draft.add_rule(&name, Expr::empty());
        redirect[root.index()] = id;
        Some(id)
    } else {
        None
    };
    let facts = Facts {
        nullable,
        nonempty,
        redirect,
    };

    let mut root_nonempty_body = None;
    for (index, body) in old.into_iter().enumerate() {
        let id = RuleId::new(index).expect("an existing rule");
        let body = body.expect("every rule has a body before the pass");
        if facts.unchanged(id, &body) {
            if id == root {
                root_nonempty_body = Some(body.clone());
            }
            draft.bodies[id.index()] = Some(body);
            continue;
        }
        let alternatives = flat::alternatives(&body);
        let new_alternatives: Vec<Vec<Expr>> = if facts.nullable[id.index()] {
            alternatives
                .iter()
                .flat_map(|atoms| facts.nonempty_alternatives(atoms))
                .collect()
        } else {
            alternatives
                .iter()
                .map(|atoms| atoms.iter().filter_map(|a| facts.rewrite(a)).collect())
                .collect()
        };
        let body = flat::from_alternatives(new_alternatives);
        if id == root {
            root_nonempty_body = body.clone();
        }
        draft.bodies[id.index()] = body;
    }

    if facts.nullable[root.index()] {
        let nonempty_root = match (root_copy, root_nonempty_body) {
            (Some(copy), Some(body)) => {
                draft.bodies[copy.index()] = Some(body);
                Some(Expr::rule(copy))
            }
            (None, body) => body,
            (Some(_), None) => return Err(NormalizeError::internal("nullable root copy")),
        };
        let mut alternatives = nonempty_root
            .map(|b| flat::alternatives(&b))
            .unwrap_or_default();
        alternatives.push(Vec::new());
        draft.bodies[root.index()] = flat::from_alternatives(alternatives);
    }
    // A non-root rule that derived only ε has no body now; nothing references it any more.
    draft.finish()
}
