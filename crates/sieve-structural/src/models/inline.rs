//! Formats that write each call straight into the free text, recognised by a trigger string:
//! llama, qwen_3, exaone (JSON objects), qwen_3_5 / qwen_3_coder and mimo (Qwen XML
//! parameters), glm_4_7 (GLM XML).
//!
//! One shape, one [`Layout`] of strings per format: a call is `begin_prefix NAME begin_suffix
//! ARGUMENTS end`; auto is free text with triggered calls (text only when no function tool is
//! left), required the same with at least one call, forced the one call alone; parallel calls
//! off stops after the first call. Builtin tools are ignored, as in XGrammar, except by mimo,
//! which refuses them.

use serde_json::Value;

use super::build::{self, Choice, Prepared, Think};
use super::{choice_error, tools_error};
use crate::error::Error;

const THINK: [&str; 2] = ["<think>", "</think>"];

/// The strings of one format.
struct Layout {
    begin_prefix: &'static str,
    begin_suffix: &'static str,
    end: &'static str,
    trigger: &'static str,
    style: &'static str,
    /// Excluded from the text around calls.
    text_excludes: &'static [&'static str],
    /// Excluded from the text when no function tool is left.
    plain_excludes: &'static [&'static str],
    think: Option<ThinkLayout>,
    /// Builtin tools are an error (with this message) rather than ignored.
    refuses_builtins: Option<&'static str>,
}

/// The reasoning block of a format.
struct ThinkLayout {
    excludes: &'static [&'static str],
    /// Enabled reasoning excludes nothing (the exclusions apply in auto mode only).
    excludes_only_when_auto: bool,
    prompt_opens: bool,
    suffix: &'static str,
}

/// Llama 3.x: `{"name": "NAME", "parameters": {…}}`; no reasoning block.
pub(super) fn llama(p: &Prepared<'_>) -> Result<Value, Error> {
    build(
        p,
        &Layout {
            begin_prefix: "{\"name\": \"",
            begin_suffix: "\", \"parameters\": ",
            end: "}",
            trigger: "{\"name\": ",
            style: "json",
            text_excludes: &THINK,
            plain_excludes: &THINK,
            think: None,
            refuses_builtins: None,
        },
    )
}

/// Qwen 3 (Hermes style): `<tool_call>\n{"name": "NAME", "arguments": {…}}\n</tool_call>`.
pub(super) fn qwen_3(p: &Prepared<'_>) -> Result<Value, Error> {
    build(
        p,
        &Layout {
            begin_prefix: "<tool_call>\n{\"name\": \"",
            begin_suffix: "\", \"arguments\": ",
            end: "}\n</tool_call>",
            trigger: "<tool_call>",
            style: "json",
            text_excludes: &THINK,
            plain_excludes: &THINK,
            think: Some(ThinkLayout {
                excludes: &THINK,
                excludes_only_when_auto: false,
                prompt_opens: true,
                suffix: "\n\n",
            }),
            refuses_builtins: None,
        },
    )
}

/// EXAONE 4.0: Qwen 3's calls without the newlines.
pub(super) fn exaone(p: &Prepared<'_>) -> Result<Value, Error> {
    build(
        p,
        &Layout {
            begin_prefix: "<tool_call>{\"name\": \"",
            begin_suffix: "\", \"arguments\": ",
            end: "}</tool_call>",
            trigger: "<tool_call>",
            style: "json",
            text_excludes: &THINK,
            plain_excludes: &THINK,
            think: Some(ThinkLayout {
                excludes: &THINK,
                excludes_only_when_auto: true,
                prompt_opens: true,
                suffix: "\n\n",
            }),
            refuses_builtins: None,
        },
    )
}

/// Qwen 3.5 and Qwen3-Coder: `<tool_call>\n<function=NAME>\n` Qwen XML parameters
/// `\n</function>\n</tool_call>`.
pub(super) fn qwen_3_5(p: &Prepared<'_>) -> Result<Value, Error> {
    build(
        p,
        &Layout {
            begin_prefix: "<tool_call>\n<function=",
            begin_suffix: ">\n",
            end: "\n</function>\n</tool_call>",
            trigger: "<tool_call>\n<function=",
            style: "qwen_xml",
            text_excludes: &THINK,
            plain_excludes: &THINK,
            think: Some(ThinkLayout {
                excludes: &THINK,
                excludes_only_when_auto: false,
                prompt_opens: true,
                suffix: "\n\n",
            }),
            refuses_builtins: None,
        },
    )
}

/// MiMo: Qwen XML parameters without the newlines; the prompt does not open the reasoning
/// block.
pub(super) fn mimo(p: &Prepared<'_>) -> Result<Value, Error> {
    const TEXT: [&str; 4] = ["<think>", "</think>", "</tool_call>", "<function="];
    const REASONING: [&str; 5] = [
        "<tool_call>",
        "<think>",
        "</think>",
        "</tool_call>",
        "<function=",
    ];
    build(
        p,
        &Layout {
            begin_prefix: "<tool_call><function=",
            begin_suffix: ">",
            end: "</function></tool_call>",
            trigger: "<tool_call>",
            style: "qwen_xml",
            text_excludes: &TEXT,
            plain_excludes: &REASONING,
            think: Some(ThinkLayout {
                excludes: &REASONING,
                excludes_only_when_auto: false,
                prompt_opens: false,
                suffix: "",
            }),
            refuses_builtins: Some("mimo has no builtin tools"),
        },
    )
}

/// GLM-4.7 / GLM-5: `<tool_call>NAME` GLM XML arguments `</tool_call>`; the tool-call
/// control strings stay out of all free text.
pub(super) fn glm_4_7(p: &Prepared<'_>) -> Result<Value, Error> {
    const REASONING: [&str; 8] = [
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
    ];
    const TEXT: [&str; 7] = [
        "<think>",
        "</think>",
        "</tool_call>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
    ];
    build(
        p,
        &Layout {
            begin_prefix: "<tool_call>",
            begin_suffix: "",
            end: "</tool_call>",
            trigger: "<tool_call>",
            style: "glm_xml",
            text_excludes: &TEXT,
            plain_excludes: &REASONING,
            think: Some(ThinkLayout {
                excludes: &REASONING,
                excludes_only_when_auto: false,
                prompt_opens: true,
                suffix: "",
            }),
            refuses_builtins: None,
        },
    )
}

fn build(p: &Prepared<'_>, layout: &Layout) -> Result<Value, Error> {
    if let Some(message) = layout.refuses_builtins {
        if !p.builtins.is_empty() {
            return Err(tools_error(message));
        }
    }
    let mut calls = p.functions.iter().map(|f| {
        let begin = format!("{}{}{}", layout.begin_prefix, f.name, layout.begin_suffix);
        build::tag(&begin, p.arguments(f.schema(), layout.style), layout.end)
    });
    let rest = match p.choice {
        Choice::Forced => calls
            .next()
            .ok_or_else(|| choice_error("the forced tool is not a function tool"))?,
        Choice::Auto | Choice::Required => {
            let required = p.choice == Choice::Required;
            let calls: Vec<Value> = calls.collect();
            if calls.is_empty() {
                if required {
                    return Err(choice_error("`required` needs at least one function tool"));
                }
                build::any_text(p.excludes(layout.plain_excludes))
            } else {
                build::triggered_tags(
                    &[layout.trigger],
                    calls,
                    p.excludes(layout.text_excludes),
                    required,
                    p.single_call(),
                )
            }
        }
    };
    let prefix = layout.think.as_ref().and_then(|t| {
        let excludes: &[&str] =
            if t.excludes_only_when_auto && p.reasoning() == super::Reasoning::Enabled {
                &[]
            } else {
                t.excludes
            };
        build::reasoning_prefix(
            p,
            &Think {
                begin: "<think>",
                end: "</think>",
                excludes,
                prompt_opens: t.prompt_opens,
                suffix: t.suffix,
            },
        )
    });
    Ok(build::assemble(prefix, rest))
}
