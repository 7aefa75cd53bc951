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

/// The folder holding the shared corpora: `$SIEVE_SHARED`, or `../shared` beside the
/// workspace.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("SIEVE_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
            std::fs::canonicalize(&default).unwrap_or(default)
        }
    }
}

/// The vocabulary `name` of `shared/tokenizers/manifest.json` (paths relative to the
/// manifest, with its EOS ids).
pub fn manifest_vocabulary(shared: &Path, name: &str) -> Result<sieve_vocab::Vocabulary, String> {
    let manifest = shared.join("tokenizers/manifest.json");
    let shown = manifest.display();
    let text = std::fs::read_to_string(&manifest).map_err(|e| format!("{shown}: {e}"))?;
    let entries: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
    let entry = entries
        .get(name)
        .ok_or_else(|| format!("{shown}: no {name} entry"))?;
    let base = manifest.parent().unwrap_or(Path::new("."));
    sieve_vocab::Vocabulary::from_manifest_entry(entry, base)
        .map_err(|e| format!("{shown}: {name}: {e}"))
}

/// Every `<Subset>/*.json` under `corpus` (JSONSchemaBench's layout), as (path under the
/// corpus, path), sorted; a missing or empty corpus is an error.
pub fn corpus_files(corpus: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let missing = |e: std::io::Error| {
        format!(
            "{}: {e}; set SIEVE_SHARED to the folder holding data/jsonschemabench",
            corpus.display()
        )
    };
    let mut files = Vec::new();
    for subset in std::fs::read_dir(corpus).map_err(missing)? {
        let subset = subset.map_err(missing)?.path();
        if !subset.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&subset).map_err(missing)? {
            let file = file.map_err(missing)?.path();
            if file.extension().is_some_and(|e| e == "json") {
                let name = file
                    .strip_prefix(corpus)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                files.push((name, file));
            }
        }
    }
    if files.is_empty() {
        return Err(format!("{}: no <Subset>/*.json schemas", corpus.display()));
    }
    files.sort();
    Ok(files)
}

/// The command line of a sweep that takes only `--limit N` (and the `--bench` cargo passes):
/// N, or `default`.
pub fn limit_argument(bench: &str, default: usize) -> Result<usize, String> {
    let mut limit = default;
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        match word.as_str() {
            "--bench" => {}
            "--limit" => {
                let n = words.next().ok_or("--limit needs a number")?;
                limit = n.parse().map_err(|e| format!("--limit {n}: {e}"))?;
            }
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: {bench} [--limit N]"
                ))
            }
        }
    }
    Ok(limit)
}

/// The longest token of `trie` that `rest` starts with (at most 32 bytes): its length and id.
pub fn longest_token(trie: &sieve_vocab::TokenTrie, rest: &[u8]) -> Option<(usize, u32)> {
    (1..=rest.len().min(32))
        .rev()
        .find_map(|len| trie.find(&rest[..len]).map(|id| (len, id.as_u32())))
}

/// Greedy longest-match tokenisation (any tokenisation is a valid walk); `None` when some
/// byte starts no token.
pub fn tokenize(trie: &sieve_vocab::TokenTrie, text: &[u8]) -> Option<Vec<u32>> {
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let (len, id) = longest_token(trie, &text[at..])?;
        tokens.push(id);
        at += len;
    }
    Some(tokens)
}
