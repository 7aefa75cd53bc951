//! MiniMax-M3: every marker carries the namespace `]<]minimax[>[`; calls are `invoke` elements
//! with MiniMax M3 XML arguments inside a `tool_call` section triggered from free text (also
//! for `required`, where a section is then mandatory); a forced call is the section around the
//! one invoke. The reasoning block is `<mm:think>…</mm:think>`; in auto mode a lone
//! `</mm:think>` may stand for a skipped block. Builtin tools are refused.

use serde_json::Value;

use super::build::{self, Choice, Prepared, Think};
use super::request::Reasoning;
use super::{choice_error, tools_error};
use crate::error::Error;

const NS: &str = "]<]minimax[>[";
const THINK_BEGIN: &str = "<mm:think>";
const THINK_END: &str = "</mm:think>";

pub(super) fn build(p: &Prepared<'_>) -> Result<Value, Error> {
    if !p.builtins.is_empty() {
        return Err(tools_error("minimax_m3 has no builtin tools"));
    }
    let trigger = format!("{NS}<tool_call>");
    let section_begin = format!("{NS}<tool_call>\n");
    let section_end = format!("{NS}</tool_call>");
    let invoke_open = format!("{NS}<invoke");
    let invoke_close = format!("{NS}</invoke>");
    // Not the bare namespace: every element and the trigger start with it.
    let text_excludes = [
        THINK_BEGIN,
        THINK_END,
        section_end.as_str(),
        invoke_open.as_str(),
        invoke_close.as_str(),
    ];
    let mut reasoning_excludes = vec![trigger.as_str()];
    reasoning_excludes.extend_from_slice(&text_excludes);

    let mut invokes: Vec<Value> = p
        .functions
        .iter()
        .map(|f| {
            build::tag(
                &format!("{NS}<invoke name=\"{}\">", f.name),
                p.arguments(f.schema(), "minimax_m3_xml"),
                &format!("{NS}</invoke>\n"),
            )
        })
        .collect();
    let section = |content: Value| build::tag(&section_begin, content, &section_end);
    let rest = match p.choice {
        Choice::Auto if invokes.is_empty() => build::any_text(p.excludes(&reasoning_excludes)),
        Choice::Required if invokes.is_empty() => {
            return Err(choice_error("`required` needs at least one function tool"))
        }
        Choice::Auto | Choice::Required => build::triggered_tags(
            &[&trigger],
            vec![section(build::tags_with_separator(
                invokes,
                "",
                true,
                p.single_call(),
            ))],
            p.excludes(&text_excludes),
            p.choice == Choice::Required,
            p.single_call(),
        ),
        Choice::Forced => {
            if invokes.is_empty() {
                return Err(choice_error("the forced tool is not a function tool"));
            }
            section(invokes.swap_remove(0))
        }
    };
    let prefix = build::reasoning_prefix(
        p,
        &Think {
            begin: THINK_BEGIN,
            end: THINK_END,
            excludes: &reasoning_excludes,
            prompt_opens: true,
            suffix: "",
        },
    );
    let prefix = match (p.reasoning(), prefix) {
        (Reasoning::Auto, Some(optional)) => {
            // The adaptive prompt closes a skipped block with a lone end marker.
            let block = optional["content"].clone();
            Some(build::optional(build::or(vec![
                block,
                build::const_string(THINK_END),
            ])))
        }
        (_, prefix) => prefix,
    };
    Ok(build::assemble(prefix, rest))
}
