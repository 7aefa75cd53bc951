//! Arrays: `prefixItems`, `items` (a schema, or a draft-07 array with `additionalItems`),
//! `minItems`, `maxItems`, `contains` / `minContains`, and `uniqueItems` where it is trivial.
//!
//! Layout: `[ gap ]` or `[ gap item (gap sep gap item)* gap ]`.
//!
//! Invariants:
//! - item `k` meets the `k`-th prefix schema of every location of the intersection that has
//!   one, and the rest schema (`items` / `additionalItems`) of every location whose prefix is
//!   shorter; a position nothing can fill ends the array there;
//! - lengths are exact: counted repetitions for the rest, nested options for the prefix;
//! - `contains` is enforced only in the shape `(I sep)* I∧C ((sep I)* sep I∧C){m-1} (sep I)*`
//!   (no prefix, no length bounds, no `maxContains`); anything else is refused, as is
//!   `uniqueItems: true` unless at most one item is allowed, the items can only be one
//!   value (`const`, a one-value `enum`: then at most one item), or the items (no prefix, no
//!   `contains`) can only be a few listed values: then each listed value the item schema
//!   accepts is used at most once, in any order (a rule per set of values used).

use serde_json::Value;
use sieve_ir::Expr;

use crate::walk::{json_eq, Compiler, Elem, Shape, ALL};
use crate::{Error, ErrorKind};

/// The array alternative of `shape`, or `None` when no array meets it.
pub(crate) fn compile(
    c: &mut Compiler<'_>,
    shape: &Shape<'_>,
    depth: usize,
) -> Result<Option<Expr>, Error> {
    let ptr = shape.ptr.clone();
    let min = shape.min_items;
    let mut max = shape.max_items;
    let prefix_len = shape
        .arrays
        .iter()
        .map(|p| p.prefix.len())
        .max()
        .unwrap_or(0);
    let mut prefix: Vec<Expr> = Vec::new();
    for k in 0..prefix_len {
        if max.is_some_and(|m| m <= k as u64) {
            break;
        }
        let elems: Vec<Elem> = shape
            .arrays
            .iter()
            .filter_map(|p| p.prefix.get(k).or(p.rest.as_ref()).cloned().map(Elem::new))
            .collect();
        match item(c, elems, depth)? {
            Some(expr) => prefix.push(expr),
            None => {
                max = Some(max.map_or(k as u64, |m| m.min(k as u64)));
                break;
            }
        }
    }
    let rest_elems: Vec<Elem> = shape
        .arrays
        .iter()
        .filter_map(|p| p.rest.clone().map(Elem::new))
        .collect();
    let rest = if prefix.len() < prefix_len {
        None
    } else {
        item(c, rest_elems.clone(), depth)?
    };
    if rest.is_none() {
        let p = prefix.len() as u64;
        max = Some(max.map_or(p, |m| m.min(p)));
    }
    if max.is_some_and(|m| m < min) {
        return Ok(None);
    }
    if !shape.unique.is_empty() && max.is_none_or(|m| m > 1) && prefix_len == 0 {
        // Items that can only be one value: unique means at most one item.
        let mut single = false;
        for elem in &rest_elems {
            single |= c.single_valued(&elem.ptr)?;
        }
        if single {
            if min > 1 {
                return Ok(None);
            }
            max = Some(1);
        } else if shape.contains.is_empty() {
            if let Some(array) = unique_listed(c, rest_elems.clone(), min, max, &ptr, depth)? {
                return Ok(array);
            }
        }
    }
    for unique in &shape.unique {
        if max.is_none_or(|m| m > 1) {
            c.refuse(
                unique,
                "uniqueItems",
                "uniqueness of array items is not expressible (allowed only with maxItems <= 1)",
            )?;
        }
    }
    let contains: Vec<_> = shape
        .contains
        .iter()
        .filter(|(_, lo, hi, _)| *lo > 0 || hi.is_some())
        .collect();
    if !contains.is_empty() {
        let (cptr, count, hi, at) = contains[0];
        let shape_ok = contains.len() == 1
            && hi.is_none()
            && prefix_len == 0
            && min <= *count
            && max.is_none();
        if shape_ok {
            let mut elems = rest_elems;
            elems.push(Elem::new(cptr.clone()));
            let Some(hit) = c.compile_set(elems, ALL, depth + 1)? else {
                return Ok(None);
            };
            let any = match rest {
                Some(r) => r,
                None => return Ok(None),
            };
            return contains_array(c, any, hit, *count, &ptr).map(Some);
        }
        let keyword = if hi.is_some() {
            "maxContains"
        } else {
            "contains"
        };
        c.refuse(
            at,
            keyword,
            "`contains` is supported only with `minContains` and `items`, without \
             `prefixItems`, `minItems`, `maxItems` or `maxContains`",
        )?;
    }
    let to_u32 = |n: u64, keyword: &str| {
        u32::try_from(n).map_err(|_| {
            Error::new(
                ErrorKind::Limit,
                &ptr,
                keyword,
                "bound too large for the grammar",
            )
        })
    };
    let min32 = to_u32(min, "minItems")?;
    let max32 = max.map(|m| u32::try_from(m).unwrap_or(u32::MAX).max(min32));
    let sep = |c: &Compiler<'_>, k: usize| {
        if k == 0 {
            c.layout.gap.clone()
        } else {
            c.layout.item_sep.clone()
        }
    };
    // after = the items from position k on, after k items.
    let p = prefix.len();
    let mut after: Option<Expr> = {
        let k = p as u32;
        let lo = min32.saturating_sub(k);
        let hi = max32.map(|m| m.saturating_sub(k));
        match &rest {
            None => (lo == 0).then(Expr::empty),
            Some(_) if hi == Some(0) => (lo == 0).then(Expr::empty),
            Some(item) => {
                let item = c.share("item", item.clone(), &ptr)?;
                Some(if k == 0 {
                    let more = Expr::repeat(
                        Expr::seq([c.layout.item_sep.clone(), item.clone()]),
                        lo.saturating_sub(1),
                        hi.map(|h| h - 1),
                    )
                    .expect("lo <= hi");
                    let one = Expr::seq([c.layout.gap.clone(), item, more]);
                    if lo == 0 {
                        Expr::optional(one)
                    } else {
                        one
                    }
                } else {
                    Expr::repeat(Expr::seq([c.layout.item_sep.clone(), item]), lo, hi)
                        .expect("lo <= hi")
                })
            }
        }
    };
    for (k, item) in prefix.into_iter().enumerate().rev() {
        let emit = after.map(|rest| Expr::seq([sep(c, k), item, rest]));
        after = if (k as u64) >= min {
            Some(match emit {
                Some(emit) => Expr::optional(emit),
                None => Expr::empty(),
            })
        } else {
            emit
        };
        if let Some(expr) = after.take() {
            after = Some(c.share("items", expr, &ptr)?);
        }
    }
    Ok(after.map(|items| {
        Expr::seq([
            Expr::bytes(*b"["),
            items,
            c.layout.gap.clone(),
            Expr::bytes(*b"]"),
        ])
    }))
}

/// The most distinct listed values `uniqueItems` is tracked over (a rule per subset).
const MAX_UNIQUE_VALUES: usize = 8;

/// `uniqueItems` over items that can only be a few listed values (`enum`/`const`): the
/// arrays of distinct listed values in any order, a rule per set of values used. `None`
/// when the items list no values or too many; `Some(None)` when no array fits.
fn unique_listed(
    c: &mut Compiler<'_>,
    elems: Vec<Elem>,
    min: u64,
    max: Option<u64>,
    ptr: &str,
    depth: usize,
) -> Result<Option<Option<Expr>>, Error> {
    let mut listed: Option<Vec<&Value>> = None;
    for elem in &elems {
        if let Some(values) = c.listed_values(&elem.ptr)? {
            listed = Some(match listed {
                None => values,
                Some(old) => old
                    .into_iter()
                    .filter(|a| values.iter().any(|b| json_eq(a, b)))
                    .collect(),
            });
        }
    }
    let Some(listed) = listed else {
        return Ok(None);
    };
    let mut values: Vec<&Value> = Vec::new();
    for value in listed {
        if !values.iter().any(|v| json_eq(v, value)) {
            values.push(value);
        }
    }
    if values.len() > MAX_UNIQUE_VALUES {
        return Ok(None);
    }
    // Only the values the items' own grammar accepts (a valid one may be lost, never an
    // invalid one kept).
    let verdicts = c.check_values(elems, ALL, &values, ptr, depth)?;
    let kept: Vec<&Value> = values
        .into_iter()
        .zip(verdicts)
        .filter_map(|(v, ok)| ok.then_some(v))
        .collect();
    let k = kept.len();
    let hi = max.map_or(k, |m| usize::try_from(m).unwrap_or(usize::MAX).min(k));
    let lo = usize::try_from(min).unwrap_or(usize::MAX);
    if lo > hi {
        return Ok(Some(None));
    }
    let mut items = Vec::with_capacity(k);
    for value in kept {
        let literal = c.value_literal(value, ptr)?;
        items.push(c.share("item", literal, ptr)?);
    }
    // rules[mask]: the items after those of `mask` (each used once), for masks of at most
    // `hi` values.
    let mut rules = Vec::with_capacity(1 << k);
    for mask in 0..1usize << k {
        rules.push(if mask.count_ones() as usize <= hi {
            Some(c.new_rule("unique_items", ptr)?)
        } else {
            None
        });
    }
    for mask in 0..1usize << k {
        let Some(id) = rules[mask] else { continue };
        let used = mask.count_ones() as usize;
        let sep = if used == 0 {
            c.layout.gap.clone()
        } else {
            c.layout.item_sep.clone()
        };
        let mut alternatives = Vec::new();
        if used >= lo {
            alternatives.push(Expr::empty());
        }
        for (j, item) in items.iter().enumerate() {
            if mask & 1 << j == 0 {
                if let Some(to) = rules[mask | 1 << j] {
                    alternatives.push(Expr::seq([sep.clone(), item.clone(), Expr::rule(to)]));
                }
            }
        }
        let body = Expr::choice(alternatives).expect("an item to add or the end");
        c.define(id, body, ptr)?;
    }
    let first = rules[0].expect("the empty set is within every bound");
    Ok(Some(Some(Expr::seq([
        Expr::bytes(*b"["),
        Expr::rule(first),
        c.layout.gap.clone(),
        Expr::bytes(*b"]"),
    ]))))
}

/// The grammar of one item meeting every schema of `elems` (any value when there are none).
fn item(c: &mut Compiler<'_>, elems: Vec<Elem>, depth: usize) -> Result<Option<Expr>, Error> {
    if elems.is_empty() {
        return c.any_value().map(Some);
    }
    c.compile_set(elems, ALL, depth + 1)
}

/// `[ gap (I sep)* H ((sep I)* sep H){count-1} (sep I)* gap ]`: at least `count` items
/// meeting `hit`, every item meeting `any`.
fn contains_array(
    c: &mut Compiler<'_>,
    any: Expr,
    hit: Expr,
    count: u64,
    ptr: &str,
) -> Result<Expr, Error> {
    let count = u32::try_from(count)
        .map_err(|_| Error::new(ErrorKind::Limit, ptr, "minContains", "bound too large"))?;
    let sep = c.layout.item_sep.clone();
    let any = c.share("item", any, ptr)?;
    let hit = c.share("hit", hit, ptr)?;
    let more = Expr::repeat(
        Expr::seq([
            Expr::star(Expr::seq([sep.clone(), any.clone()])),
            sep.clone(),
            hit.clone(),
        ]),
        count - 1,
        Some(count - 1),
    )
    .expect("equal bounds");
    Ok(Expr::seq([
        Expr::bytes(*b"["),
        c.layout.gap.clone(),
        Expr::star(Expr::seq([any.clone(), sep.clone()])),
        hit,
        more,
        Expr::star(Expr::seq([sep, any])),
        c.layout.gap.clone(),
        Expr::bytes(*b"]"),
    ]))
}
