//! `%json { … }`: an inline JSON Schema through sieve's JSON Schema front-end, with
//! llguidance's `x-guidance` options mapped to sieve's.
//!
//! | `x-guidance` key | sieve |
//! |---|---|
//! | `whitespace_flexible` (default `true`) | `true`: [`Whitespace::Flexible`] with `Options::json_max_whitespace` (16) characters per gap (llguidance allows any amount); `false`: [`Whitespace::Compact`] |
//! | `item_separator`, `key_separator` | the same options |
//! | `lenient` | the same option |
//! | `json_allowed_escapes` | with `u`: [`Escapes::Any`]; without: [`Escapes::Canonical`] (the closest sieve has) |
//! | `json_allow_general_unicode_escapes` | accepted; sieve's strings already allow every `\uXXXX` escape |
//! | `whitespace_pattern`, `coerce_one_of: true` | refused with a located error |
//!
//! Whitespace is allowed between the JSON tokens only, not before or after the value (as in
//! llguidance, whose JSON whitespace is the `%ignore` of the JSON lexemes).
//!
//! Invariant: every error points at the `%json` object.

use sieve_diagnostics::Span;
use sieve_ir::Grammar;
use sieve_jsonschema::{Escapes, Whitespace};

use crate::error::{Error, ErrorKind};

/// Compiles the schema text `text` found at `span`.
pub(crate) fn compile(
    text: &str,
    base: &sieve_jsonschema::Options,
    max_whitespace: u32,
    span: Span,
) -> Result<Grammar, Error> {
    let err = |m: String| Error::new(ErrorKind::Json, span, m);
    let mut schema: serde_json::Value =
        serde_json::from_str(text).map_err(|e| err(format!("`%json` needs a JSON schema: {e}")))?;
    let mut options = base.clone();
    options.whitespace = Whitespace::Flexible;
    options.max_whitespace = max_whitespace;
    // llguidance allows JSON whitespace only *between* the tokens of the JSON text (its
    // `%ignore` rule), not around the value.
    options.outer_whitespace = false;
    if let Some(map) = schema.as_object_mut() {
        if let Some(guidance) = map.remove("x-guidance") {
            apply(&guidance, &mut options).map_err(err)?;
        }
    }
    let compiled = sieve_jsonschema::compile(&schema, &options).map_err(|e| {
        let pointer = if e.pointer.is_empty() {
            "#"
        } else {
            &e.pointer
        };
        let keyword = if e.keyword.is_empty() {
            String::new()
        } else {
            format!("`{}`: ", e.keyword)
        };
        err(format!(
            "in this schema at {pointer}: {keyword}{}",
            e.message
        ))
    })?;
    Ok(compiled.grammar)
}

fn apply(
    guidance: &serde_json::Value,
    options: &mut sieve_jsonschema::Options,
) -> Result<(), String> {
    let serde_json::Value::Object(map) = guidance else {
        return Err("`x-guidance` must be an object".to_owned());
    };
    for (key, value) in map {
        let wrong = || format!("`x-guidance`: `{key}` has the wrong type");
        match key.as_str() {
            "whitespace_flexible" => {
                options.whitespace = if value.as_bool().ok_or_else(wrong)? {
                    Whitespace::Flexible
                } else {
                    Whitespace::Compact
                };
            }
            "item_separator" => options.item_separator = value.as_str().ok_or_else(wrong)?.to_owned(),
            "key_separator" => options.key_separator = value.as_str().ok_or_else(wrong)?.to_owned(),
            "lenient" => options.lenient = value.as_bool().ok_or_else(wrong)?,
            "json_allowed_escapes" => {
                let escapes = value.as_str().ok_or_else(wrong)?;
                options.escapes = if escapes.contains('u') {
                    Escapes::Any
                } else {
                    Escapes::Canonical
                };
            }
            "json_allow_general_unicode_escapes" => {
                value.as_bool().ok_or_else(wrong)?;
            }
            "coerce_one_of" if value == &serde_json::Value::Bool(false) => {}
            "whitespace_pattern" if value.is_null() => {}
            _ => {
                return Err(format!(
                    "`x-guidance`: `{key}` is not supported (sieve maps whitespace_flexible, item_separator, key_separator, lenient, json_allowed_escapes, json_allow_general_unicode_escapes)"
                ))
            }
        }
    }
    Ok(())
}
