//! Expressions: the bodies of rules.
//!
//! An [`Expr`] can only be made through its constructors, which keep these invariants (checked
//! again by [`crate::verify`]):
//!
//! - `Bytes` is non-empty;
//! - `Class` has at least two bytes (one byte is `Bytes`, none is not an expression);
//! - `Seq` has at least two items, none of them `Seq` or `Empty`;
//! - `Choice` has at least two alternatives, none of them `Choice`;
//! - `Repeat` has `min <= max`, `max >= 1`, bounds other than `{1,1}`, and a non-`Empty` item.
//!
//! There is no expression for the empty language: operations that may produce it return
//! `Option<Expr>`.
//!
//! Each node also records its tree's size ([`Expr::size`]) and how many rule references it
//! holds ([`Expr::ref_count`]), set by the constructors from its children's, so passes that
//! budget growth read the size in constant time and walks over references skip the subtrees
//! without one (most nodes of a grammar are terminal).

use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use crate::{ByteClass, IrError, RuleId};

/// An expression over bytes and rule references. See the module docs for its invariants.
///
/// Equality, order and hashing are the shape's ([`Expr::kind`]); the recorded size and
/// reference count follow from the shape.
#[derive(Clone, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "ExprKind", into = "ExprKind")]
pub struct Expr {
    kind: ExprKind,
    /// The number of nodes of the tree ([`Expr::size`]), saturating.
    size: u32,
    /// The number of rule references in the tree ([`Expr::ref_count`]), saturating.
    refs: u32,
}

impl PartialEq for Expr {
    fn eq(&self, other: &Expr) -> bool {
        // Trees of different sizes differ: most unequal pairs are told apart here.
        self.size == other.size && self.kind == other.kind
    }
}

impl Eq for Expr {}

impl Hash for Expr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind.hash(state);
    }
}

impl std::fmt::Debug for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expr").field("kind", &self.kind).finish()
    }
}

/// The shape of an [`Expr`]; read it with [`Expr::kind`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ExprKind {
    /// The empty string.
    Empty,
    /// A non-empty byte string.
    Bytes(Vec<u8>),
    /// One byte out of a set of at least two.
    Class(ByteClass),
    /// The language of another rule.
    Ref(RuleId),
    /// Concatenation of at least two items.
    Seq(Vec<Expr>),
    /// Union of at least two alternatives.
    Choice(Vec<Expr>),
    /// Between `min` and `max` (unbounded when `None`) repetitions of `item`.
    Repeat {
        /// The repeated expression.
        item: Box<Expr>,
        /// The least number of repetitions.
        min: u32,
        /// The most repetitions, `None` for unbounded.
        max: Option<u32>,
    },
}

impl Expr {
    /// The empty string.
    pub fn empty() -> Expr {
        Expr::leaf(ExprKind::Empty)
    }

    /// A node without children.
    fn leaf(kind: ExprKind) -> Expr {
        let refs = u32::from(matches!(kind, ExprKind::Ref(_)));
        Expr {
            kind,
            size: 1,
            refs,
        }
    }

    /// A node over `children`: its size is theirs plus one.
    fn node(kind: ExprKind) -> Expr {
        let (size, refs) = match &kind {
            ExprKind::Seq(items) | ExprKind::Choice(items) => {
                items.iter().fold((1u32, 0u32), |(size, refs), item| {
                    (
                        size.saturating_add(item.size),
                        refs.saturating_add(item.refs),
                    )
                })
            }
            ExprKind::Repeat { item, .. } => (item.size.saturating_add(1), item.refs),
            ExprKind::Ref(_) => (1, 1),
            _ => (1, 0),
        };
        Expr { kind, size, refs }
    }

    /// A byte string; `Empty` for an empty one.
    pub fn bytes(bytes: impl Into<Vec<u8>>) -> Expr {
        let bytes = bytes.into();
        if bytes.is_empty() {
            return Expr::empty();
        }
        Expr::leaf(ExprKind::Bytes(bytes))
    }

    /// One byte out of `class`; `None` for an empty class.
    pub fn class(class: ByteClass) -> Option<Expr> {
        if class.is_empty() {
            return None;
        }
        if let Some(b) = class.single_byte() {
            return Some(Expr::bytes(vec![b]));
        }
        Some(Expr::leaf(ExprKind::Class(class)))
    }

    /// A reference to a rule.
    pub fn rule(id: RuleId) -> Expr {
        Expr::leaf(ExprKind::Ref(id))
    }

    /// The concatenation of `items`: nested sequences are flattened and `Empty` items dropped.
    pub fn seq(items: impl IntoIterator<Item = Expr>) -> Expr {
        let items = items.into_iter();
        let mut flat = Vec::with_capacity(items.size_hint().0);
        for item in items {
            match item.kind {
                ExprKind::Empty => {}
                ExprKind::Seq(inner) if flat.is_empty() => flat = inner,
                ExprKind::Seq(inner) => flat.extend(inner),
                _ => flat.push(item),
            }
        }
        match flat.len() {
            0 => Expr::empty(),
            1 => flat.pop().expect("one item"),
            _ => Expr::node(ExprKind::Seq(flat)),
        }
    }

    /// The union of `alternatives`, nested choices flattened; `None` when there are none.
    pub fn choice(alternatives: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        let alternatives = alternatives.into_iter();
        let mut flat = Vec::with_capacity(alternatives.size_hint().0);
        for alt in alternatives {
            match alt.kind {
                ExprKind::Choice(inner) if flat.is_empty() => flat = inner,
                ExprKind::Choice(inner) => flat.extend(inner),
                _ => flat.push(alt),
            }
        }
        match flat.len() {
            0 => None,
            1 => flat.pop(),
            _ => Some(Expr::node(ExprKind::Choice(flat))),
        }
    }

    /// `item` repeated between `min` and `max` times (`None`: unbounded).
    ///
    /// `{0,0}` and an `Empty` item give `Empty`; `{1,1}` gives `item`. Fails when `min > max`.
    pub fn repeat(item: Expr, min: u32, max: Option<u32>) -> Result<Expr, IrError> {
        if let Some(max) = max {
            if min > max {
                return Err(IrError::RepeatBounds { min, max });
            }
            if max == 0 {
                return Ok(Expr::empty());
            }
        }
        if item.is_empty_string() {
            return Ok(Expr::empty());
        }
        if (min, max) == (1, Some(1)) {
            return Ok(item);
        }
        Ok(Expr::node(ExprKind::Repeat {
            item: Box::new(item),
            min,
            max,
        }))
    }

    /// `item?`.
    pub fn optional(item: Expr) -> Expr {
        Expr::repeat(item, 0, Some(1)).expect("0 <= 1")
    }

    /// `item*`.
    pub fn star(item: Expr) -> Expr {
        Expr::repeat(item, 0, None).expect("unbounded")
    }

    /// `item+`.
    pub fn plus(item: Expr) -> Expr {
        Expr::repeat(item, 1, None).expect("unbounded")
    }

    /// The shape of this expression.
    pub fn kind(&self) -> &ExprKind {
        &self.kind
    }

    /// Takes the shape out of this expression.
    pub fn into_kind(self) -> ExprKind {
        self.kind
    }

    /// Whether this is the empty string.
    pub fn is_empty_string(&self) -> bool {
        matches!(self.kind, ExprKind::Empty)
    }

    /// The direct sub-expressions, in order.
    pub fn children(&self) -> &[Expr] {
        match &self.kind {
            ExprKind::Seq(items) | ExprKind::Choice(items) => items,
            ExprKind::Repeat { item, .. } => std::slice::from_ref(&**item),
            _ => &[],
        }
    }

    /// Calls `f` on every rule this expression references, in order, with repeats.
    pub fn for_each_ref(&self, f: &mut impl FnMut(RuleId)) {
        if self.refs == 0 {
            return;
        }
        if let ExprKind::Ref(id) = self.kind {
            f(id);
        }
        for child in self.children() {
            child.for_each_ref(f);
        }
    }

    /// Replaces every rule reference `id` by `f(id)`, in place. The shape is unchanged, so the
    /// invariants still hold.
    pub fn rename_refs(&mut self, f: &mut impl FnMut(RuleId) -> RuleId) {
        if self.refs == 0 {
            return;
        }
        match &mut self.kind {
            ExprKind::Ref(id) => *id = f(*id),
            ExprKind::Seq(items) | ExprKind::Choice(items) => {
                for item in items {
                    item.rename_refs(f);
                }
            }
            ExprKind::Repeat { item, .. } => item.rename_refs(f),
            ExprKind::Empty | ExprKind::Bytes(_) | ExprKind::Class(_) => {}
        }
    }

    /// The number of nodes in this expression tree (saturating at `u32::MAX`), in constant
    /// time.
    pub fn size(&self) -> usize {
        self.size as usize
    }

    /// How many rule references this expression tree holds, with repeats (saturating at
    /// `u32::MAX`), in constant time: `0` for a terminal expression.
    pub fn ref_count(&self) -> usize {
        self.refs as usize
    }

    /// The depth of this expression tree (a leaf has depth 1).
    pub fn depth(&self) -> usize {
        1 + self.children().iter().map(Expr::depth).max().unwrap_or(0)
    }

    /// Feeds the expression to `state` with every reference `r` read as `name(r)`:
    /// expressions that [`Expr::eq_renamed`] finds equal under the same `name` hash alike.
    pub fn hash_renamed(&self, state: &mut impl Hasher, name: &impl Fn(RuleId) -> usize) {
        match &self.kind {
            ExprKind::Ref(r) => {
                state.write_u8(0);
                state.write_usize(name(*r));
            }
            ExprKind::Seq(items) | ExprKind::Choice(items) => {
                std::mem::discriminant(&self.kind).hash(state);
                state.write_usize(items.len());
                for item in items {
                    item.hash_renamed(state, name);
                }
            }
            ExprKind::Repeat { item, min, max } => {
                state.write_u8(6);
                min.hash(state);
                max.hash(state);
                item.hash_renamed(state, name);
            }
            leaf => leaf.hash(state),
        }
    }

    /// Whether the expression equals `other` with every reference `r` of its own read as
    /// `name(r)` and every reference `r` of `other` as `other_name(r)`.
    pub fn eq_renamed(
        &self,
        other: &Expr,
        name: &impl Fn(RuleId) -> usize,
        other_name: &impl Fn(RuleId) -> usize,
    ) -> bool {
        self.eq_by_refs(other, &mut |x, y| name(x) == other_name(y))
    }

    /// Whether the expression equals `other` in shape and in everything but its references,
    /// and `same(x, y)` holds for each pair of references at the same place, asked left to
    /// right (so `same` may record what it has paired) and not past the first difference.
    pub fn eq_by_refs(&self, other: &Expr, same: &mut impl FnMut(RuleId, RuleId) -> bool) -> bool {
        match (&self.kind, &other.kind) {
            (ExprKind::Ref(x), ExprKind::Ref(y)) => same(*x, *y),
            (ExprKind::Seq(xs), ExprKind::Seq(ys))
            | (ExprKind::Choice(xs), ExprKind::Choice(ys)) => {
                xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| x.eq_by_refs(y, same))
            }
            (
                ExprKind::Repeat { item, min, max },
                ExprKind::Repeat {
                    item: other_item,
                    min: other_min,
                    max: other_max,
                },
            ) => min == other_min && max == other_max && item.eq_by_refs(other_item, same),
            (ExprKind::Ref(_), _) | (_, ExprKind::Ref(_)) => false,
            (ExprKind::Seq(_) | ExprKind::Choice(_) | ExprKind::Repeat { .. }, _) => false,
            _ => self == other,
        }
    }

    /// Rebuilds this expression bottom-up, replacing each reference by `f(id)`.
    ///
    /// `f` returning `None` means the referenced rule's language is empty; the result is `None`
    /// when the whole expression's language becomes empty.
    pub fn map_refs(&self, f: &mut impl FnMut(RuleId) -> Option<Expr>) -> Option<Expr> {
        if self.refs == 0 {
            return Some(self.clone());
        }
        Some(match &self.kind {
            ExprKind::Ref(id) => return f(*id),
            ExprKind::Empty | ExprKind::Bytes(_) | ExprKind::Class(_) => self.clone(),
            ExprKind::Seq(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(item.map_refs(f)?);
                }
                Expr::seq(out)
            }
            ExprKind::Choice(alts) => Expr::choice(
                alts.iter()
                    .filter_map(|alt| alt.map_refs(f))
                    .collect::<Vec<_>>(),
            )?,
            ExprKind::Repeat { item, min, max } => match item.map_refs(f) {
                Some(item) => Expr::repeat(item, *min, *max).expect("bounds already valid"),
                None if *min == 0 => Expr::empty(),
                None => return None,
            },
        })
    }
}

impl TryFrom<ExprKind> for Expr {
    type Error = IrError;

    /// Checks the invariants of one node (its children are already checked).
    fn try_from(kind: ExprKind) -> Result<Expr, IrError> {
        let expr = Expr::node(kind);
        match crate::verify::check_node(&expr) {
            Some(problem) => Err(IrError::Invalid(problem)),
            None => Ok(expr),
        }
    }
}

impl From<Expr> for ExprKind {
    fn from(expr: Expr) -> ExprKind {
        expr.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renamed_comparison_reads_references_through_the_names() {
        use std::hash::BuildHasher;
        let r = |i| Expr::rule(RuleId::new(i).unwrap());
        let body = |a, b| {
            Expr::seq([
                Expr::bytes("["),
                Expr::star(Expr::choice([r(a), r(b)]).unwrap()),
            ])
        };
        // Rules 3 and 4 read as 0 and 1 (their order kept) make `body(3, 4)` `body(0, 1)`.
        let order = |rule: RuleId| rule.index().saturating_sub(3);
        let same = |rule: RuleId| rule.index();
        assert!(body(3, 4).eq_renamed(&body(0, 1), &order, &same));
        assert!(!body(4, 3).eq_renamed(&body(0, 1), &order, &same));
        assert!(!body(3, 4).eq_renamed(&body(0, 1), &same, &same));
        let fixed = std::collections::hash_map::RandomState::new();
        let hash_with = |expr: &Expr, name: &dyn Fn(RuleId) -> usize| {
            let mut state = fixed.build_hasher();
            expr.hash_renamed(&mut state, &name);
            state.finish()
        };
        assert_eq!(
            hash_with(&body(3, 4), &order),
            hash_with(&body(0, 1), &same)
        );
        assert_ne!(hash_with(&body(3, 4), &same), hash_with(&body(0, 1), &same));
    }

    /// The recorded size is the node count, through every constructor's flattening and
    /// through deserialisation.
    #[test]
    fn sizes_and_reference_counts_count_the_nodes() {
        fn counted(expr: &Expr) -> usize {
            1 + expr.children().iter().map(counted).sum::<usize>()
        }
        fn references(expr: &Expr) -> usize {
            let own = usize::from(matches!(expr.kind(), ExprKind::Ref(_)));
            own + expr.children().iter().map(references).sum::<usize>()
        }
        let r = |i| Expr::rule(RuleId::new(i).unwrap());
        let class = Expr::class(ByteClass::from_ranges([(b'a', b'z')])).unwrap();
        let inner = Expr::seq([Expr::bytes("b"), r(1), Expr::empty()]);
        let choice = Expr::choice([
            inner.clone(),
            class.clone(),
            Expr::choice([r(2), r(3)]).unwrap(),
        ])
        .unwrap();
        let exprs = [
            Expr::empty(),
            class.clone(),
            inner.clone(),
            choice.clone(),
            Expr::seq([
                Expr::bytes("a"),
                inner.clone(),
                Expr::star(choice.clone()),
                inner,
            ]),
            Expr::repeat(Expr::plus(choice.clone()), 2, Some(5)).unwrap(),
            Expr::optional(Expr::seq([class, choice])),
            Expr::repeat(r(0), 1, Some(1)).unwrap(),
        ];
        for expr in exprs {
            assert_eq!(expr.size(), counted(&expr), "{expr:?}");
            assert_eq!(expr.ref_count(), references(&expr), "{expr:?}");
            let json = serde_json::to_string(&expr).unwrap();
            let read: Expr = serde_json::from_str(&json).unwrap();
            assert_eq!(read.size(), counted(&expr), "{json}");
            assert_eq!(read.ref_count(), references(&expr), "{json}");
            assert_eq!(read, expr);
        }
    }

    #[test]
    fn seq_flattens_and_drops_empty() {
        let a = Expr::bytes("a");
        let inner = Expr::seq([Expr::bytes("b"), Expr::empty(), Expr::bytes("c")]);
        let seq = Expr::seq([a, inner, Expr::empty()]);
        assert_eq!(seq.children().len(), 3);
        assert_eq!(Expr::seq([Expr::empty()]), Expr::empty());
        assert_eq!(Expr::seq([Expr::bytes("x")]), Expr::bytes("x"));
    }

    #[test]
    fn choice_flattens_and_rejects_none() {
        assert_eq!(Expr::choice([]), None);
        let c = Expr::choice([
            Expr::bytes("a"),
            Expr::choice([Expr::bytes("b"), Expr::bytes("c")]).unwrap(),
        ])
        .unwrap();
        assert_eq!(c.children().len(), 3);
    }

    #[test]
    fn repeat_normalises_trivial_bounds() {
        let a = Expr::bytes("a");
        assert_eq!(Expr::repeat(a.clone(), 1, Some(1)).unwrap(), a);
        assert_eq!(Expr::repeat(a.clone(), 0, Some(0)).unwrap(), Expr::empty());
        assert_eq!(Expr::repeat(Expr::empty(), 2, None).unwrap(), Expr::empty());
        assert!(Expr::repeat(a, 3, Some(2)).is_err());
    }

    #[test]
    fn class_of_one_byte_is_bytes() {
        assert_eq!(Expr::class(ByteClass::byte(b'x')), Some(Expr::bytes("x")));
        assert_eq!(Expr::class(ByteClass::EMPTY), None);
    }

    #[test]
    fn deserialising_checks_invariants() {
        let bad = r#"{"Seq":[{"Bytes":[97]}]}"#;
        assert!(serde_json::from_str::<Expr>(bad).is_err());
        let good = r#"{"Seq":[{"Bytes":[97]},{"Bytes":[98]}]}"#;
        let expr: Expr = serde_json::from_str(good).unwrap();
        assert_eq!(expr.children().len(), 2);
    }
}
