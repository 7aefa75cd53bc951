//! Emitting the parameters of an XML-style `json_schema` (read by the `xml` module) as rules,
//! in the style's syntax, as XGrammar 0.2.8 writes them:
//!
//! - `qwen_xml`: `<parameter=NAME>V</parameter>`; `minimax_xml`:
//!   `<parameter name="NAME">V</parameter>`; `glm_xml`:
//!   `<arg_key>NAME</arg_key> <arg_value>V</arg_value>` (whitespace between the two);
//!   `cohere_xml`: `<cofl:value name="NAME" type="T">V</cofl:value>`, `T` naming the case
//!   (`raw` text, `json` scalar, `dict` of nested elements, `list` of unnamed items with no
//!   whitespace between them); `deepseek_xml`:
//!   `<｜DSML｜parameter name="NAME" string="S">V</｜DSML｜parameter>` (`deepseek_v4_1_xml`:
//!   `｜DSML｜ parameter`), `S` `true` for strings (no whitespace around them), `false` for
//!   JSON; `kimi_k3_xml`:
//!   `<|open|>argument key="NAME" type="T"<|sep|>V<|close|>argument<|sep|>`, `T` the schema's
//!   one type (`integer` written `number`) or, when it declares none, any of seven type names.
//!   `minimax_m3_xml`: `MARKER<NAME>V MARKER</NAME>` (`MARKER` `]<]minimax[>[`), values
//!   without whitespace around them, objects and arrays (`<item>` elements) nested, a list of
//!   elements either nothing or gaps around every element.
//! - Whitespace (a gap, bounded like JSON gaps) before every element and after the last, and
//!   around every value but plain text (`Case::Text`; in deepseek every string case), whose
//!   whitespace is its own.
//! - With `any_order`, the elements are `(gap element | …){required,} gap`: any declared
//!   element each time, at least as many as are required. The `json` style's `any_order`
//!   object is built here too (`json_object`): `{`, `"name": value` members separated by
//!   commas, as many, `}`.
//! - Plain text is free text without the style's end tag (the `dispatch` automaton, so valid
//!   UTF-8); JSON values are compiled by sieve-jsonschema and copied in without their outer
//!   gaps; patterns by sieve-regex.
//!
//! The plain-text rule and the any-value rule are built once per schema.

use sieve_ir::{ByteClass, Expr, ExprKind, RuleId};

use super::Lowerer;
use crate::dispatch::{self, FreeText};
use crate::error::{join, Error, ErrorKind};
use crate::model::Style;
use crate::xml::{Case, Members, DEFINITIONS};

/// One XML-style schema being emitted.
pub(super) struct Xml<'l, 'o> {
    lower: &'l mut Lowerer<'o>,
    style: Style,
    /// The pointer of the `json_schema` field.
    pointer: String,
    /// Whitespace between elements and around values.
    gap: Expr,
    /// The most whitespace bytes per gap (JSON values use the same bound).
    max_whitespace: u32,
    /// Plain text up to the end tag.
    text: Option<RuleId>,
    /// Any value (qwen, minimax, glm, kimi), or any element's part after its name (cohere).
    any: Option<RuleId>,
    /// Substrings text values exclude besides the end tag (`kimi_k3_xml`'s `excludes`).
    excludes: Vec<String>,
}

impl<'l, 'o> Xml<'l, 'o> {
    pub(super) fn new(
        lower: &'l mut Lowerer<'o>,
        style: Style,
        pointer: String,
        max_whitespace: u32,
    ) -> Result<Xml<'l, 'o>, Error> {
        let ws = ByteClass::from_ranges([(b' ', b' '), (b'\t', b'\n'), (b'\r', b'\r')]);
        let gap = Expr::repeat(Expr::class(ws).expect("non-empty"), 0, Some(max_whitespace))
            .map_err(|e| Error::new(ErrorKind::Invalid, &pointer, e.to_string()))?;
        Ok(Xml {
            lower,
            style,
            pointer,
            gap,
            max_whitespace,
            text: None,
            any: None,
            excludes: Vec::new(),
        })
    }

    /// Excludes `excludes` from text values (the `json_schema`'s `excludes`, taken by
    /// `kimi_k3_xml` only). XGrammar 0.2.8 also excludes them from strings inside JSON
    /// values and drops length bounds under them; sieve-jsonschema has no such strings, so
    /// with `excludes` every value that could hold one is refused (`check_excludes`).
    pub(super) fn excluding(mut self, excludes: &[String]) -> Self {
        self.excludes = excludes.to_vec();
        self
    }

    /// With `excludes`, refuses the cases they would change beyond plain text: any value,
    /// length bounds, patterns, JSON that may hold strings, and literals holding an
    /// excluded substring.
    fn check_excludes(&self, name: &str, cases: &[Case]) -> Result<(), Error> {
        if self.excludes.is_empty() {
            return Ok(());
        }
        let at = join(&join(&self.pointer, "properties"), name);
        let refuse = |what: &str| {
            Err(Error::new(
                ErrorKind::Unsupported,
                &at,
                format!("{what} under `excludes` is not supported (XGrammar excludes the substrings inside JSON strings too, or drops the bounds)"),
            ))
        };
        for case in cases {
            match case {
                Case::Text => {}
                Case::Literal { text, .. } => {
                    if self.excludes.iter().any(|e| text.contains(e.as_str())) {
                        return refuse("a literal holding an excluded substring");
                    }
                }
                Case::Json { document, .. } => {
                    let scalar = |t: &serde_json::Value| {
                        t.as_str()
                            .is_some_and(|t| ["integer", "number", "boolean", "null"].contains(&t))
                    };
                    let no_strings = match document.get("type") {
                        Some(serde_json::Value::Array(ts)) => ts.iter().all(scalar),
                        Some(t) => scalar(t),
                        None => false,
                    };
                    if !no_strings {
                        return refuse("a JSON value that may hold strings");
                    }
                }
                Case::Any => return refuse("a value of any type"),
                Case::Chars { .. } => return refuse("a string with length bounds"),
                Case::Pattern { .. } => return refuse("a string with a pattern"),
                Case::Dict(_) | Case::List { .. } => return refuse("a nested value"),
            }
        }
        Ok(())
    }

    /// The elements of `members`: each after a gap (optional ones optional; with
    /// `any_order`, any declared element each time, at least as many as are required), then
    /// a gap.
    pub(super) fn members(&mut self, members: &Members) -> Result<Expr, Error> {
        if self.style == Style::MinimaxM3Xml {
            return self.minimax_members(members);
        }
        let (params, any_order) = match members {
            Members::Any if !self.excludes.is_empty() => {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    &self.pointer,
                    "parameters of any name and value under `excludes` are not supported (their JSON values would exclude the substrings)",
                ))
            }
            Members::Any => return self.any_members(),
            Members::Declared { params, any_order } => (params, *any_order),
        };
        let mut elements = Vec::with_capacity(params.len());
        for param in params {
            self.check_excludes(&param.name, &param.cases)?;
            let element = if let Some(open) = self.attributed_open() {
                Expr::seq([
                    Expr::bytes(format!("{open}{}{}", param.name, self.name_close()).into_bytes()),
                    self.attributed(&param.cases)?,
                ])
            } else {
                let value = self.value(&param.cases)?;
                let name = Expr::bytes(param.name.as_bytes());
                Expr::seq([self.open(name, param.declared_type), value, self.close()])
            };
            elements.push((param.required, Expr::seq([self.gap.clone(), element])));
        }
        if any_order {
            let required = elements.iter().filter(|(r, _)| *r).count();
            return self.any_order(elements.into_iter().map(|(_, e)| e), required, None);
        }
        let mut items: Vec<Expr> = elements
            .into_iter()
            .map(|(required, e)| if required { e } else { Expr::optional(e) })
            .collect();
        items.push(self.gap.clone());
        Ok(Expr::seq(items))
    }

    /// `minimax_m3_xml` elements: nothing at all, or a gap before each element and after
    /// the last (so whitespace alone is refused, as XGrammar 0.2.8 does); declared ones in
    /// order (optional ones optional) or, with `any_order`, any of them each time, at least
    /// as many as are required. An object without `properties` has no elements.
    fn minimax_members(&mut self, members: &Members) -> Result<Expr, Error> {
        let Members::Declared { params, any_order } = members else {
            return Ok(Expr::empty());
        };
        let p = self.pointer.clone();
        let mut elements = Vec::with_capacity(params.len());
        for param in params {
            let element = self.minimax_element(&param.name, &param.cases)?;
            elements.push((param.required, element));
        }
        let required = elements.iter().filter(|(r, _)| *r).count();
        if elements.is_empty() {
            return Ok(Expr::empty());
        }
        if *any_order {
            let item = Expr::choice(elements.into_iter().map(|(_, e)| e)).expect("non-empty");
            let item = Expr::rule(self.lower.rule("xml_any_order_item", item, &p)?);
            return self.minimax_repeat(item, required, None);
        }
        if required > 0 {
            let mut items: Vec<Expr> = elements
                .into_iter()
                .map(|(required, e)| {
                    let e = Expr::seq([self.gap.clone(), e]);
                    if required {
                        e
                    } else {
                        Expr::optional(e)
                    }
                })
                .collect();
            items.push(self.gap.clone());
            return Ok(Expr::seq(items));
        }
        // All optional: the first element present, then the later ones each optional
        // (the suffixes shared as rules).
        let mut suffix = Expr::empty();
        let mut firsts = Vec::with_capacity(elements.len());
        for (_, element) in elements.into_iter().rev() {
            firsts.push(Expr::seq([
                self.gap.clone(),
                element.clone(),
                suffix.clone(),
                self.gap.clone(),
            ]));
            let next = Expr::seq([
                Expr::optional(Expr::seq([self.gap.clone(), element])),
                suffix,
            ]);
            suffix = Expr::rule(self.lower.rule("xml_optional_elements", next, &p)?);
        }
        Ok(Expr::optional(
            Expr::choice(firsts.into_iter().rev()).expect("non-empty"),
        ))
    }

    /// A `minimax_m3_xml` element `MARKER<name>value MARKER</name>` (no gaps around the
    /// value), as a rule.
    fn minimax_element(&mut self, name: &str, cases: &[Case]) -> Result<Expr, Error> {
        let mut bodies = Vec::with_capacity(cases.len());
        for case in cases {
            bodies.push(self.body(case)?);
        }
        let element = Expr::seq([
            Expr::bytes(format!("{MINIMAX_M3_MARKER}<{name}>").into_bytes()),
            Expr::choice(bodies).expect("a value has at least one case"),
            Expr::bytes(format!("{MINIMAX_M3_MARKER}</{name}>").into_bytes()),
        ]);
        let p = self.pointer.clone();
        Ok(Expr::rule(self.lower.rule("xml_element", element, &p)?))
    }

    /// `(gap item){min,max} gap`, at least one item; with `min` 0 also nothing at all.
    fn minimax_repeat(&self, item: Expr, min: usize, max: Option<u32>) -> Result<Expr, Error> {
        let min = u32::try_from(min).unwrap_or(u32::MAX);
        if max == Some(0) {
            return Ok(Expr::empty());
        }
        let items = Expr::repeat(Expr::seq([self.gap.clone(), item]), min.max(1), max)
            .map_err(|e| Error::new(ErrorKind::Invalid, &self.pointer, e.to_string()))?;
        let some = Expr::seq([items, self.gap.clone()]);
        Ok(if min == 0 { Expr::optional(some) } else { some })
    }

    /// `(item | …){min,}` then a gap, where an item is one of `elements`; with `separator`,
    /// items are separated by it and the whole is `{ … }` (a JSON object).
    fn any_order(
        &mut self,
        elements: impl IntoIterator<Item = Expr>,
        min: usize,
        separator: Option<Expr>,
    ) -> Result<Expr, Error> {
        let min = u32::try_from(min).unwrap_or(u32::MAX);
        let Some(item) = Expr::choice(elements) else {
            return Ok(self.gap.clone());
        };
        let p = self.pointer.clone();
        let item = Expr::rule(self.lower.rule("xml_any_order_item", item, &p)?);
        let repeat = |item: Expr, min: u32| {
            Expr::repeat(item, min, None)
                .map_err(|e| Error::new(ErrorKind::Invalid, &p, e.to_string()))
        };
        Ok(match separator {
            None => Expr::seq([repeat(item, min)?, self.gap.clone()]),
            Some(separator) => {
                let more = repeat(Expr::seq([separator, item.clone()]), min.saturating_sub(1))?;
                let some = Expr::seq([item, more]);
                let some = if min == 0 { Expr::optional(some) } else { some };
                Expr::seq([
                    Expr::bytes(&b"{"[..]),
                    self.gap.clone(),
                    some,
                    self.gap.clone(),
                    Expr::bytes(&b"}"[..]),
                ])
            }
        })
    }

    /// A `json`-style object in any order (XGrammar's `any_order`): `{`, members
    /// `"name": value` separated by commas, any declared name each time, at least as many
    /// as are required, `}`.
    pub(super) fn json_object(&mut self, members: &Members) -> Result<Expr, Error> {
        let Members::Declared { params, .. } = members else {
            return Err(Error::new(
                ErrorKind::Unsupported,
                &self.pointer,
                "`any_order` on a schema whose top level declares no `properties` is not supported",
            ));
        };
        let mut elements = Vec::with_capacity(params.len());
        for param in params {
            let key = serde_json::Value::String(param.name.clone()).to_string();
            let mut values = Vec::with_capacity(param.cases.len());
            for case in &param.cases {
                values.push(self.body(case)?);
            }
            elements.push(Expr::seq([
                Expr::bytes(key.into_bytes()),
                self.gap.clone(),
                Expr::bytes(&b":"[..]),
                self.gap.clone(),
                Expr::choice(values).expect("a value has at least one case"),
            ]));
        }
        let required = params.iter().filter(|p| p.required).count();
        let separator = Expr::seq([self.gap.clone(), Expr::bytes(&b","[..]), self.gap.clone()]);
        self.any_order(elements, required, Some(separator))
    }

    /// The element's end tag.
    fn end_tag(&self) -> &'static str {
        match self.style {
            Style::GlmXml => "</arg_value>",
            Style::CohereXml => "</cofl:value>",
            Style::DeepseekXml => "</｜DSML｜parameter>",
            Style::DeepseekV41Xml => "</｜DSML｜ parameter>",
            Style::KimiK3Xml => "<|close|>argument<|sep|>",
            // What its text excludes: every tag starts with it.
            Style::MinimaxM3Xml => MINIMAX_M3_MARKER,
            Style::Json | Style::QwenXml | Style::MinimaxXml => "</parameter>",
        }
    }

    /// What closes the name attribute before the kind attribute: cohere's kind attribute
    /// stands alone (list items have no name), deepseek's starts with the quote.
    fn name_close(&self) -> &'static str {
        if self.style == Style::CohereXml {
            "\""
        } else {
            ""
        }
    }

    /// For the styles that say a value's kind in an attribute (cohere, deepseek): the element
    /// up to its name, which the attributes follow (`attributed`).
    fn attributed_open(&self) -> Option<&'static str> {
        match self.style {
            Style::CohereXml => Some("<cofl:value name=\""),
            Style::DeepseekXml => Some("<｜DSML｜parameter name=\""),
            Style::DeepseekV41Xml => Some("<｜DSML｜ parameter name=\""),
            _ => None,
        }
    }

    fn close(&self) -> Expr {
        Expr::bytes(self.end_tag().as_bytes())
    }

    /// The opening of a qwen, minimax, glm or kimi element, up to its value; `declared` is
    /// kimi's `type` attribute (`None`: any of the seven type names).
    fn open(&self, name: Expr, declared: Option<&str>) -> Expr {
        let b = |s: &str| Expr::bytes(s.as_bytes());
        match self.style {
            Style::KimiK3Xml => {
                let declared = match declared {
                    Some(t) => b(t),
                    None => Expr::choice(KIMI_TYPES.iter().map(|t| b(t))).expect("seven names"),
                };
                Expr::seq([
                    b("<|open|>argument key=\""),
                    name,
                    b("\" type=\""),
                    declared,
                    b("\"<|sep|>"),
                ])
            }
            Style::MinimaxXml => Expr::seq([b("<parameter name=\""), name, b("\">")]),
            Style::GlmXml => Expr::seq([
                b("<arg_key>"),
                name,
                b("</arg_key>"),
                self.gap.clone(),
                b("<arg_value>"),
            ]),
            _ => Expr::seq([b("<parameter="), name, b(">")]),
        }
    }

    /// A qwen, minimax, glm or kimi value: plain text alone, or the cases between gaps.
    fn value(&mut self, cases: &[Case]) -> Result<Expr, Error> {
        if let [Case::Text] = cases {
            return Ok(Expr::rule(self.text()?));
        }
        let mut bodies = Vec::with_capacity(cases.len());
        for case in cases {
            bodies.push(self.body(case)?);
        }
        let body = Expr::choice(bodies).expect("a value has at least one case");
        Ok(Expr::seq([self.gap.clone(), body, self.gap.clone()]))
    }

    /// The text of one case (without the gaps around it).
    fn body(&mut self, case: &Case) -> Result<Expr, Error> {
        Ok(match case {
            Case::Text => Expr::rule(self.text()?),
            Case::Any => Expr::rule(self.any()?),
            Case::Chars { min, max } => Expr::repeat(dispatch::utf8_char(), *min, *max)
                .map_err(|e| Error::new(ErrorKind::Invalid, &self.pointer, e.to_string()))?,
            Case::Pattern { pattern, pointer } => self.pattern(pattern, pointer)?,
            Case::Literal { text, .. } => Expr::bytes(text.as_bytes()),
            Case::Json { document, pointer } => self.json(document, pointer)?,
            Case::Dict(members) => self.members(members)?,
            Case::List { item, min, max } if self.style == Style::MinimaxM3Xml => {
                if item.is_empty() {
                    return Ok(Expr::empty());
                }
                let item = self.minimax_element("item", item)?;
                self.minimax_repeat(item, *min as usize, *max)?
            }
            Case::List { item, min, max } => {
                if item.is_empty() {
                    return Ok(Expr::empty());
                }
                let item = Expr::seq([Expr::bytes(&b"<cofl:value"[..]), self.attributed(item)?]);
                let p = self.pointer.clone();
                let item = Expr::rule(self.lower.rule("xml_list_item", item, &p)?);
                Expr::repeat(item, *min, *max)
                    .map_err(|e| Error::new(ErrorKind::Invalid, &self.pointer, e.to_string()))?
            }
        })
    }

    /// An attributed element after its name: each case's attribute, value and end tag.
    fn attributed(&mut self, cases: &[Case]) -> Result<Expr, Error> {
        let mut alternatives = Vec::with_capacity(cases.len());
        for case in cases {
            if let Case::Any = case {
                alternatives.push(Expr::rule(self.any()?));
                continue;
            }
            let body = self.body(case)?;
            alternatives.push(self.typed(Kind::of(case), body));
        }
        Ok(Expr::choice(alternatives).expect("a value has at least one case"))
    }

    /// The attribute that ends an attributed element's opening tag for a value of this
    /// kind, then `body` (between gaps unless the style writes the kind without them) and the
    /// end tag: cohere ` type="raw|json|dict|list">`, gaps around all but plain text;
    /// deepseek `" string="true">` for strings, without gaps, `" string="false">` for JSON,
    /// with gaps.
    fn typed(&self, kind: Kind, body: Expr) -> Expr {
        let string = matches!(kind, Kind::Text | Kind::Raw);
        let (attribute, gaps) = if self.style == Style::CohereXml {
            let name = match kind {
                Kind::Text | Kind::Raw => "raw",
                Kind::Json => "json",
                Kind::Dict => "dict",
                Kind::List => "list",
            };
            (format!(" type=\"{name}\">"), kind != Kind::Text)
        } else {
            (format!("\" string=\"{string}\">"), !string)
        };
        let attribute = Expr::bytes(attribute.into_bytes());
        if gaps {
            Expr::seq([
                attribute,
                self.gap.clone(),
                body,
                self.gap.clone(),
                self.close(),
            ])
        } else {
            Expr::seq([attribute, body, self.close()])
        }
    }

    /// A raw `pattern` (the whole text matches), through sieve-regex.
    fn pattern(&mut self, pattern: &str, pointer: &str) -> Result<Expr, Error> {
        let grammar =
            sieve_regex::compile(pattern, &sieve_regex::Options::default()).map_err(|e| {
                let source = sieve_diagnostics::SourceFile::new("pattern", pattern);
                Error::new(ErrorKind::Embedded, pointer, source.render_error(&e))
            })?;
        Ok(Expr::rule(self.lower.import(
            grammar,
            "xml_pattern",
            pointer,
        )?))
    }

    /// JSON text of `document`, without outer gaps; errors inside the definitions are located
    /// there, others under the value's `pointer`.
    fn json(&mut self, document: &serde_json::Value, pointer: &str) -> Result<Expr, Error> {
        let mut options = self.lower.options.json.clone();
        options.whitespace = sieve_jsonschema::Whitespace::Flexible;
        options.max_whitespace = self.max_whitespace;
        options.outer_whitespace = false;
        let compiled = sieve_jsonschema::compile(document, &options).map_err(|e| {
            let base = if DEFINITIONS
                .iter()
                .any(|d| e.pointer.starts_with(&format!("/{d}/")))
            {
                &self.pointer
            } else {
                pointer
            };
            Error::new(
                ErrorKind::Embedded,
                &format!("{base}{}", e.pointer),
                format!("`{}`: {}", e.keyword, e.message),
            )
        })?;
        let root = self.lower.import(compiled.grammar, "xml_json", pointer)?;
        Ok(Expr::rule(root))
    }

    /// Text up to the end tag (XGrammar's `xml_string`).
    fn text(&mut self) -> Result<RuleId, Error> {
        if let Some(id) = self.text {
            return Ok(id);
        }
        let mut excludes = vec![self.end_tag().to_owned()];
        excludes.extend(self.excludes.iter().cloned());
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

    /// Any value: text, a JSON array or a JSON object (qwen, minimax, glm, kimi); or, for cohere,
    /// an element's part after its name, of any type (recursive).
    fn any(&mut self) -> Result<RuleId, Error> {
        if let Some(id) = self.any {
            return Ok(id);
        }
        let p = self.pointer.clone();
        let id = self.lower.fresh("xml_any", &p)?;
        self.any = Some(id);
        let text = Expr::rule(self.text()?);
        let body = match self.style {
            Style::CohereXml => {
                let scalar = self.json(
                    &serde_json::json!({"type": ["number", "boolean", "null"]}),
                    &p,
                )?;
                let dict = self.any_members()?;
                let list = Expr::star(Expr::seq([
                    Expr::bytes(&b"<cofl:value"[..]),
                    Expr::rule(id),
                ]));
                Expr::choice([
                    self.typed(Kind::Text, text),
                    self.typed(Kind::Json, scalar),
                    self.typed(Kind::Dict, dict),
                    self.typed(Kind::List, list),
                ])
                .expect("four alternatives")
            }
            Style::DeepseekXml | Style::DeepseekV41Xml => {
                let json = self.json(
                    &serde_json::json!({"type": ["number", "boolean", "null", "array", "object"]}),
                    &p,
                )?;
                Expr::choice([self.typed(Kind::Text, text), self.typed(Kind::Json, json)])
                    .expect("two alternatives")
            }
            _ => {
                let json = self.json(&serde_json::json!({"type": ["array", "object"]}), &p)?;
                Expr::choice([text, json]).expect("two alternatives")
            }
        };
        self.lower.builder.define(id, body);
        Ok(id)
    }

    /// Any elements: names are identifiers (cohere: attribute text), values any.
    fn any_members(&mut self) -> Result<Expr, Error> {
        let class = |ranges: &[(u8, u8)]| {
            Expr::class(ByteClass::from_ranges(ranges.iter().copied())).expect("non-empty")
        };
        let identifier = Expr::seq([
            class(&[(b'a', b'z'), (b'A', b'Z'), (b'_', b'_')]),
            Expr::star(class(&[
                (b'a', b'z'),
                (b'A', b'Z'),
                (b'0', b'9'),
                (b'_', b'_'),
            ])),
        ]);
        let element = match self.attributed_open() {
            Some(open) if self.style == Style::CohereXml => Expr::seq([
                Expr::bytes(open.as_bytes()),
                cohere_name(),
                Expr::bytes(self.name_close().as_bytes()),
                Expr::rule(self.any()?),
            ]),
            Some(open) => Expr::seq([
                Expr::bytes(open.as_bytes()),
                identifier,
                Expr::rule(self.any()?),
            ]),
            None => {
                let value = self.value(&[Case::Any])?;
                Expr::seq([self.open(identifier, None), value, self.close()])
            }
        };
        let p = self.pointer.clone();
        let element = self.lower.rule("xml_any_element", element, &p)?;
        Ok(Expr::seq([
            Expr::star(Expr::seq([self.gap.clone(), Expr::rule(element)])),
            self.gap.clone(),
        ]))
    }
}

/// What starts every `minimax_m3_xml` tag (and its text excludes).
const MINIMAX_M3_MARKER: &str = "]<]minimax[>[";

/// The names `kimi_k3_xml` allows in its `type` attribute when the schema declares no one
/// type.
const KIMI_TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// What an attributed element says about its value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Plain text (no gaps around it).
    Text,
    /// Other raw text.
    Raw,
    /// JSON text.
    Json,
    /// Nested elements (cohere).
    Dict,
    /// List items (cohere).
    List,
}

impl Kind {
    /// The kind of a case (`Case::Any` is written as alternatives of every kind by the
    /// any-value rule, so `attributed` never asks for it).
    fn of(case: &Case) -> Kind {
        match case {
            Case::Text | Case::Any => Kind::Text,
            Case::Chars { .. } | Case::Pattern { .. } | Case::Literal { json: false, .. } => {
                Kind::Raw
            }
            Case::Literal { json: true, .. } | Case::Json { .. } => Kind::Json,
            Case::Dict(_) => Kind::Dict,
            Case::List { .. } => Kind::List,
        }
    }
}

/// A cohere attribute value: characters other than NUL, `"`, `&`, `<`, `>`, or the entities
/// `&amp;`, `&lt;`, `&gt;`, `&quot;`; at least one.
fn cohere_name() -> Expr {
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
