//! The sieve-gbnf test suite: one integration-test binary.
//!
//! - `corpus`: every grammar under `grammars/` (except `grammars/bad/`) parses, lowers and
//!   round-trips through the printer.
//! - `errors`: every grammar under `grammars/bad/` fails with a snapshot-tested diagnostic.
//! - `language`: lowered grammars accept and reject chosen strings (reference recogniser).
//! - `roundtrip`: printing and re-parsing generated ASTs (proptest).
//! - `regressions`: inputs that once broke something (fuzzing finds), as plain tests.
//!
//! Nothing here reads outside the repository.

mod corpus;
mod errors;
mod language;
mod regressions;
mod roundtrip;

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.gbnf`/`.ebnf` file under `grammars/` outside `grammars/bad/`, sorted, as
/// (path relative to the repository root, text).
pub fn good_grammars() -> Vec<(String, String)> {
    let root = repo_root();
    let mut out = Vec::new();
    let mut dirs = vec![root.join("grammars")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("grammars/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "bad") {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "gbnf" || e == "ebnf") {
                let text = std::fs::read_to_string(&path).expect("a UTF-8 grammar");
                let rel = path
                    .strip_prefix(&root)
                    .expect("under the root")
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, text));
            }
        }
    }
    out.sort();
    out
}

/// The options a grammar file asks for: a first line `# sieve: root=NAME` sets the root.
pub fn options_for(text: &str) -> sieve_gbnf::Options {
    match text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# sieve: root="))
    {
        Some(root) => sieve_gbnf::Options::with_root(root.trim()),
        None => sieve_gbnf::Options::default(),
    }
}

/// Asserts that `text` parses, prints, and parses back to an equal AST.
pub fn assert_round_trip(name: &str, text: &str) -> sieve_gbnf::ast::Grammar {
    let ast = sieve_gbnf::parse(text).unwrap_or_else(|e| panic!("{name} parses: {e}"));
    let printed = ast.to_string();
    let again = sieve_gbnf::parse(&printed)
        .unwrap_or_else(|e| panic!("{name} printed parses again: {e}\n{printed}"));
    assert_eq!(
        ast.without_spans(),
        again.without_spans(),
        "{name} round-trips; printed:\n{printed}"
    );
    assert_eq!(
        again.to_string(),
        printed,
        "{name}: printing is a fixed point"
    );
    ast
}
