//! Building each distinct rule shape once per grammar.
//!
//! A regular rule's automaton is a function of its body alone. Two bodies that differ only in
//! which rules they reference, with the references in the same relative order, give automata
//! that differ only in those labels: subset construction, minimisation and canonical numbering
//! look at a rule id only to order labels, and a strictly increasing renaming keeps that
//! order. JSON Schema grammars are full of such rules: one `key_i ":" value_j` member per
//! property, one `"[" item_k ("," item_k)* "]"` per array.
//!
//! A body that starts with a literal is keyed by the rest of it (its *tail*), so that members
//! differing only in their key, `"\"city\"" ws? ":" ws? string` and `"\"country\"" …`, share
//! one construction too; [`crate::head`] puts the literal back in front.
//!
//! # Invariant
//!
//! A [`Shape`] is a body's leading literal (its *head*, possibly empty) and the rest of the
//! body with each reference replaced by its rank among the distinct rules it references (ranks
//! are rule ids `0, 1, …`, in the order of the real ids). The memo maps a ranked tail to the
//! automaton built for it, over ranks, and hands it back renamed to the asking rule's
//! references with the head in front: exactly the automaton a fresh build of the body gives
//! (the DFA cap read on the tail, see [`crate::Config::dfa_state_limit`]).

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use foldhash::HashMap;

use sieve_ir::{Expr, ExprKind, RuleId};

use crate::fsm::Fsm;
use crate::head::with_head;
use crate::shared::AutomatonCache;

/// A rule body up to an order-preserving renaming of its references, its leading literal
/// apart.
pub(crate) struct Shape {
    /// The bytes the body starts with, as far as it is a literal.
    head: Vec<u8>,
    /// The rest of the body, each reference replaced by its rank in `refs`, with its hash.
    key: ShapeKey,
    /// The distinct rules the body references, ascending.
    refs: Vec<RuleId>,
}

/// A ranked body as a map key: the body, shared, and its hash computed once, so that every
/// look-up (this build's memo, the shared cache, then the insertions) hashes one word rather
/// than walking the expression again, and comparing two keys walks them only when their
/// hashes agree.
#[derive(Clone, Debug)]
pub(crate) struct ShapeKey {
    hash: u64,
    ranked: Arc<Expr>,
}

impl ShapeKey {
    /// The ranked body.
    pub(crate) fn ranked(&self) -> &Expr {
        &self.ranked
    }
}

impl PartialEq for ShapeKey {
    fn eq(&self, other: &ShapeKey) -> bool {
        self.hash == other.hash
            && (Arc::ptr_eq(&self.ranked, &other.ranked) || self.ranked == other.ranked)
    }
}

impl Eq for ShapeKey {}

impl Hash for ShapeKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl Shape {
    /// The ranked body as a key.
    pub(crate) fn key(&self) -> &ShapeKey {
        &self.key
    }

    /// The shape of `body`.
    pub(crate) fn of(body: &Expr) -> Shape {
        let (head, mut ranked) = split_head(body);
        let mut refs = Vec::new();
        ranked.for_each_ref(&mut |rule| refs.push(rule));
        refs.sort_unstable();
        refs.dedup();
        ranked.rename_refs(&mut |rule| rank(&refs, rule));
        // A fixed seed: the hash only indexes maps, but a fixed one keeps runs repeatable.
        let hash = foldhash::fast::FixedState::with_seed(0).hash_one(&ranked);
        Shape {
            head,
            key: ShapeKey {
                hash,
                ranked: Arc::new(ranked),
            },
            refs,
        }
    }
}

/// The bytes `body` starts with, as far as it is a literal, and the rest of it.
fn split_head(body: &Expr) -> (Vec<u8>, Expr) {
    match body.kind() {
        ExprKind::Bytes(bytes) => (bytes.clone(), Expr::empty()),
        ExprKind::Seq(items) => {
            let literal = items
                .iter()
                .take_while(|item| matches!(item.kind(), ExprKind::Bytes(_)))
                .count();
            if literal == 0 {
                return (Vec::new(), body.clone());
            }
            let mut head = Vec::new();
            for item in &items[..literal] {
                if let ExprKind::Bytes(bytes) = item.kind() {
                    head.extend_from_slice(bytes);
                }
            }
            (head, Expr::seq(items[literal..].iter().cloned()))
        }
        _ => (Vec::new(), body.clone()),
    }
}

/// The rank of `rule` among `refs` (sorted), as a rule id.
fn rank(refs: &[RuleId], rule: RuleId) -> RuleId {
    let index = refs
        .binary_search(&rule)
        .expect("the rule is one of the body's references");
    RuleId::new(index).expect("fewer references than rules")
}

/// The automata built so far in one grammar, by ranked tail, in front of an optional
/// [`AutomatonCache`] shared with other builds.
#[derive(Default)]
pub(crate) struct RuleMemo<'c> {
    built: HashMap<ShapeKey, Arc<Fsm>>,
    /// The shared cache, with the DFA cap and minimisation setting of this build.
    shared: Option<(&'c AutomatonCache, usize, bool)>,
    /// Whether the automata are minimised (a head is then joined minimally).
    minimize: bool,
}

impl<'c> RuleMemo<'c> {
    /// A memo for a build that minimises its automata or not.
    pub(crate) fn new(minimize: bool) -> Self {
        RuleMemo {
            built: HashMap::default(),
            shared: None,
            minimize,
        }
    }

    /// A memo that also looks in, and adds to, `cache` (for automata built with this DFA cap
    /// and minimisation setting).
    pub(crate) fn sharing(cache: &'c AutomatonCache, dfa_cap: usize, minimize: bool) -> Self {
        RuleMemo {
            built: HashMap::default(),
            shared: Some((cache, dfa_cap, minimize)),
            minimize,
        }
    }

    /// The automaton of a rule of this shape, over the rule's own references, if its tail
    /// was built here or is in the shared cache.
    pub(crate) fn get(&mut self, shape: &Shape) -> Option<Fsm> {
        let ranked = match self.built.get(&shape.key) {
            Some(ranked) => ranked.clone(),
            None => {
                let (cache, cap, minimize) = self.shared?;
                let ranked = cache.get(shape, cap, minimize)?;
                self.built.insert(shape.key.clone(), ranked.clone());
                ranked
            }
        };
        Some(self.rule_automaton(shape, &ranked))
    }

    /// Records `ranked`, built for this shape's ranked tail, and gives back the automaton of
    /// the rule of this shape.
    pub(crate) fn insert(&mut self, shape: Shape, ranked: Fsm) -> Fsm {
        let ranked = Arc::new(ranked);
        if let Some((cache, cap, minimize)) = self.shared {
            cache.insert(&shape, cap, minimize, ranked.clone());
        }
        let fsm = self.rule_automaton(&shape, &ranked);
        self.built.insert(shape.key, ranked);
        fsm
    }

    /// The rule's automaton from its shape's ranked tail automaton.
    fn rule_automaton(&self, shape: &Shape, ranked: &Fsm) -> Fsm {
        let tail = ranked.rename_rules(|rank| shape.refs[rank.index()]);
        if shape.head.is_empty() {
            tail
        } else {
            with_head(&tail, &shape.head, self.minimize)
        }
    }
}
