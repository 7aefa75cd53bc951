//! Rules with a token limit (`Rule::max_tokens`), and shared rules (`Rule::is_shared`),
//! through normalisation.
//!
//! The runtime counts the tokens of a limited rule's occurrence by the Earley items of its
//! own automaton, so a limited rule must reach the automata layer as **one rule whose body
//! references no rule**: a regular expression over bytes, not derived from ε. The passes would
//! otherwise split it (`flatten`), merge it with an equal unlimited rule (`merge-identical`),
//! or inline it into its callers (`inline-terminals`). A shared rule asks for the same
//! treatment for another reason: a front-end refers to it from many places and wants one
//! automaton for all of them, where `inline-terminals` would copy it into every caller. So
//! normalisation sets each limited or shared rule aside (a *region*) and puts it back:
//!
//! 1. [`set_aside`]: each limited rule `R` is normalised on its own (the rules it reaches,
//!    with `R` as root), right-linear cycles among them (free text written as an automaton)
//!    are solved into loops (`crate::right_linear`), then everything it references is
//!    substituted into its body (counted repetitions written out), giving one regular
//!    expression `E`; a reference that remains recursive is an error naming the cycle. In the grammar the passes see, `R`'s body
//!    becomes a *placeholder*: a byte string no text holds (`0xFF` and a pseudo token id
//!    `2²³ + i`; token ids are below 2²³, and text never holds `0xFF`), optional when `E`
//!    derives ε.
//! 2. The passes run; the placeholder is just a byte string to them.
//! 3. [`splice`]: every placeholder left in the normalised grammar becomes a reference to a
//!    new rule (named after `R`) whose body is `E` without ε, with `R`'s limit if it has one.
//!
//! To the passes a placeholder is a byte string, so the rules around it are terminal and may
//! be inlined into each other; the region itself is never copied.
//!
//! # Invariants
//!
//! - The result is in the final form (`Stage::Final`): the spliced rules are regular and not
//!   nullable, and replacing a byte string by a reference to a non-nullable rule keeps
//!   every other rule as it was.
//! - Every rule with a token limit in the output has a body without references.
//! - A grammar without limits goes through untouched (no copy).

use foldhash::HashMap;

use sieve_ir::{Expr, ExprKind, Grammar, RuleId};

use crate::{analysis, NormalizeError};

/// The first pseudo token id of a placeholder (ids of real tokens are below it).
const PLACEHOLDER_BASE: u32 = 1 << 23;

/// A limited or shared rule set aside: its regular body without ε, its limit if it has one,
/// and its name.
#[derive(Clone)]
pub(crate) struct Region {
    name: String,
    body: Expr,
    max_tokens: Option<u32>,
}

/// Whether `grammar` has a rule to set aside.
pub(crate) fn has_regions(grammar: &Grammar) -> bool {
    grammar.rules().iter().any(is_region)
}

/// Whether `rule` is set aside: limited or shared.
fn is_region(rule: &sieve_ir::Rule) -> bool {
    rule.max_tokens().is_some() || rule.is_shared()
}

/// The placeholder bytes of region `index`.
fn placeholder(index: usize) -> [u8; 4] {
    let id = PLACEHOLDER_BASE + index as u32;
    [0xFF, (id >> 16) as u8, (id >> 8) as u8, id as u8]
}

/// The region index of a placeholder starting at `bytes[0]`, if it is one.
fn placeholder_at(bytes: &[u8]) -> Option<usize> {
    match bytes {
        [0xFF, a, b, c, ..] if *a >= 0x80 => {
            let id = (u32::from(*a) << 16) | (u32::from(*b) << 8) | u32::from(*c);
            Some((id - PLACEHOLDER_BASE) as usize)
        }
        _ => None,
    }
}

/// Step 1 (see the module docs): the regions, and the body the passes should see for each
/// rule set aside (its stand-in, by rule index; `None` for the rules that stay as they are).
/// The first pass reads the grammar with those bodies in place
/// (`passes::flatten::flatten_replacing`), which also drops every limit and mark.
pub(crate) fn set_aside(
    grammar: &Grammar,
    config: &crate::Config,
) -> Result<(Vec<Option<Expr>>, Vec<Region>), NormalizeError> {
    let limited: Vec<(RuleId, Option<u32>)> = grammar
        .rule_ids()
        .zip(grammar.rules())
        .filter(|(_, rule)| is_region(rule))
        .map(|(id, rule)| (id, rule.max_tokens()))
        .collect();
    if limited.len() >= (1 << 23) {
        return Err(NormalizeError::TooLarge {
            pass: "token-limits",
            what: "limited rule count",
            actual: limited.len(),
            limit: (1 << 23) - 1,
        });
    }
    let mut stand_ins: Vec<Option<Expr>> = vec![None; grammar.rules().len()];
    let mut regions = Vec::with_capacity(limited.len());
    for &(id, max_tokens) in &limited {
        let name = grammar.rule(id).name().to_owned();
        let body = match max_tokens {
            Some(_) => regular_body(grammar, id, config)?,
            // A shared rule that is not regular, or reaches a limited rule (`reachable_from`
            // refuses it), is only a hint that cannot be followed: it goes through the passes
            // like any rule.
            None => match regular_body(grammar, id, config) {
                Ok(body) => body,
                Err(_) => continue,
            },
        };
        let index = regions.len();
        let marker = Expr::bytes(placeholder(index).to_vec());
        let (stand_in, body) = match body {
            Body::Empty => (Expr::empty(), None),
            Body::NonEmpty { body, nullable } => {
                let marker = if nullable {
                    Expr::optional(marker)
                } else {
                    marker
                };
                (marker, Some(body))
            }
        };
        stand_ins[id.index()] = Some(stand_in);
        if let Some(body) = body {
            regions.push(Region {
                name,
                body,
                max_tokens,
            });
        } else {
            // An occurrence that is always empty spans no token: nothing to limit. Keep the
            // indices of the placeholders dense all the same.
            regions.push(Region {
                name,
                body: Expr::empty(),
                max_tokens,
            });
        }
    }
    Ok((stand_ins, regions))
}

enum Body {
    /// The rule derives only ε.
    Empty,
    /// Its language without ε, and whether ε was in it.
    NonEmpty { body: Expr, nullable: bool },
}

/// The limited rule `id` as one regular expression: the rules it reaches, normalised with it
/// as root, then substituted into its body. A body that already is one (no reference, loop
/// repetitions only) is taken as it is.
fn regular_body(
    grammar: &Grammar,
    id: RuleId,
    config: &crate::Config,
) -> Result<Body, NormalizeError> {
    let own = grammar.rule(id).body();
    if own.ref_count() == 0 && crate::has_only_loop_repeats(own) {
        return Ok(match non_empty(own) {
            None => Body::Empty,
            Some(body) => Body::NonEmpty {
                body,
                nullable: nullable(own),
            },
        });
    }
    let sub = reachable_from(grammar, id)?;
    let normalized = crate::normalize(&sub, config)?.into_grammar();
    let normalized =
        crate::right_linear::solve(&normalized, grammar.rule(id).name(), config.max_size)?;
    let mut inliner = Inliner {
        grammar: &normalized,
        on_path: vec![false; normalized.rules().len()],
        done: HashMap::default(),
        size_limit: config.max_size,
        limited: grammar.rule(id).name(),
    };
    let body = inliner.inline(normalized.root())?;
    let nullable = analysis::nullable(&normalized)[normalized.root().index()];
    Ok(match non_empty(&body) {
        None => Body::Empty,
        Some(body) => Body::NonEmpty { body, nullable },
    })
}

/// The rules reachable from `root` (limits dropped), as a grammar with `root` as its root.
fn reachable_from(grammar: &Grammar, root: RuleId) -> Result<Grammar, NormalizeError> {
    let mut order = vec![root];
    let mut new_id: HashMap<RuleId, RuleId> = HashMap::default();
    new_id.insert(root, RuleId::new(0).expect("0 is a rule id"));
    let mut next = 0;
    while next < order.len() {
        let id = order[next];
        next += 1;
        grammar.rule(id).body().for_each_ref(&mut |r| {
            if let std::collections::hash_map::Entry::Vacant(slot) = new_id.entry(r) {
                slot.insert(RuleId::new(order.len()).expect("fewer rules than before"));
                order.push(r);
            }
        });
    }
    if let Some(&inner) = order[1..]
        .iter()
        .find(|&&id| grammar.rule(id).max_tokens().is_some())
    {
        return Err(NormalizeError::NestedTokenLimit {
            outer: grammar.rule(root).name().to_owned(),
            inner: grammar.rule(inner).name().to_owned(),
        });
    }
    let rules = order
        .iter()
        .map(|&id| {
            let rule = grammar.rule(id);
            let mut body = rule.body().clone();
            body.rename_refs(&mut |r| new_id[&r]);
            (rule.name().to_owned(), body)
        })
        .collect();
    Grammar::from_rewrite(rules, RuleId::new(0).expect("0 is a rule id"))
        .map_err(NormalizeError::from_ir)
}

/// Substitutes rule bodies for references, writing counted repetitions out.
struct Inliner<'a> {
    grammar: &'a Grammar,
    on_path: Vec<bool>,
    done: HashMap<RuleId, Expr>,
    size_limit: usize,
    limited: &'a str,
}

impl Inliner<'_> {
    fn inline(&mut self, id: RuleId) -> Result<Expr, NormalizeError> {
        if let Some(body) = self.done.get(&id) {
            return Ok(body.clone());
        }
        if self.on_path[id.index()] {
            return Err(NormalizeError::NotRegular {
                rule: self.limited.to_owned(),
                through: self.grammar.rule(id).name().to_owned(),
            });
        }
        self.on_path[id.index()] = true;
        let body = self.expr(self.grammar.rule(id).body())?;
        self.on_path[id.index()] = false;
        if body.size() > self.size_limit {
            return Err(NormalizeError::TooLarge {
                pass: "token-limits",
                what: "expression size",
                actual: body.size(),
                limit: self.size_limit,
            });
        }
        self.done.insert(id, body.clone());
        Ok(body)
    }

    fn expr(&mut self, expr: &Expr) -> Result<Expr, NormalizeError> {
        Ok(match expr.kind() {
            ExprKind::Ref(id) => self.inline(*id)?,
            ExprKind::Empty | ExprKind::Bytes(_) | ExprKind::Class(_) => expr.clone(),
            ExprKind::Seq(items) => Expr::seq(
                items
                    .iter()
                    .map(|item| self.expr(item))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            ExprKind::Choice(items) => Expr::choice(
                items
                    .iter()
                    .map(|item| self.expr(item))
                    .collect::<Result<Vec<_>, _>>()?,
            )
            .expect("a choice has alternatives"),
            ExprKind::Repeat { item, min, max } => {
                let item = self.expr(item)?;
                write_out(item, *min, *max, self.size_limit)?
            }
        })
    }
}

/// `item{min,max}` with only `?`, `*` and `+`: `min` copies, then `(item (item …)?)?` for the
/// optional ones (nested, so the split is unambiguous) or `item*`.
fn write_out(item: Expr, min: u32, max: Option<u32>, limit: usize) -> Result<Expr, NormalizeError> {
    let loop_bounds = matches!((min, max), (0, Some(1)) | (0, None) | (1, None));
    if loop_bounds {
        return Expr::repeat(item, min, max).map_err(NormalizeError::from_ir);
    }
    let copies = max.unwrap_or(min) as usize;
    if copies.saturating_mul(item.size()) > limit {
        return Err(NormalizeError::TooLarge {
            pass: "token-limits",
            what: "expression size",
            actual: copies.saturating_mul(item.size()),
            limit,
        });
    }
    let tail = match max {
        None => Expr::star(item.clone()),
        Some(max) => {
            let mut tail = Expr::empty();
            for _ in min..max {
                tail = Expr::optional(Expr::seq([item.clone(), tail]));
            }
            tail
        }
    };
    let mut parts: Vec<Expr> = (0..min).map(|_| item.clone()).collect();
    parts.push(tail);
    Ok(Expr::seq(parts))
}

/// Whether a reference-free expression derives ε.
fn nullable(expr: &Expr) -> bool {
    match expr.kind() {
        ExprKind::Empty => true,
        ExprKind::Bytes(_) | ExprKind::Class(_) | ExprKind::Ref(_) => false,
        ExprKind::Seq(items) => items.iter().all(nullable),
        ExprKind::Choice(items) => items.iter().any(nullable),
        ExprKind::Repeat { item, min, .. } => *min == 0 || nullable(item),
    }
}

/// The language of a reference-free expression without ε; `None` when that is empty.
fn non_empty(expr: &Expr) -> Option<Expr> {
    match expr.kind() {
        ExprKind::Empty => None,
        ExprKind::Bytes(_) | ExprKind::Class(_) | ExprKind::Ref(_) => Some(expr.clone()),
        ExprKind::Choice(items) => Expr::choice(items.iter().filter_map(non_empty)),
        ExprKind::Seq(items) => {
            // A non-empty string takes its first byte from some item whose predecessors all
            // matched ε.
            let mut alternatives = Vec::new();
            for (i, item) in items.iter().enumerate() {
                if let Some(first) = non_empty(item) {
                    alternatives.push(Expr::seq(
                        std::iter::once(first).chain(items[i + 1..].iter().cloned()),
                    ));
                }
                if !nullable(item) {
                    break;
                }
            }
            Expr::choice(alternatives)
        }
        ExprKind::Repeat { item, .. } => {
            // Only `?`, `*` and `+` remain: a non-empty string starts with a non-empty item.
            let first = non_empty(item)?;
            Some(match expr.kind() {
                ExprKind::Repeat { max: Some(1), .. } => first,
                _ => Expr::seq([first, Expr::star((**item).clone())]),
            })
        }
    }
}

/// Step 3 (see the module docs): the placeholders of `grammar` become references to the
/// regions' rules.
pub(crate) fn splice(grammar: Grammar, regions: Vec<Region>) -> Result<Grammar, NormalizeError> {
    let (mut rules, root) = grammar.into_rewrite();
    let mut rule_of: Vec<Option<RuleId>> = vec![None; regions.len()];
    let mut added: Vec<(usize, RuleId)> = Vec::new();
    let first_new = rules.len();
    for (_, body_slot) in rules.iter_mut() {
        // Only the bodies holding a placeholder are rebuilt; the others move on as they are.
        if !holds_placeholder(body_slot) {
            continue;
        }
        let body = std::mem::replace(body_slot, Expr::empty());
        let mut fresh = |index: usize| -> RuleId {
            *rule_of[index].get_or_insert_with(|| {
                let id = RuleId::new(first_new + added.len()).expect("rule count is bounded");
                added.push((index, id));
                id
            })
        };
        *body_slot = replace_placeholders(body, &mut fresh);
    }
    if !added.is_empty() {
        let mut taken: foldhash::HashSet<String> = rules.iter().map(|(n, _)| n.clone()).collect();
        let mut names = sieve_ir::FreshNames::default();
        for &(index, _) in &added {
            // The limited rule keeps the user's name (errors and printed grammars name it so);
            // a rule still holding that name, the placeholder's caller, takes a fresh one.
            let region = &regions[index];
            if let Some(old) = rules.iter_mut().find(|(n, _)| *n == region.name) {
                let fresh = names.next(&region.name, |n| taken.contains(n));
                taken.insert(fresh.clone());
                old.0 = fresh;
            }
            taken.insert(region.name.clone());
            rules.push((region.name.clone(), region.body.clone()));
        }
    }
    let mut grammar = Grammar::from_rewrite(rules, root).map_err(NormalizeError::from_ir)?;
    for (index, id) in added {
        grammar.set_token_limit(id, regions[index].max_tokens);
    }
    Ok(grammar)
}

/// Whether `expr` holds a region's placeholder and is more than the stand-in of the region
/// (its placeholder, optional or not): a body with a reference once spliced, which
/// `inline-terminals` counts as one, so the rules around a shared rule stay apart as they
/// would around a reference. The stand-in itself is inlined like a unit rule.
pub(crate) fn refers_to_region(expr: &Expr) -> bool {
    let placeholder_only = |e: &Expr| matches!(e.kind(), ExprKind::Bytes(b) if b.len() == 4 && placeholder_at(b).is_some());
    let stand_in = match expr.kind() {
        ExprKind::Repeat {
            item,
            min: 0,
            max: Some(1),
        } => placeholder_only(item),
        _ => placeholder_only(expr),
    };
    !stand_in && holds_placeholder(expr)
}

/// Whether `expr` holds a region's placeholder.
fn holds_placeholder(expr: &Expr) -> bool {
    match expr.kind() {
        ExprKind::Bytes(bytes) => {
            bytes.contains(&0xFF) && (0..bytes.len()).any(|i| placeholder_at(&bytes[i..]).is_some())
        }
        _ => expr.children().iter().any(holds_placeholder),
    }
}

/// `expr` with every placeholder inside its byte strings replaced by `rule(index)`; subtrees
/// without one are moved over as they are, not rebuilt.
fn replace_placeholders(expr: Expr, rule: &mut impl FnMut(usize) -> RuleId) -> Expr {
    let mut replace = |e: Expr| {
        if holds_placeholder(&e) {
            replace_placeholders(e, rule)
        } else {
            e
        }
    };
    match expr.kind() {
        ExprKind::Bytes(bytes) if bytes.contains(&0xFF) => {
            let mut parts = Vec::new();
            let mut start = 0;
            let mut i = 0;
            while i < bytes.len() {
                if let Some(index) = placeholder_at(&bytes[i..]) {
                    parts.push(Expr::bytes(bytes[start..i].to_vec()));
                    parts.push(Expr::rule(rule(index)));
                    i += 4;
                    start = i;
                } else {
                    // A token terminal's encoding: its id bytes stay as they are.
                    i += if bytes[i] == 0xFF { 4 } else { 1 };
                }
            }
            parts.push(Expr::bytes(bytes[start.min(bytes.len())..].to_vec()));
            return Expr::seq(parts);
        }
        ExprKind::Bytes(_) | ExprKind::Empty | ExprKind::Class(_) | ExprKind::Ref(_) => {
            return expr
        }
        ExprKind::Seq(_) | ExprKind::Choice(_) | ExprKind::Repeat { .. } => {}
    }
    match expr.into_kind() {
        ExprKind::Seq(items) => Expr::seq(items.into_iter().map(replace)),
        ExprKind::Choice(items) => {
            Expr::choice(items.into_iter().map(replace)).expect("a choice has alternatives")
        }
        ExprKind::Repeat { item, min, max } => {
            Expr::repeat(replace(*item), min, max).expect("the bounds were valid")
        }
        _ => unreachable!("leaves were returned above"),
    }
}

#[cfg(test)]
mod tests {
    use sieve_ir::GrammarBuilder;

    use super::*;

    fn limited(body: impl FnOnce(&mut GrammarBuilder, RuleId) -> Expr) -> Grammar {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let text = b.declare("text").unwrap();
        let inner = body(&mut b, text);
        b.define(text, inner);
        b.limit_tokens(text, 3);
        b.define(
            root,
            Expr::seq([Expr::bytes("<"), Expr::rule(text), Expr::bytes(">")]),
        );
        b.build(root).unwrap()
    }

    /// `nested ::= "(" nested ")" | "x"`: not regular.
    fn nested_parentheses(b: &mut GrammarBuilder) -> RuleId {
        let nested = b.declare("nested").unwrap();
        b.define(
            nested,
            Expr::choice([
                Expr::seq([Expr::bytes("("), Expr::rule(nested), Expr::bytes(")")]),
                Expr::bytes("x"),
            ])
            .unwrap(),
        );
        nested
    }

    #[test]
    fn a_limited_rule_arrives_as_one_regular_rule_without_references() {
        let grammar = limited(|b, _| {
            let letter = b.declare("letter").unwrap();
            b.define(
                letter,
                Expr::class(sieve_ir::ByteClass::range(b'a', b'z')).unwrap(),
            );
            Expr::repeat(Expr::rule(letter), 0, Some(40)).unwrap()
        });
        let normalized = crate::normalize(&grammar, &Default::default()).unwrap();
        let limits: Vec<_> = normalized.token_limits().collect();
        assert_eq!(limits.len(), 1);
        let (id, limit) = limits[0];
        assert_eq!(limit, 3);
        let mut refs = 0;
        normalized.rule(id).body().for_each_ref(&mut |_| refs += 1);
        assert_eq!(refs, 0, "{normalized}");
        crate::check_stage(&normalized, crate::Stage::Final).unwrap();
        // The language is unchanged.
        let reference = sieve_ir::reference::Recognizer::new(&normalized).unwrap();
        for (text, ok) in [("<>", true), ("<abc>", true), ("<a1>", false)] {
            assert_eq!(reference.accepts(text.as_bytes()), ok, "{text}");
        }
        assert!(reference.accepts(format!("<{}>", "q".repeat(40)).as_bytes()));
        assert!(!reference.accepts(format!("<{}>", "q".repeat(41)).as_bytes()));
    }

    #[test]
    fn a_recursive_limited_rule_is_refused_with_the_cycle() {
        let grammar = limited(|b, _| Expr::rule(nested_parentheses(b)));
        let error = crate::normalize(&grammar, &Default::default()).unwrap_err();
        assert!(
            matches!(&error, NormalizeError::NotRegular { rule, .. } if rule == "text"),
            "{error}"
        );
    }

    #[test]
    fn a_limited_rule_equal_to_an_unlimited_one_stays_apart() {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let a = b.declare("a").unwrap();
        let c = b.declare("c").unwrap();
        b.define(a, Expr::plus(Expr::bytes("x")));
        b.define(c, Expr::plus(Expr::bytes("x")));
        b.limit_tokens(c, 2);
        b.define(
            root,
            Expr::seq([Expr::rule(a), Expr::bytes(","), Expr::rule(c)]),
        );
        let normalized = crate::normalize(&b.build(root).unwrap(), &Default::default()).unwrap();
        assert_eq!(normalized.token_limits().count(), 1, "{normalized}");
        assert!(normalized.to_string().contains("[max_tokens=2]"));
    }

    /// `root ::= ("a" | "b" | … ) tail` for `callers` first bytes, `tail` a string of any
    /// letters then `"`, `tail` shared or not.
    fn callers_of_a_tail(callers: u8, shared: bool) -> Grammar {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let tail = b.declare("tail").unwrap();
        let letters = Expr::class(sieve_ir::ByteClass::range(b'a', b'z')).unwrap();
        b.define(tail, Expr::seq([Expr::star(letters), Expr::bytes("\"")]));
        if shared {
            b.share(tail);
        }
        let alternatives = (0..callers).map(|i| {
            let caller = b.declare(&format!("caller{i}")).unwrap();
            b.define(
                caller,
                Expr::seq([Expr::bytes([b'0' + i]), Expr::rule(tail)]),
            );
            Expr::rule(caller)
        });
        let body = Expr::choice(alternatives.collect::<Vec<_>>()).unwrap();
        b.define(root, body);
        b.build(root).unwrap()
    }

    /// How many copies of the tail's loop `grammar` holds.
    fn copies_of_the_tail(grammar: &Grammar) -> usize {
        grammar.to_string().matches("[a-z]*").count()
    }

    #[test]
    fn a_shared_rule_stays_one_rule_that_every_caller_refers_to() {
        let inlined = crate::normalize(&callers_of_a_tail(4, false), &Default::default()).unwrap();
        let shared = crate::normalize(&callers_of_a_tail(4, true), &Default::default()).unwrap();
        assert_eq!(copies_of_the_tail(&inlined), 4, "{inlined}");
        assert_eq!(copies_of_the_tail(&shared), 1, "{shared}");
        crate::check_stage(&shared, crate::Stage::Final).unwrap();
        assert_eq!(
            shared.shared_rules().count(),
            0,
            "the mark is spent: {shared}"
        );
        for grammar in [&inlined, &shared] {
            let reference = sieve_ir::reference::Recognizer::new(grammar).unwrap();
            for (text, ok) in [
                ("0\"", true),
                ("3abc\"", true),
                ("4a\"", false),
                ("1ab", false),
            ] {
                assert_eq!(reference.accepts(text.as_bytes()), ok, "{text}: {grammar}");
            }
        }
    }

    #[test]
    fn a_shared_rule_that_is_not_regular_goes_through_the_passes() {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let nested = nested_parentheses(&mut b);
        b.share(nested);
        b.define(root, Expr::seq([Expr::bytes("<"), Expr::rule(nested)]));
        let normalized = crate::normalize(&b.build(root).unwrap(), &Default::default()).unwrap();
        let reference = sieve_ir::reference::Recognizer::new(&normalized).unwrap();
        for (text, ok) in [("<x", true), ("<((x))", true), ("<((x)", false)] {
            assert_eq!(
                reference.accepts(text.as_bytes()),
                ok,
                "{text}: {normalized}"
            );
        }
    }

    #[test]
    fn a_shared_rule_reaching_a_limited_one_keeps_the_limit_apart() {
        let grammar = limited(|b, text| {
            let outer = b.declare("outer").unwrap();
            b.define(
                outer,
                Expr::seq([Expr::bytes("["), Expr::rule(text), Expr::bytes("]")]),
            );
            b.share(outer);
            Expr::plus(Expr::bytes("y"))
        });
        let mut b = grammar.to_builder();
        let root = b.lookup("root").unwrap();
        let outer = b.lookup("outer").unwrap();
        b.define(root, Expr::seq([Expr::rule(outer), Expr::rule(outer)]));
        let normalized = crate::normalize(&b.build(root).unwrap(), &Default::default()).unwrap();
        assert_eq!(normalized.token_limits().count(), 1, "{normalized}");
        let reference = sieve_ir::reference::Recognizer::new(&normalized).unwrap();
        assert!(reference.accepts(b"[yy][y]"), "{normalized}");
        assert!(!reference.accepts(b"[yy]"), "{normalized}");
    }
}
