//! Reading the schema of an XML-style `json_schema` (`qwen_xml`, `minimax_xml`, `glm_xml`,
//! `cohere_xml`, `deepseek_xml`, `deepseek_v4_1_xml`, `kimi_k3_xml`, `minimax_m3_xml`) into typed parameters: which elements may appear, in which order, and how
//! each value may be written ([`Case`]), every part with its JSON pointer. `lower::xml` turns
//! the result into rules.
//!
//! The classification is XGrammar 0.2.8's (learnt from the grammars it prints):
//!
//! - The parameters are an object schema: `properties` in order, `required` ones exactly once,
//!   the others at most once, nothing else (strict mode). No `properties`: none allowed, unless
//!   the schema says nothing (`{}`, `true`, a bare `{"type": "object"}`), which allows any
//!   elements ([`Members::Any`]).
//! - A value: a plain string is [`Case::Text`]; a string with `minLength`/`maxLength` is
//!   [`Case::Chars`], with `pattern` [`Case::Pattern`]; `enum`/`const` give one
//!   [`Case::Literal`] per value (strings raw, integers, booleans and null as JSON); `anyOf` and
//!   `type` lists the cases of every branch; `{}` is [`Case::Any`]. Other types are
//!   [`Case::Json`], except in `cohere_xml` and `minimax_m3_xml`, where objects are
//!   [`Case::Dict`] (nested elements) and arrays [`Case::List`]. `minimax_m3_xml` refuses
//!   string constraints and `{}`, as XGrammar does; `kimi_k3_xml`'s `type` attribute is
//!   [`declared_type`]. A bare `{"type": "array"}` allows no items here (XGrammar closes
//!   it at this level, while nested in JSON it is open).
//! - `$ref` is followed to `#/$defs/…` and `#/definitions/…` only, at most [`MAX_REFS`] in a
//!   chain; `cohere_xml` nesting is bounded by [`MAX_NESTING`] (a recursive schema is refused).
//!
//! Every JSON Schema keyword the classification does not read is refused with
//! [`ErrorKind::Unsupported`] at its pointer, never ignored; annotations and unknown keys
//! (BFCL's `optional`, say) constrain nothing and are ignored, as XGrammar and
//! sieve-jsonschema ignore them.

use std::cell::Cell;

use serde_json::{Map, Value};

use crate::error::{join, Error, ErrorKind};
use crate::model::Style;
use crate::strict::{bare, names_only};

/// The JSON Schema keywords that constrain instances (drafts 4 to 2020-12). Any other key
/// is an annotation or unknown, and ignored as XGrammar and sieve-jsonschema ignore it; each
/// of these is read or refused.
const KEYWORDS: [&str; 48] = [
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "dependencies",
    "dependentSchemas",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "$id",
    "id",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
];

/// Whether `key` constrains nothing (an annotation, an unknown keyword, definitions).
fn ignored(key: &str) -> bool {
    !KEYWORDS.contains(&key)
}

/// Keywords that hold definitions (read through `$ref`).
pub(crate) const DEFINITIONS: [&str; 2] = ["$defs", "definitions"];

/// The longest chain of `$ref`s followed.
const MAX_REFS: usize = 32;

/// The deepest nesting of `cohere_xml` and `minimax_m3_xml` objects and lists.
const MAX_NESTING: usize = 32;

/// The elements of an object (the parameters, or a cohere dict).
#[derive(Debug)]
pub(crate) enum Members {
    /// Any elements whose names are identifiers (cohere: attribute text).
    Any,
    /// These parameters: in this order, or with `any_order` in any order, repeats allowed,
    /// at least as many as are required (XGrammar's `any_order`).
    Declared {
        /// The parameters, in schema order.
        params: Vec<Param>,
        /// Any order.
        any_order: bool,
    },
}

/// One declared parameter.
#[derive(Debug)]
pub(crate) struct Param {
    /// Its name.
    pub name: String,
    /// Whether it must appear.
    pub required: bool,
    /// How its value may be written (at least one case).
    pub cases: Vec<Case>,
    /// The type `kimi_k3_xml` writes in its `type` attribute ([`declared_type`]).
    pub declared_type: Option<&'static str>,
}

/// One way a value may be written.
#[derive(Debug)]
pub(crate) enum Case {
    /// Any text without the element's end tag, no whitespace around it.
    Text,
    /// Any characters, from `min` to `max`, whitespace around them.
    Chars {
        /// The fewest characters.
        min: u32,
        /// The most, `None` for no bound.
        max: Option<u32>,
    },
    /// Raw text matching a regex, whitespace around it.
    Pattern {
        /// The regex.
        pattern: String,
        /// The pointer of the `pattern` keyword.
        pointer: String,
    },
    /// Exactly this text, whitespace around it; `json` for a non-string value (cohere writes
    /// it with `type="json"`).
    Literal {
        /// The text.
        text: String,
        /// Whether it is a JSON value rather than a string.
        json: bool,
    },
    /// JSON text of this schema document (definitions attached), whitespace around it.
    Json {
        /// The document to compile.
        document: Value,
        /// The pointer of the value's schema.
        pointer: String,
    },
    /// Nested elements (cohere `type="dict"`).
    Dict(Members),
    /// Unnamed items (cohere `type="list"`), each with these cases.
    List {
        /// The cases of every item (empty: no items allowed).
        item: Vec<Case>,
        /// The fewest items.
        min: u32,
        /// The most, `None` for no bound.
        max: Option<u32>,
    },
    /// Any value of the style.
    Any,
}

/// How values are read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Values {
    /// As the XML style writes them.
    Xml(Style),
    /// Every value as JSON (the members of a `json`-style object in any order).
    Json,
}

/// Reads `root` (in strict mode already), the schema at `pointer`, as parameters; with
/// `any_order`, objects take their members in any order (nested JSON objects with
/// `properties` are then refused: sieve-jsonschema has no such order).
///
/// Schemas are visited once per use (a `$ref` used twice is read twice), so the visits are
/// counted: more than `max_visits` is an [`ErrorKind::Limit`] error, not an exponential
/// blow-up on a schema whose definitions refer to each other many times.
pub(crate) fn read(
    root: &Value,
    values: Values,
    any_order: bool,
    pointer: &str,
    max_visits: usize,
) -> Result<Members, Error> {
    Reader {
        root,
        values,
        any_order,
        pointer,
        visits: Cell::new(0),
        max_visits,
    }
    .object(root, "", 0, 0)
}

/// Whether `key` is a key of an object anywhere in `value`.
pub(crate) fn mentions(value: &Value, key: &str) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if map.contains_key(key) {
                    return true;
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

/// The one type `kimi_k3_xml` writes for a parameter of `schema`, as XGrammar 0.2.8 picks it
/// (from the schema's own keywords, `$ref`s not followed): a single `type` string
/// (`integer` written `number`); the kind of every `enum`/`const` value if they share one;
/// `object` for an untyped schema with `properties` or `additionalProperties` (not for
/// `required` alone). `None` otherwise (`anyOf`, a `type`
/// list, `$ref`, `{}`): then any of the seven type names is allowed.
pub(crate) fn declared_type(schema: &Value) -> Option<&'static str> {
    let obj = schema.as_object()?;
    if obj.contains_key("$ref") || obj.contains_key("anyOf") {
        return None;
    }
    let kind = |value: &Value| match value {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let values: Option<Vec<&Value>> = match (obj.get("enum"), obj.get("const")) {
        (Some(Value::Array(items)), None) => Some(items.iter().collect()),
        (None, Some(value)) => Some(vec![value]),
        _ => None,
    };
    if let Some(values) = values {
        let first = kind(values.first()?);
        return values.iter().all(|v| kind(v) == first).then_some(first);
    }
    match obj.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "integer" | "number" => Some("number"),
            "string" => Some("string"),
            "boolean" => Some("boolean"),
            "null" => Some("null"),
            "array" => Some("array"),
            "object" => Some("object"),
            _ => None,
        },
        None if ["properties", "additionalProperties"]
            .iter()
            .any(|k| obj.contains_key(*k)) =>
        {
            Some("object")
        }
        _ => None,
    }
}

struct Reader<'a> {
    root: &'a Value,
    values: Values,
    any_order: bool,
    pointer: &'a str,
    /// Schemas visited so far.
    visits: Cell<usize>,
    max_visits: usize,
}

impl Reader<'_> {
    /// Whether objects and arrays are nested elements (`cohere_xml`, `minimax_m3_xml`).
    fn nests(&self) -> bool {
        matches!(
            self.values,
            Values::Xml(Style::CohereXml | Style::MinimaxM3Xml)
        )
    }

    /// Refuses a value of any type where the style cannot write one (`minimax_m3_xml`).
    fn any(&self, rel: &str) -> Result<Vec<Case>, Error> {
        if self.values == Values::Xml(Style::MinimaxM3Xml) {
            return Err(self.unsupported(
                rel,
                "minimax_m3_xml cannot write a value of any type (XGrammar 0.2.8 refuses unconstrained schemas too)",
            ));
        }
        Ok(vec![Case::Any])
    }

    fn at(&self, rel: &str) -> String {
        format!("{}{rel}", self.pointer)
    }

    fn unsupported(&self, rel: &str, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Unsupported, &self.at(rel), message)
    }

    fn invalid(&self, rel: &str, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Invalid, &self.at(rel), message)
    }

    /// A schema visited: `None` for `true`, its keywords otherwise.
    fn schema<'v>(
        &self,
        schema: &'v Value,
        rel: &str,
    ) -> Result<Option<&'v Map<String, Value>>, Error> {
        self.visits.set(self.visits.get() + 1);
        if self.visits.get() > self.max_visits {
            return Err(Error::new(
                ErrorKind::Limit,
                &self.at(rel),
                format!(
                    "more than {} schema visits (Limits::max_formats; `$ref`s are read once per use)",
                    self.max_visits
                ),
            ));
        }
        match schema {
            Value::Bool(true) => Ok(None),
            Value::Bool(false) => Err(self.unsupported(rel, "the schema `false` allows nothing")),
            Value::Object(obj) => Ok(Some(obj)),
            _ => Err(self.invalid(rel, "a schema must be an object or a boolean")),
        }
    }

    /// An object schema's elements; `refs` `$ref`s followed so far, `depth` cohere nesting.
    fn object(
        &self,
        schema: &Value,
        rel: &str,
        refs: usize,
        depth: usize,
    ) -> Result<Members, Error> {
        let Some(obj) = self.schema(schema, rel)? else {
            return Ok(Members::Any);
        };
        if let Some(target) = obj.get("$ref") {
            let (target, target_rel) = self.follow(obj, target, rel, refs)?;
            return self.object(target, &target_rel, refs + 1, depth);
        }
        let mut properties = None;
        let mut required: Vec<&str> = Vec::new();
        for (key, value) in obj {
            let kp = join(rel, key);
            match key.as_str() {
                "type" if names_only(value, "object") => {}
                "properties" => {
                    properties = Some(
                        value
                            .as_object()
                            .ok_or_else(|| self.invalid(&kp, "`properties` must be an object"))?,
                    )
                }
                "required" => {
                    let items = value.as_array().ok_or_else(|| {
                        self.invalid(&kp, "`required` must be an array of strings")
                    })?;
                    for (i, item) in items.iter().enumerate() {
                        required.push(item.as_str().ok_or_else(|| {
                            self.invalid(&join(&kp, i), "`required` must hold strings")
                        })?);
                    }
                }
                "additionalProperties" if value == &Value::Bool(false) => {}
                k if ignored(k) => {}
                "type" => {
                    return Err(self.unsupported(
                        &kp,
                        "the parameters must be an object schema (`type: \"object\"`)",
                    ))
                }
                _ => {
                    return Err(self.unsupported(
                        &kp,
                        format!("`{key}` is not supported on the parameters of an XML style or on an object in any order"),
                    ))
                }
            }
        }
        let Some(properties) = properties else {
            if obj.contains_key("additionalProperties") {
                // Strict mode: no properties, no members. (A bare object has no
                // `additionalProperties`: `strict` leaves it open, as XGrammar does.)
                return Ok(Members::Declared {
                    params: Vec::new(),
                    any_order: self.any_order,
                });
            }
            return Ok(Members::Any);
        };
        if let Some(name) = required.iter().find(|n| !properties.contains_key(**n)) {
            return Err(self.unsupported(
                &join(rel, "required"),
                format!("the required parameter {name:?} is not among the properties"),
            ));
        }
        let mut params = Vec::with_capacity(properties.len());
        for (name, schema) in properties {
            let pointer = join(&join(rel, "properties"), name);
            if self.values == Values::Xml(Style::CohereXml)
                && (name.is_empty() || name.bytes().any(|b| b"\"&<>\0".contains(&b)))
            {
                return Err(self.unsupported(
                    &pointer,
                    format!("the parameter name {name:?} would need XML escapes in cohere_xml"),
                ));
            }
            params.push(Param {
                name: name.clone(),
                required: required.contains(&name.as_str()),
                cases: self.cases(schema, &pointer, 0, depth)?,
                declared_type: declared_type(schema),
            });
        }
        Ok(Members::Declared {
            params,
            any_order: self.any_order,
        })
    }

    /// How a value of `schema` may be written.
    fn cases(
        &self,
        schema: &Value,
        rel: &str,
        refs: usize,
        depth: usize,
    ) -> Result<Vec<Case>, Error> {
        let Some(obj) = self.schema(schema, rel)? else {
            if self.values == Values::Json {
                return Ok(vec![self.json(Map::new(), rel)?]);
            }
            return self.any(rel);
        };
        if self.values == Values::Json {
            return Ok(vec![self.json(obj.clone(), rel)?]);
        }
        let others = |allowed: &[&str]| {
            obj.keys()
                .find(|k| !ignored(k) && !allowed.contains(&k.as_str()))
                .cloned()
        };
        let refuse = |key: &str, why: &str| {
            self.unsupported(
                &join(rel, key),
                format!("`{key}` {why} is not supported in an XML style's parameter"),
            )
        };
        if let Some(target) = obj.get("$ref") {
            let (target, target_rel) = self.follow(obj, target, rel, refs)?;
            return self.cases(target, &target_rel, refs + 1, depth);
        }
        if obj.contains_key("enum") || obj.contains_key("const") {
            if let Some(k) = others(&["enum", "const", "type"]) {
                return Err(refuse(&k, "beside `enum`/`const`"));
            }
            return self.literals(obj, rel);
        }
        if let Some(branches) = obj.get("anyOf") {
            if let Some(k) = others(&["anyOf"]) {
                return Err(refuse(&k, "beside `anyOf`"));
            }
            let p = join(rel, "anyOf");
            let branches = branches
                .as_array()
                .filter(|b| !b.is_empty())
                .ok_or_else(|| self.invalid(&p, "`anyOf` must be a non-empty array"))?;
            let mut cases = Vec::new();
            for (i, branch) in branches.iter().enumerate() {
                cases.extend(self.cases(branch, &join(&p, i), refs, depth)?);
            }
            return Ok(cases);
        }
        match obj.get("type") {
            None => match others(&[]) {
                None => self.any(rel),
                Some(k)
                    if ["properties", "additionalProperties", "required"].contains(&k.as_str()) =>
                {
                    self.typed(obj, "object", rel, depth)
                }
                Some(k) => Err(refuse(&k, "without a `type`")),
            },
            Some(Value::String(t)) => self.typed(obj, t, rel, depth),
            Some(Value::Array(types)) => {
                let mut cases = Vec::new();
                for (i, t) in types.iter().enumerate() {
                    let t = t.as_str().ok_or_else(|| {
                        self.invalid(&join(&join(rel, "type"), i), "`type` must hold strings")
                    })?;
                    cases.extend(self.typed(obj, t, rel, depth)?);
                }
                Ok(cases)
            }
            Some(_) => Err(self.invalid(
                &join(rel, "type"),
                "`type` must be a string or an array of strings",
            )),
        }
    }

    /// The cases of `obj` read as type `ty` (one of its `type`s).
    fn typed(
        &self,
        obj: &Map<String, Value>,
        ty: &str,
        rel: &str,
        depth: usize,
    ) -> Result<Vec<Case>, Error> {
        let mut narrowed = obj.clone();
        narrowed.insert("type".to_owned(), Value::String(ty.to_owned()));
        let only = |allowed: &[&str], what: &str| -> Result<(), Error> {
            match obj
                .keys()
                .find(|k| !ignored(k) && !allowed.contains(&k.as_str()))
            {
                Some(k) => Err(self.unsupported(
                    &join(rel, k),
                    format!("`{k}` on {what} is not supported in an XML style's parameter"),
                )),
                None => Ok(()),
            }
        };
        let count = |k: &str| -> Result<Option<u32>, Error> {
            match obj.get(k) {
                None => Ok(None),
                Some(v) => v
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| {
                        self.invalid(
                            &join(rel, k),
                            format!("`{k}` must be a non-negative integer"),
                        )
                    }),
            }
        };
        let nested = || -> Result<usize, Error> {
            if depth >= MAX_NESTING {
                return Err(Error::new(
                    ErrorKind::Limit,
                    &self.at(rel),
                    format!("nested values deeper than {MAX_NESTING} (a recursive schema?)"),
                ));
            }
            Ok(depth + 1)
        };
        match ty {
            "string" if self.values == Values::Xml(Style::MinimaxM3Xml) => {
                // XGrammar 0.2.8 refuses them too: its text excludes the namespace marker.
                only(&["type"], "a minimax_m3_xml string")?;
                Ok(vec![Case::Text])
            }
            "string" => {
                only(&["type", "minLength", "maxLength", "pattern"], "a string")?;
                if let Some(pattern) = obj.get("pattern") {
                    if let Some(k) = ["minLength", "maxLength"]
                        .iter()
                        .find(|k| obj.contains_key(**k))
                    {
                        return Err(self.unsupported(
                            &join(rel, k),
                            format!("`{k}` beside `pattern` is not supported in an XML style's parameter"),
                        ));
                    }
                    let p = join(rel, "pattern");
                    let pattern = pattern
                        .as_str()
                        .ok_or_else(|| self.invalid(&p, "`pattern` must be a string"))?;
                    return Ok(vec![Case::Pattern {
                        pattern: pattern.to_owned(),
                        pointer: self.at(&p),
                    }]);
                }
                Ok(vec![match (count("minLength")?, count("maxLength")?) {
                    (None, None) => Case::Text,
                    (min, max) => Case::Chars {
                        min: min.unwrap_or(0),
                        max,
                    },
                }])
            }
            "object" if self.nests() => Ok(vec![Case::Dict(self.object(
                &Value::Object(narrowed),
                rel,
                0,
                nested()?,
            )?)]),
            "array" if self.nests() => {
                only(&["type", "items", "minItems", "maxItems"], "a nested list")?;
                let (min, max) = (count("minItems")?.unwrap_or(0), count("maxItems")?);
                let item = match obj.get("items") {
                    // Strict mode (and XGrammar closes a bare array here too): no items.
                    None | Some(Value::Bool(false)) if min == 0 => Vec::new(),
                    None | Some(Value::Bool(false)) => {
                        return Err(self.unsupported(
                            &join(rel, "minItems"),
                            "`minItems` on a list that allows no items",
                        ))
                    }
                    Some(items) => self.cases(items, &join(rel, "items"), 0, nested()?)?,
                };
                if max.is_some_and(|max| max < min) {
                    return Err(
                        self.unsupported(&join(rel, "maxItems"), "`maxItems` below `minItems`")
                    );
                }
                Ok(vec![Case::List { item, min, max }])
            }
            "array" if bare(obj, "array") => {
                // XGrammar 0.2.8 closes a bare array at the parameter level (only `[]`),
                // unlike nested ones.
                narrowed.insert("items".to_owned(), Value::Bool(false));
                Ok(vec![self.json(narrowed, rel)?])
            }
            "integer" | "number" | "boolean" | "null" | "object" | "array" => {
                Ok(vec![self.json(narrowed, rel)?])
            }
            other => Err(self.invalid(&join(rel, "type"), format!("unknown type {other:?}"))),
        }
    }

    /// `enum`/`const` values: strings raw, integers, booleans and null as JSON.
    fn literals(&self, obj: &Map<String, Value>, rel: &str) -> Result<Vec<Case>, Error> {
        let (key, values): (&str, Vec<&Value>) = match (obj.get("enum"), obj.get("const")) {
            (Some(_), Some(_)) => {
                return Err(self.unsupported(&join(rel, "const"), "`const` beside `enum`"))
            }
            (Some(Value::Array(items)), None) => ("enum", items.iter().collect()),
            (Some(_), None) => {
                return Err(self.invalid(&join(rel, "enum"), "`enum` must be an array"))
            }
            (None, Some(value)) => ("const", vec![value]),
            (None, None) => return Err(self.invalid(rel, "neither `enum` nor `const`")),
        };
        let types: Option<Vec<&str>> = match obj.get("type") {
            None => None,
            Some(Value::String(t)) => Some(vec![t.as_str()]),
            Some(Value::Array(ts)) => Some(ts.iter().filter_map(Value::as_str).collect()),
            Some(_) => {
                return Err(self.invalid(
                    &join(rel, "type"),
                    "`type` must be a string or an array of strings",
                ))
            }
        };
        let mut cases = Vec::with_capacity(values.len());
        for (i, value) in values.into_iter().enumerate() {
            let p = if key == "enum" {
                join(&join(rel, key), i)
            } else {
                join(rel, key)
            };
            let ty = match value {
                Value::String(_) => "string",
                Value::Bool(_) => "boolean",
                Value::Null => "null",
                Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                _ => {
                    return Err(self.unsupported(
                        &p,
                        "only strings, integers, booleans and null are supported as `enum`/`const` values in an XML style",
                    ))
                }
            };
            if let Some(types) = &types {
                if !types
                    .iter()
                    .any(|t| *t == ty || (ty == "integer" && *t == "number"))
                {
                    return Err(self.unsupported(
                        &p,
                        format!("the value is not of the schema's `type` ({ty})"),
                    ));
                }
            }
            cases.push(match value {
                Value::String(s) => Case::Literal {
                    text: s.clone(),
                    json: false,
                },
                other => Case::Literal {
                    text: other.to_string(),
                    json: true,
                },
            });
        }
        if cases.is_empty() {
            return Err(self.unsupported(&join(rel, key), "an empty `enum` allows no value"));
        }
        Ok(cases)
    }

    /// Follows `$ref` (to `#/$defs/…` or `#/definitions/…`) from the schema at `rel`; returns
    /// the target and its pointer.
    fn follow<'r>(
        &'r self,
        obj: &Map<String, Value>,
        target: &Value,
        rel: &str,
        refs: usize,
    ) -> Result<(&'r Value, String), Error> {
        let p = join(rel, "$ref");
        if refs >= MAX_REFS {
            return Err(Error::new(
                ErrorKind::Limit,
                &self.at(&p),
                format!("more than {MAX_REFS} `$ref`s in a chain"),
            ));
        }
        if let Some(k) = obj.keys().find(|k| *k != "$ref" && !ignored(k)) {
            return Err(self.unsupported(
                &join(rel, k),
                format!("`{k}` beside `$ref` is not supported in an XML style"),
            ));
        }
        let target = target
            .as_str()
            .ok_or_else(|| self.invalid(&p, "`$ref` must be a string"))?;
        let local = target
            .strip_prefix('#')
            .filter(|t| DEFINITIONS.iter().any(|d| t.starts_with(&format!("/{d}/"))))
            .ok_or_else(|| {
                self.unsupported(
                    &p,
                    format!("`$ref` {target:?}: only references to `#/$defs/…` and `#/definitions/…` are supported in an XML style"),
                )
            })?;
        let resolved = self.root.pointer(local).ok_or_else(|| {
            self.invalid(&p, format!("`$ref` {target:?} names nothing in the schema"))
        })?;
        Ok((resolved, local.to_owned()))
    }

    /// A JSON case: the schema with the root's definitions (and `$schema`) attached, its
    /// `$ref`s checked to resolve the same way in the extracted document.
    fn json(&self, mut schema: Map<String, Value>, rel: &str) -> Result<Case, Error> {
        if let Value::Object(root) = self.root {
            for key in DEFINITIONS.iter().chain(&["$schema"]) {
                if let Some(v) = root.get(*key) {
                    schema.entry(*key).or_insert_with(|| v.clone());
                }
            }
        }
        let document = Value::Object(schema);
        if self.any_order && mentions(&document, "properties") {
            return Err(self.unsupported(
                rel,
                "`any_order` on an object nested in a JSON value is not supported (its properties would keep the schema's order)",
            ));
        }
        let mut stack = vec![&document];
        while let Some(value) = stack.pop() {
            match value {
                Value::Object(map) => {
                    for (k, v) in map {
                        let bad = match (k.as_str(), v) {
                            ("$ref", Value::String(t)) => !DEFINITIONS
                                .iter()
                                .any(|d| t.starts_with(&format!("#/{d}/"))),
                            ("$id" | "$anchor" | "$dynamicRef" | "$dynamicAnchor", _) => true,
                            _ => false,
                        };
                        if bad {
                            return Err(self.unsupported(
                                rel,
                                format!("`{k}` {v}: inside an XML style's parameter only `$ref`s to `#/$defs/…` and `#/definitions/…` are supported"),
                            ));
                        }
                        stack.push(v);
                    }
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        Ok(Case::Json {
            document,
            pointer: self.at(rel),
        })
    }
}
