//! `sieve`: the command-line front door.
//!
//! - `sieve check (FILE | --schema FILE)` — compile a grammar through every stage; exit 0
//!   with a one-line summary, or 1 with located diagnostics.
//! - `sieve ir (FILE | --schema FILE) --stage parsed|normalized|fsm` — print a stage in its
//!   stable text form.
//! - `sieve match (--grammar FILE | --regex PATTERN | --schema FILE) [INPUT|-|--text T]` — is
//!   the input a sentence?
//! - `sieve generate (--grammar FILE | --regex PATTERN | --schema FILE) [--tokenizer FILE]` —
//!   sample text under the constraint, uniformly among the allowed tokens.
//! - `sieve bench REQUEST` — the peer harness's engine protocol (`peers-engine/1`).
//!
//! The kind of file comes from its extension (`.gbnf`, `.ebnf`, `.regex`, `.json`, `.lark`) or
//! `--format`; `--structural-tag FILE` (on every command that takes a constraint) is always
//! an XGrammar structural tag; `--schema FILE` is always a JSON Schema, compiled as
//! `--whitespace`, `--order`, `--escapes`, `--key-escapes`, `--literal-escapes` and
//! `--lenient` say (lenient-mode warnings go to stderr); `--tools FILE --tool-format NAME` (on
//! the same commands) is OpenAI-style tools in a model's tool-call format
//! (`sieve_structural::models`; docs/tool-formats.md).
//! Exit codes: 0 success, 1 the input is wrong (diagnostics on stderr), 2 usage or I/O
//! errors (and, for `match` and `generate`, a constraint that does not compile).

mod commands;
mod pipeline;

/// Compiling allocates many small, short-lived objects; see the workspace manifest.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::pipeline::{Format, PipelineOptions};

#[derive(Parser)]
#[command(
    name = "sieve",
    version,
    about = "Grammar-constrained generation: exact token masks"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile a grammar through every stage and report errors with their location.
    Check {
        /// The grammar file.
        #[arg(required_unless_present_any = ["schema", "structural_tag", "tools"], conflicts_with_all = TOOL_FLAGS)]
        file: Option<PathBuf>,
        /// A JSON Schema file instead of a grammar.
        #[arg(long, conflicts_with = "file", conflicts_with_all = TOOL_FLAGS)]
        schema: Option<PathBuf>,
        /// An XGrammar structural-tag file instead of a grammar.
        #[arg(long, conflicts_with_all = ["file", "schema"], conflicts_with_all = TOOL_FLAGS)]
        structural_tag: Option<PathBuf>,
        #[command(flatten)]
        tools: ToolArgs,
        #[command(flatten)]
        options: GrammarArgs,
    },
    /// Exit 0 if the whole input is a sentence; 1 with the offset where it goes wrong.
    Match {
        #[command(flatten)]
        constraint: ConstraintArgs,
        /// The input file; `-` or nothing reads stdin.
        input: Option<PathBuf>,
        /// Match this text instead of a file.
        #[arg(long, conflicts_with = "input")]
        text: Option<String>,
        #[command(flatten)]
        options: GrammarArgs,
    },
    /// Sample text under a constraint, uniformly among the allowed tokens.
    Generate {
        #[command(flatten)]
        constraint: ConstraintArgs,
        /// A tokenizer.json, .tiktoken or plain token list; the embedded GPT-2 vocabulary
        /// otherwise.
        #[arg(long)]
        tokenizer: Option<PathBuf>,
        /// The random seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The most tokens to sample, EOS included. The output is guaranteed to end with EOS,
        /// complete, within this many tokens (a token budget; the command fails at once if
        /// no complete output fits), unless `--no-budget` is given.
        #[arg(long, default_value_t = 256)]
        max_tokens: usize,
        /// Stop at `--max-tokens` without keeping room for a complete output (the output may
        /// then be cut off).
        #[arg(long)]
        no_budget: bool,
        #[command(flatten)]
        options: GrammarArgs,
    },
    /// Run a peer-harness request (protocol peers-engine/1): JSON lines on stdout.
    Bench {
        /// The request file the harness wrote.
        request: PathBuf,
        /// Only these grammar kinds (harness names, comma-separated: `structural_tag,lark`);
        /// the request's preference order still decides among them. Default: every kind
        /// sieve compiles.
        #[arg(long, value_delimiter = ',')]
        kinds: Vec<String>,
        #[command(flatten)]
        options: GrammarArgs,
    },
    /// Print the IR of a grammar at one stage.
    Ir {
        /// The grammar file.
        #[arg(required_unless_present_any = ["schema", "structural_tag", "tools"], conflicts_with_all = TOOL_FLAGS)]
        file: Option<PathBuf>,
        /// A JSON Schema file instead of a grammar.
        #[arg(long, conflicts_with = "file", conflicts_with_all = TOOL_FLAGS)]
        schema: Option<PathBuf>,
        /// An XGrammar structural-tag file instead of a grammar.
        #[arg(long, conflicts_with_all = ["file", "schema"], conflicts_with_all = TOOL_FLAGS)]
        structural_tag: Option<PathBuf>,
        #[command(flatten)]
        tools: ToolArgs,
        /// Which stage to print.
        #[arg(long, value_enum, default_value_t = Stage::Normalized)]
        stage: Stage,
        #[command(flatten)]
        options: GrammarArgs,
    },
}

#[derive(clap::Args)]
struct ConstraintArgs {
    /// A grammar file (.gbnf, .ebnf, .regex, .json, .lark).
    #[arg(long, required_unless_present_any = ["regex", "schema", "structural_tag", "tools"], conflicts_with_all = TOOL_FLAGS)]
    grammar: Option<PathBuf>,
    /// A regular expression the whole output must match.
    #[arg(long, conflicts_with_all = ["grammar", "schema"], conflicts_with_all = TOOL_FLAGS)]
    regex: Option<String>,
    /// A JSON Schema the output must satisfy.
    #[arg(long, conflicts_with = "grammar", conflicts_with_all = TOOL_FLAGS)]
    schema: Option<PathBuf>,
    /// An XGrammar structural tag (JSON) the output must follow.
    #[arg(long, conflicts_with_all = ["grammar", "regex", "schema"], conflicts_with_all = TOOL_FLAGS)]
    structural_tag: Option<PathBuf>,
    #[command(flatten)]
    tools: ToolArgs,
}

impl ConstraintArgs {
    fn constraint(&self) -> pipeline::Constraint<'_> {
        pipeline::Constraint {
            grammar: self.grammar.as_deref(),
            regex: self.regex.as_deref(),
            schema: self.schema.as_deref(),
            structural_tag: self.structural_tag.as_deref(),
            tools: self.tools.tools.as_deref(),
        }
    }

    /// `options` with the tool flags.
    fn options(&self, options: &GrammarArgs) -> PipelineOptions {
        PipelineOptions {
            tools: self.tools.settings(),
            ..options.pipeline_options()
        }
    }
}

/// The tool-calling flags: none of them goes with another constraint source (clap would not
/// report `--tool-format` as needing `--tools` when a grammar file is given).
const TOOL_FLAGS: [&str; 5] = [
    "tools",
    "tool_format",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
];

/// OpenAI-style tools in a model's tool-call format as the constraint.
#[derive(clap::Args)]
#[command(next_help_heading = "Tool calling")]
struct ToolArgs {
    /// A tools file: an OpenAI-style `tools` array, or a request object (`tools`,
    /// `tool_choice`, `parallel_tool_calls`, `reasoning`, …); the output follows the tool-call
    /// syntax of `--tool-format`.
    #[arg(long, requires = "tool_format")]
    tools: Option<PathBuf>,
    /// The model format, by XGrammar's name: llama, qwen_3, qwen_3_5, qwen_3_coder, harmony,
    /// deepseek_r1, deepseek_v3_1, deepseek_v3_2, deepseek_v4, deepseek_v4_1, kimi, kimi_k3,
    /// minimax, minimax_m3, glm_4_7, mimo, cohere, exaone.
    #[arg(long, requires = "tools")]
    tool_format: Option<String>,
    /// auto, required, none, or the name of the one function tool to call (default: the
    /// file's, else auto).
    #[arg(long, requires = "tools")]
    tool_choice: Option<String>,
    /// Whether more than one call is allowed (default: the file's, else true).
    #[arg(long, requires = "tools")]
    parallel_tool_calls: Option<bool>,
    /// The reasoning block: on, off, or auto (optional) (default: the file's, else on).
    #[arg(long, value_enum, requires = "tools")]
    reasoning: Option<ReasoningArg>,
}

impl ToolArgs {
    fn settings(&self) -> Option<pipeline::ToolSettings> {
        use sieve_structural::models::Reasoning;
        self.tools.as_ref()?;
        Some(pipeline::ToolSettings {
            format: self.tool_format.clone()?,
            choice: self.tool_choice.clone(),
            parallel: self.parallel_tool_calls,
            reasoning: self.reasoning.map(|r| match r {
                ReasoningArg::On => Reasoning::Enabled,
                ReasoningArg::Off => Reasoning::Disabled,
                ReasoningArg::Auto => Reasoning::Auto,
            }),
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum ReasoningArg {
    On,
    Off,
    Auto,
}

#[derive(clap::Args)]
struct GrammarArgs {
    /// The grammar's format; by default from the file extension.
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// The root rule of a GBNF/EBNF grammar.
    #[arg(long, default_value = "root")]
    root: String,
    /// The repetition threshold T: larger `{m,n}` bounds are compressed.
    #[arg(long, default_value_t = sieve_normalize::Config::default().repetition_threshold)]
    repetition_threshold: u32,
    /// The backend: earley (every grammar), lr (LR(1) grammars), token-dfa (regular
    /// constraints), or auto (the fastest that accepts the grammar). See docs/backends.md.
    #[arg(long, default_value_t = sieve_matcher::BackendChoice::Earley)]
    backend: sieve_matcher::BackendChoice,
    #[command(flatten)]
    schema: SchemaArgs,
}

impl GrammarArgs {
    fn pipeline_options(&self) -> PipelineOptions {
        PipelineOptions {
            format: self.format,
            root: self.root.clone(),
            compile: sieve_matcher::Options {
                normalize: sieve_normalize::Config {
                    repetition_threshold: self.repetition_threshold,
                    ..sieve_normalize::Config::default()
                },
                backend: self.backend,
                ..sieve_matcher::Options::default()
            },
            json: self.schema.options(),
            tools: None,
            tokens: sieve_ir::token::SharedNames(std::sync::Arc::new(
                sieve_vocab::Vocabulary::embedded_default(),
            )),
        }
    }

    /// The options for `FILE`, `--schema FILE` (which forces the JSON Schema format),
    /// `--structural-tag FILE` (which forces the structural-tag format) or `--tools FILE`.
    fn pipeline_options_for(
        &self,
        schema: Option<&PathBuf>,
        structural_tag: Option<&PathBuf>,
        tools: &ToolArgs,
    ) -> PipelineOptions {
        let mut options = self.pipeline_options();
        if schema.is_some() {
            options.format = Some(Format::JsonSchema);
        }
        if structural_tag.is_some() {
            options.format = Some(Format::StructuralTag);
        }
        if tools.tools.is_some() {
            options.format = Some(Format::Tools);
            options.tools = tools.settings();
        }
        options
    }
}

/// How a JSON Schema becomes a grammar (`sieve_jsonschema::Options`).
#[derive(clap::Args)]
#[command(next_help_heading = "JSON Schema")]
struct SchemaArgs {
    /// Whitespace between JSON tokens: none, or a few characters in every gap.
    #[arg(long, value_enum, default_value_t = WhitespaceArg::Compact)]
    whitespace: WhitespaceArg,
    /// Object properties in the schema's order, or in any order.
    #[arg(long, value_enum, default_value_t = OrderArg::Schema)]
    order: OrderArg,
    /// Any escape RFC 8259 allows in strings, or one canonical spelling per string.
    #[arg(long, value_enum, default_value_t = EscapesArg::Any)]
    escapes: EscapesArg,
    /// Property names: one canonical spelling each (declared names literally, as XGrammar and
    /// llguidance write them), or any escape RFC 8259 allows.
    #[arg(long, value_enum, default_value_t = EscapesArg::Canonical)]
    key_escapes: EscapesArg,
    /// `const` and `enum` values: one canonical spelling each (as XGrammar and llguidance
    /// write them), or any escape RFC 8259 allows.
    #[arg(long, value_enum, default_value_t = EscapesArg::Canonical)]
    literal_escapes: EscapesArg,
    /// Drop keywords that cannot be enforced (a warning each on stderr) instead of failing.
    #[arg(long)]
    lenient: bool,
}

impl SchemaArgs {
    fn options(&self) -> sieve_jsonschema::Options {
        sieve_jsonschema::Options {
            whitespace: match self.whitespace {
                WhitespaceArg::Compact => sieve_jsonschema::Whitespace::Compact,
                WhitespaceArg::Flexible => sieve_jsonschema::Whitespace::Flexible,
            },
            property_order: match self.order {
                OrderArg::Schema => sieve_jsonschema::PropertyOrder::Schema,
                OrderArg::Any => sieve_jsonschema::PropertyOrder::Any,
            },
            escapes: self.escapes.into(),
            key_escapes: Some(self.key_escapes.into()),
            literal_escapes: Some(self.literal_escapes.into()),
            lenient: self.lenient,
            ..sieve_jsonschema::Options::default()
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum WhitespaceArg {
    Compact,
    Flexible,
}

#[derive(Clone, Copy, ValueEnum)]
enum OrderArg {
    Schema,
    Any,
}

#[derive(Clone, Copy, ValueEnum)]
enum EscapesArg {
    Any,
    Canonical,
}

impl From<EscapesArg> for sieve_jsonschema::Escapes {
    fn from(arg: EscapesArg) -> Self {
        match arg {
            EscapesArg::Any => sieve_jsonschema::Escapes::Any,
            EscapesArg::Canonical => sieve_jsonschema::Escapes::Canonical,
        }
    }
}

/// A stage of the pipeline that `sieve ir` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Stage {
    /// The IR as the front-end produced it.
    Parsed,
    /// The IR after every normalisation pass.
    Normalized,
    /// The per-rule automata, with their hashes.
    Fsm,
}

/// `FILE`, `--schema FILE`, `--structural-tag FILE` or `--tools FILE`; clap makes sure
/// exactly one is given.
fn input_file<'a>(
    file: &'a Option<PathBuf>,
    schema: &'a Option<PathBuf>,
    structural_tag: &'a Option<PathBuf>,
    tools: &'a ToolArgs,
) -> &'a Path {
    file.as_deref()
        .or(schema.as_deref())
        .or(structural_tag.as_deref())
        .or(tools.tools.as_deref())
        .expect("clap requires FILE, --schema, --structural-tag or --tools")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Check {
            file,
            schema,
            structural_tag,
            tools,
            options,
        } => commands::check(
            input_file(file, schema, structural_tag, tools),
            &options.pipeline_options_for(schema.as_ref(), structural_tag.as_ref(), tools),
        ),
        Command::Ir {
            file,
            schema,
            structural_tag,
            tools,
            stage,
            options,
        } => commands::ir(
            input_file(file, schema, structural_tag, tools),
            *stage,
            &options.pipeline_options_for(schema.as_ref(), structural_tag.as_ref(), tools),
        ),
        Command::Match {
            constraint,
            input,
            text,
            options,
        } => commands::run_match(
            &constraint.constraint(),
            input.as_deref(),
            text.as_deref(),
            &constraint.options(options),
        ),
        Command::Generate {
            constraint,
            tokenizer,
            seed,
            max_tokens,
            no_budget,
            options,
        } => commands::generate(
            &constraint.constraint(),
            &commands::GenerateArgs {
                tokenizer: tokenizer.as_deref(),
                seed: *seed,
                max_tokens: *max_tokens,
                budget: !*no_budget,
            },
            &constraint.options(options),
        ),
        Command::Bench {
            request,
            kinds,
            options,
        } => commands::bench(request, kinds, &options.pipeline_options()),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("sieve: {error}");
            ExitCode::from(2)
        }
    }
}
