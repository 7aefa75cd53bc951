//! Test support shared by the suites of several crates: the grammars shipped in `grammars/`,
//! small vocabularies with a tokenizer for mask walks ([`substring_vocabulary`],
//! [`greedy_tokenize`]), brute-force masks through the backend seam ([`brute_force_mask`],
//! [`next_token`]), random small grammars for property tests ([`random`]), the backend corpus
//! of recorded token traces ([`traces`]), and [`sum_in_parallel`] for suites whose cases are
//! independent.
//!
//! Only dev-dependencies use this crate. Its functions panic with a clear message on a missing
//! or broken corpus file, since that is a broken test set-up, not an input to report.
//!
//! Convention: a grammar file may name its root rule on a line `# sieve: root=NAME`
//! (otherwise the root is `root`).

mod masks;
mod parallel;
pub mod random;
pub mod traces;
mod vocab;

use std::path::{Path, PathBuf};

pub use masks::{brute_force_mask, next_token};
pub use parallel::sum_in_parallel;
pub use vocab::{greedy_tokenize, substring_vocabulary};

use sieve_ir::Grammar;

/// The repository's `grammars/` folder.
pub fn grammars_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../grammars")
        .canonicalize()
        .expect("grammars/ exists")
}

/// Every `.gbnf`, `.ebnf` and `.regex` file under `grammars/` except `grammars/bad/`, sorted.
pub fn grammar_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![grammars_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("grammars/ is readable") {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "bad") {
                    dirs.push(path);
                }
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("gbnf" | "ebnf" | "regex")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The root named by a `# sieve: root=NAME` line, else `root`.
pub fn root_directive(text: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix("# sieve: root="))
        .map_or_else(|| "root".to_owned(), |name| name.trim().to_owned())
}

/// Compiles a grammar file through its front-end (by extension; a `.regex` file holds one
/// pattern, less a final newline).
pub fn compile_file(path: &Path) -> Grammar {
    let text = std::fs::read_to_string(path).expect("grammar file is readable");
    let result = if path.extension().is_some_and(|e| e == "regex") {
        sieve_regex::compile(text.trim_end_matches('\n'), &Default::default())
            .map_err(|e| e.to_string())
    } else {
        sieve_gbnf::compile(
            &text,
            &sieve_gbnf::Options::with_root(root_directive(&text)),
        )
        .map_err(|e| e.to_string())
    };
    result.unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every grammar file under `grammars/` except `grammars/bad/`, in any format
/// [`compile_any`] reads (`.gbnf`, `.ebnf`, `.regex`, `.json` schemas, `.lark`), sorted.
pub fn all_grammar_files() -> Vec<PathBuf> {
    let mut files = grammar_files();
    let mut dirs = vec![grammars_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("grammars/ is readable") {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                if path
                    .file_name()
                    .is_some_and(|n| n != "bad" && n != "traces")
                {
                    dirs.push(path);
                }
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("json" | "lark")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Compiles a grammar file of any shipped format through its front-end with default options:
/// what [`compile_file`] reads, JSON Schemas (`.json`) and Lark (`.lark`).
pub fn compile_any(path: &Path) -> Grammar {
    let text = std::fs::read_to_string(path).expect("grammar file is readable");
    let result = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => serde_json::from_str(&text)
            .map_err(|e| e.to_string())
            .and_then(|schema| {
                sieve_jsonschema::compile(&schema, &Default::default())
                    .map(|compiled| compiled.grammar)
                    .map_err(|e| e.to_string())
            }),
        Some("lark") => sieve_lark::compile(&text, &Default::default()).map_err(|e| e.to_string()),
        _ => return compile_file(path),
    };
    result.unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The schemas of the JSON Schema test suite's cases shipped with `sieve-jsonschema`
/// (`crates/sieve-jsonschema/tests/fixtures/*.json`, draft 2020-12) that compile with
/// default options, labelled by file and case: many grammars with rules in common (strings,
/// numbers, objects) under different names, for tests of what is shared across grammars.
pub fn schema_suite_grammars() -> Vec<(String, Grammar)> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sieve-jsonschema/tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .expect("the JSON Schema fixtures are readable")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut grammars = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable fixture");
        let cases: Vec<serde_json::Value> = serde_json::from_str(&text).expect("fixture JSON");
        for (i, case) in cases.iter().enumerate() {
            if let Ok(compiled) = sieve_jsonschema::compile(&case["schema"], &Default::default()) {
                grammars.push((format!("{} #{i}", path.display()), compiled.grammar));
            }
        }
    }
    grammars
}
