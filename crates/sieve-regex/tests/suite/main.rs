//! The integration tests of sieve-regex, one binary:
//!
//! - `lang`: language exactness against the `regex` crate as an oracle, on an in-test table and
//!   on every pattern in `grammars/regex/`, with hand-picked and generated inputs;
//! - `errors`: every error kind, its span and its rendered message (named insta snapshots);
//! - `extensions`: the extension groups against plain-Rust definitions, masks with GPT-2;
//! - `api`: options, limits, the shape of the IR (named snapshots of its text form);
//! - `regressions`: inputs found by fuzzing, each with a comment.

mod api;
mod errors;
mod extensions;
mod lang;
mod regressions;

use sieve_diagnostics::SourceFile;

/// Compiles with the default options, panicking with the rendered error.
pub fn compile(pattern: &str) -> sieve_ir::Grammar {
    sieve_regex::compile(pattern, &Default::default())
        .unwrap_or_else(|e| panic!("{}", SourceFile::new("<regex>", pattern).render_error(&e)))
}
