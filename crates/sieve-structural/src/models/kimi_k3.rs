//! Kimi-K3: token-delimited blocks `<|open|>NAME<|sep|> … <|close|>NAME<|sep|>`. The prompt
//! opens the first block (`think` with reasoning, `response` without), so the output starts
//! inside it; then the response block, an optional (auto) or mandatory `tools` block of
//! numbered `call` blocks with Kimi-K3 XML arguments, and `<|close|>message<|sep|>`.
//! Builtin tools are ignored, as in XGrammar.

use serde_json::Value;

use super::build::{self, Choice, Prepared, Think};
use super::choice_error;
use super::request::Reasoning;
use crate::error::Error;

const OPEN: &str = "<|open|>";
const CLOSE: &str = "<|close|>";
const SEP: &str = "<|sep|>";

pub(super) fn build(p: &Prepared<'_>) -> Result<Value, Error> {
    let block = |verb: &str, name: &str| format!("{verb}{name}{SEP}");
    let markers = [OPEN, CLOSE];
    let mut calls: Vec<Value> = p
        .functions
        .iter()
        .map(|f| {
            build::tag(
                &format!("{OPEN}call tool=\"{}\" index=\"", f.name),
                build::sequence(vec![
                    build::regex("\\d+"),
                    build::const_string(&format!("\"{SEP}")),
                    p.arguments_excluding(
                        f.schema(),
                        "kimi_k3_xml",
                        p.excludes(&[OPEN, CLOSE, SEP]),
                    ),
                ]),
                &block(CLOSE, "call"),
            )
        })
        .collect();
    let tools_begin = block(OPEN, "tools");
    let tools_end = block(CLOSE, "tools");
    let tools = match p.choice {
        Choice::Auto if calls.is_empty() => None,
        Choice::Auto => Some(build::optional(build::tag(
            &tools_begin,
            build::tags_with_separator(calls, "", true, p.single_call()),
            &tools_end,
        ))),
        Choice::Required if calls.is_empty() => {
            return Err(choice_error("`required` needs at least one function tool"))
        }
        Choice::Required => Some(build::sequence(vec![
            build::const_string(&tools_begin),
            build::tags_with_separator(calls, "", true, p.single_call()),
            build::const_string(&tools_end),
        ])),
        Choice::Forced => {
            if calls.is_empty() {
                return Err(choice_error("the forced tool is not a function tool"));
            }
            Some(build::sequence(vec![
                build::const_string(&tools_begin),
                calls.swap_remove(0),
                build::const_string(&tools_end),
            ]))
        }
    };
    let think_begin = block(OPEN, "think");
    let think_end = block(CLOSE, "think");
    let mut elements: Vec<Value> = build::reasoning_prefix(
        p,
        &Think {
            begin: &think_begin,
            end: &think_end,
            excludes: &markers,
            prompt_opens: true,
            suffix: "",
        },
    )
    .into_iter()
    .collect();
    let response_begin = if p.reasoning() == Reasoning::Disabled {
        String::new()
    } else {
        block(OPEN, "response")
    };
    elements.push(build::tag(
        &response_begin,
        build::any_text(p.excludes(&markers)),
        &block(CLOSE, "response"),
    ));
    elements.extend(tools);
    elements.push(build::const_string(&block(CLOSE, "message")));
    Ok(build::document(build::sequence(elements)))
}
