//! Loading a grammar file and running it through the stages, with errors rendered against the
//! source (`file:line:col: message`, the line, a caret). JSON Schema errors have no span: they
//! are rendered as `file: /json/pointer: keyword: message`.
//!
//! Past the front-end every command compiles through `sieve_matcher::pipeline` (or
//! `CompiledGrammar::new` / `ByteMatcher::new`, its composition) with
//! [`PipelineOptions::compile`], so the command-line settings reach every stage of every
//! command.

use std::path::Path;

use clap::ValueEnum;
use sieve_diagnostics::SourceFile;
use sieve_fsm::GrammarFsms;
use sieve_ir::Grammar;
use sieve_normalize::Normalized;

/// The kinds of grammar file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// llama.cpp GBNF.
    Gbnf,
    /// XGrammar EBNF (read by the same front-end as GBNF).
    Ebnf,
    /// A regular expression; the whole file (less a final newline) is the pattern.
    Regex,
    /// A JSON Schema (draft 2020-12 or draft-07); its language is the JSON texts it accepts.
    JsonSchema,
    /// An XGrammar structural tag (JSON); never chosen by extension (`.json` is a schema).
    StructuralTag,
    /// llguidance's Lark dialect (`.lark`).
    Lark,
    /// OpenAI-style tools (`--tools FILE`) in a model's tool-call format
    /// ([`PipelineOptions::tools`]); never chosen by extension or `--format`.
    #[value(skip)]
    Tools,
}

impl Format {
    /// The format named by a file's extension.
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()? {
            "gbnf" => Some(Format::Gbnf),
            "ebnf" => Some(Format::Ebnf),
            "regex" => Some(Format::Regex),
            "json" => Some(Format::JsonSchema),
            "lark" => Some(Format::Lark),
            _ => None,
        }
    }
}

/// How to run the pipeline.
#[derive(Clone)]
pub struct PipelineOptions {
    /// The format, or `None` to take it from the extension.
    pub format: Option<Format>,
    /// The root rule of GBNF/EBNF grammars.
    pub root: String,
    /// The settings of the compile stages (normalisation, automata, recogniser), handed to
    /// `sieve_matcher::pipeline` by every command.
    pub compile: sieve_matcher::Options,
    /// How JSON Schemas become grammars.
    pub json: sieve_jsonschema::Options,
    /// The vocabulary token terminals (`<|im_end|>`, `<[^7]>`) resolve against: the one the
    /// command samples with, or the embedded default.
    pub tokens: sieve_ir::token::SharedNames,
    /// How a `--tools FILE` becomes a structural tag.
    pub tools: Option<ToolSettings>,
}

/// `--tool-format` and the flags that override the tools file's request.
#[derive(Clone, Debug)]
pub struct ToolSettings {
    /// The model format (`qwen_3`, `harmony`, …; `sieve_structural::models::format_names`).
    pub format: String,
    /// `--tool-choice`: `auto`, `required`, `none` or a function tool's name.
    pub choice: Option<String>,
    /// `--parallel-tool-calls`.
    pub parallel: Option<bool>,
    /// `--reasoning`.
    pub reasoning: Option<sieve_structural::models::Reasoning>,
}

/// A grammar file read into memory.
pub struct Loaded {
    /// The path as the user wrote it.
    pub name: String,
    /// The file's text.
    pub text: String,
    /// Its format.
    pub format: Format,
}

/// Reads `path`; an unreadable file or an unknown extension is a usage error.
pub fn load(path: &Path, options: &PipelineOptions) -> Result<Loaded, String> {
    let name = path.display().to_string();
    let format = options
        .format
        .or_else(|| Format::from_path(path))
        .ok_or_else(|| {
            format!(
                "{name}: unknown grammar format; use a .gbnf, .ebnf, .regex, .json or .lark file, or --format"
            )
        })?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    Ok(Loaded { name, text, format })
}

/// Reads a JSON Schema file, whatever its extension.
pub fn load_schema(path: &Path) -> Result<Loaded, String> {
    load_as(path, Format::JsonSchema)
}

/// Reads a file as the given format, whatever its extension.
pub fn load_as(path: &Path, format: Format) -> Result<Loaded, String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    Ok(Loaded { name, text, format })
}

/// Errors rendered for the user, one block each.
pub struct Diagnostics(pub Vec<String>);

/// Runs the front-end for the file's format.
pub fn front_end(loaded: &Loaded, options: &PipelineOptions) -> Result<Grammar, Diagnostics> {
    let source = SourceFile::new(&loaded.name, &loaded.text);
    match loaded.format {
        Format::Gbnf | Format::Ebnf => {
            let mut gbnf_options = sieve_gbnf::Options::with_root(options.root.clone());
            gbnf_options.tokens = Some(options.tokens.clone());
            sieve_gbnf::compile(&loaded.text, &gbnf_options).map_err(|errors| {
                Diagnostics(
                    errors
                        .as_slice()
                        .iter()
                        .map(|e| source.render_error(e))
                        .collect(),
                )
            })
        }
        Format::Regex => {
            let pattern = loaded.text.strip_suffix('\n').unwrap_or(&loaded.text);
            let pattern = pattern.strip_suffix('\r').unwrap_or(pattern);
            sieve_regex::compile(pattern, &sieve_regex::Options::default())
                .map_err(|e| Diagnostics(vec![source.render_error(&e)]))
        }
        Format::JsonSchema => json_schema(loaded, &options.json),
        Format::StructuralTag => {
            sieve_structural::compile_str(&loaded.text, &structural_options(options))
                .map_err(|e| Diagnostics(vec![format!("{}: {e}\n", loaded.name)]))
        }
        Format::Tools => tools(loaded, options),
        Format::Lark => {
            let lark = sieve_lark::Options {
                json: options.json.clone(),
                tokens: Some(options.tokens.clone()),
                ..sieve_lark::Options::default()
            };
            sieve_lark::compile(&loaded.text, &lark).map_err(|errors| {
                Diagnostics(
                    errors
                        .as_slice()
                        .iter()
                        .map(|e| source.render_error(e))
                        .collect(),
                )
            })
        }
    }
}

fn structural_options(options: &PipelineOptions) -> sieve_structural::Options {
    sieve_structural::Options {
        json: options.json.clone(),
        tokens: Some(options.tokens.clone()),
        ..sieve_structural::Options::default()
    }
}

/// Reads a tools file — a `tools` array, or a whole request object (`tools`, `tool_choice`,
/// `parallel_tool_calls`, `reasoning`, …) — applies the flags over it, builds the model
/// format's structural tag and compiles it.
fn tools(loaded: &Loaded, options: &PipelineOptions) -> Result<Grammar, Diagnostics> {
    use sieve_structural::models::{self, ToolChoice, ToolRequest};
    let name = &loaded.name;
    let fail = |message: String| Diagnostics(vec![format!("{name}: {message}\n")]);
    let settings = options
        .tools
        .as_ref()
        .ok_or_else(|| fail("--tools needs --tool-format NAME".to_owned()))?;
    let value: serde_json::Value = serde_json::from_str(&loaded.text)
        .map_err(|e| fail(format!("{}:{}: not JSON: {e}", e.line(), e.column())))?;
    let mut request = if value.is_array() {
        ToolRequest {
            tools: models::tools(&value, "").map_err(|e| fail(e.to_string()))?,
            ..ToolRequest::default()
        }
    } else {
        ToolRequest::from_json(&value).map_err(|e| fail(e.to_string()))?
    };
    if let Some(choice) = &settings.choice {
        request.tool_choice = match choice.as_str() {
            "auto" => ToolChoice::Auto,
            "required" => ToolChoice::Required,
            "none" => ToolChoice::None,
            function => ToolChoice::Function(function.to_owned()),
        };
    }
    if let Some(parallel) = settings.parallel {
        request.parallel_tool_calls = parallel;
    }
    if let Some(reasoning) = settings.reasoning {
        request.reasoning = reasoning;
    }
    let document = models::model_structural_tag(&settings.format, &request)
        .map_err(|e| fail(format!("--tool-format {}: {e}", settings.format)))?;
    sieve_structural::compile(&document, &structural_options(options)).map_err(|e| {
        fail(format!(
            "the {} structural tag (pointer into the generated document): {e}",
            settings.format
        ))
    })
}

/// Parses and compiles a JSON Schema; lenient-mode warnings go to stderr, one line each.
fn json_schema(
    loaded: &Loaded,
    options: &sieve_jsonschema::Options,
) -> Result<Grammar, Diagnostics> {
    let name = &loaded.name;
    let schema: serde_json::Value = serde_json::from_str(&loaded.text).map_err(|e| {
        Diagnostics(vec![format!(
            "{name}:{}:{}: not JSON: {e}\n",
            e.line(),
            e.column()
        )])
    })?;
    match sieve_jsonschema::compile(&schema, options) {
        Ok(compiled) => {
            for warning in &compiled.warnings {
                eprintln!(
                    "{name}: {}: {}: not enforced: {}",
                    shown_pointer(&warning.pointer),
                    shown_keyword(&warning.keyword),
                    warning.message
                );
            }
            Ok(compiled.grammar)
        }
        Err(error) => Err(Diagnostics(vec![render_schema_error(name, &error)])),
    }
}

/// `file: /json/pointer: keyword: message`, with the kind of failure unless it is the usual
/// one (a keyword sieve cannot enforce).
pub fn render_schema_error(name: &str, error: &sieve_jsonschema::Error) -> String {
    use sieve_jsonschema::ErrorKind;
    let kind = match error.kind {
        ErrorKind::Invalid => "invalid schema: ",
        ErrorKind::Unsupported => "",
        ErrorKind::Unsatisfiable => "unsatisfiable: ",
        ErrorKind::Limit => "limit reached: ",
        _ => "",
    };
    format!(
        "{name}: {}: {}: {kind}{}\n",
        shown_pointer(&error.pointer),
        shown_keyword(&error.keyword),
        error.message
    )
}

/// The root's JSON pointer is empty; show it as `/` would be wrong (that names the key ""),
/// so it is shown as `#`.
fn shown_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "#"
    } else {
        pointer
    }
}

fn shown_keyword(keyword: &str) -> &str {
    if keyword.is_empty() {
        "(schema)"
    } else {
        keyword
    }
}

/// Runs the normalisation passes with `options.compile`.
pub fn normalize(
    loaded: &Loaded,
    grammar: &Grammar,
    options: &PipelineOptions,
) -> Result<Normalized, Diagnostics> {
    sieve_matcher::pipeline::normalize(grammar, &options.compile)
        .map_err(|e| Diagnostics(vec![format!("{}: {e}\n", loaded.name)]))
}

/// Builds the per-rule automata with `options.compile`.
pub fn automata(
    loaded: &Loaded,
    normalized: &Normalized,
    options: &PipelineOptions,
) -> Result<GrammarFsms, Diagnostics> {
    sieve_matcher::pipeline::automata(normalized, &options.compile)
        .map_err(|e| Diagnostics(vec![format!("{}: {e}\n", loaded.name)]))
}

/// Builds the recogniser of the backend `options.compile.backend` selects (a refusal — an
/// LR conflict, a recursive grammar for the token DFA — is a diagnostic).
pub fn backend(
    loaded: &Loaded,
    fsms: &GrammarFsms,
    options: &PipelineOptions,
) -> Result<sieve_matcher::ByteMatcher, Diagnostics> {
    sieve_matcher::ByteMatcher::from_automata(fsms, &options.compile)
        .map_err(|e| Diagnostics(vec![format!("{}: {e}\n", loaded.name)]))
}

/// Where a constraint comes from on the command line: a grammar file, a regex pattern, a
/// JSON Schema file, a structural tag or a tools file.
pub struct Constraint<'a> {
    /// `--grammar FILE`.
    pub grammar: Option<&'a Path>,
    /// `--regex PATTERN`.
    pub regex: Option<&'a str>,
    /// `--schema FILE`.
    pub schema: Option<&'a Path>,
    /// `--structural-tag FILE`.
    pub structural_tag: Option<&'a Path>,
    /// `--tools FILE` (compiled as [`PipelineOptions::tools`] says).
    pub tools: Option<&'a Path>,
}

/// Reads and compiles the constraint through the front-end; usage errors as `Err(String)`,
/// grammar errors as diagnostics.
pub fn constraint(
    constraint: &Constraint<'_>,
    options: &PipelineOptions,
) -> Result<Result<Grammar, Diagnostics>, String> {
    let loaded = match (
        constraint.grammar,
        constraint.regex,
        constraint.schema,
        constraint.structural_tag,
        constraint.tools,
    ) {
        (Some(path), None, None, None, None) => load(path, options)?,
        (None, Some(pattern), None, None, None) => Loaded {
            name: "<regex>".to_owned(),
            text: pattern.to_owned(),
            format: Format::Regex,
        },
        (None, None, Some(path), None, None) => load_schema(path)?,
        (None, None, None, Some(path), None) => load_as(path, Format::StructuralTag)?,
        (None, None, None, None, Some(path)) => load_as(path, Format::Tools)?,
        _ => return Err(
            "give exactly one of --grammar FILE, --regex PATTERN, --schema FILE, --structural-tag FILE and --tools FILE"
                .to_owned(),
        ),
    };
    Ok(front_end(&loaded, options))
}
