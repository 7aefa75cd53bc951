//! Shared helpers for the benchmarks in `benches/benches/`.
//!
//! Benchmarks measure; they never assert timings. Run them with
//! `cargo bench -p sieve-benches`, and compare medians within one run, since the machine is
//! shared and absolute times drift.

use std::path::{Path, PathBuf};

/// The GBNF grammars shipped in `grammars/`, as (name, text), sorted by name.
pub fn shipped_gbnf_grammars() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grammars");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && path.file_name().is_some_and(|n| n != "bad") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "gbnf" || e == "ebnf") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let name = path.strip_prefix(&root).ok()?.display().to_string();
            Some((name, text))
        })
        .collect()
}
