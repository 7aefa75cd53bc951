//! Harmony (gpt-oss): a stream of messages joined by `<|start|>assistant`: tool calls on the
//! commentary channel (three spellings for function tools, two for builtin tools, JSON
//! arguments, ended by `<|call|>`), the final message (auto only) and, unless reasoning is
//! disabled, analysis messages.
//!
//! With parallel calls off only the calls are capped — any messages, then at most one call,
//! which ends the turn — as an `or` of: messages only, one call only, messages then one call.

use serde_json::Value;

use super::build::{self, Choice, Prepared};
use super::request::Reasoning;
use crate::error::Error;

const CALL_END: &str = "<|call|>";
const MESSAGE_ENDS: [&str; 2] = ["<|end|>", "<|return|>"];
const SEPARATOR: &str = "<|start|>assistant";

pub(super) fn build(p: &Prepared<'_>) -> Result<Value, Error> {
    let function_calls = |name: &str, schema: Value| -> Vec<Value> {
        let args = p.arguments(schema, "json");
        [
            format!("<|channel|>commentary to=functions.{name}<|constrain|>json<|message|>"),
            format!(" to=functions.{name}<|channel|>commentary <|constrain|>json<|message|>"),
            format!(" to=functions.{name}<|channel|>commentary json<|message|>"),
        ]
        .iter()
        .map(|begin| build::tag(begin, args.clone(), CALL_END))
        .collect()
    };
    let builtin_calls = |name: &str, schema: Value| -> Vec<Value> {
        let args = p.arguments(schema, "json");
        [
            format!("<|channel|>commentary to={name} code<|message|>"),
            format!(" to={name}<|channel|>commentary code<|message|>"),
        ]
        .iter()
        .map(|begin| build::tag(begin, args.clone(), CALL_END))
        .collect()
    };
    let functions = p
        .functions
        .iter()
        .flat_map(|f| function_calls(&f.name, f.schema()));
    let builtins = p
        .builtins
        .iter()
        .flat_map(|b| builtin_calls(b.output_name(), b.schema()));
    let mut calls: Vec<Value> = match p.choice {
        Choice::Auto => functions.chain(builtins).collect(),
        // A forced builtin tool comes before a function (only one of them is left).
        Choice::Forced | Choice::Required => builtins.chain(functions).collect(),
    };
    let mut messages = Vec::new();
    if p.choice == Choice::Auto {
        messages.push(message("<|channel|>final<|message|>"));
    }
    if p.reasoning() != Reasoning::Disabled {
        messages.push(message("<|channel|>analysis<|message|>"));
    }
    if p.request.parallel_tool_calls || calls.is_empty() {
        // Every call ends with CALL_END and every message without it, so the calls come
        // first in the tag list, as they were built.
        calls.extend(messages);
        return Ok(build::document(build::tags_with_separator(
            calls, SEPARATOR, false, false,
        )));
    }
    let one_call = build::tags_with_separator(calls, SEPARATOR, true, true);
    if messages.is_empty() {
        return Ok(build::document(build::optional(one_call)));
    }
    Ok(build::document(build::or(vec![
        build::tags_with_separator(messages.clone(), SEPARATOR, false, false),
        one_call.clone(),
        build::sequence(vec![
            build::tags_with_separator(messages, SEPARATOR, true, false),
            build::const_string(SEPARATOR),
            one_call,
        ]),
    ])))
}

/// A message: free text ended by `<|end|>` or `<|return|>`.
fn message(begin: &str) -> Value {
    build::tag_ends(begin, build::any_text(Vec::new()), &MESSAGE_ENDS)
}
