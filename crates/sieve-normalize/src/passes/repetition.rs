//! Pass `repetition`: bounded repetitions are expanded or compressed (XGrammar 2, §3.5,
//! Algorithm 3), with threshold `T` = [`crate::Config::repetition_threshold`].
//!
//! For an atom `x{m,n}` (`x` a byte string, class or rule reference):
//!
//! - `x?`, `x*`, `x+` stay: the rule's automaton has loops for them.
//! - `n ≤ T`: expanded in place, `x{2,4}` ⇒ `x x (x x?)?`, which is regular and linear in size.
//! - `x{m,}` with `m ≥ 2`: `x{m-1} x+`, its first part expanded or compressed as above.
//! - `n > T` and `m ≥ T`: `x{T} C` where `C ::= X{m-T,n-T}` is a *counted-repetition rule*
//!   (optional, as `C?` with `C ::= X{1,n-T}`, when `m = T`). All iterations past the first
//!   `T` share `C`'s one repetition state.
//! - `n > T` and `m < T`: `x{m,T-1} | x{T} C?` with `C ::= X{1,n-T}`, written as one nest
//!   that shares the copies of both branches: `x{2,40}` ⇒ `x x (x (x … (x C?)?…)?)?` with
//!   `T - m` nested copies, so `T` copies of `x` in all rather than `2T - 1 - m`.
//!
//! The explicit copies come *before* the counted rule (the paper puts them after). Either
//! order is exact; this one keeps the work of a mask small. Once an item of `C` completes,
//! what may follow is the next item, one count up, or the one state of the owner after `C`.
//! Copies after `C` would instead start at every item, so a walk through `k` items carries
//! up to `k` positions in them beside the count: the token classification of each count
//! then builds its own rows, where in this order it meets the rows of the counts classified
//! before it (a 60-character string's walk-1 classifications halve), and the owner's
//! automaton is smaller (`x{m,T-1}` and `x{T}` share their prefix, in the expression too:
//! a string's character, some forty nodes, is written out `T` times, not `2T - 1`).
//!
//! `X` is `x` itself for a rule reference, otherwise a fresh rule `X ::= x`. Counted rules and
//! item rules are shared within the grammar. The paper's union of `EXPAND(min, t)` with
//! `REPEAT(t, max)` counts `t` repetitions twice; splitting at `T-1`/`T` keeps the branches
//! disjoint, so the grammar stays unambiguous where it was.
//!
//! Requires flat form, no nullable rule but the root. After it: every rule is either regular
//! (its repetitions are all `?`, `*` or `+`) or a counted-repetition rule whose whole body is
//! `Ref{min,max}` with other bounds; this is the contract of the automata layer. Adjacent byte
//! strings stay merged.

use foldhash::HashMap;

use sieve_ir::{Expr, ExprKind, Grammar, RuleId};

use crate::{
    flat, has_only_loop_repeats, passes::merge_literals, rebuild::Draft, Config, NormalizeError,
};

/// Runs the pass.
pub fn expand_repetitions(grammar: Grammar, config: &Config) -> Result<Grammar, NormalizeError> {
    let count = grammar.rules().len();
    if grammar
        .rules()
        .iter()
        .all(|rule| has_only_loop_repeats(rule.body()))
    {
        return Ok(grammar);
    }
    let mut pass = Pass {
        draft: Draft::from_grammar(grammar),
        threshold: config.repetition_threshold.max(1),
        item_rules: HashMap::default(),
        counted_rules: HashMap::default(),
    };
    for index in 0..count {
        let id = RuleId::new(index).expect("an existing rule");
        let Some(body) = pass.draft.bodies[index].take() else {
            continue;
        };
        if has_only_loop_repeats(&body) {
            pass.draft.bodies[index] = Some(body);
            continue;
        }
        let alternatives = flat::alternatives(&body)
            .into_iter()
            .map(|atoms| {
                let items: Vec<Expr> = atoms.iter().map(|a| pass.atom(id, a)).collect();
                Expr::seq(items)
            })
            .collect::<Vec<_>>();
        let body = Expr::choice(alternatives).expect("a rule has alternatives");
        // Expansion puts copies of byte strings side by side; keep `merge-literals`' promise
        // (the rebuild only where it has something to join).
        let body = if merge_literals::has_adjacent_bytes(&body) {
            merge_literals::merge(&body)
        } else {
            body
        };
        pass.draft.bodies[id.index()] = Some(body);
    }
    pass.draft.finish()
}

struct Pass {
    draft: Draft,
    threshold: u32,
    item_rules: HashMap<Expr, RuleId>,
    counted_rules: HashMap<(RuleId, u32, Option<u32>), RuleId>,
}

impl Pass {
    fn atom(&mut self, owner: RuleId, atom: &Expr) -> Expr {
        let ExprKind::Repeat { item, min, max } = atom.kind() else {
            return atom.clone();
        };
        let (x, m, t) = (&**item, *min, self.threshold);
        match *max {
            None if m <= 1 => atom.clone(),
            None => Expr::seq([self.exactly(owner, x, m - 1), Expr::plus(x.clone())]),
            Some(n) if n <= t => self.expand(x, m, n),
            Some(n) if m >= t => {
                let counted = self.counted(owner, x, m - t, n - t);
                Expr::seq([copies(x, t), counted])
            }
            Some(n) => {
                // `x{m,T-1} | x{T} C?`: after `x{m}`, either fewer than `T - m` more copies,
                // or `T - m` of them and `C?` (which takes the case of exactly `T`).
                let counted = self.counted(owner, x, 0, n - t);
                Expr::seq([copies(x, m), nest(x, t - m, counted)])
            }
        }
    }

    /// `x{k}`: expanded up to the threshold, compressed past it.
    fn exactly(&mut self, owner: RuleId, x: &Expr, k: u32) -> Expr {
        if k <= self.threshold {
            copies(x, k)
        } else {
            let t = self.threshold;
            let counted = self.counted(owner, x, k - t, k - t);
            Expr::seq([copies(x, t), counted])
        }
    }

    /// `x{m,n}` for `n <= T`: `x{m}` then a nest of `n - m` optional copies.
    fn expand(&self, x: &Expr, m: u32, n: u32) -> Expr {
        Expr::seq([copies(x, m), nest(x, n - m, Expr::empty())])
    }

    /// A reference to the counted rule `X{lo,hi}`, made optional when `lo` is 0 (the rule
    /// itself then counts from 1, since only the root may be nullable).
    fn counted(&mut self, owner: RuleId, x: &Expr, lo: u32, hi: u32) -> Expr {
        let optional = lo == 0;
        let lo = lo.max(1);
        if (lo, hi) == (1, 1) {
            return if optional {
                Expr::optional(x.clone())
            } else {
                x.clone()
            };
        }
        let item = self.item_rule(owner, x);
        let key = (item, lo, Some(hi));
        let id = match self.counted_rules.get(&key) {
            Some(id) => *id,
            None => {
                let base = format!("{}_repeat", self.draft.names[owner.index()]);
                let body = Expr::repeat(Expr::rule(item), lo, Some(hi)).expect("lo <= hi");
                let id = self.draft.add_rule(&base, body);
                self.counted_rules.insert(key, id);
                id
            }
        };
        if optional {
            Expr::optional(Expr::rule(id))
        } else {
            Expr::rule(id)
        }
    }

    /// The rule repeated by a counted rule: `x` itself when it is a reference.
    fn item_rule(&mut self, owner: RuleId, x: &Expr) -> RuleId {
        if let ExprKind::Ref(id) = x.kind() {
            return *id;
        }
        if let Some(id) = self.item_rules.get(x) {
            return *id;
        }
        let base = format!("{}_item", self.draft.names[owner.index()]);
        let id = self.draft.add_rule(&base, x.clone());
        self.item_rules.insert(x.clone(), id);
        id
    }
}

/// `k` nested optional copies of `x` with `innermost` after the last one:
/// `(x (x … (x innermost)?…)?)?`, the language `x{0,k-1} | x{k} innermost`.
fn nest(x: &Expr, k: u32, innermost: Expr) -> Expr {
    let mut tail = innermost;
    for _ in 0..k {
        tail = Expr::optional(Expr::seq([x.clone(), tail]));
    }
    tail
}

/// `x` repeated exactly `k` times, spelled out.
fn copies(x: &Expr, k: u32) -> Expr {
    Expr::seq((0..k).map(|_| x.clone()))
}
