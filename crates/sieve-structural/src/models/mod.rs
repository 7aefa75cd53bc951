//! Model tool-calling formats: from an OpenAI-style [`ToolRequest`] (tools, `tool_choice`,
//! parallel calls, a reasoning mode), the structural tag of a model's output format — the same
//! documents, under the same names, as XGrammar 0.2.8's `get_model_structural_tag`, so
//! [`crate::compile`] of the result constrains a model to its own tool-call syntax.
//!
//! [`model_structural_tag`] returns the document as JSON (equal, as a JSON value, to XGrammar's
//! `model_dump(by_alias=True)`; checked by the differential fixtures in `tests/models.rs`).
//!
//! # Steps
//!
//! 1. `request`: the request is read strictly ([`ToolRequest::from_json`]).
//! 2. Here: `tool_choice` filters the tools (`none` drops them all; a named or builtin choice
//!    keeps exactly one and forces it; `allowed_tools` keeps the listed ones) and becomes
//!    auto, required or forced; a choice that names a missing tool, `required` without tools
//!    and a forced choice without exactly one tool are errors at `/tool_choice`.
//! 3. A format family builds the document from the `build` pieces:
//!    - `inline`: calls written straight into free text, found by a trigger (llama, qwen_3,
//!      qwen_3_5, qwen_3_coder, exaone, glm_4_7, mimo);
//!    - `sections`: calls grouped in a section with begin and end markers (deepseek_r1,
//!      deepseek_v3_1, deepseek_v3_2, deepseek_v4, deepseek_v4_1, kimi, cohere, minimax);
//!    - `minimax_m3`, `kimi_k3`, `harmony`: one format each.
//!
//! Every document builds and compiles (kimi_k3's arguments take `excludes`, which
//! `kimi_k3_xml` honours on text values; see the `lower::xml` module).

mod build;
mod harmony;
mod inline;
mod kimi_k3;
mod minimax_m3;
mod request;
mod sections;

pub use request::{
    tool_choice, tools, BuiltinTool, FunctionTool, Reasoning, Tool, ToolChoice, ToolRequest,
};

use serde_json::Value;

use crate::error::{Error, ErrorKind};
use build::{Choice, Prepared};

/// Builds one format's document.
type Builder = fn(&Prepared<'_>) -> Result<Value, Error>;

/// Every format, by XGrammar's name.
const FORMATS: [(&str, Builder); 18] = [
    ("llama", inline::llama),
    ("kimi", sections::kimi),
    ("kimi_k3", kimi_k3::build),
    ("deepseek_r1", sections::deepseek_r1),
    ("deepseek_v3_1", sections::deepseek_v3_1),
    ("qwen_3_5", inline::qwen_3_5),
    ("qwen_3_coder", inline::qwen_3_5),
    ("mimo", inline::mimo),
    ("qwen_3", inline::qwen_3),
    ("harmony", harmony::build),
    ("deepseek_v3_2", sections::deepseek_v3_2),
    ("minimax", sections::minimax),
    ("minimax_m3", minimax_m3::build),
    ("glm_4_7", inline::glm_4_7),
    ("deepseek_v4", sections::deepseek_v4),
    ("deepseek_v4_1", sections::deepseek_v4_1),
    ("cohere", sections::cohere),
    ("exaone", inline::exaone),
];

/// The names [`model_structural_tag`] knows, in XGrammar's registration order.
pub fn format_names() -> impl Iterator<Item = &'static str> {
    FORMATS.iter().map(|(name, _)| *name)
}

/// The structural tag (`{"type": "structural_tag", "format": …}`) of `format`'s output for
/// `request`.
///
/// # Errors
///
/// [`ErrorKind::Invalid`]: an unknown format (the message lists the known ones, pointer
/// `""`), a tool choice that cannot be met (pointer `/tool_choice`), or a request the format
/// refuses (builtin tools where it has none, pointer `/tools`).
pub fn model_structural_tag(format: &str, request: &ToolRequest) -> Result<Value, Error> {
    let Some((_, builder)) = FORMATS.iter().find(|(name, _)| *name == format) else {
        let known: Vec<&str> = format_names().collect();
        return Err(Error::new(
            ErrorKind::Invalid,
            "",
            format!(
                "unknown tool format {format:?}; known: {}",
                known.join(", ")
            ),
        ));
    };
    builder(&prepare(request)?)
}

/// Applies `tool_choice` to the tools (step 2 of the module docs).
fn prepare(request: &ToolRequest) -> Result<Prepared<'_>, Error> {
    let mut functions: Vec<&FunctionTool> = Vec::new();
    let mut builtins: Vec<&BuiltinTool> = Vec::new();
    for tool in &request.tools {
        match tool {
            Tool::Function(f) => functions.push(f),
            Tool::Builtin(b) => builtins.push(b),
        }
    }
    let choice = match &request.tool_choice {
        ToolChoice::Auto => Choice::Auto,
        ToolChoice::Required => Choice::Required,
        ToolChoice::None => {
            functions.clear();
            builtins.clear();
            Choice::Auto
        }
        ToolChoice::Function(name) => {
            functions.retain(|f| &f.name == name);
            if functions.is_empty() {
                return Err(choice_error(format!("no function tool is named {name:?}")));
            }
            builtins.clear();
            Choice::Forced
        }
        ToolChoice::Builtin(kind) => {
            functions.clear();
            builtins.retain(|b| &b.kind == kind);
            if builtins.len() != 1 {
                return Err(choice_error(format!(
                    "the builtin tool choice {kind:?} matches {} builtin tools, not one",
                    builtins.len()
                )));
            }
            Choice::Forced
        }
        ToolChoice::Allowed {
            required,
            functions: names,
            builtins: kinds,
        } => {
            if let Some(missing) = names
                .iter()
                .find(|n| !functions.iter().any(|f| &f.name == *n))
            {
                return Err(choice_error(format!(
                    "the allowed function tool {missing:?} is not in `tools`"
                )));
            }
            builtins.retain(|b| kinds.contains(&b.kind));
            if let Some(missing) = kinds
                .iter()
                .find(|k| !builtins.iter().any(|b| &b.kind == *k))
            {
                return Err(choice_error(format!(
                    "the allowed builtin tool {missing:?} is not in `tools`"
                )));
            }
            functions.retain(|f| names.contains(&f.name));
            if *required {
                Choice::Required
            } else {
                Choice::Auto
            }
        }
    };
    let count = functions.len() + builtins.len();
    if choice == Choice::Required && count == 0 {
        return Err(choice_error("`required` needs at least one tool"));
    }
    if choice == Choice::Forced && count != 1 {
        return Err(choice_error(format!(
            "a forced tool choice must leave exactly one tool, not {count}"
        )));
    }
    Ok(Prepared {
        functions,
        builtins,
        choice,
        request,
    })
}

fn choice_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, "/tool_choice", message)
}

/// A format's refusal of the request's tools (pointer `/tools`).
fn tools_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, "/tools", message)
}
