//! Pass `flatten`: anonymous groups become rules.
//!
//! After it every body is in flat form (see [`crate::Stage::Flat`]): alternatives of sequences of atoms.
//! A choice nested inside a sequence, and a repetition of anything but a byte string, class or
//! rule reference, are moved into a fresh rule named after the rule they came from, e.g.
//! `object ::= "{" (pair ("," pair)*)? "}"` becomes
//! `object ::= "{" object_1? "}"`, `object_1 ::= pair object_2*`, `object_2 ::= "," pair`.
//! The language is unchanged: a fresh rule derives exactly what its group did.
//!
//! Equal groups share one fresh rule, wherever they occur (named after the first rule they
//! came from): a JSON Schema `enum` of 10,000 strings, each character written as
//! `("a" | "\\u0061")`, lifts a few dozen rules rather than one per character of every value.
//! Groups are looked up by a structural hash computed once per node from its children's, so
//! the pass stays linear in the grammar's size however deeply groups nest (hashing each group
//! whole made it quadratic in the nesting depth: JSON Schema objects with many optional
//! properties nest one group per property).

use std::hash::{BuildHasher, Hash, Hasher};

use foldhash::HashMap;

use sieve_ir::{Expr, ExprKind, Grammar, RuleId};

use crate::{rebuild::Draft, NormalizeError};

/// Runs the pass. It reads `grammar` in place: bodies already flat are copied, the others
/// rebuilt from their parts, so the caller's grammar need not be copied first.
pub fn flatten(grammar: &Grammar) -> Result<Grammar, NormalizeError> {
    flatten_replacing(grammar, &[])
}

/// [`flatten`] of `grammar` with the body of each rule `i` for which `replaced[i]` is set
/// (`replaced` may be shorter than the rule list) taken to be that expression instead; the
/// result has no token limit or shared mark (`crate::limits` sets rules aside this way).
pub(crate) fn flatten_replacing(
    grammar: &Grammar,
    replaced: &[Option<Expr>],
) -> Result<Grammar, NormalizeError> {
    let mut lifter = Lifter {
        draft: Draft::with_names_of(grammar),
        lifted: HashMap::default(),
        hashes: HashMap::default(),
        hasher: foldhash::fast::FixedState::default(),
    };
    for (index, rule) in grammar.rules().iter().enumerate() {
        let body = match replaced.get(index) {
            Some(Some(body)) => body,
            _ => rule.body(),
        };
        // Bodies already flat have no group to lift.
        let flat = if crate::flat::is_flat(body) {
            body.clone()
        } else {
            let id = RuleId::new(index).expect("an existing rule");
            lifter.flatten_body(id, body)
        };
        lifter.draft.bodies[index] = Some(flat);
    }
    lifter.draft.finish()
}

/// The grammar under rewrite and the groups lifted so far.
struct Lifter<'g> {
    draft: Draft,
    /// Each group lifted, as written in the input grammar, and its rule.
    lifted: HashMap<Group<'g>, RuleId>,
    /// The structural hash of every composite node of the input hashed so far, by address
    /// (the input is borrowed for the whole pass, so addresses are stable).
    hashes: HashMap<*const Expr, u64>,
    hasher: foldhash::fast::FixedState,
}

/// A group of the input with its structural hash: equal groups have equal hashes, and
/// hashing a key reads only the stored hash.
struct Group<'g> {
    hash: u64,
    expr: &'g Expr,
}

impl Hash for Group<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl PartialEq for Group<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.expr == other.expr
    }
}

impl Eq for Group<'_> {}

impl<'g> Lifter<'g> {
    /// A flat body with the language of `expr`, lifting groups into rules named after `owner`.
    fn flatten_body(&mut self, owner: RuleId, expr: &'g Expr) -> Expr {
        match expr.kind() {
            ExprKind::Choice(alts) => {
                let alts: Vec<Expr> = alts
                    .iter()
                    .map(|alt| self.flatten_sequence(owner, alt))
                    .collect();
                Expr::choice(alts).expect("a choice has alternatives")
            }
            _ => self.flatten_sequence(owner, expr),
        }
    }

    /// A sequence of atoms with the language of `expr`.
    fn flatten_sequence(&mut self, owner: RuleId, expr: &'g Expr) -> Expr {
        match expr.kind() {
            ExprKind::Seq(items) => {
                let atoms: Vec<Expr> = items.iter().map(|i| self.flatten_atom(owner, i)).collect();
                Expr::seq(atoms)
            }
            _ => self.flatten_atom(owner, expr),
        }
    }

    /// An atom (or `Empty`) with the language of `expr`.
    fn flatten_atom(&mut self, owner: RuleId, expr: &'g Expr) -> Expr {
        match expr.kind() {
            ExprKind::Empty | ExprKind::Bytes(_) | ExprKind::Class(_) | ExprKind::Ref(_) => {
                expr.clone()
            }
            ExprKind::Repeat { item, min, max } => {
                let item = if crate::flat::is_simple(item) {
                    (**item).clone()
                } else {
                    self.lift(owner, item)
                };
                Expr::repeat(item, *min, *max).expect("bounds were valid")
            }
            ExprKind::Seq(_) | ExprKind::Choice(_) => self.lift(owner, expr),
        }
    }

    /// A reference to a rule whose body is the flattened `expr`: the one lifted for an equal
    /// group before, or a fresh one.
    fn lift(&mut self, owner: RuleId, expr: &'g Expr) -> Expr {
        let group = Group {
            hash: self.structural_hash(expr),
            expr,
        };
        if let Some(&id) = self.lifted.get(&group) {
            return Expr::rule(id);
        }
        let base = self.draft.names[owner.index()].clone();
        // Reserve the id first so nested groups are numbered after their parent.
        let id = self.draft.add_rule(&base, Expr::empty());
        let body = self.flatten_body(owner, expr);
        self.draft.bodies[id.index()] = Some(body);
        self.lifted.insert(group, id);
        Expr::rule(id)
    }

    /// A hash of `expr` that equal expressions share: a leaf's own, a composite node's from
    /// its shape and its children's hashes, each composite node computed once.
    fn structural_hash(&mut self, expr: &'g Expr) -> u64 {
        let children = match expr.kind() {
            ExprKind::Seq(_) | ExprKind::Choice(_) | ExprKind::Repeat { .. } => expr.children(),
            leaf => return self.hasher.hash_one(leaf),
        };
        let address = expr as *const Expr;
        if let Some(&hash) = self.hashes.get(&address) {
            return hash;
        }
        let mut state = self.hasher.build_hasher();
        std::mem::discriminant(expr.kind()).hash(&mut state);
        if let ExprKind::Repeat { min, max, .. } = expr.kind() {
            (min, max).hash(&mut state);
        }
        children.len().hash(&mut state);
        for child in children {
            state.write_u64(self.structural_hash(child));
        }
        let hash = state.finish();
        self.hashes.insert(address, hash);
        hash
    }
}
