//! `sieve`: the command-line front door.
//!
//! - `sieve check FILE` — compile a grammar through every stage; exit 0 with a one-line
//!   summary, or 1 with located diagnostics.
//! - `sieve ir FILE --stage parsed|normalized|fsm` — print a stage in its stable text form.
//! - `sieve match (--grammar FILE | --regex PATTERN) [INPUT|-]` — is the input a sentence?
//! - `sieve generate (--grammar FILE | --regex PATTERN) [--tokenizer FILE]` — sample text
//!   under the constraint, uniformly among the allowed tokens.
//! - `sieve bench REQUEST` — the peer harness's engine protocol (`peers-engine/1`).
//!
//! The kind of file comes from its extension (`.gbnf`, `.ebnf`, `.regex`) or `--format`.
//! Exit codes: 0 success, 1 the input is wrong (diagnostics on stderr), 2 usage or I/O
//! errors.

mod commands;
mod pipeline;

use std::path::PathBuf;
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
        file: PathBuf,
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
        /// The most tokens to sample.
        #[arg(long, default_value_t = 256)]
        max_tokens: usize,
        #[command(flatten)]
        options: GrammarArgs,
    },
    /// Run a peer-harness request (protocol peers-engine/1): JSON lines on stdout.
    Bench {
        /// The request file the harness wrote.
        request: PathBuf,
        #[command(flatten)]
        options: GrammarArgs,
    },
    /// Print the IR of a grammar at one stage.
    Ir {
        /// The grammar file.
        file: PathBuf,
        /// Which stage to print.
        #[arg(long, value_enum, default_value_t = Stage::Normalized)]
        stage: Stage,
        #[command(flatten)]
        options: GrammarArgs,
    },
}

#[derive(clap::Args)]
struct ConstraintArgs {
    /// A grammar file (.gbnf, .ebnf, .regex).
    #[arg(long, required_unless_present = "regex")]
    grammar: Option<PathBuf>,
    /// A regular expression the whole output must match.
    #[arg(long, conflicts_with = "grammar")]
    regex: Option<String>,
}

impl ConstraintArgs {
    fn constraint(&self) -> pipeline::Constraint<'_> {
        pipeline::Constraint {
            grammar: self.grammar.as_deref(),
            regex: self.regex.as_deref(),
        }
    }
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
}

impl GrammarArgs {
    fn pipeline_options(&self) -> PipelineOptions {
        PipelineOptions {
            format: self.format,
            root: self.root.clone(),
            normalize: sieve_normalize::Config {
                repetition_threshold: self.repetition_threshold,
                ..sieve_normalize::Config::default()
            },
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Check { file, options } => commands::check(file, &options.pipeline_options()),
        Command::Ir {
            file,
            stage,
            options,
        } => commands::ir(file, *stage, &options.pipeline_options()),
        Command::Match {
            constraint,
            input,
            text,
            options,
        } => commands::run_match(
            &constraint.constraint(),
            input.as_deref(),
            text.as_deref(),
            &options.pipeline_options(),
        ),
        Command::Generate {
            constraint,
            tokenizer,
            seed,
            max_tokens,
            options,
        } => commands::generate(
            &constraint.constraint(),
            &commands::GenerateArgs {
                tokenizer: tokenizer.as_deref(),
                seed: *seed,
                max_tokens: *max_tokens,
            },
            &options.pipeline_options(),
        ),
        Command::Bench { request, options } => {
            commands::bench(request, &options.pipeline_options())
        }
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("sieve: {error}");
            ExitCode::from(2)
        }
    }
}
