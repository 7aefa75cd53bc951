//! The XML styles of `json_schema` (`qwen_xml`, `minimax_xml`, `glm_xml`, `cohere_xml`, and
//! the deprecated `qwen_xml_parameter`): the schema describes a tool's parameters, an object
//! whose properties become XML elements in the style's syntax, as XGrammar 0.2.8 writes them.
//!
//! # The language
//!
//! - The object's properties come in schema order, a required one exactly once, an optional
//!   one at most once; a gap (whitespace, bounded like JSON gaps) stands before each element
//!   and after the last. A schema that says nothing (`{}`, `true`) allows any elements whose
//!   names are identifiers (cohere: attribute text with XML entities).
//! - Elements: `<parameter=NAME>V</parameter>` (qwen), `<parameter name="NAME">V</parameter>`
//!   (minimax), `<arg_key>NAME</arg_key> <arg_value>V</arg_value>` (glm, a gap between), and
//!   `<cofl:value name="NAME" type="T">V</cofl:value>` (cohere, `T` one of `raw`, `json`,
//!   `dict`, `list` by the value's kind).
//! - A value is classified by its schema into cases ([`Case`]): a plain string is raw text
//!   that cannot contain the element's end tag, written without gaps around it; a string
//!   with `minLength`/`maxLength` or `pattern` is raw text of that shape, and `enum`/`const`
//!   strings are raw literals; other values are JSON (sieve-jsonschema, XGrammar's strict
//!   mode); `anyOf` and `type` lists take the union of their branches' cases. Every value
//!   other than a plain string has gaps around it. In cohere, objects are nested elements
//!   (`dict`) and arrays lists of unnamed `<cofl:value type="T">` items without gaps between
//!   them (`list`); in the other styles both are JSON.
//! - Strict mode as XGrammar 0.2.8 applies it: an object schema without `properties` allows
//!   no members, except a bare `{"type": "object"}`, which allows any (any elements, any
//!   dict, any JSON object); an array schema without `items` allows no items, a bare
//!   `{"type": "array"}` included at the parameter level and in cohere lists (nested in
//!   JSON, a bare array is open).
//!
//! # What is refused
//!
//! Every keyword the classification does not read is refused with [`ErrorKind::Unsupported`]
//! at its pointer (a `format` on a string, `additionalProperties` other than `false` on a
//! parameter object, `oneOf`, `allOf`, a non-integer `enum` number, …), never ignored. `$ref`
//! is followed to `#/$defs/…` and `#/definitions/…` only; JSON values keep those definitions.

use serde_json::{Map, Value};
use sieve_ir::{ByteClass, Expr, ExprKind, RuleId};

use super::{without_outer_gaps, Lowerer};
use crate::dispatch::{self, FreeText};
use crate::error::{join, Error, ErrorKind};
use crate::model::Style;
use crate::strict::{bare, ANNOTATIONS};

/// Keywords that hold definitions (read through `$ref`).
const DEFINITIONS: [&str; 2] = ["$defs", "definitions"];

/// The longest chain of `$ref`s followed at the XML level.
const MAX_REFS: usize = 32;

/// One way a value may be written.
enum Case {
    /// Any text without the element's end tag, no gaps around it.
    Text,
    /// Raw text of this shape, gaps around it.
    Raw(Expr),
    /// JSON text, gaps around it.
    Json(Expr),
    /// Nested elements (cohere), gaps around them.
    Dict(Expr),
    /// Unnamed list items (cohere), gaps around them.
    List(Expr),
    /// Any value of the style.
    Any,
}

/// One `json_schema` in an XML style being lowered.
pub(super) struct Xml<'l, 'o> {
    lower: &'l mut Lowerer<'o>,
    style: Style,
    /// The schema, in XGrammar's strict mode.
    root: Value,
    /// The pointer of the `json_schema` field.
    pointer: String,
    /// Whitespace between elements (bounded).
    gap: Expr,
    /// The most whitespace bytes per gap (JSON values use the same bound).
    max_whitespace: u32,
    /// Raw text up to the end tag.
    text: Option<RuleId>,
    /// Any value (qwen, minimax, glm) or any element's part after the name (cohere).
    any: Option<RuleId>,
}

impl<'l, 'o> Xml<'l, 'o> {
    pub(super) fn new(
        lower: &'l mut Lowerer<'o>,
        style: Style,
        root: Value,
        pointer: String,
        max_whitespace: u32,
    ) -> Result<Xml<'l, 'o>, Error> {
        let ws = ByteClass::from_ranges([(b' ', b' '), (b'\t', b'\n'), (b'\r', b'\r')]);
        let gap = Expr::repeat(Expr::class(ws).expect("non-empty"), 0, Some(max_whitespace))
            .map_err(|e| Error::new(ErrorKind::Invalid, &pointer, e.to_string()))?;
        Ok(Xml {
            lower,
            style,
            root,
            pointer,
            gap,
            max_whitespace,
            text: None,
            any: None,
        })
    }

    /// The parameters: the root schema as an object of elements.
    pub(super) fn parameters(mut self) -> Result<Expr, Error> {
        let root = self.root.clone();
        self.object(&root, "")
    }

    fn at(&self, rel: &str) -> String {
        format!("{}{rel}", self.pointer)
    }

    fn unsupported(&self, rel: &str, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Unsupported, &self.at(rel), message)
    }

    /// The element's end tag.
    fn end_tag(&self) -> &'static str {
        match self.style {
            Style::GlmXml => "</arg_value>",
            Style::CohereXml => "</cofl:value>",
            _ => "</parameter>",
        }
    }

    /// An object schema as elements: each property (in order, optional ones optional) after a
    /// gap, then a gap.
    fn object(&mut self, schema: &Value, rel: &str) -> Result<Expr, Error> {
        let obj = match schema {
            Value::Bool(true) => return self.any_object(),
            Value::Bool(false) => {
                return Err(self.unsupported(rel, "the schema `false` allows no parameters"))
            }
            Value::Object(obj) => obj,
            _ => {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &self.at(rel),
                    "a schema must be an object or a boolean",
                ))
            }
        };
        if let Some(target) = obj.get("$ref") {
            let (target, target_rel) = self.follow(obj, target, rel, 0)?;
            return self.object(&target, &target_rel);
        }
        let mut properties = None;
        let mut required: Vec<&str> = Vec::new();
        for (key, value) in obj {
            let kp = join(rel, key);
            match key.as_str() {
                "type" if value.as_str() == Some("object") => {}
                "properties" => {
                    properties = Some(value.as_object().ok_or_else(|| {
                        Error::new(
                            ErrorKind::Invalid,
                            &self.at(&kp),
                            "`properties` must be an object",
                        )
                    })?)
                }
                "required" => {
                    let items = value.as_array().ok_or_else(|| {
                        Error::new(
                            ErrorKind::Invalid,
                            &self.at(&kp),
                            "`required` must be an array of strings",
                        )
                    })?;
                    for (i, item) in items.iter().enumerate() {
                        required.push(item.as_str().ok_or_else(|| {
                            Error::new(
                                ErrorKind::Invalid,
                                &self.at(&join(&kp, i)),
                                "`required` must hold strings",
                            )
                        })?);
                    }
                }
                "additionalProperties" if value == &Value::Bool(false) => {}
                k if ANNOTATIONS.contains(&k) || DEFINITIONS.contains(&k) => {}
                "type" => {
                    return Err(self.unsupported(
                        &kp,
                        "the parameters must be an object schema (`type: \"object\"`)",
                    ))
                }
                _ => {
                    return Err(self.unsupported(
                        &kp,
                        format!("`{key}` is not supported on the parameters of an XML style"),
                    ))
                }
            }
        }
        let Some(properties) = properties else {
            if obj.contains_key("additionalProperties") {
                // Strict mode: an object schema without properties has none, unless it is
                // bare (then it is open, as in XGrammar; `strict` left it without
                // `additionalProperties`).
                return Ok(self.gap.clone());
            }
            return self.any_object();
        };
        if let Some(name) = required.iter().find(|n| !properties.contains_key(**n)) {
            return Err(self.unsupported(
                &join(rel, "required"),
                format!("the required parameter {name:?} is not among the properties"),
            ));
        }
        let mut items = Vec::with_capacity(properties.len() + 1);
        for (name, schema) in properties {
            let prel = join(&join(rel, "properties"), name);
            let element = self.element(name, schema, &prel)?;
            let element = Expr::seq([self.gap.clone(), element]);
            items.push(if required.contains(&name.as_str()) {
                element
            } else {
                Expr::optional(element)
            });
        }
        items.push(self.gap.clone());
        Ok(Expr::seq(items))
    }

    /// The element of one named parameter.
    fn element(&mut self, name: &str, schema: &Value, rel: &str) -> Result<Expr, Error> {
        let cases = self.cases(schema, rel, 0)?;
        if self.style == Style::CohereXml {
            if name.is_empty() || name.bytes().any(|b| b"\"&<>\0".contains(&b)) {
                return Err(self.unsupported(
                    rel,
                    format!("the parameter name {name:?} would need XML escapes in cohere_xml"),
                ));
            }
            let suffix = self.suffix(cases)?;
            return Ok(Expr::seq([
                Expr::bytes(format!("<cofl:value name=\"{name}\"").into_bytes()),
                suffix,
            ]));
        }
        let value = self.value(cases)?;
        Ok(Expr::seq([
            self.open(Expr::bytes(name.as_bytes())),
            value,
            Expr::bytes(self.end_tag().as_bytes()),
        ]))
    }

    /// The opening of a qwen, minimax or glm element up to its value.
    fn open(&self, name: Expr) -> Expr {
        match self.style {
            Style::MinimaxXml => Expr::seq([
                Expr::bytes(&b"<parameter name=\""[..]),
                name,
                Expr::bytes(&b"\">"[..]),
            ]),
            Style::GlmXml => Expr::seq([
                Expr::bytes(&b"<arg_key>"[..]),
                name,
                Expr::bytes(&b"</arg_key>"[..]),
                self.gap.clone(),
                Expr::bytes(&b"<arg_value>"[..]),
            ]),
            _ => Expr::seq([
                Expr::bytes(&b"<parameter="[..]),
                name,
                Expr::bytes(&b">"[..]),
            ]),
        }
    }

    /// A qwen, minimax or glm value: plain text alone, or the cases between gaps.
    fn value(&mut self, cases: Vec<Case>) -> Result<Expr, Error> {
        if let [Case::Text] = cases.as_slice() {
            return Ok(Expr::rule(self.text()?));
        }
        let mut bodies = Vec::with_capacity(cases.len());
        for case in cases {
            bodies.push(match case {
                Case::Text => Expr::rule(self.text()?),
                Case::Raw(e) | Case::Json(e) | Case::Dict(e) | Case::List(e) => e,
                Case::Any => Expr::rule(self.any()?),
            });
        }
        let body = Expr::choice(bodies).expect("a schema has at least one case");
        Ok(Expr::seq([self.gap.clone(), body, self.gap.clone()]))
    }

    /// A cohere element after its name: each case's `type` attribute, value and end tag.
    fn suffix(&mut self, cases: Vec<Case>) -> Result<Expr, Error> {
        let end = || Expr::bytes(&b"</cofl:value>"[..]);
        let mut alternatives = Vec::with_capacity(cases.len());
        for case in cases {
            let (kind, body) = match case {
                Case::Text => {
                    alternatives.push(Expr::seq([
                        Expr::bytes(&b" type=\"raw\">"[..]),
                        Expr::rule(self.text()?),
                        end(),
                    ]));
                    continue;
                }
                Case::Any => {
                    alternatives.push(Expr::rule(self.any()?));
                    continue;
                }
                Case::Raw(e) => ("raw", e),
                Case::Json(e) => ("json", e),
                Case::Dict(e) => ("dict", e),
                Case::List(e) => ("list", e),
            };
            alternatives.push(Expr::seq([
                Expr::bytes(format!(" type=\"{kind}\">").into_bytes()),
                self.gap.clone(),
                body,
                self.gap.clone(),
                end(),
            ]));
        }
        Ok(Expr::choice(alternatives).expect("a schema has at least one case"))
    }

    /// How a value of `schema` may be written.
    fn cases(&mut self, schema: &Value, rel: &str, refs: usize) -> Result<Vec<Case>, Error> {
        let obj = match schema {
            Value::Bool(true) => return Ok(vec![Case::Any]),
            Value::Bool(false) => {
                return Err(self.unsupported(rel, "the schema `false` allows no value"))
            }
            Value::Object(obj) => obj,
            _ => {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &self.at(rel),
                    "a schema must be an object or a boolean",
                ))
            }
        };
        let others = |allowed: &[&str]| {
            obj.keys()
                .find(|k| !ANNOTATIONS.contains(&k.as_str()) && !allowed.contains(&k.as_str()))
                .cloned()
        };
        let refuse = |this: &Self, key: &str, why: &str| {
            this.unsupported(
                &join(rel, key),
                format!("`{key}` {why} is not supported in an XML style's parameter"),
            )
        };
        if let Some(target) = obj.get("$ref") {
            if let Some(k) = others(&["$ref"]) {
                return Err(refuse(self, &k, "beside `$ref`"));
            }
            let (target, target_rel) = self.follow(obj, target, rel, refs)?;
            return self.cases(&target, &target_rel, refs + 1);
        }
        if obj.contains_key("enum") || obj.contains_key("const") {
            if let Some(k) = others(&["enum", "const", "type"]) {
                return Err(refuse(self, &k, "beside `enum`/`const`"));
            }
            return self.literals(obj, rel);
        }
        if let Some(branches) = obj.get("anyOf") {
            if let Some(k) = others(&["anyOf"]) {
                return Err(refuse(self, &k, "beside `anyOf`"));
            }
            let p = join(rel, "anyOf");
            let branches = branches
                .as_array()
                .filter(|b| !b.is_empty())
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::Invalid,
                        &self.at(&p),
                        "`anyOf` must be a non-empty array",
                    )
                })?;
            let mut cases = Vec::new();
            for (i, branch) in branches.iter().enumerate() {
                cases.extend(self.cases(branch, &join(&p, i), refs)?);
            }
            return Ok(cases);
        }
        let ty = match obj.get("type") {
            None => {
                if let Some(k) = others(&[]) {
                    if k != "properties" && k != "additionalProperties" && k != "required" {
                        return Err(refuse(self, &k, "without a `type`"));
                    }
                    return self.typed(obj, "object", rel);
                }
                return Ok(vec![Case::Any]);
            }
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(types)) => {
                let mut cases = Vec::new();
                for (i, t) in types.iter().enumerate() {
                    let t = t.as_str().ok_or_else(|| {
                        Error::new(
                            ErrorKind::Invalid,
                            &self.at(&join(&join(rel, "type"), i)),
                            "`type` must hold strings",
                        )
                    })?;
                    cases.extend(self.typed(obj, t, rel)?);
                }
                return Ok(cases);
            }
            Some(_) => {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &self.at(&join(rel, "type")),
                    "`type` must be a string or an array of strings",
                ))
            }
        };
        self.typed(obj, &ty, rel)
    }

    /// The cases of `obj` read as type `ty` (one of its `type`s).
    fn typed(&mut self, obj: &Map<String, Value>, ty: &str, rel: &str) -> Result<Vec<Case>, Error> {
        let mut narrowed = obj.clone();
        narrowed.insert("type".to_owned(), Value::String(ty.to_owned()));
        match ty {
            "string" => {
                let get = |k: &str| obj.get(k);
                if let Some(k) = obj.keys().find(|k| {
                    !ANNOTATIONS.contains(&k.as_str())
                        && !["type", "minLength", "maxLength", "pattern"].contains(&k.as_str())
                }) {
                    return Err(self.unsupported(
                        &join(rel, k),
                        format!("`{k}` on a string is not supported in an XML style's parameter"),
                    ));
                }
                if let Some(pattern) = get("pattern") {
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
                    let pattern = pattern.as_str().ok_or_else(|| {
                        Error::new(
                            ErrorKind::Invalid,
                            &self.at(&p),
                            "`pattern` must be a string",
                        )
                    })?;
                    return Ok(vec![Case::Raw(self.pattern(pattern, &p)?)]);
                }
                let length = |k: &str| -> Result<Option<u32>, Error> {
                    match obj.get(k) {
                        None => Ok(None),
                        Some(v) => v
                            .as_u64()
                            .and_then(|n| u32::try_from(n).ok())
                            .map(Some)
                            .ok_or_else(|| {
                                Error::new(
                                    ErrorKind::Invalid,
                                    &self.at(&join(rel, k)),
                                    format!("`{k}` must be a non-negative integer"),
                                )
                            }),
                    }
                };
                let (min, max) = (length("minLength")?, length("maxLength")?);
                if min.is_none() && max.is_none() {
                    return Ok(vec![Case::Text]);
                }
                let body = Expr::repeat(dispatch::utf8_char(), min.unwrap_or(0), max)
                    .map_err(|e| Error::new(ErrorKind::Invalid, &self.at(rel), e.to_string()))?;
                Ok(vec![Case::Raw(body)])
            }
            "integer" | "number" | "boolean" | "null" => {
                Ok(vec![Case::Json(self.json(&Value::Object(narrowed), rel)?)])
            }
            "object" if self.style == Style::CohereXml => Ok(vec![Case::Dict(
                self.object(&Value::Object(narrowed), rel)?,
            )]),
            "array" if self.style == Style::CohereXml => Ok(vec![Case::List(self.list(obj, rel)?)]),
            "array" if bare(obj, "array") => {
                // XGrammar 0.2.8 closes a bare array at the parameter level (only `[]`),
                // unlike nested ones.
                narrowed.insert("items".to_owned(), Value::Bool(false));
                Ok(vec![Case::Json(self.json(&Value::Object(narrowed), rel)?)])
            }
            "object" | "array" => Ok(vec![Case::Json(self.json(&Value::Object(narrowed), rel)?)]),
            other => Err(Error::new(
                ErrorKind::Invalid,
                &self.at(&join(rel, "type")),
                format!("unknown type {other:?}"),
            )),
        }
    }

    /// A cohere list: `<cofl:value type="T">…</cofl:value>` items without gaps between them.
    fn list(&mut self, obj: &Map<String, Value>, rel: &str) -> Result<Expr, Error> {
        if let Some(k) = obj.keys().find(|k| {
            !ANNOTATIONS.contains(&k.as_str())
                && !["type", "items", "minItems", "maxItems"].contains(&k.as_str())
        }) {
            return Err(self.unsupported(
                &join(rel, k),
                format!("`{k}` on an array is not supported in cohere_xml"),
            ));
        }
        let bound = |k: &str| -> Result<Option<u32>, Error> {
            match obj.get(k) {
                None => Ok(None),
                Some(v) => v
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| {
                        Error::new(
                            ErrorKind::Invalid,
                            &self.at(&join(rel, k)),
                            format!("`{k}` must be a non-negative integer"),
                        )
                    }),
            }
        };
        let (min, max) = (bound("minItems")?.unwrap_or(0), bound("maxItems")?);
        let items = match obj.get("items") {
            // Strict mode, and XGrammar 0.2.8 closes bare arrays here too: no items.
            None | Some(Value::Bool(false)) if min == 0 => return Ok(Expr::empty()),
            None | Some(Value::Bool(false)) => {
                return Err(self.unsupported(
                    &join(rel, "minItems"),
                    "`minItems` on a list that allows no items",
                ))
            }
            Some(items) => items,
        };
        let cases = self.cases(items, &join(rel, "items"), 0)?;
        let suffix = self.suffix(cases)?;
        let item = Expr::seq([Expr::bytes(&b"<cofl:value"[..]), suffix]);
        let item = Expr::rule(self.lower.rule("xml_list_item", item, &self.at(rel))?);
        Expr::repeat(item, min, max)
            .map_err(|e| Error::new(ErrorKind::Invalid, &self.at(rel), e.to_string()))
    }

    /// `enum`/`const` values: strings raw, integers, booleans and null as JSON.
    fn literals(&mut self, obj: &Map<String, Value>, rel: &str) -> Result<Vec<Case>, Error> {
        let (key, values): (&str, Vec<&Value>) = match (obj.get("enum"), obj.get("const")) {
            (Some(_), Some(_)) => {
                return Err(self.unsupported(&join(rel, "const"), "`const` beside `enum`"))
            }
            (Some(Value::Array(items)), None) => ("enum", items.iter().collect()),
            (Some(_), None) => {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &self.at(&join(rel, "enum")),
                    "`enum` must be an array",
                ))
            }
            (None, Some(value)) => ("const", vec![value]),
            (None, None) => unreachable!("called with `enum` or `const`"),
        };
        let types: Option<Vec<&str>> = match obj.get("type") {
            None => None,
            Some(Value::String(t)) => Some(vec![t.as_str()]),
            Some(Value::Array(ts)) => Some(ts.iter().filter_map(Value::as_str).collect()),
            Some(_) => {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    &self.at(&join(rel, "type")),
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
                Value::String(s) => Case::Raw(Expr::bytes(s.as_bytes())),
                other => Case::Json(Expr::bytes(other.to_string().into_bytes())),
            });
        }
        if cases.is_empty() {
            return Err(self.unsupported(&join(rel, key), "an empty `enum` allows no value"));
        }
        Ok(cases)
    }

    /// Follows `$ref` (to `#/$defs/…` or `#/definitions/…`) from the schema at `rel`.
    fn follow(
        &self,
        obj: &Map<String, Value>,
        target: &Value,
        rel: &str,
        refs: usize,
    ) -> Result<(Value, String), Error> {
        let p = join(rel, "$ref");
        if refs >= MAX_REFS {
            return Err(Error::new(
                ErrorKind::Limit,
                &self.at(&p),
                format!("more than {MAX_REFS} `$ref`s in a chain"),
            ));
        }
        if let Some(k) = obj
            .keys()
            .find(|k| *k != "$ref" && !ANNOTATIONS.contains(&k.as_str()))
        {
            return Err(self.unsupported(
                &join(rel, k),
                format!("`{k}` beside `$ref` is not supported in an XML style"),
            ));
        }
        let target = target.as_str().ok_or_else(|| {
            Error::new(ErrorKind::Invalid, &self.at(&p), "`$ref` must be a string")
        })?;
        let local = target
            .strip_prefix('#')
            .filter(|t| DEFINITIONS.iter().any(|d| t.starts_with(&format!("/{d}/"))))
            .ok_or_else(|| {
                self.unsupported(&p, format!("`$ref` {target:?}: only references to `#/$defs/…` and `#/definitions/…` are supported in an XML style"))
            })?;
        let resolved = self.root.pointer(local).ok_or_else(|| {
            Error::new(
                ErrorKind::Invalid,
                &self.at(&p),
                format!("`$ref` {target:?} names nothing in the schema"),
            )
        })?;
        Ok((resolved.clone(), local.to_owned()))
    }

    /// A raw `pattern` (the whole text matches), through sieve-regex.
    fn pattern(&mut self, pattern: &str, rel: &str) -> Result<Expr, Error> {
        let at = self.at(rel);
        let grammar =
            sieve_regex::compile(pattern, &sieve_regex::Options::default()).map_err(|e| {
                let source = sieve_diagnostics::SourceFile::new("pattern", pattern);
                Error::new(ErrorKind::Embedded, &at, source.render_error(&e))
            })?;
        Ok(Expr::rule(self.lower.import(
            &grammar,
            "xml_pattern",
            &at,
        )?))
    }

    /// JSON text of `schema` (the definitions of the root kept), without outer gaps.
    fn json(&mut self, schema: &Value, rel: &str) -> Result<Expr, Error> {
        let mut document = schema.clone();
        if let (Value::Object(doc), Value::Object(root)) = (&mut document, &self.root) {
            for key in DEFINITIONS.iter().chain(&["$schema"]) {
                if let Some(v) = root.get(*key) {
                    doc.entry(*key).or_insert_with(|| v.clone());
                }
            }
        }
        self.check_refs(&document, rel)?;
        self.compile_json(&document, rel)
    }

    /// Refuses `$ref`s that would resolve differently in the extracted document.
    fn check_refs(&self, document: &Value, rel: &str) -> Result<(), Error> {
        let mut stack = vec![document];
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
        Ok(())
    }

    fn compile_json(&mut self, document: &Value, rel: &str) -> Result<Expr, Error> {
        let mut options = self.lower.options.json.clone();
        options.whitespace = sieve_jsonschema::Whitespace::Flexible;
        options.max_whitespace = self.max_whitespace;
        let compiled = sieve_jsonschema::compile(document, &options).map_err(|e| {
            let at = if DEFINITIONS
                .iter()
                .any(|d| e.pointer.starts_with(&format!("/{d}")))
            {
                format!("{}{}", self.pointer, e.pointer)
            } else {
                format!("{}{}", self.at(rel), e.pointer)
            };
            Error::new(
                ErrorKind::Embedded,
                &at,
                format!("`{}`: {}", e.keyword, e.message),
            )
        })?;
        let at = self.at(rel);
        let root = self.lower.import(&compiled.grammar, "xml_json", &at)?;
        if let Some(inner) = self.lower.builder.body(root).and_then(without_outer_gaps) {
            self.lower.builder.define(root, inner);
        }
        Ok(Expr::rule(root))
    }

    /// Text up to the end tag (XGrammar's `xml_string`).
    fn text(&mut self) -> Result<RuleId, Error> {
        if let Some(id) = self.text {
            return Ok(id);
        }
        let excludes = [self.end_tag().to_owned()];
        let text = FreeText {
            triggers: &[],
            excludes: &excludes,
            looping: true,
            max_chars: None,
        };
        let id = dispatch::build(
            &mut self.lower.builder,
            "xml_text",
            &text,
            self.lower.options.limits.max_free_text_states,
            &self.pointer,
        )?;
        self.text = Some(id);
        Ok(id)
    }

    /// Any value: text, a JSON array or a JSON object (qwen, minimax, glm); or, for cohere,
    /// an element's part after its name, of any type.
    fn any(&mut self) -> Result<RuleId, Error> {
        if let Some(id) = self.any {
            return Ok(id);
        }
        let p = self.pointer.clone();
        let id = self.lower.fresh("xml_any", &p)?;
        self.any = Some(id);
        let text = Expr::rule(self.text()?);
        let body = if self.style == Style::CohereXml {
            let scalar = self.compile_json(
                &serde_json::json!({"type": ["number", "boolean", "null"]}),
                "",
            )?;
            let object = self.any_object()?;
            let item = Expr::seq([Expr::bytes(&b"<cofl:value"[..]), Expr::rule(id)]);
            let list = Expr::star(item);
            let end = || Expr::bytes(&b"</cofl:value>"[..]);
            let typed = |kind: &str, body: Expr, gap: &Expr| {
                Expr::seq([
                    Expr::bytes(format!(" type=\"{kind}\">").into_bytes()),
                    gap.clone(),
                    body,
                    gap.clone(),
                    end(),
                ])
            };
            Expr::choice([
                Expr::seq([Expr::bytes(&b" type=\"raw\">"[..]), text, end()]),
                typed("json", scalar, &self.gap),
                typed("dict", object, &self.gap),
                typed("list", list, &self.gap),
            ])
            .expect("four alternatives")
        } else {
            let json = self.compile_json(&serde_json::json!({"type": ["array", "object"]}), "")?;
            Expr::choice([text, json]).expect("two alternatives")
        };
        self.lower.builder.define(id, body);
        Ok(id)
    }

    /// Any elements (a schema that says nothing about the parameters).
    fn any_object(&mut self) -> Result<Expr, Error> {
        let element = if self.style == Style::CohereXml {
            let suffix = Expr::rule(self.any()?);
            Expr::seq([
                Expr::bytes(&b"<cofl:value name=\""[..]),
                cohere_key(),
                Expr::bytes(&b"\""[..]),
                suffix,
            ])
        } else {
            let name = Expr::seq([
                Expr::class(ByteClass::from_ranges([
                    (b'a', b'z'),
                    (b'A', b'Z'),
                    (b'_', b'_'),
                ]))
                .expect("non-empty"),
                Expr::star(
                    Expr::class(ByteClass::from_ranges([
                        (b'a', b'z'),
                        (b'A', b'Z'),
                        (b'0', b'9'),
                        (b'_', b'_'),
                    ]))
                    .expect("non-empty"),
                ),
            ]);
            let value = self.value(vec![Case::Any])?;
            Expr::seq([
                self.open(name),
                value,
                Expr::bytes(self.end_tag().as_bytes()),
            ])
        };
        let p = self.pointer.clone();
        let element = self.lower.rule("xml_any_element", element, &p)?;
        Ok(Expr::seq([
            Expr::star(Expr::seq([self.gap.clone(), Expr::rule(element)])),
            self.gap.clone(),
        ]))
    }
}

/// A cohere attribute value: characters other than NUL, `"`, `&`, `<`, `>`, or the entities
/// `&amp;`, `&lt;`, `&gt;`, `&quot;`; at least one.
fn cohere_key() -> Expr {
    let plain = ByteClass::from_ranges([
        (0x01, b'"' - 1),
        (b'"' + 1, b'&' - 1),
        (b'&' + 1, b'<' - 1),
        (b'=', b'='),
        (b'>' + 1, 0x7F),
    ]);
    let mut alternatives = vec![Expr::class(plain).expect("non-empty")];
    if let ExprKind::Choice(chars) = dispatch::utf8_char().kind() {
        // The multi-byte characters (the first alternative is ASCII).
        alternatives.extend(chars.iter().skip(1).cloned());
    }
    for entity in ["&amp;", "&lt;", "&gt;", "&quot;"] {
        alternatives.push(Expr::bytes(entity.as_bytes()));
    }
    Expr::plus(Expr::choice(alternatives).expect("non-empty"))
}
