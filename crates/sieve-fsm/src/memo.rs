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

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use hashbrown::HashTable;

use sieve_ir::{Expr, ExprKind, RuleId};

use crate::fsm::Fsm;
use crate::head::with_head;
use crate::shared::AutomatonCache;

/// A rule body up to an order-preserving renaming of its references, its leading literal
/// apart, read in place: the tail is hashed and compared as if ranked, and written out
/// ranked ([`Shape::key`]) only for a shape that is built. Most rules of a grammar repeat a
/// shape seen before, so most shapes are never written out.
pub(crate) struct Shape<'a> {
    /// The bytes the body starts with, as far as it is a literal.
    head: Vec<u8>,
    /// The rest of the body as the items of a sequence: empty for no tail, one item for a
    /// body that is not a sequence. Items are never sequences or `Empty` (the IR's
    /// constructors flatten them), so equal ranked tails have equal item lists.
    tail: &'a [Expr],
    /// The distinct rules the body references, ascending; a reference's rank is its index.
    refs: Vec<RuleId>,
    /// The tail's hash with references read as their ranks ([`Expr::hash_renamed`]).
    hash: u64,
}

/// A ranked tail as a map key: the tail written out over ranks, and its hash computed once,
/// so that every look-up (this build's memo, the shared cache, the chunk's new shapes)
/// hashes one word, and comparing a key with a [`Shape`] walks both only when their hashes
/// agree.
#[derive(Clone, Debug)]
pub(crate) struct ShapeKey {
    hash: u64,
    ranked: Arc<Expr>,
}

impl ShapeKey {
    /// The ranked tail.
    pub(crate) fn ranked(&self) -> &Expr {
        &self.ranked
    }

    /// The hash of the ranked tail, as [`Shape::hash`] gives it.
    pub(crate) fn hash(&self) -> u64 {
        self.hash
    }

    /// Whether `shape`'s tail, ranked, is this key's.
    pub(crate) fn matches(&self, shape: &Shape<'_>) -> bool {
        if self.hash != shape.hash {
            return false;
        }
        match (shape.tail, self.ranked.kind()) {
            ([], ExprKind::Empty) => true,
            ([item], _) => item.eq_renamed(&self.ranked, &shape.rank_of(), &RuleId::index),
            (items, ExprKind::Seq(ranked)) => {
                items.len() == ranked.len()
                    && items.iter().zip(ranked).all(|(item, ranked)| {
                        item.eq_renamed(ranked, &shape.rank_of(), &RuleId::index)
                    })
            }
            _ => false,
        }
    }
}

impl<'a> Shape<'a> {
    /// The shape of `body`.
    pub(crate) fn of(body: &'a Expr) -> Shape<'a> {
        let (head, tail) = split_head(body);
        let mut refs = Vec::new();
        for item in tail {
            item.for_each_ref(&mut |rule| refs.push(rule));
        }
        refs.sort_unstable();
        refs.dedup();
        // A fixed seed: the hash only indexes maps, but a fixed one keeps runs repeatable.
        let mut hasher = foldhash::fast::FixedState::with_seed(0).build_hasher();
        hasher.write_usize(tail.len());
        let rank_of = |rule| rank(&refs, rule).index();
        for item in tail {
            item.hash_renamed(&mut hasher, &rank_of);
        }
        Shape {
            head,
            tail,
            refs,
            hash: hasher.finish(),
        }
    }

    /// Each reference's rank, as [`ShapeKey::ranked`] names it.
    fn rank_of(&self) -> impl Fn(RuleId) -> usize + '_ {
        |rule| rank(&self.refs, rule).index()
    }

    /// The hash of the ranked tail.
    pub(crate) fn hash(&self) -> u64 {
        self.hash
    }

    /// The ranked tail written out, as a key.
    pub(crate) fn key(&self) -> ShapeKey {
        let mut ranked = Expr::seq(self.tail.iter().cloned());
        ranked.rename_refs(&mut |rule| rank(&self.refs, rule));
        ShapeKey {
            hash: self.hash,
            ranked: Arc::new(ranked),
        }
    }
}

/// The bytes `body` starts with, as far as it is a literal, and the rest of it as the items
/// of a sequence.
fn split_head(body: &Expr) -> (Vec<u8>, &[Expr]) {
    match body.kind() {
        ExprKind::Empty => (Vec::new(), &[]),
        ExprKind::Bytes(bytes) => (bytes.clone(), &[]),
        ExprKind::Seq(items) => {
            let literal = items
                .iter()
                .take_while(|item| matches!(item.kind(), ExprKind::Bytes(_)))
                .count();
            let mut head = Vec::new();
            for item in &items[..literal] {
                if let ExprKind::Bytes(bytes) = item.kind() {
                    head.extend_from_slice(bytes);
                }
            }
            (head, &items[literal..])
        }
        _ => (Vec::new(), std::slice::from_ref(body)),
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
    /// Each ranked tail built or taken from the cache, with its automaton over ranks.
    built: HashTable<(ShapeKey, Arc<Fsm>)>,
    /// The shared cache, with the DFA cap and minimisation setting of this build.
    shared: Option<(&'c AutomatonCache, usize, bool)>,
    /// Whether the automata are minimised (a head is then joined minimally).
    minimize: bool,
}

impl<'c> RuleMemo<'c> {
    /// A memo for a build that minimises its automata or not.
    pub(crate) fn new(minimize: bool) -> Self {
        RuleMemo {
            built: HashTable::new(),
            shared: None,
            minimize,
        }
    }

    /// A memo that also looks in, and adds to, `cache` (for automata built with this DFA cap
    /// and minimisation setting).
    pub(crate) fn sharing(cache: &'c AutomatonCache, dfa_cap: usize, minimize: bool) -> Self {
        RuleMemo {
            built: HashTable::new(),
            shared: Some((cache, dfa_cap, minimize)),
            minimize,
        }
    }

    /// The automaton of a rule of this shape, over the rule's own references, if its tail
    /// was built here or is in the shared cache.
    pub(crate) fn get(&mut self, shape: &Shape<'_>) -> Option<Fsm> {
        let found = self
            .built
            .find(shape.hash(), |(key, _)| key.matches(shape))
            .map(|(_, ranked)| ranked.clone());
        let ranked = match found {
            Some(ranked) => ranked,
            None => {
                let (cache, cap, minimize) = self.shared?;
                let (key, ranked) = cache.get(shape, cap, minimize)?;
                self.built
                    .insert_unique(key.hash(), (key, ranked.clone()), |(key, _)| key.hash());
                ranked
            }
        };
        Some(self.rule_automaton(shape, &ranked))
    }

    /// Records `ranked`, built for `key` (this shape's ranked tail, written out), and gives
    /// back the automaton of the rule of this shape.
    pub(crate) fn insert(&mut self, shape: &Shape<'_>, key: ShapeKey, ranked: Fsm) -> Fsm {
        let ranked = Arc::new(ranked);
        if let Some((cache, cap, minimize)) = self.shared {
            cache.insert(&key, cap, minimize, ranked.clone());
        }
        let fsm = self.rule_automaton(shape, &ranked);
        self.built
            .insert_unique(key.hash(), (key, ranked), |(key, _)| key.hash());
        fsm
    }

    /// The rule's automaton from its shape's ranked tail automaton.
    fn rule_automaton(&self, shape: &Shape<'_>, ranked: &Fsm) -> Fsm {
        let tail = ranked.rename_rules(|rank| shape.refs[rank.index()]);
        if shape.head.is_empty() {
            tail
        } else {
            with_head(&tail, &shape.head, self.minimize)
        }
    }
}
