//! The pieces every model format is built from: format objects in the exact JSON shape XGrammar
//! 0.2.8 dumps (`model_dump(by_alias=True)`: every field present, defaults included, so the
//! differential fixtures compare whole values), the request after `tool_choice` is applied
//! ([`Prepared`]), and the conventional leading reasoning block.
//!
//! Invariant: a builder here never drops or reorders what it is given; the formats' modules
//! decide structure, this module only spells it.

use serde_json::{json, Value};

use super::request::{BuiltinTool, FunctionTool, Reasoning, ToolRequest};

/// `{"type": "const_string", …}`.
pub(super) fn const_string(value: &str) -> Value {
    json!({"type": "const_string", "value": value})
}

/// `{"type": "regex", …}`.
pub(super) fn regex(pattern: &str) -> Value {
    json!({"type": "regex", "pattern": pattern})
}

/// `{"type": "tag", …}` with one end string.
pub(super) fn tag(begin: &str, content: Value, end: &str) -> Value {
    json!({"type": "tag", "begin": begin, "content": content, "end": end})
}

/// `{"type": "tag", …}` with several end strings.
pub(super) fn tag_ends(begin: &str, content: Value, ends: &[&str]) -> Value {
    json!({"type": "tag", "begin": begin, "content": content, "end": ends})
}

/// `{"type": "any_text", …}` without budgets.
pub(super) fn any_text(excludes: Vec<String>) -> Value {
    json!({"type": "any_text", "excludes": excludes, "max_tokens": null, "max_chars": null})
}

/// `{"type": "sequence", …}`.
pub(super) fn sequence(elements: Vec<Value>) -> Value {
    json!({"type": "sequence", "elements": elements})
}

/// `{"type": "or", …}`.
pub(super) fn or(elements: Vec<Value>) -> Value {
    json!({"type": "or", "elements": elements})
}

/// `{"type": "optional", …}`.
pub(super) fn optional(content: Value) -> Value {
    json!({"type": "optional", "content": content})
}

/// `{"type": "triggered_tags", …}`.
pub(super) fn triggered_tags(
    triggers: &[&str],
    tags: Vec<Value>,
    excludes: Vec<String>,
    at_least_one: bool,
    stop_after_first: bool,
) -> Value {
    json!({
        "type": "triggered_tags",
        "triggers": triggers,
        "tags": tags,
        "at_least_one": at_least_one,
        "stop_after_first": stop_after_first,
        "excludes": excludes,
    })
}

/// `{"type": "tags_with_separator", …}`.
pub(super) fn tags_with_separator(
    tags: Vec<Value>,
    separator: &str,
    at_least_one: bool,
    stop_after_first: bool,
) -> Value {
    json!({
        "type": "tags_with_separator",
        "tags": tags,
        "separator": separator,
        "at_least_one": at_least_one,
        "stop_after_first": stop_after_first,
    })
}

/// The document: `{"type": "structural_tag", "format": …}`.
pub(super) fn document(format: Value) -> Value {
    json!({"type": "structural_tag", "format": format})
}

/// `tool_choice` reduced to what a format needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Choice {
    /// Text, or calls of the listed tools (none listed: text only).
    Auto,
    /// At least one call of the listed tools.
    Required,
    /// Exactly one call of the one listed tool.
    Forced,
}

/// A request after `tool_choice` filtered its tools.
pub(super) struct Prepared<'a> {
    /// The function tools left, in request order.
    pub functions: Vec<&'a FunctionTool>,
    /// The builtin tools left, in request order.
    pub builtins: Vec<&'a BuiltinTool>,
    /// What the choice became.
    pub choice: Choice,
    /// The request's options.
    pub request: &'a ToolRequest,
}

impl Prepared<'_> {
    /// `strings` as a free-text exclusion list, or nothing when the request keeps special
    /// strings allowed.
    pub fn excludes(&self, strings: &[&str]) -> Vec<String> {
        if self.request.exclude_special_tokens {
            strings.iter().map(|s| (*s).to_owned()).collect()
        } else {
            Vec::new()
        }
    }

    /// Tool arguments: a `json_schema` format of `style` with the request's options.
    pub fn arguments(&self, schema: Value, style: &str) -> Value {
        self.arguments_excluding(schema, style, Vec::new())
    }

    /// [`Prepared::arguments`] with strings excluded from the arguments' string values.
    pub fn arguments_excluding(&self, schema: Value, style: &str, excludes: Vec<String>) -> Value {
        json!({
            "type": "json_schema",
            "json_schema": schema,
            "style": style,
            "any_order": self.request.any_order,
            "max_whitespace_cnt": self.request.max_whitespace_cnt,
            "excludes": excludes,
        })
    }

    /// Whether at most one call is allowed.
    pub fn single_call(&self) -> bool {
        !self.request.parallel_tool_calls
    }

    /// The reasoning mode.
    pub fn reasoning(&self) -> Reasoning {
        self.request.reasoning
    }
}

/// A model's leading reasoning block.
pub(super) struct Think<'a> {
    /// Opens the block.
    pub begin: &'a str,
    /// Closes the block.
    pub end: &'a str,
    /// Strings the reasoning text must not contain.
    pub excludes: &'a [&'a str],
    /// The prompt already ends with `begin` when reasoning is enabled, so the output starts
    /// inside the block.
    pub prompt_opens: bool,
    /// Text after the block (`"\n\n"` for Qwen).
    pub suffix: &'a str,
}

/// The reasoning block for the request's mode: none when disabled, the block (its `begin`
/// left to the prompt when it opens it) when enabled, the complete block or nothing when auto.
pub(super) fn reasoning_prefix(prepared: &Prepared<'_>, think: &Think<'_>) -> Option<Value> {
    let mode = prepared.reasoning();
    if mode == Reasoning::Disabled {
        return None;
    }
    let begin = if mode == Reasoning::Enabled && think.prompt_opens {
        ""
    } else {
        think.begin
    };
    let mut prefix = tag(
        begin,
        any_text(prepared.excludes(think.excludes)),
        think.end,
    );
    if !think.suffix.is_empty() {
        prefix = sequence(vec![prefix, const_string(think.suffix)]);
    }
    if mode == Reasoning::Auto {
        prefix = optional(prefix);
    }
    Some(prefix)
}

/// The document of an optional reasoning prefix followed by the rest.
pub(super) fn assemble(prefix: Option<Value>, rest: Value) -> Value {
    match prefix {
        None => document(rest),
        Some(prefix) => document(sequence(vec![prefix, rest])),
    }
}
