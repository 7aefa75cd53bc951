//! sieve's structural-tag front-end: XGrammar's structural-tag JSON (the format of xgrammar
//! 0.2.8: `{"type": "structural_tag", "format": {…}}`) becomes a [`Grammar`] with the same
//! language, or an [`Error`] naming the JSON pointer of what sieve cannot compile.
//!
//! # Formats
//!
//! Compiled: `const_string`, `json_schema` (styles `json`, `qwen_xml`, `minimax_xml`,
//! `glm_xml`, `cohere_xml`, `deepseek_xml` and `deepseek_v4_1_xml`, with
//! `max_whitespace_cnt`), `qwen_xml_parameter`, `grammar`
//! (XGrammar EBNF through `sieve-gbnf`), `regex` (through `sieve-regex`), `sequence`, `or`,
//! `optional`, `star`, `plus`, `repeat`, `tag` (one end or several), `any_text` (`excludes`,
//! `max_chars`, `max_tokens` — a rule with a token limit, `sieve_ir::Rule::max_tokens`),
//! `triggered_tags` (`triggers`, `tags`, `at_least_one`, `stop_after_first`,
//! `excludes`), `tags_with_separator`, `dispatch` (`rules`, `loop`, `excludes`), and the
//! token formats — `token`, `exclude_token`, `any_tokens` (`max_tokens`),
//! `token_triggered_tags`, `token_dispatch` and a tag's token begin or end — as token
//! terminals (`sieve_ir::token`) resolved against [`Options::tokens`].
//!
//! Refused with [`ErrorKind::Unsupported`] at the format's pointer: token names and excluded
//! tokens without [`Options::tokens`]; `json_schema`'s `excludes` (but on `kimi_k3_xml`'s
//! text values), and its `any_order` on objects nested in JSON values (it is compiled for
//! the top-level object, module `xml`); in the XML styles, every schema keyword the style's
//! writer does not read.
//!
//! # Free text
//!
//! `any_text`, `triggered_tags` and `dispatch` contain free text, compiled by the `dispatch`
//! module into right-linear rules from an Aho–Corasick automaton over the triggers and the
//! excluded strings (never `.*` with look-ahead), so the language stays regular there and
//! masks stay exact. Free text is valid UTF-8 (XGrammar lets it hold any bytes: a deliberate
//! difference, see `docs/structural-tags.md`).
//!
//! # JSON
//!
//! `json_schema` contents are compiled by `sieve-jsonschema` with flexible whitespace
//! (XGrammar's `any_whitespace`) bounded by `max_whitespace_cnt`, or by
//! [`Options::json_max_whitespace`] when the document gives none (XGrammar: unbounded), and in
//! XGrammar's strict mode (objects and arrays closed unless the schema opens them; module
//! `strict`).
//!
//! # Modules
//!
//! - `model`: the typed document (formats with their pointers); strict reading.
//! - `lower`: formats to rules, XGrammar's semantics for each type; `lower::xml`: the XML
//!   styles' parameters as elements.
//! - `xml`: an XML-style schema read into typed parameters (how each value may be written).
//! - `dispatch`: free text as an automaton, emitted as rules.
//! - `strict`: XGrammar's strict-mode defaults as a schema rewrite.
//! - `error`: [`Error`] and [`ErrorKind`].

mod dispatch;
mod error;
mod lower;
mod model;
pub mod models;
mod strict;
mod xml;

pub use error::{Error, ErrorKind};
pub use models::{model_structural_tag, ToolRequest};

use sieve_ir::Grammar;

/// Bounds on the work and size of one compilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The deepest nesting of formats. Default: 64.
    pub max_depth: usize,
    /// The most formats in one document. Default: 100,000.
    pub max_formats: usize,
    /// The most grammar rules the structural tag itself adds (embedded grammars and schemas
    /// count too). Default: 1,000,000.
    pub max_rules: usize,
    /// The most states of one free-text automaton (Aho–Corasick × UTF-8 × character count).
    /// Default: 100,000.
    pub max_free_text_states: usize,
    /// The largest bound of a `repeat`. Default: 10,000.
    pub max_repeat: u32,
    /// The deepest nesting of JSON values in the document (embedded schemas included).
    /// Default: 256.
    pub max_json_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: 64,
            max_formats: 100_000,
            max_rules: 1_000_000,
            max_free_text_states: 100_000,
            max_repeat: 10_000,
            max_json_depth: 256,
        }
    }
}

/// How to compile a structural tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The base options of embedded JSON Schemas; whitespace is always flexible and
    /// `max_whitespace` is set per schema; property names and `const`/`enum` values are
    /// written literally (canonical escapes only, as XGrammar writes them) unless
    /// `key_escapes` and `literal_escapes` say otherwise (`None` here means canonical too, not
    /// "as `escapes`").
    pub json: sieve_jsonschema::Options,
    /// The most whitespace characters per JSON gap when a `json_schema` gives no
    /// `max_whitespace_cnt` (XGrammar then allows any number; sieve keeps a bound so a model
    /// cannot loop on whitespace). Default: 16.
    pub json_max_whitespace: u32,
    /// Work and size limits.
    pub limits: Limits,
    /// The vocabulary token formats resolve against (and nested `grammar` formats' token
    /// terminals). Without one, only tokens given by id compile (`token`, a tag's token
    /// begin or end, dispatch patterns); names and every format that excludes tokens are
    /// refused.
    pub tokens: Option<sieve_ir::token::SharedNames>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            json: sieve_jsonschema::Options::default(),
            json_max_whitespace: 16,
            limits: Limits::default(),
            tokens: None,
        }
    }
}

/// Compiles a structural-tag document to a grammar whose root rule is `root`.
///
/// # Errors
///
/// An [`Error`] with the JSON pointer of the offending value; see the crate docs for what is
/// refused.
pub fn compile(document: &serde_json::Value, options: &Options) -> Result<Grammar, Error> {
    let format = model::read_document(document, &options.limits)?;
    // XGrammar writes the property names a schema declares, and its listed values, literally;
    // so does sieve here, unless the caller chose a spelling.
    let mut options = options.clone();
    options
        .json
        .key_escapes
        .get_or_insert(sieve_jsonschema::Escapes::Canonical);
    options
        .json
        .literal_escapes
        .get_or_insert(sieve_jsonschema::Escapes::Canonical);
    lower::Lowerer::new(&options).finish(&format)
}

/// [`compile`] from JSON text; text that is not JSON is an [`ErrorKind::Invalid`] error at the
/// root whose message gives the line and column.
pub fn compile_str(text: &str, options: &Options) -> Result<Grammar, Error> {
    let document: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::Invalid,
            "",
            format!("not JSON (line {}, column {}): {e}", e.line(), e.column()),
        )
    })?;
    compile(&document, options)
}
