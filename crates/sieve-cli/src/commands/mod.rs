//! The subcommands. Each returns the process exit code, or a usage/I-O error message.

mod bench;
mod run;

pub use bench::bench;
pub use run::{generate, run_match, GenerateArgs};

use std::path::Path;
use std::process::ExitCode;

use crate::pipeline::{self, Diagnostics, PipelineOptions};
use crate::Stage;

fn report(diagnostics: Diagnostics) -> ExitCode {
    for block in diagnostics.0 {
        eprint!("{block}");
    }
    ExitCode::from(1)
}

/// `sieve check FILE`: every stage, then a one-line summary.
pub fn check(path: &Path, options: &PipelineOptions) -> Result<ExitCode, String> {
    let loaded = pipeline::load(path, options)?;
    let result = pipeline::front_end(&loaded, options).and_then(|parsed| {
        let normalized = pipeline::normalize(&loaded, &parsed, options)?;
        let fsms = pipeline::automata(&loaded, &normalized, options)?;
        let recognizer = pipeline::backend(&loaded, &fsms, options)?;
        Ok((parsed, normalized, fsms, recognizer))
    });
    Ok(match result {
        Ok((parsed, normalized, fsms, recognizer)) => {
            println!(
                "{}: ok: {} rules parsed, {} after normalisation, {} FSM states, {} backend",
                loaded.name,
                parsed.rules().len(),
                normalized.rules().len(),
                fsms.state_count(),
                recognizer.backend()
            );
            ExitCode::SUCCESS
        }
        Err(diagnostics) => report(diagnostics),
    })
}

/// `sieve ir FILE --stage …`: the stage's stable text form on stdout.
pub fn ir(path: &Path, stage: Stage, options: &PipelineOptions) -> Result<ExitCode, String> {
    let loaded = pipeline::load(path, options)?;
    let text = pipeline::front_end(&loaded, options).and_then(|parsed| {
        if stage == Stage::Parsed {
            return Ok(parsed.to_string());
        }
        let normalized = pipeline::normalize(&loaded, &parsed, options)?;
        if stage == Stage::Normalized {
            return Ok(normalized.to_string());
        }
        Ok(pipeline::automata(&loaded, &normalized, options)?.to_string())
    });
    Ok(match text {
        Ok(text) => {
            use std::io::Write;
            // A reader that stops early (`sieve ir … | head`) closes the pipe: that is not
            // an error of ours, and printing must not panic on it.
            match std::io::stdout().lock().write_all(text.as_bytes()) {
                Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
                    return Err(format!("writing to stdout: {error}"));
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(diagnostics) => report(diagnostics),
    })
}
