//! Presence constraints: keywords whose verdict on an object depends only on which property
//! names it has.
//!
//! A *presence formula* is a schema built from `required`, `allOf`, `anyOf`, `oneOf`, `not`,
//! `type: "object"` and `properties` whose schemas constrain nothing (annotations aside).
//! Such a schema accepts an object iff a Boolean function of the presence of finitely many
//! names holds, and accepts every non-object or none. So `not`, `oneOf`, `dependencies`,
//! `dependentRequired` and `dependentSchemas` over presence formulas are exact as a table of
//! the allowed presence assignments, which the object layouts track (`object.rs`: a state per
//! assignment of the tracked names, in schema order as in any order).
//!
//! Invariants:
//! - [`Formula::eval`] is the schema's verdict: on an object, given which tracked names it
//!   has; on a non-object (`None`), given nothing;
//! - a constraint tracks at most [`MAX_TRACKED`] names (its table has `2^n` entries); larger
//!   ones are not formulas here and stay refused.

use serde_json::{Map, Value};

use crate::walk::{is_constraining, is_trivial_schema};

/// The most names one presence constraint (and one object) tracks.
pub(crate) const MAX_TRACKED: usize = 8;

/// A Boolean function of the presence of names (indices into a name list).
#[derive(Clone, Debug)]
pub(crate) enum Formula {
    /// `true` on every instance.
    True,
    /// Objects only.
    Object,
    /// Objects with this name, and every non-object.
    Has(usize),
    Not(Box<Formula>),
    All(Vec<Formula>),
    Any(Vec<Formula>),
    /// Exactly one.
    One(Vec<Formula>),
}

impl Formula {
    /// The verdict on an object with the names of `mask` (bit `i`: name `i`), or on a
    /// non-object when `mask` is `None`.
    pub(crate) fn eval(&self, mask: Option<u64>) -> bool {
        match self {
            Formula::True => true,
            Formula::Object => mask.is_some(),
            Formula::Has(i) => mask.is_none_or(|m| m & (1 << i) != 0),
            Formula::Not(f) => !f.eval(mask),
            Formula::All(fs) => fs.iter().all(|f| f.eval(mask)),
            Formula::Any(fs) => fs.iter().any(|f| f.eval(mask)),
            Formula::One(fs) => fs.iter().filter(|f| f.eval(mask)).count() == 1,
        }
    }

    /// The number of nodes (the cost of one evaluation).
    pub(crate) fn size(&self) -> usize {
        match self {
            Formula::True | Formula::Object | Formula::Has(_) => 1,
            Formula::Not(f) => 1 + f.size(),
            Formula::All(fs) | Formula::Any(fs) | Formula::One(fs) => {
                1 + fs.iter().map(Formula::size).sum::<usize>()
            }
        }
    }
}

/// Reads presence formulas, collecting the names they mention.
pub(crate) struct Reader<'a> {
    pub names: Vec<&'a str>,
    /// Nodes read so far (bounds the work on deep or wide schemas).
    nodes: usize,
}

/// The most schema nodes one reader visits.
const MAX_NODES: usize = 256;

impl<'a> Reader<'a> {
    pub(crate) fn new() -> Reader<'a> {
        Reader {
            names: Vec::new(),
            nodes: 0,
        }
    }

    fn name(&mut self, name: &'a str) -> Option<usize> {
        if let Some(i) = self.names.iter().position(|n| *n == name) {
            return Some(i);
        }
        if self.names.len() == MAX_TRACKED {
            return None;
        }
        self.names.push(name);
        Some(self.names.len() - 1)
    }

    /// The formula of `schema`, or `None` when it is not a presence formula (or too large).
    pub(crate) fn schema(&mut self, schema: &'a Value) -> Option<Formula> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return None;
        }
        let map = match schema {
            Value::Bool(true) => return Some(Formula::True),
            Value::Bool(false) => return Some(Formula::Not(Box::new(Formula::True))),
            Value::Object(map) => map,
            _ => return None,
        };
        let mut parts = Vec::new();
        for (key, value) in map {
            if !is_constraining(key) {
                continue;
            }
            parts.push(match key.as_str() {
                "required" => {
                    let mut all = Vec::new();
                    for name in value.as_array()? {
                        all.push(Formula::Has(self.name(name.as_str()?)?));
                    }
                    Formula::All(all)
                }
                "allOf" | "anyOf" | "oneOf" => {
                    let branches = self.list(value)?;
                    match key.as_str() {
                        "allOf" => Formula::All(branches),
                        "anyOf" => Formula::Any(branches),
                        _ => Formula::One(branches),
                    }
                }
                "not" => Formula::Not(Box::new(self.schema(value)?)),
                "type" if value == "object" => Formula::Object,
                "properties" if value.as_object()?.values().all(is_trivial_schema) => Formula::True,
                _ => return None,
            });
        }
        Some(Formula::All(parts))
    }

    /// The formulas of an array of schemas.
    pub(crate) fn list(&mut self, value: &'a Value) -> Option<Vec<Formula>> {
        value.as_array()?.iter().map(|s| self.schema(s)).collect()
    }

    /// `dependencies` / `dependentRequired` / `dependentSchemas`: each entry is a name and
    /// either a list of names (all required when the name is present) or, where
    /// `schemas` allows, a schema (applied when the name is present).
    pub(crate) fn dependencies(
        &mut self,
        map: &'a Map<String, Value>,
        lists: bool,
        schemas: bool,
    ) -> Option<Formula> {
        let mut all = Vec::new();
        for (name, dependent) in map {
            // The name first: undeclared tracked names are laid out in this order.
            let has = Formula::Has(self.name(name)?);
            let then = match dependent {
                Value::Array(names) if lists => {
                    let mut needs = Vec::new();
                    for n in names {
                        needs.push(Formula::Has(self.name(n.as_str()?)?));
                    }
                    Formula::All(needs)
                }
                Value::Array(_) => return None,
                _ if schemas => self.schema(dependent)?,
                _ => return None,
            };
            all.push(Formula::Any(vec![Formula::Not(Box::new(has)), then]));
        }
        // Dependencies constrain objects only.
        Some(Formula::Any(vec![
            Formula::Not(Box::new(Formula::Object)),
            Formula::All(all),
        ]))
    }
}

/// Presence constraints of one intersection, over one list of names.
#[derive(Clone, Debug, Default)]
pub(crate) struct Presence<'a> {
    pub names: Vec<&'a str>,
    /// Each constraint: its formula and, per index of its own names, the index in `names`.
    constraints: Vec<(Formula, Vec<usize>)>,
}

impl<'a> Presence<'a> {
    /// Adds the formula read by `reader`. `false` when the names would be more than
    /// [`MAX_TRACKED`] (nothing is added).
    pub(crate) fn add(&mut self, formula: Formula, reader: Reader<'a>) -> bool {
        let mut names = self.names.clone();
        let mut map = Vec::with_capacity(reader.names.len());
        for name in reader.names {
            match names.iter().position(|n| *n == name) {
                Some(i) => map.push(i),
                None => {
                    names.push(name);
                    map.push(names.len() - 1);
                }
            }
        }
        if names.len() > MAX_TRACKED {
            return false;
        }
        self.names = names;
        self.constraints.push((formula, map));
        true
    }

    /// Whether every constraint accepts non-objects.
    pub(crate) fn allows_non_objects(&self) -> bool {
        self.constraints.iter().all(|(f, _)| f.eval(None))
    }

    /// Per assignment of `names` (bit `i`: `names[i]` present), whether every constraint
    /// holds; `2^names.len()` entries.
    pub(crate) fn table(&self) -> Vec<bool> {
        let n = self.names.len();
        (0..1u64 << n)
            .map(|mask| {
                self.constraints.iter().all(|(f, map)| {
                    let own = map
                        .iter()
                        .enumerate()
                        .filter(|(_, &global)| mask & (1 << global) != 0)
                        .fold(0u64, |acc, (local, _)| acc | 1 << local);
                    f.eval(Some(own))
                })
            })
            .collect()
    }

    /// The cost of [`Presence::table`].
    pub(crate) fn cost(&self) -> usize {
        let size: usize = self.constraints.iter().map(|(f, _)| f.size()).sum();
        size.saturating_mul(1 << self.names.len())
    }
}
