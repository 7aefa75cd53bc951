//! The typed model of a structural-tag document: JSON values are read once, here, into
//! [`Format`] nodes that keep their JSON pointer, so lowering matches on types and every later
//! error can still name its place in the document.
//!
//! Reading is strict: a field of the wrong type, a missing required field or an unknown field
//! is an [`ErrorKind::Invalid`] error at that field (XGrammar's pydantic models ignore unknown
//! fields; a misspelt `excludes` would then silently drop a constraint). Formats sieve does
//! not compile yet are refused here, at their pointer, with [`ErrorKind::Unsupported`].
//!
//! Tokens (`token`, `exclude_tokens`, `trigger_tokens`, a token dispatch's patterns, a tag's
//! token begin or end) are read as written — an id or a name — with their own pointers; they
//! are resolved against the vocabulary when lowered, so a token that does not resolve is an
//! error at its place.

use foldhash::HashMap;
use serde_json::{Map, Value};
use sieve_ir::token::{TokenItem, ID_LIMIT};

use crate::error::{join, Error, ErrorKind};
use crate::Limits;

/// One format of the document, with the pointer of its JSON object.
#[derive(Clone, Debug)]
pub(crate) struct Format {
    /// The JSON pointer of this format's object.
    pub pointer: String,
    /// The object's canonical hash, so equal formats are compiled once.
    pub key: FormatKey,
    /// What it matches.
    pub kind: Kind,
}

/// The format types sieve compiles.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// Exactly this text.
    ConstString(String),
    /// Text accepted by a schema: JSON, or parameters in an XML style.
    JsonSchema(JsonSchema),
    /// An EBNF grammar (root rule `root`).
    Grammar(String),
    /// A regex that the whole text must match.
    Regex(String),
    /// The elements one after another.
    Sequence(Vec<Format>),
    /// One of the elements.
    Or(Vec<Format>),
    /// `begin content end`.
    Tag(Tag),
    /// Any text without the excluded strings, up to `max_chars` characters and spelled
    /// within `max_tokens` tokens.
    AnyText {
        /// Strings the text must not contain.
        excludes: Vec<String>,
        /// The most characters (code points).
        max_chars: Option<u32>,
        /// The most tokens that may hold a byte of the text (`0`: the text is empty).
        max_tokens: Option<u32>,
    },
    /// Free text with tags introduced by trigger strings.
    TriggeredTags {
        /// The trigger strings; each tag's begin starts with exactly one of them.
        triggers: Vec<String>,
        /// The tags.
        tags: Vec<Tag>,
        /// At least one tag (and then the output starts with a tag, as in XGrammar).
        at_least_one: bool,
        /// Nothing after the first tag.
        stop_after_first: bool,
        /// Strings the free text must not contain.
        excludes: Vec<String>,
    },
    /// Tags separated by a separator, nothing else.
    TagsWithSeparator {
        /// The tags.
        tags: Vec<Tag>,
        /// Between two tags.
        separator: String,
        /// At least one tag.
        at_least_one: bool,
        /// At most one tag.
        stop_after_first: bool,
    },
    /// The content between `min` and `max` times (`optional`, `star`, `plus`, `repeat`).
    Repeat {
        /// The repeated format.
        content: Box<Format>,
        /// The fewest repetitions.
        min: u32,
        /// The most, `None` for unbounded.
        max: Option<u32>,
    },
    /// Free text in which each pattern starts its format.
    Dispatch {
        /// `(pattern, format)` pairs.
        rules: Vec<(String, Format)>,
        /// Free text again after a dispatched format (otherwise the format ends there).
        looping: bool,
        /// Strings the free text must not contain.
        excludes: Vec<String>,
    },
    /// Exactly this token.
    Token(Tok),
    /// One token not among these.
    ExcludeToken(Vec<Tok>),
    /// Tokens not among `excludes`, up to `max_tokens` of them.
    AnyTokens {
        /// The tokens it must not hold.
        excludes: Vec<Tok>,
        /// The most tokens.
        max_tokens: Option<u32>,
    },
    /// Tokens with tags introduced by trigger tokens (each tag begins with one of them).
    TokenTriggeredTags {
        /// The trigger tokens.
        triggers: Vec<Tok>,
        /// The tags, each with a token begin.
        tags: Vec<Tag>,
        /// Tokens the free tokens must not hold.
        excludes: Vec<Tok>,
        /// At least one tag (and then the output starts with a tag).
        at_least_one: bool,
        /// Nothing after the first tag.
        stop_after_first: bool,
    },
    /// Free tokens in which each pattern token starts its format.
    TokenDispatch {
        /// `(pattern token, format)` pairs.
        rules: Vec<(Tok, Format)>,
        /// Free tokens again after a dispatched format.
        looping: bool,
        /// Tokens the free tokens must not hold.
        excludes: Vec<Tok>,
    },
}

/// A token as written, by id or by name, with the pointer of its JSON value.
#[derive(Clone, Debug)]
pub(crate) struct Tok {
    /// The pointer of the id or name.
    pub pointer: String,
    /// The id (`Ids(id, id)`) or the name.
    pub item: TokenItem,
}

/// A tag's begin: a string, or one token.
#[derive(Clone, Debug)]
pub(crate) enum Begin {
    /// This text.
    Text(String),
    /// This token.
    Token(Tok),
}

/// A tag's end: one of these strings, or one token.
#[derive(Clone, Debug)]
pub(crate) enum Ends {
    /// One of these texts (at least one).
    Text(Vec<String>),
    /// This token.
    Token(Tok),
}

/// A `tag` format.
#[derive(Clone, Debug)]
pub(crate) struct Tag {
    /// The pointer of the tag's object.
    pub pointer: String,
    /// The begin.
    pub begin: Begin,
    /// The content.
    pub content: Box<Format>,
    /// The end.
    pub ends: Ends,
}

/// A `json_schema` format.
#[derive(Clone, Debug)]
pub(crate) struct JsonSchema {
    /// The schema (`true`, `false` or an object).
    pub schema: Value,
    /// How the value is written: JSON, or one of the XML styles.
    pub style: Style,
    /// Properties in any order.
    pub any_order: bool,
    /// The most consecutive whitespace characters, `None` for no limit.
    pub max_whitespace: Option<u32>,
    /// Substrings forbidden in strings (only the empty list is compiled).
    pub excludes: Vec<String>,
}

/// The `style` of a `json_schema` format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// JSON text.
    Json,
    /// `<parameter=key>value</parameter>`.
    QwenXml,
    /// `<parameter name="key">value</parameter>`.
    MinimaxXml,
    /// `<arg_key>key</arg_key><arg_value>value</arg_value>`.
    GlmXml,
    /// `<cofl:value name="key" type="raw|json|dict|list">value</cofl:value>`, nested.
    CohereXml,
    /// `<｜DSML｜parameter name="key" string="true|false">value</｜DSML｜parameter>`.
    DeepseekXml,
    /// `<｜DSML｜ parameter name="key" string="true|false">value</｜DSML｜ parameter>`.
    DeepseekV41Xml,
    /// `<|open|>argument key="key" type="T"<|sep|>value<|close|>argument<|sep|>`.
    KimiK3Xml,
    /// `]<]minimax[>[<key>value]<]minimax[>[</key>`, objects and arrays nested.
    MinimaxM3Xml,
}

/// The document's top level: `{"type": "structural_tag", "format": …}` (the `type` is
/// optional), read into its format.
pub(crate) fn read_document(value: &Value, limits: &Limits) -> Result<Format, Error> {
    check_nesting(value, limits.max_json_depth)?;
    let obj = object(value, "")?;
    let mut fields = Fields::new(obj, "");
    if let Some(t) = fields.take("type") {
        if t.as_str() != Some("structural_tag") {
            return Err(invalid(
                &join("", "type"),
                "the document's `type` must be \"structural_tag\"",
            ));
        }
    }
    let format = fields.required("format")?;
    let pointer = join("", "format");
    fields.finish()?;
    let mut reader = Reader {
        limits,
        depth: 0,
        formats: 0,
        keys: HashMap::default(),
    };
    reader.format(format, &pointer)
}

/// Reads formats out of one document.
///
/// Every value it reads is part of the document `read_document` borrows for the reader's
/// whole life, so a value's address names it for that long: `keys` relies on it.
struct Reader<'a> {
    limits: &'a Limits,
    depth: usize,
    formats: usize,
    /// The canonical key of each format read so far, by the address of its value: an
    /// enclosing format's key copies its nested formats' keys rather than writing them again.
    keys: HashMap<*const Value, FormatKey>,
}

impl Reader<'_> {
    fn format(&mut self, value: &Value, pointer: &str) -> Result<Format, Error> {
        self.formats += 1;
        if self.formats > self.limits.max_formats {
            return Err(Error::new(
                ErrorKind::Limit,
                pointer,
                format!(
                    "more than {} formats in the document (Limits::max_formats)",
                    self.limits.max_formats
                ),
            ));
        }
        if self.depth >= self.limits.max_depth {
            return Err(Error::new(
                ErrorKind::Limit,
                pointer,
                format!(
                    "formats nested deeper than {} (Limits::max_depth)",
                    self.limits.max_depth
                ),
            ));
        }
        self.depth += 1;
        let result = self.format_inner(value, pointer);
        self.depth -= 1;
        let kind = result?;
        let key = FormatKey::of(value, &self.keys);
        self.keys.insert(std::ptr::from_ref(value), key);
        Ok(Format {
            pointer: pointer.to_owned(),
            key,
            kind,
        })
    }

    fn format_inner(&mut self, value: &Value, pointer: &str) -> Result<Kind, Error> {
        let obj = object(value, pointer)?;
        let mut f = Fields::new(obj, pointer);
        let ty = f.required("type")?;
        let ty = ty
            .as_str()
            .ok_or_else(|| invalid(&join(pointer, "type"), "`type` must be a string"))?;
        let kind = match ty {
            "const_string" => Kind::ConstString(f.string("value")?),
            "json_schema" => Kind::JsonSchema(self.json_schema(&mut f, pointer)?),
            "qwen_xml_parameter" => {
                let schema = self.schema(&mut f, pointer)?;
                Kind::JsonSchema(JsonSchema {
                    schema,
                    style: Style::QwenXml,
                    any_order: false,
                    max_whitespace: None,
                    excludes: Vec::new(),
                })
            }
            "grammar" => Kind::Grammar(f.non_empty_string("grammar")?),
            "regex" => Kind::Regex(f.non_empty_string("pattern")?),
            "sequence" | "or" => {
                let elements = f.required("elements")?;
                let p = join(pointer, "elements");
                let items = elements
                    .as_array()
                    .ok_or_else(|| invalid(&p, "`elements` must be an array of formats"))?;
                if items.is_empty() {
                    return Err(invalid(&p, "`elements` must have at least one format"));
                }
                let formats = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.format(v, &join(&p, i)))
                    .collect::<Result<Vec<_>, _>>()?;
                if ty == "sequence" {
                    Kind::Sequence(formats)
                } else {
                    Kind::Or(formats)
                }
            }
            "tag" => {
                f.finish_with(&["begin", "content", "end"])?;
                Kind::Tag(self.tag_fields(obj, pointer)?)
            }
            "any_text" => {
                let excludes = f.strings_or_default("excludes")?;
                let max_chars = f.budget("max_chars")?;
                let max_tokens = f.budget("max_tokens")?;
                Kind::AnyText {
                    excludes,
                    max_chars,
                    max_tokens,
                }
            }
            "triggered_tags" => {
                let triggers = f.strings("triggers")?;
                let tags = self.tags(&mut f, pointer)?;
                Kind::TriggeredTags {
                    triggers,
                    tags,
                    at_least_one: f.bool_or("at_least_one", false)?,
                    stop_after_first: f.bool_or("stop_after_first", false)?,
                    excludes: f.strings_or_default("excludes")?,
                }
            }
            "tags_with_separator" => {
                let tags = self.tags(&mut f, pointer)?;
                Kind::TagsWithSeparator {
                    tags,
                    separator: f.string("separator")?,
                    at_least_one: f.bool_or("at_least_one", false)?,
                    stop_after_first: f.bool_or("stop_after_first", false)?,
                }
            }
            "optional" | "star" | "plus" => {
                let content =
                    Box::new(self.format(f.required("content")?, &join(pointer, "content"))?);
                let (min, max) = match ty {
                    "optional" => (0, Some(1)),
                    "star" => (0, None),
                    _ => (1, None),
                };
                Kind::Repeat { content, min, max }
            }
            "repeat" => self.repeat(&mut f, pointer)?,
            "dispatch" => {
                let rules_value = f.required("rules")?;
                let p = join(pointer, "rules");
                let items = rules_value.as_array().ok_or_else(|| {
                    invalid(&p, "`rules` must be an array of [pattern, format] pairs")
                })?;
                let mut rules = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let pi = join(&p, i);
                    let pair = item.as_array().filter(|a| a.len() == 2).ok_or_else(|| {
                        invalid(&pi, "each rule must be a [pattern, format] pair")
                    })?;
                    let pattern = pair[0]
                        .as_str()
                        .ok_or_else(|| invalid(&join(&pi, 0), "the pattern must be a string"))?;
                    let format = self.format(&pair[1], &join(&pi, 1))?;
                    rules.push((pattern.to_owned(), format));
                }
                Kind::Dispatch {
                    rules,
                    looping: f.bool_or("loop", true)?,
                    excludes: f.strings_or_default("excludes")?,
                }
            }
            "token" => Kind::Token(token(f.required("token")?, &join(pointer, "token"))?),
            "exclude_token" => Kind::ExcludeToken(f.tokens_or_default("exclude_tokens")?),
            "any_tokens" => {
                let excludes = f.tokens_or_default("exclude_tokens")?;
                let max_tokens = f.budget("max_tokens")?;
                if max_tokens.is_some_and(|max| max > self.limits.max_repeat) {
                    return Err(Error::new(
                        ErrorKind::Limit,
                        &join(pointer, "max_tokens"),
                        format!(
                            "`max_tokens` over {} (Limits::max_repeat: it is compiled as a bounded repetition)",
                            self.limits.max_repeat
                        ),
                    ));
                }
                Kind::AnyTokens {
                    excludes,
                    max_tokens,
                }
            }
            "token_triggered_tags" => {
                let triggers = f.tokens("trigger_tokens")?;
                if triggers.is_empty() {
                    return Err(invalid(
                        &join(pointer, "trigger_tokens"),
                        "`trigger_tokens` must not be empty",
                    ));
                }
                let tags = self.tags(&mut f, pointer)?;
                if tags.is_empty() {
                    return Err(invalid(&join(pointer, "tags"), "`tags` must not be empty"));
                }
                Kind::TokenTriggeredTags {
                    triggers,
                    tags,
                    excludes: f.tokens_or_default("exclude_tokens")?,
                    at_least_one: f.bool_or("at_least_one", false)?,
                    stop_after_first: f.bool_or("stop_after_first", false)?,
                }
            }
            "token_dispatch" => {
                let rules_value = f.required("rules")?;
                let p = join(pointer, "rules");
                let items = rules_value.as_array().ok_or_else(|| {
                    invalid(&p, "`rules` must be an array of [token, format] pairs")
                })?;
                if items.is_empty() {
                    return Err(invalid(&p, "`rules` must not be empty"));
                }
                let mut rules = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let pi = join(&p, i);
                    let pair = item
                        .as_array()
                        .filter(|a| a.len() == 2)
                        .ok_or_else(|| invalid(&pi, "each rule must be a [token, format] pair"))?;
                    let pattern = token(&pair[0], &join(&pi, 0))?;
                    let format = self.format(&pair[1], &join(&pi, 1))?;
                    rules.push((pattern, format));
                }
                Kind::TokenDispatch {
                    rules,
                    looping: f.bool_or("loop", true)?,
                    excludes: f.tokens_or_default("exclude_tokens")?,
                }
            }
            other => {
                return Err(invalid(
                    &join(pointer, "type"),
                    format!("unknown format type {other:?}"),
                ))
            }
        };
        if !matches!(kind, Kind::Tag(_)) {
            f.finish()?;
        }
        Ok(kind)
    }

    fn schema(&mut self, f: &mut Fields<'_>, pointer: &str) -> Result<Value, Error> {
        let schema = f.required("json_schema")?.clone();
        if !(schema.is_object() || schema.is_boolean()) {
            return Err(invalid(
                &join(pointer, "json_schema"),
                "`json_schema` must be an object or a boolean",
            ));
        }
        Ok(schema)
    }

    fn json_schema(&mut self, f: &mut Fields<'_>, pointer: &str) -> Result<JsonSchema, Error> {
        let schema = self.schema(f, pointer)?;
        let style = match f.take("style") {
            None => Style::Json,
            Some(style) => {
                let p = join(pointer, "style");
                match style.as_str() {
                    Some("json") => Style::Json,
                    Some("qwen_xml") => Style::QwenXml,
                    Some("minimax_xml") => Style::MinimaxXml,
                    Some("glm_xml") => Style::GlmXml,
                    Some("cohere_xml") => Style::CohereXml,
                    Some("deepseek_xml") => Style::DeepseekXml,
                    Some("deepseek_v4_1_xml") => Style::DeepseekV41Xml,
                    Some("kimi_k3_xml") => Style::KimiK3Xml,
                    Some("minimax_m3_xml") => Style::MinimaxM3Xml,
                    Some(other) => {
                        return Err(invalid(&p, format!("unknown json_schema style {other:?}")))
                    }
                    None => return Err(invalid(&p, "`style` must be a string")),
                }
            }
        };
        let any_order = f.bool_or("any_order", false)?;
        let max_whitespace = match f.take("max_whitespace_cnt") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        invalid(
                            &join(pointer, "max_whitespace_cnt"),
                            "`max_whitespace_cnt` must be a positive integer or null",
                        )
                    })?,
            ),
        };
        let excludes = f.strings_or_default("excludes")?;
        Ok(JsonSchema {
            schema,
            style,
            any_order,
            max_whitespace,
            excludes,
        })
    }

    fn repeat(&mut self, f: &mut Fields<'_>, pointer: &str) -> Result<Kind, Error> {
        let bound = |v: &Value, name: &str, allow_unbounded: bool| -> Result<Option<u32>, Error> {
            match v.as_i64() {
                Some(-1) if allow_unbounded => Ok(None),
                Some(n) => u32::try_from(n).map(Some).map_err(|_| {
                    invalid(
                        &join(pointer, name),
                        format!(
                            "`{name}` must be a non-negative integer{}",
                            if allow_unbounded { " or -1" } else { "" }
                        ),
                    )
                }),
                None => Err(invalid(
                    &join(pointer, name),
                    format!("`{name}` must be an integer"),
                )),
            }
        };
        let min = bound(f.required("min")?, "min", false)?.unwrap_or(0);
        let max = bound(f.required("max")?, "max", true)?;
        if max.is_some_and(|max| max < min) {
            return Err(invalid(&join(pointer, "max"), "`max` is below `min`"));
        }
        if max.unwrap_or(min) > self.limits.max_repeat {
            return Err(Error::new(
                ErrorKind::Limit,
                pointer,
                format!(
                    "repetition bound over {} (Limits::max_repeat)",
                    self.limits.max_repeat
                ),
            ));
        }
        let content = Box::new(self.format(f.required("content")?, &join(pointer, "content"))?);
        Ok(Kind::Repeat { content, min, max })
    }

    fn tags(&mut self, f: &mut Fields<'_>, pointer: &str) -> Result<Vec<Tag>, Error> {
        let value = f.required("tags")?;
        let p = join(pointer, "tags");
        let items = value
            .as_array()
            .ok_or_else(|| invalid(&p, "`tags` must be an array of tag formats"))?;
        items
            .iter()
            .enumerate()
            .map(|(i, v)| self.tag(v, &join(&p, i)))
            .collect()
    }

    /// A tag given where only tags are allowed (`tags` arrays): `type` may be left out.
    fn tag(&mut self, value: &Value, pointer: &str) -> Result<Tag, Error> {
        let obj = object(value, pointer)?;
        if let Some(t) = obj.get("type") {
            if t.as_str() != Some("tag") {
                return Err(invalid(
                    &join(pointer, "type"),
                    "expected a format of type \"tag\"",
                ));
            }
        }
        let mut f = Fields::new(obj, pointer);
        f.take("type");
        f.finish_with(&["begin", "content", "end"])?;
        self.formats += 1;
        self.tag_fields(obj, pointer)
    }

    fn tag_fields(&mut self, obj: &Map<String, Value>, pointer: &str) -> Result<Tag, Error> {
        let begin = match obj.get("begin") {
            Some(Value::String(s)) => Begin::Text(s.clone()),
            Some(Value::Object(o)) => Begin::Token(token_format(o, &join(pointer, "begin"))?),
            Some(_) => {
                return Err(invalid(
                    &join(pointer, "begin"),
                    "`begin` must be a string or a token format",
                ))
            }
            None => return Err(invalid(pointer, "missing field `begin`")),
        };
        let content = obj
            .get("content")
            .ok_or_else(|| invalid(pointer, "missing field `content`"))?;
        self.depth += 1;
        let content = self.format(content, &join(pointer, "content"));
        self.depth -= 1;
        let content = Box::new(content?);
        let p = join(pointer, "end");
        let ends = match obj.get("end") {
            Some(Value::String(s)) => Ends::Text(vec![s.clone()]),
            Some(Value::Array(items)) => {
                if items.is_empty() {
                    return Err(invalid(&p, "`end` must not be an empty array"));
                }
                Ends::Text(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            v.as_str()
                                .map(str::to_owned)
                                .ok_or_else(|| invalid(&join(&p, i), "end strings must be strings"))
                        })
                        .collect::<Result<_, _>>()?,
                )
            }
            Some(Value::Object(o)) => Ends::Token(token_format(o, &p)?),
            Some(_) => {
                return Err(invalid(
                    &p,
                    "`end` must be a string, an array of strings or a token format",
                ))
            }
            None => return Err(invalid(pointer, "missing field `end`")),
        };
        Ok(Tag {
            pointer: pointer.to_owned(),
            begin,
            content,
            ends,
        })
    }
}

/// The fields of one JSON object, taken one by one so the unknown ones are left to report.
struct Fields<'a> {
    obj: &'a Map<String, Value>,
    pointer: &'a str,
    taken: Vec<&'a str>,
}

impl<'a> Fields<'a> {
    fn new(obj: &'a Map<String, Value>, pointer: &'a str) -> Fields<'a> {
        Fields {
            obj,
            pointer,
            taken: Vec::new(),
        }
    }

    fn take(&mut self, name: &'a str) -> Option<&'a Value> {
        self.taken.push(name);
        self.obj.get(name)
    }

    fn required(&mut self, name: &'a str) -> Result<&'a Value, Error> {
        self.take(name)
            .ok_or_else(|| invalid(self.pointer, format!("missing field `{name}`")))
    }

    fn string(&mut self, name: &'a str) -> Result<String, Error> {
        let p = join(self.pointer, name);
        self.required(name)?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| invalid(&p, format!("`{name}` must be a string")))
    }

    fn non_empty_string(&mut self, name: &'a str) -> Result<String, Error> {
        let s = self.string(name)?;
        if s.is_empty() {
            return Err(invalid(
                &join(self.pointer, name),
                format!("`{name}` must not be empty"),
            ));
        }
        Ok(s)
    }

    fn strings(&mut self, name: &'a str) -> Result<Vec<String>, Error> {
        let value = self.required(name)?;
        strings(value, &join(self.pointer, name), name)
    }

    fn strings_or_default(&mut self, name: &'a str) -> Result<Vec<String>, Error> {
        match self.take(name) {
            None => Ok(Vec::new()),
            Some(value) => strings(value, &join(self.pointer, name), name),
        }
    }

    fn tokens(&mut self, name: &'a str) -> Result<Vec<Tok>, Error> {
        let value = self.required(name)?;
        tokens(value, &join(self.pointer, name), name)
    }

    fn tokens_or_default(&mut self, name: &'a str) -> Result<Vec<Tok>, Error> {
        match self.take(name) {
            None => Ok(Vec::new()),
            Some(value) => tokens(value, &join(self.pointer, name), name),
        }
    }

    fn bool_or(&mut self, name: &'a str, default: bool) -> Result<bool, Error> {
        match self.take(name) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid(
                &join(self.pointer, name),
                format!("`{name}` must be a boolean"),
            )),
        }
    }

    /// An optional count in `0..=i32::MAX` (or null).
    fn budget(&mut self, name: &'a str) -> Result<Option<u32>, Error> {
        match self.take(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|&n| n <= i32::MAX as u64)
                .map(|n| Some(n as u32))
                .ok_or_else(|| {
                    invalid(
                        &join(self.pointer, name),
                        format!("`{name}` must be an integer from 0 to 2147483647, or null"),
                    )
                }),
        }
    }

    /// Marks `names` as known without reading them (read elsewhere).
    fn finish_with(&mut self, names: &[&'a str]) -> Result<(), Error> {
        self.taken.extend_from_slice(names);
        self.finish()
    }

    /// Fails on the first field no reader took.
    fn finish(&self) -> Result<(), Error> {
        match self.obj.keys().find(|k| !self.taken.contains(&k.as_str())) {
            Some(k) => Err(invalid(
                &join(self.pointer, k),
                format!("unknown field `{k}`"),
            )),
            None => Ok(()),
        }
    }
}

fn strings(value: &Value, pointer: &str, name: &str) -> Result<Vec<String>, Error> {
    let items = value
        .as_array()
        .ok_or_else(|| invalid(pointer, format!("`{name}` must be an array of strings")))?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| invalid(&join(pointer, i), format!("`{name}` must hold strings")))
        })
        .collect()
}

/// A token as written: an id (a non-negative integer) or a non-empty name.
fn token(value: &Value, pointer: &str) -> Result<Tok, Error> {
    let item = match value {
        Value::Number(n) => {
            let id = n
                .as_u64()
                .filter(|&id| id < u64::from(ID_LIMIT))
                .ok_or_else(|| {
                    invalid(
                        pointer,
                        format!("a token id must be an integer from 0 to {}", ID_LIMIT - 1),
                    )
                })?;
            TokenItem::Ids(id as u32, id as u32)
        }
        Value::String(name) if !name.is_empty() => TokenItem::Named(name.clone()),
        Value::String(_) => return Err(invalid(pointer, "a token name must not be empty")),
        _ => {
            return Err(invalid(
                pointer,
                "a token must be an id (an integer) or a name (a string)",
            ))
        }
    };
    Ok(Tok {
        pointer: pointer.to_owned(),
        item,
    })
}

/// An array of tokens.
fn tokens(value: &Value, pointer: &str, name: &str) -> Result<Vec<Tok>, Error> {
    let items = value.as_array().ok_or_else(|| {
        invalid(
            pointer,
            format!("`{name}` must be an array of token ids and names"),
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| token(v, &join(pointer, i)))
        .collect()
}

/// A `token` format given as a tag's begin or end (`type` may be left out).
fn token_format(obj: &Map<String, Value>, pointer: &str) -> Result<Tok, Error> {
    let mut f = Fields::new(obj, pointer);
    if let Some(t) = f.take("type") {
        if t.as_str() != Some("token") {
            return Err(invalid(
                &join(pointer, "type"),
                "a tag's begin or end object must be a format of type \"token\"",
            ));
        }
    }
    let tok = token(f.required("token")?, &join(pointer, "token"))?;
    f.finish()?;
    Ok(tok)
}

/// Fails when JSON values nest deeper than `max` (checked without recursion), so the
/// recursive walks over the document (canonical keys, the schema rewrite, the JSON Schema
/// front-end) stay shallow even for a document built in memory rather than parsed.
fn check_nesting(value: &Value, max: usize) -> Result<(), Error> {
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        if depth > max {
            return Err(Error::new(
                ErrorKind::Limit,
                "",
                format!("JSON values nest deeper than {max} (Limits::max_json_depth)"),
            ));
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    Ok(())
}

fn object<'a>(value: &'a Value, pointer: &str) -> Result<&'a Map<String, Value>, Error> {
    value
        .as_object()
        .ok_or_else(|| invalid(pointer, "expected a JSON object"))
}

fn invalid(pointer: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, pointer, message)
}

/// The identity of a format's JSON value for compiling it once: a 128-bit hash of the value
/// read canonically — object members in key order, numbers by kind and value (`1` and `1.0`
/// differ), strings by their bytes — so two spellings of one format (members in another
/// order) get one key, and different formats different keys up to a 2⁻¹²⁸-scale collision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FormatKey([u64; 2]);

/// Tags that keep the encodings of different JSON kinds apart.
const K_NULL: u64 = 0x6e75_6c6c;
const K_FALSE: u64 = 0x6661_6c73;
const K_TRUE: u64 = 0x7472_7565;
const K_UNSIGNED: u64 = 0x7536_3421;
const K_SIGNED: u64 = 0x6936_3421;
const K_FLOAT: u64 = 0x6636_3421;
const K_STRING: u64 = 0x7374_7221;
const K_ARRAY: u64 = 0x6172_7221;
const K_OBJECT: u64 = 0x6f62_6a21;
const K_MEMBER: u64 = 0x6d65_6d62_6572_2131;

impl FormatKey {
    /// The key of `value`: a Merkle hash, each array item and object member folded in by its
    /// own key, so a nested value already in `known` (by address) is read from there rather
    /// than hashed again, with the same result.
    fn of(value: &Value, known: &HashMap<*const Value, FormatKey>) -> FormatKey {
        if let Some(&key) = known.get(&std::ptr::from_ref(value)) {
            return key;
        }
        let mut key = FormatKey([0x7369_6576_655f_6b31, 0x666f_726d_6174_3221]);
        match value {
            Value::Null => key.fold(K_NULL),
            Value::Bool(false) => key.fold(K_FALSE),
            Value::Bool(true) => key.fold(K_TRUE),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    key.fold(K_UNSIGNED);
                    key.fold(u);
                } else if let Some(i) = n.as_i64() {
                    key.fold(K_SIGNED);
                    key.fold(i as u64);
                } else {
                    key.fold(K_FLOAT);
                    key.fold(n.as_f64().unwrap_or(f64::NAN).to_bits());
                }
            }
            Value::String(text) => key.fold_str(text),
            Value::Array(items) => {
                key.fold(K_ARRAY ^ ((items.len() as u64) << 32));
                for item in items {
                    key.fold_key(FormatKey::of(item, known));
                }
            }
            Value::Object(map) => {
                key.fold(K_OBJECT ^ ((map.len() as u64) << 32));
                // The members in any order: the sum of each member's own key (names are
                // unique, so this is a hash of the set), with no sorting.
                let mut sum = [0u64; 2];
                for (name, member) in map {
                    let mut entry = FormatKey([K_MEMBER, !K_MEMBER]);
                    entry.fold_str(name);
                    entry.fold_key(FormatKey::of(member, known));
                    sum[0] = sum[0].wrapping_add(entry.0[0]);
                    sum[1] = sum[1].wrapping_add(entry.0[1]);
                }
                key.fold(sum[0]);
                key.fold(sum[1]);
            }
        }
        key
    }

    fn fold(&mut self, word: u64) {
        for (lane, h) in (0u32..).zip(self.0.iter_mut()) {
            let z = (*h ^ word.rotate_left(17 * lane + 1))
                .wrapping_add(0x9e37_79b9_7f4a_7c15)
                .wrapping_mul(0xbf58_476d_1ce4_e5b9 ^ u64::from(lane));
            *h = (z ^ (z >> 29)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *h ^= *h >> 32;
        }
    }

    fn fold_key(&mut self, key: FormatKey) {
        self.fold(key.0[0]);
        self.fold(key.0[1]);
    }

    fn fold_str(&mut self, text: &str) {
        self.fold(K_STRING ^ ((text.len() as u64) << 32));
        for chunk in text.as_bytes().chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.fold(u64::from_le_bytes(word));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{read_document, FormatKey, Kind};
    use crate::Limits;
    use serde_json::json;

    fn fresh(value: &serde_json::Value) -> FormatKey {
        FormatKey::of(value, &Default::default())
    }

    /// Members are read in key order at every level, so two spellings of one format get one
    /// key; any other difference (order of items, a number's kind, a string's bytes, where a
    /// value sits) gives another.
    #[test]
    fn keys_ignore_member_order_only() {
        let a = json!({"type": "tag", "begin": "<a\"é>", "content": {"z": [1, 2.5, null], "a": {"y": true, "b": "\n"}}});
        let b = json!({"content": {"a": {"b": "\n", "y": true}, "z": [1, 2.5, null]}, "begin": "<a\"é>", "type": "tag"});
        assert_eq!(fresh(&a), fresh(&b));
        let different = [
            json!({"a": [1, 2]}),
            json!({"a": [2, 1]}),
            json!({"a": 1}),
            json!({"a": 1.0}),
            json!({"a": -1}),
            json!({"a": "1"}),
            json!({"a": [1]}),
            json!({"a": null}),
            json!({"a": false}),
            json!({"a": true}),
            json!({"b": 1}),
            json!({"a": {}}),
            json!({"a": []}),
            json!({"a": ""}),
            json!({"a": "12345678"}),
            json!({"a": "12345678\u{0}"}),
            json!({"a": [null, null]}),
            json!({"a": [[null], null]}),
            json!({"a": [null, [null]]}),
            json!({"ab": "c"}),
            json!({"a": "bc"}),
        ];
        for (i, x) in different.iter().enumerate() {
            for y in &different[i + 1..] {
                assert_ne!(fresh(x), fresh(y), "{x} and {y}");
            }
        }
    }

    /// An enclosing format's key reads its nested formats' keys: it must equal the key
    /// computed from scratch.
    #[test]
    fn nested_keys_reused_equal_keys_computed_afresh() {
        let content = json!({"value": "xé", "type": "const_string"});
        let tag = json!({"type": "tag", "end": "</a>", "content": content, "begin": "<a>"});
        let document = json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [tag, content]}});
        let format = read_document(&document, &Limits::default()).unwrap();
        let Kind::Sequence(elements) = &format.kind else {
            panic!("a sequence: {:?}", format.kind)
        };
        assert_eq!(elements[0].key, fresh(&tag));
        assert_eq!(elements[1].key, fresh(&content));
        let Kind::Tag(tag_format) = &elements[0].kind else {
            panic!("a tag: {:?}", elements[0].kind)
        };
        assert_eq!(tag_format.content.key, fresh(&content));
        assert_eq!(format.key, fresh(&document["format"]));
    }
}
