//! Objects: `properties`, `required`, `additionalProperties`, `patternProperties`,
//! `propertyNames`, `minProperties`, `maxProperties`.
//!
//! Layout under [`PropertyOrder::Schema`]: the declared properties in the order they are
//! first declared (then required names declared nowhere, in `required` order), each optional
//! unless required; then any number of additional or pattern properties. Under
//! [`PropertyOrder::Any`]: declared properties in any order, each at most once (required ones
//! exactly once), additional ones anywhere between them.
//!
//! Invariants:
//! - a declared name is never produced by the additional-properties path (its key grammar
//!   is [`string_except`] the declared names), so no key repeats and each declared value
//!   meets every schema that applies to its name: its `properties` entries, the
//!   `patternProperties` whose pattern matches it (decided by compiling the pattern and
//!   running the reference recogniser on the name), else `additionalProperties`, in every
//!   location of the intersection;
//! - property counts are tracked exactly (a rule per position and count, the count capped
//!   at the largest bound), so `minProperties` / `maxProperties` are exact;
//! - other keys get exactly their schemas: with one schema for every pattern, no pattern
//!   matching a declared name and `additionalProperties: false`, the union of the patterns;
//!   otherwise one key language per region of the patterns (`string::key_regions`: the keys
//!   matching exactly those patterns and no declared name) with the schemas of its patterns,
//!   or `additionalProperties` for keys matching none;
//! - presence constraints (`presence`) are tracked per assignment of their names, so a
//!   table entry holds exactly when the object's names satisfy it;
//! - a property whose value must not meet a schema (a negated `properties`) gets its own
//!   member, whose value set carries the negated element;
//! - what cannot be expressed exactly (`patternProperties` in two locations of an
//!   intersection, more than `MAX_PATTERNS` patterns to split) is refused.

use serde_json::Value;
use sieve_ir::Expr;

use crate::layout::{string_except, Sharing};
use crate::string::{key_regions, string_literal, string_schema, StringSpec};
use crate::walk::{Compiler, Elem, ObjectPart, Shape, ALL, STRING};
use crate::{Error, ErrorKind, PropertyOrder};

/// One declared member: key and value grammars, and whether it must appear.
pub(crate) struct Member {
    pub key: Expr,
    pub value: Expr,
    pub required: bool,
}

/// The object alternative of `shape`, or `None` when no object meets it.
pub(crate) fn compile(
    c: &mut Compiler<'_>,
    shape: &Shape<'_>,
    depth: usize,
) -> Result<Option<Expr>, Error> {
    let ptr = shape.ptr.clone();
    // Every name that gets its own member: declared ones, then required ones.
    let mut names: Vec<&str> = Vec::new();
    for part in &shape.objects {
        for (name, _) in &part.props {
            if !names.contains(name) {
                names.push(name);
            }
        }
    }
    for name in shape
        .required
        .iter()
        .chain(&shape.forbidden)
        .chain(&shape.presence.names)
        .chain(shape.negated_members.iter().map(|(name, _, _)| name))
    {
        if !names.contains(name) {
            names.push(name);
        }
    }
    c.spend(names.len(), &ptr)?;
    // propertyNames: which names it allows.
    let name_ok: Vec<bool> = if shape.property_names.is_empty() || names.is_empty() {
        vec![true; names.len()]
    } else {
        let values: Vec<Value> = names
            .iter()
            .map(|n| Value::String((*n).to_owned()))
            .collect();
        let refs: Vec<&Value> = values.iter().collect();
        let elems = shape
            .property_names
            .iter()
            .map(|p| Elem::new(p.clone()))
            .collect();
        c.check_values(elems, STRING, &refs, &shape.property_names[0], depth)?
    };
    // Which patterns (per part) match which names.
    let mut members = Vec::new();
    // Per member, its bit in the presence table (a name dropped below is always absent).
    let mut bits = Vec::new();
    for (index, name) in names.iter().enumerate() {
        let required = shape.required.contains(name);
        let mut schemas = Vec::new();
        let mut forbidden = !name_ok[index] || shape.forbidden.contains(name);
        for (negated, schema, lossy) in &shape.negated_members {
            if negated == name {
                schemas.push(Elem::negated(schema.clone(), *lossy));
            }
        }
        for part in &shape.objects {
            let mut matched = false;
            for (prop, schema) in &part.props {
                if prop == name {
                    schemas.push(Elem::new(schema.clone()));
                    matched = true;
                }
            }
            for (pattern, schema) in &part.patterns {
                if pattern_matches(c, pattern, schema, name)? {
                    schemas.push(Elem::new(schema.clone()));
                    matched = true;
                }
            }
            if !matched {
                if let Some(additional) = &part.additional {
                    schemas.push(Elem::new(additional.clone()));
                }
            }
        }
        let value = if forbidden {
            None
        } else if schemas.is_empty() {
            Some(c.any_value()?)
        } else {
            c.compile_set(schemas, ALL, depth + 1)?
        };
        forbidden |= value.is_none();
        match (forbidden, required) {
            (true, true) => return Ok(None),
            (true, false) => continue,
            _ => {}
        }
        let key = string_literal(name, c.layout.key_escapes);
        bits.push(shape.presence.names.iter().position(|n| n == name));
        members.push(Member {
            key,
            value: value.expect("not forbidden"),
            required,
        });
    }
    let extras = match extras(c, shape, &names, depth)? {
        Some(member) => Some(c.share("member", member, &ptr)?),
        None => None,
    };
    let lo = shape.min_properties;
    let hi = shape.max_properties;
    c.spend(shape.presence.cost(), &ptr)?;
    let tracking = Tracking {
        bits,
        allowed: shape.presence.table(),
    };
    let body = match c.options.property_order {
        PropertyOrder::Schema => schema_order(c, members, extras, lo, hi, &tracking, &ptr)?,
        PropertyOrder::Any => any_order(c, members, extras, lo, hi, &tracking, &ptr)?,
    };
    Ok(body.map(|body| {
        Expr::seq([
            Expr::bytes(*b"{"),
            body,
            c.layout.gap.clone(),
            Expr::bytes(*b"}"),
        ])
    }))
}

/// Whether the property name `name` matches `pattern` (the key of `patternProperties` at
/// `schema`), decided by simulating the pattern's automaton on the name.
fn pattern_matches(
    c: &mut Compiler<'_>,
    pattern: &str,
    schema: &str,
    name: &str,
) -> Result<bool, Error> {
    c.spend(16 + 4 * (pattern.len() + name.len()), schema)?;
    match crate::string::pattern_matches(pattern, name, schema, "patternProperties") {
        Ok(matches) => Ok(matches),
        Err(error) => {
            // Lenient: an unsupported pattern is taken to match nothing here (its schema is
            // not applied: a superset).
            c.refuse_error(error)?;
            Ok(false)
        }
    }
}

/// The member grammar (`key key-sep value`) of the properties not named in `names`, or
/// `None` when there can be none.
fn extras(
    c: &mut Compiler<'_>,
    shape: &Shape<'_>,
    names: &[&str],
    depth: usize,
) -> Result<Option<Expr>, Error> {
    let ptr = shape.ptr.as_str();
    let with_patterns: Vec<_> = shape
        .objects
        .iter()
        .filter(|p| !p.patterns.is_empty())
        .collect();
    if with_patterns.is_empty() {
        // Only `additionalProperties` (or nothing) applies to other keys.
        let schemas: Vec<Elem> = shape
            .objects
            .iter()
            .filter_map(|p| p.additional.clone().map(Elem::new))
            .collect();
        let value = if schemas.is_empty() {
            c.any_value()?
        } else {
            match c.compile_set(schemas, ALL, depth + 1)? {
                Some(value) => value,
                None => return Ok(None),
            }
        };
        let key = if shape.property_names.is_empty() {
            except(c, names, ptr)?
        } else if names.is_empty() {
            let elems = shape
                .property_names
                .iter()
                .map(|p| Elem::new(p.clone()))
                .collect();
            match c.compile_set(elems, STRING, depth + 1)? {
                Some(key) => key,
                None => return Ok(None),
            }
        } else {
            c.refuse(
                &shape.property_names[0],
                "",
                "`propertyNames` together with declared properties and additional properties \
                 (set `additionalProperties: false` or drop the declared properties)",
            )?;
            except(c, names, ptr)?
        };
        let key = c.share("key", key, ptr)?;
        return Ok(Some(c.layout.member(key, value)));
    }
    if with_patterns.len() > 1 {
        c.refuse(
            &with_patterns[1].ptr,
            "patternProperties",
            "`patternProperties` in more than one schema of an intersection",
        )?;
    }
    let part = with_patterns[0];
    if !shape.property_names.is_empty() {
        c.refuse(
            &shape.property_names[0],
            "",
            "`propertyNames` together with `patternProperties`",
        )?;
    }
    // Other locations' additionalProperties apply to every key this one's patterns allow.
    let others: Vec<Elem> = shape
        .objects
        .iter()
        .filter(|p| p.ptr != part.ptr)
        .filter_map(|p| p.additional.clone().map(Elem::new))
        .collect();
    let additional_open = match &part.additional {
        None => true,
        Some(a) => c.at(a) == &Value::Bool(true),
    };
    let additional_closed = part
        .additional
        .as_ref()
        .is_some_and(|a| c.at(a) == &Value::Bool(false));
    let trivial = part.patterns.iter().all(|(_, s)| {
        c.at(s) == &Value::Bool(true) || c.at(s).as_object().is_some_and(|m| m.is_empty())
    });
    if !additional_closed && trivial && additional_open {
        // The patterns do not constrain anything: any other key, any value (subject to
        // the other locations).
        let value = if others.is_empty() {
            c.any_value()?
        } else {
            match c.compile_set(others, ALL, depth + 1)? {
                Some(v) => v,
                None => return Ok(None),
            }
        };
        let key = except(c, names, ptr)?;
        let key = c.share("key", key, ptr)?;
        return Ok(Some(c.layout.member(key, value)));
    }
    // Keys match one of the patterns; a key matching two must meet both schemas.
    let first_schema = c.at(&part.patterns[0].1);
    let mut split =
        !additional_closed || part.patterns.iter().any(|(_, s)| c.at(s) != first_schema);
    for (pattern, schema) in &part.patterns {
        for name in names {
            split |= pattern_matches(c, pattern, schema, name)?;
        }
    }
    if split {
        return regions(c, part, names, others, !additional_closed, depth);
    }
    let mut alternatives = Vec::new();
    for (pattern, schema) in &part.patterns {
        let mut elems = others.clone();
        elems.push(Elem::new(schema.clone()));
        let Some(value) = c.compile_set(elems, ALL, depth + 1)? else {
            continue;
        };
        let spec = StringSpec {
            pattern: Some(pattern),
            pointer: schema,
            ..StringSpec::default()
        };
        let key = match string_schema(&mut c.builder, &spec, c.layout.key_escapes) {
            Ok(key) => key,
            Err(error) => {
                c.refuse_error(Error {
                    keyword: "patternProperties".to_owned(),
                    ..error
                })?;
                // Lenient: any key but the declared names (a superset of the pattern's).
                except(c, names, ptr)?
            }
        };
        alternatives.push(c.layout.member(key, value));
    }
    Ok(Expr::choice(alternatives))
}

/// The members of the keys not in `names`, one alternative per region of the patterns of
/// `part` (`string::key_regions`): a key gets the schemas of exactly the patterns it matches,
/// or `additionalProperties` when it matches none (only `with_none`); `others` apply to every
/// key.
fn regions(
    c: &mut Compiler<'_>,
    part: &ObjectPart<'_>,
    names: &[&str],
    others: Vec<Elem>,
    with_none: bool,
    depth: usize,
) -> Result<Option<Expr>, Error> {
    let ptr = part.ptr.as_str();
    let patterns: Vec<&str> = part.patterns.iter().map(|(p, _)| *p).collect();
    let limits = c.options.limits.clone();
    let escapes = c.layout.key_escapes;
    let keys = match key_regions(
        &mut c.builder,
        &patterns,
        names,
        with_none,
        escapes,
        &limits,
        ptr,
    ) {
        Ok(keys) => keys,
        Err(error) => {
            c.refuse_error(error)?;
            // Lenient: any other key, any value (a superset).
            let key = except(c, names, ptr)?;
            let key = c.share("key", key, ptr)?;
            let value = c.any_value()?;
            return Ok(Some(c.layout.member(key, value)));
        }
    };
    let mut alternatives = Vec::new();
    for (region, key) in keys {
        let mut elems = others.clone();
        if region == 0 {
            elems.extend(part.additional.clone().map(Elem::new));
        }
        for (i, (_, schema)) in part.patterns.iter().enumerate() {
            if region & 1 << i != 0 {
                elems.push(Elem::new(schema.clone()));
            }
        }
        let value = if elems.is_empty() {
            c.any_value()?
        } else {
            match c.compile_set(elems, ALL, depth + 1)? {
                Some(value) => value,
                None => continue,
            }
        };
        c.spend(key.size(), ptr)?;
        let key = c.share("key", key, ptr)?;
        alternatives.push(c.layout.member(key, value));
    }
    Ok(Expr::choice(alternatives))
}

/// [`string_except`] with shared sub-rules: its string tails, and its rules of equal bodies
/// (objects with properties of common prefixes leave their tries the same ways), are shared
/// by every object of the compilation; an object whose names an earlier one had gets that
/// one's expression.
fn except(c: &mut Compiler<'_>, names: &[&str], ptr: &str) -> Result<Expr, Error> {
    let mut key: Vec<String> = names.iter().map(|&name| name.to_owned()).collect();
    key.sort_unstable();
    key.dedup();
    if let Some(keys) = c.excepts.get(&key) {
        return Ok(keys.clone());
    }
    let escapes = c.layout.key_escapes;
    let keys = string_except(names, escapes, &mut |e, sharing| match sharing {
        Sharing::Rule => c.share_distinct("key_chars", e, ptr),
        Sharing::Tail => c.shared_tail("key_tail", e, ptr),
    })?;
    c.excepts.insert(key, keys.clone());
    Ok(keys)
}

/// The property-count bounds a body of `n` declared members tracks, and the cap: the largest
/// count worth telling apart (at least 1, so the first member is known to take no comma).
/// Without other keys an object never has more than `n` members, so a maximum of `n` or more
/// is not tracked at all: tracking it would cost `n` times the rules for nothing. `None` when
/// no count fits.
fn count_bounds(
    n: usize,
    extras: bool,
    lo: u64,
    hi: Option<u64>,
) -> Option<(usize, Option<usize>, usize)> {
    let n = n as u64;
    let hi = hi.filter(|&h| extras || h < n);
    let most = if extras { hi } else { Some(hi.unwrap_or(n)) };
    if most.is_some_and(|h| h < lo) {
        return None;
    }
    let to_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    let cap = to_usize(lo.max(hi.unwrap_or(0)).max(1));
    Some((to_usize(lo), hi.map(to_usize), cap))
}

/// Which assignments of the presence-tracked names an object may have.
pub(crate) struct Tracking {
    /// Per member, its bit in `allowed`'s index, if its presence is tracked.
    pub bits: Vec<Option<usize>>,
    /// Per assignment of the tracked names, whether it is allowed.
    pub allowed: Vec<bool>,
}

impl Tracking {
    /// Nothing tracked: every object allowed.
    pub(crate) fn none(members: usize) -> Tracking {
        Tracking {
            bits: vec![None; members],
            allowed: vec![true],
        }
    }

    /// The number of assignments.
    fn states(&self) -> usize {
        self.allowed.len()
    }

    /// The assignment after member `i` is added to `mask`.
    fn with(&self, mask: usize, i: usize) -> usize {
        self.bits[i].map_or(mask, |b| mask | 1 << b)
    }
}

/// The members after `{` in schema order, tracking the count for min/maxProperties and the
/// presence of the tracked names.
fn schema_order(
    c: &mut Compiler<'_>,
    members: Vec<Member>,
    extras: Option<Expr>,
    lo: u64,
    hi: Option<u64>,
    tracking: &Tracking,
    ptr: &str,
) -> Result<Option<Expr>, Error> {
    let n = members.len();
    let Some((lo, hi, cap)) = count_bounds(n, extras.is_some(), lo, hi) else {
        return Ok(None);
    };
    let states = tracking.states();
    if cap.saturating_mul(n + 1).saturating_mul(states) > c.options.limits.max_rules {
        return Err(Error::new(
            ErrorKind::Limit,
            ptr,
            "maxProperties",
            "the property count bounds need more rules than the limit allows",
        ));
    }
    let sep = |c: &Compiler<'_>, count: usize| {
        if count == 0 {
            c.layout.gap.clone()
        } else {
            c.layout.item_sep.clone()
        }
    };
    // tail[count] = the additional members after the declared ones, after `count` members.
    let mut tail: Vec<Option<Expr>> = Vec::with_capacity(cap + 1);
    for count in 0..=cap {
        let need_lo = lo.saturating_sub(count);
        let need_hi = hi.map(|h| h.saturating_sub(count));
        tail.push(match &extras {
            None => (need_lo == 0).then(Expr::empty),
            Some(member) => {
                let to_u32 = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
                if need_hi == Some(0) {
                    (need_lo == 0).then(Expr::empty)
                } else if count == 0 {
                    let rest = Expr::repeat(
                        Expr::seq([c.layout.item_sep.clone(), member.clone()]),
                        to_u32(need_lo.saturating_sub(1)),
                        need_hi.map(|h| to_u32(h - 1)),
                    )
                    .expect("bounds checked");
                    let one = Expr::seq([c.layout.gap.clone(), member.clone(), rest]);
                    Some(if need_lo == 0 {
                        Expr::optional(one)
                    } else {
                        one
                    })
                } else {
                    Some(
                        Expr::repeat(
                            Expr::seq([c.layout.item_sep.clone(), member.clone()]),
                            to_u32(need_lo),
                            need_hi.map(to_u32),
                        )
                        .expect("bounds checked"),
                    )
                }
            }
        });
    }
    // The tracked bits any prefix can have set: before member i, those of members < i.
    let mut seen = vec![0usize; n + 1];
    for i in 0..n {
        seen[i + 1] = tracking.with(seen[i], i);
    }
    // next[mask * (cap + 1) + count] = the members from position i on, after `count`
    // members with the tracked names of `mask`; only masks within `seen[i]` are built.
    let index = |mask: usize, count: usize| mask * (cap + 1) + count;
    let mut next: Vec<Option<Expr>> = Vec::with_capacity(states * (cap + 1));
    for mask in 0..states {
        let allowed = tracking.allowed[mask] && mask & !seen[n] == 0;
        for after in &tail {
            next.push(if allowed { after.clone() } else { None });
        }
    }
    // The counts a prefix can have before member i: at most i, at least the required members
    // before it (both capped), so no rule is built for a count no object reaches.
    let mut least = vec![0usize; n + 1];
    for (i, member) in members.iter().enumerate() {
        least[i + 1] = (least[i] + usize::from(member.required)).min(cap);
    }
    for (i, member) in members.into_iter().enumerate().rev() {
        let pair = c.layout.member(member.key, member.value);
        let pair = c.share("member", pair, ptr)?;
        let mut here: Vec<Option<Expr>> = vec![None; states * (cap + 1)];
        for mask in 0..states {
            if mask & !seen[i] != 0 {
                continue;
            }
            let taken = tracking.with(mask, i);
            for count in least[i]..=i.min(cap) {
                let mut alternatives = Vec::new();
                if hi.is_none_or(|h| count < h) {
                    if let Some(after) = &next[index(taken, (count + 1).min(cap))] {
                        alternatives.push(Expr::seq([sep(c, count), pair.clone(), after.clone()]));
                    }
                }
                if !member.required {
                    if let Some(skip) = &next[index(mask, count)] {
                        alternatives.push(skip.clone());
                    }
                }
                here[index(mask, count)] = match Expr::choice(alternatives) {
                    Some(body) => Some(c.share("members", body, ptr)?),
                    None => None,
                };
            }
        }
        next = here;
    }
    Ok(next.swap_remove(0))
}

/// The members after `{` in any order: a rule per (set of declared members used, count).
pub(crate) fn any_order(
    c: &mut Compiler<'_>,
    members: Vec<Member>,
    extras: Option<Expr>,
    lo: u64,
    hi: Option<u64>,
    tracking: &Tracking,
    ptr: &str,
) -> Result<Option<Expr>, Error> {
    let n = members.len();
    if n > c.options.max_any_order_properties || n > 16 {
        return Err(Error::new(
            ErrorKind::Limit,
            ptr,
            "properties",
            format!(
                "{n} properties in any order is over the limit of {} (max_any_order_properties)",
                c.options.max_any_order_properties
            ),
        ));
    }
    let Some((lo, hi, cap)) = count_bounds(n, extras.is_some(), lo, hi) else {
        return Ok(None);
    };
    let states = (1usize << n).saturating_mul(cap + 1);
    if states > c.options.limits.max_rules {
        return Err(Error::new(
            ErrorKind::Limit,
            ptr,
            "properties",
            "the property count bounds need more rules than the limit allows",
        ));
    }
    let required: usize = members
        .iter()
        .enumerate()
        .filter(|(_, m)| m.required)
        .map(|(i, _)| 1 << i)
        .sum();
    let index = |mask: usize, count: usize| mask * (cap + 1) + count;
    // The tracked names' assignment of a set of members.
    let tracked = |mask: usize| {
        (0..n)
            .filter(|j| mask & (1 << j) != 0)
            .fold(0, |acc, j| tracking.with(acc, j))
    };
    let accepting = |mask: usize, count: usize| {
        mask & required == required && count >= lo && tracking.allowed[tracked(mask)]
    };
    let can_add = |count: usize| hi.is_none_or(|h| count < h);
    // Liveness: a state is live when it can reach an accepting state.
    let mut live = vec![false; states];
    loop {
        let mut changed = false;
        for mask in 0..1usize << n {
            for count in 0..=cap {
                if live[index(mask, count)] {
                    continue;
                }
                let next = (count + 1).min(cap);
                let alive = accepting(mask, count)
                    || (can_add(count)
                        && ((0..n)
                            .any(|j| mask & (1 << j) == 0 && live[index(mask | 1 << j, next)])
                            || (extras.is_some() && live[index(mask, next)])));
                if alive {
                    live[index(mask, count)] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    if !live[index(0, 0)] {
        return Ok(None);
    }
    let mut rules = vec![None; states];
    for (i, alive) in live.iter().enumerate() {
        if *alive {
            rules[i] = Some(c.new_rule("members", ptr)?);
        }
    }
    let pairs: Vec<Expr> = members
        .into_iter()
        .map(|m| c.layout.member(m.key, m.value))
        .collect();
    for mask in 0..1usize << n {
        for count in 0..=cap {
            let Some(id) = rules[index(mask, count)] else {
                continue;
            };
            let sep = if count == 0 {
                c.layout.gap.clone()
            } else {
                c.layout.item_sep.clone()
            };
            let next = (count + 1).min(cap);
            let mut alternatives = Vec::new();
            if accepting(mask, count) {
                alternatives.push(Expr::empty());
            }
            if can_add(count) {
                for (j, pair) in pairs.iter().enumerate() {
                    if mask & (1 << j) == 0 {
                        if let Some(to) = rules[index(mask | 1 << j, next)] {
                            alternatives.push(Expr::seq([
                                sep.clone(),
                                pair.clone(),
                                Expr::rule(to),
                            ]));
                        }
                    }
                }
                if let (Some(member), Some(to)) = (&extras, rules[index(mask, next)]) {
                    alternatives.push(Expr::seq([sep.clone(), member.clone(), Expr::rule(to)]));
                }
            }
            let body = Expr::choice(alternatives).expect("live states have a way out");
            c.define(id, body, ptr)?;
        }
    }
    Ok(rules[index(0, 0)].map(Expr::rule))
}
