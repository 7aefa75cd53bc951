//! Formats that group calls in a section with its own begin and end markers: deepseek_r1,
//! deepseek_v3_1 (JSON arguments), kimi (numbered calls, JSON arguments), cohere (numbered
//! calls, Cohere XML), deepseek_v3_2, deepseek_v4, deepseek_v4_1 (DSML invokes) and minimax
//! (MiniMax invokes).
//!
//! One shape: auto is free text in which the section's begin triggers the section (calls
//! joined by a separator, at least one; parallel calls off allows one call and one section);
//! required is the section alone; forced is the section around the one call — for the two
//! DeepSeek JSON formats one tag whose begin and end absorb the section markers, for the others
//! the markers as constant strings, after a lead (`"\n\n"` for DSML, `"\n"` for MiniMax).
//! Builtin tools are ignored, as in XGrammar.

use serde_json::Value;

use super::build::{self, Choice, Prepared, Think};
use super::choice_error;
use super::request::{FunctionTool, Reasoning};
use crate::error::Error;

const THINK: [&str; 2] = ["<think>", "</think>"];

/// One call: `begin content end`.
struct Call {
    begin: String,
    content: Value,
    end: String,
}

/// How a forced call is written.
enum Forced {
    /// One tag: `section_begin + call.begin`, the arguments, `call.end + section_end`.
    Merged,
    /// `lead + section_begin`, the call, `section_end` as a sequence.
    Wrapped { lead: &'static str },
}

/// The strings and choices of one format.
struct Layout {
    call: fn(&Prepared<'_>, &FunctionTool) -> Call,
    separator: &'static str,
    section_begin: String,
    section_end: String,
    trigger: String,
    forced: Forced,
    /// Excluded from free text around sections.
    text_excludes: Vec<&'static str>,
    /// Excluded from free text when no function tool is left.
    plain_excludes: Vec<&'static str>,
    /// Excluded from that text even when special strings are allowed.
    plain_always_excludes: Vec<String>,
    think_begin: &'static str,
    think_end: &'static str,
    think_excludes: Vec<&'static str>,
    /// Enabled reasoning excludes nothing (the exclusions apply in auto mode only).
    think_excludes_only_when_auto: bool,
    think_suffix: &'static str,
    /// With reasoning disabled the output starts with these constant strings (an empty
    /// reasoning block the prompt leaves open), instead of having no prefix.
    disabled_lead: Option<[&'static str; 2]>,
}

impl Layout {
    fn deepseek(call: fn(&Prepared<'_>, &FunctionTool) -> Call, separator: &'static str) -> Layout {
        Layout {
            call,
            separator,
            section_begin: "<｜tool▁calls▁begin｜>".into(),
            section_end: "<｜tool▁calls▁end｜>".into(),
            trigger: "<｜tool▁calls▁begin｜>".into(),
            forced: Forced::Merged,
            text_excludes: THINK.to_vec(),
            plain_excludes: THINK.to_vec(),
            plain_always_excludes: Vec::new(),
            think_begin: "<think>",
            think_end: "</think>",
            think_excludes: THINK.to_vec(),
            think_excludes_only_when_auto: false,
            think_suffix: "",
            disabled_lead: None,
        }
    }

    /// DeepSeek's DSML invokes: `invoke` and `calls` are the element names.
    fn dsml(call: fn(&Prepared<'_>, &FunctionTool) -> Call, calls: &str) -> Layout {
        Layout {
            section_begin: format!("<｜DSML｜{calls}>\n"),
            section_end: format!("</｜DSML｜{calls}>"),
            trigger: format!("<｜DSML｜{calls}>"),
            separator: "",
            forced: Forced::Wrapped { lead: "\n\n" },
            ..Layout::deepseek(call, "")
        }
    }
}

/// DeepSeek-R1: calls with a JSON code block, one a line.
pub(super) fn deepseek_r1(p: &Prepared<'_>) -> Result<Value, Error> {
    fn call(p: &Prepared<'_>, f: &FunctionTool) -> Call {
        Call {
            begin: format!(
                "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{}\n```json\n",
                f.name
            ),
            content: p.arguments(f.schema(), "json"),
            end: "\n```<｜tool▁call▁end｜>".into(),
        }
    }
    build(p, &Layout::deepseek(call, "\n"))
}

/// DeepSeek-V3.1: `NAME<｜tool▁sep｜>` then the JSON arguments.
pub(super) fn deepseek_v3_1(p: &Prepared<'_>) -> Result<Value, Error> {
    fn call(p: &Prepared<'_>, f: &FunctionTool) -> Call {
        Call {
            begin: format!("<｜tool▁call▁begin｜>{}<｜tool▁sep｜>", f.name),
            content: p.arguments(f.schema(), "json"),
            end: "<｜tool▁call▁end｜>".into(),
        }
    }
    build(p, &Layout::deepseek(call, ""))
}

/// DeepSeek-V3.2: DSML `invoke` elements with DeepSeek XML parameters.
pub(super) fn deepseek_v3_2(p: &Prepared<'_>) -> Result<Value, Error> {
    build(p, &Layout::dsml(invoke, "function_calls"))
}

/// DeepSeek-V4: V3.2's invokes inside `tool_calls`.
pub(super) fn deepseek_v4(p: &Prepared<'_>) -> Result<Value, Error> {
    build(p, &Layout::dsml(invoke, "tool_calls"))
}

/// DeepSeek-V4.1: space-prefixed ` invoke` and ` calls`; without tools, a calls block is kept
/// out of the text even when special strings are allowed.
pub(super) fn deepseek_v4_1(p: &Prepared<'_>) -> Result<Value, Error> {
    fn call(p: &Prepared<'_>, f: &FunctionTool) -> Call {
        Call {
            begin: format!("<｜DSML｜ invoke name=\"{}\">\n", f.name),
            content: p.arguments(f.schema(), "deepseek_v4_1_xml"),
            end: "</｜DSML｜ invoke>\n".into(),
        }
    }
    let mut layout = Layout::dsml(call, " calls");
    layout.plain_always_excludes = vec![layout.trigger.clone()];
    build(p, &layout)
}

fn invoke(p: &Prepared<'_>, f: &FunctionTool) -> Call {
    Call {
        begin: format!("<｜DSML｜invoke name=\"{}\">\n", f.name),
        content: p.arguments(f.schema(), "deepseek_xml"),
        end: "</｜DSML｜invoke>\n".into(),
    }
}

/// Kimi-K2: numbered `functions.NAME:N` calls with JSON arguments.
pub(super) fn kimi(p: &Prepared<'_>) -> Result<Value, Error> {
    fn call(p: &Prepared<'_>, f: &FunctionTool) -> Call {
        Call {
            begin: format!("<|tool_call_begin|>functions.{}:", f.name),
            content: build::sequence(vec![
                build::regex("\\d+"),
                build::const_string("<|tool_call_argument_begin|>"),
                p.arguments(f.schema(), "json"),
            ]),
            end: "<|tool_call_end|>".into(),
        }
    }
    build(
        p,
        &Layout {
            section_begin: "<|tool_calls_section_begin|>".into(),
            section_end: "<|tool_calls_section_end|>".into(),
            trigger: "<|tool_calls_section_begin|>".into(),
            forced: Forced::Wrapped { lead: "" },
            text_excludes: vec!["<think>", "</think>", "<|tool_call_begin|>"],
            think_excludes_only_when_auto: true,
            ..Layout::deepseek(call, "")
        },
    )
}

/// Cohere: numbered `<cofl:tool_call>` elements with Cohere XML arguments.
pub(super) fn cohere(p: &Prepared<'_>) -> Result<Value, Error> {
    fn call(p: &Prepared<'_>, f: &FunctionTool) -> Call {
        Call {
            begin: "<cofl:tool_call id=\"".into(),
            content: build::sequence(vec![
                build::regex("\\d+"),
                build::const_string(&format!("\" name=\"{}\">", f.name)),
                p.arguments(f.schema(), "cohere_xml"),
            ]),
            end: "</cofl:tool_call>".into(),
        }
    }
    const THINKING: [&str; 2] = ["<|START_THINKING|>", "<|END_THINKING|>"];
    build(
        p,
        &Layout {
            section_begin: "<cofl:tool_calls>".into(),
            section_end: "</cofl:tool_calls>".into(),
            trigger: "<cofl:tool_calls>".into(),
            forced: Forced::Wrapped { lead: "" },
            text_excludes: THINKING.to_vec(),
            plain_excludes: THINKING.to_vec(),
            think_begin: THINKING[0],
            think_end: THINKING[1],
            think_excludes: THINKING.to_vec(),
            think_excludes_only_when_auto: true,
            ..Layout::deepseek(call, "")
        },
    )
}

/// MiniMax-M2.5: `<invoke>` elements with MiniMax XML parameters; reasoning disabled starts
/// by closing an empty reasoning block.
pub(super) fn minimax(p: &Prepared<'_>) -> Result<Value, Error> {
    fn call(p: &Prepared<'_>, f: &FunctionTool) -> Call {
        Call {
            begin: format!("<invoke name=\"{}\">\n", f.name),
            content: p.arguments(f.schema(), "minimax_xml"),
            end: "</invoke>\n".into(),
        }
    }
    build(
        p,
        &Layout {
            section_begin: "<minimax:tool_call>\n".into(),
            section_end: "</minimax:tool_call>".into(),
            trigger: "<minimax:tool_call>".into(),
            forced: Forced::Wrapped { lead: "\n" },
            think_excludes_only_when_auto: true,
            think_suffix: "\n\n",
            disabled_lead: Some(["\n</think>\n\n", "\n\n"]),
            ..Layout::deepseek(call, "")
        },
    )
}

fn build(p: &Prepared<'_>, layout: &Layout) -> Result<Value, Error> {
    let calls: Vec<Call> = p.functions.iter().map(|f| (layout.call)(p, f)).collect();
    let rest = match p.choice {
        Choice::Auto if calls.is_empty() => {
            let mut excludes = p.excludes(&layout.plain_excludes);
            excludes.extend(layout.plain_always_excludes.iter().cloned());
            build::any_text(excludes)
        }
        Choice::Auto => {
            let section = build::tag(
                &layout.section_begin,
                joined(p, layout, calls),
                &layout.section_end,
            );
            build::triggered_tags(
                &[&layout.trigger],
                vec![section],
                p.excludes(&layout.text_excludes),
                false,
                p.single_call(),
            )
        }
        Choice::Required if calls.is_empty() => {
            return Err(choice_error("`required` needs at least one function tool"))
        }
        Choice::Required => match layout.forced {
            Forced::Merged => build::tag(
                &layout.section_begin,
                joined(p, layout, calls),
                &layout.section_end,
            ),
            Forced::Wrapped { lead } => build::sequence(vec![
                build::const_string(&format!("{lead}{}", layout.section_begin)),
                joined(p, layout, calls),
                build::const_string(&layout.section_end),
            ]),
        },
        Choice::Forced => {
            let call = calls
                .into_iter()
                .next()
                .ok_or_else(|| choice_error("the forced tool is not a function tool"))?;
            match layout.forced {
                Forced::Merged => build::tag(
                    &format!("{}{}", layout.section_begin, call.begin),
                    call.content,
                    &format!("{}{}", call.end, layout.section_end),
                ),
                Forced::Wrapped { lead } => build::sequence(vec![
                    build::const_string(&format!("{lead}{}", layout.section_begin)),
                    build::tag(&call.begin, call.content, &call.end),
                    build::const_string(&layout.section_end),
                ]),
            }
        }
    };
    if let (Reasoning::Disabled, Some(lead)) = (p.reasoning(), layout.disabled_lead) {
        let mut elements: Vec<Value> = lead.iter().map(|s| build::const_string(s)).collect();
        elements.push(rest);
        return Ok(build::document(build::sequence(elements)));
    }
    let excludes: &[&str] =
        if layout.think_excludes_only_when_auto && p.reasoning() == Reasoning::Enabled {
            &[]
        } else {
            &layout.think_excludes
        };
    let prefix = build::reasoning_prefix(
        p,
        &Think {
            begin: layout.think_begin,
            end: layout.think_end,
            excludes,
            prompt_opens: true,
            suffix: layout.think_suffix,
        },
    );
    Ok(build::assemble(prefix, rest))
}

/// The calls joined by the separator: at least one, only one when parallel calls are off.
fn joined(p: &Prepared<'_>, layout: &Layout, calls: Vec<Call>) -> Value {
    let tags = calls
        .into_iter()
        .map(|c| build::tag(&c.begin, c.content, &c.end))
        .collect();
    build::tags_with_separator(tags, layout.separator, true, p.single_call())
}
