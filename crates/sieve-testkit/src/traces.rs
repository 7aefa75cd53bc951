//! The backend corpus: recorded token traces over the shipped grammars, which every backend
//! replays (in the style of regex's `testdata/`).
//!
//! One TOML file per grammar under `grammars/traces/` (the format is described in
//! `grammars/traces/README.md`): the grammar's path under `grammars/`, the backends expected
//! to refuse it with a phrase of their error, and traces of token ids of the embedded
//! vocabulary (GPT-2's r50k_base), each with whether the output is complete after it and
//! tokens that must be refused at its end.
//!
//! # Invariant
//!
//! [`TraceFile::to_toml`] and [`load`] round-trip: a file written by the recorder
//! (`cargo xtask record-traces`) reads back equal.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One grammar's traces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceFile {
    /// The grammar file, relative to `grammars/`.
    pub grammar: String,
    /// Backend name → a phrase its compile error must contain: the backends expected to
    /// refuse the grammar. A refusal not listed here, or a listed one that does not happen,
    /// fails the corpus.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub refused: BTreeMap<String, String>,
    /// The traces.
    #[serde(rename = "trace")]
    pub traces: Vec<Trace>,
}

/// A token sequence every backend must accept step by step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// A name unique within the file.
    pub name: String,
    /// The output's text, for readers (lossy where a token splits a character); checked
    /// against the tokens' bytes, so a changed vocabulary is noticed.
    pub text: String,
    /// Token ids of the embedded vocabulary, each allowed after the ones before.
    pub tokens: Vec<u32>,
    /// Whether EOS is allowed after the last token.
    pub complete: bool,
    /// Text tokens that must be refused after the last token.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejects: Vec<u32>,
}

impl TraceFile {
    /// The file as TOML, in the layout the corpus keeps.
    pub fn to_toml(&self) -> String {
        let mut out = String::from(
            "# Recorded by `cargo xtask record-traces`; replayed on every backend by\n\
             # crates/sieve-matcher/tests/corpus.rs. Format: grammars/traces/README.md.\n",
        );
        out.push_str(&toml::to_string(self).expect("a trace file serialises"));
        out
    }
}

/// The corpus folder, `grammars/traces/`.
pub fn traces_dir() -> PathBuf {
    crate::grammars_dir().join("traces")
}

/// Every trace file, sorted by path.
///
/// # Panics
/// On an unreadable or malformed file (a broken test set-up).
pub fn load_all() -> Vec<(PathBuf, TraceFile)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(traces_dir())
        .expect("grammars/traces/ is readable")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let file = load(&path);
            (path, file)
        })
        .collect()
}

/// One trace file.
///
/// # Panics
/// On an unreadable or malformed file.
pub fn load(path: &Path) -> TraceFile {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The trace file's name for a grammar path relative to `grammars/`: its path with `/` and
/// `.` turned into `-`, plus `.toml` (`llama.cpp/json.gbnf` → `llama-cpp-json-gbnf.toml`).
pub fn file_name_for(grammar: &str) -> String {
    let stem: String = grammar
        .chars()
        .map(|c| if c == '/' || c == '.' { '-' } else { c })
        .collect();
    format!("{stem}.toml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_file_round_trips() {
        let file = TraceFile {
            grammar: "regex/uuid.regex".into(),
            refused: BTreeMap::from([("lr".to_owned(), "conflict".to_owned())]),
            traces: vec![Trace {
                name: "seed-1".into(),
                text: "a\"b".into(),
                tokens: vec![1, 2, 3],
                complete: false,
                rejects: vec![7],
            }],
        };
        let text = file.to_toml();
        assert_eq!(toml::from_str::<TraceFile>(&text).unwrap(), file);
    }

    #[test]
    fn file_names_flatten_the_path() {
        assert_eq!(
            file_name_for("llama.cpp/json.gbnf"),
            "llama-cpp-json-gbnf.toml"
        );
    }
}
