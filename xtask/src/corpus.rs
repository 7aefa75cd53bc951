//! Runs over corpora written by others, kept outside the repository in `../shared`.
//!
//! Five steps; any failure, or a missing corpus, makes the command fail:
//! 1. every `.gbnf` grammar under `shared/data/grammars` compiles through every stage
//!    (front-end, normalisation, automata), with a table of the results;
//! 2. every vocabulary of `shared/tokenizers` (o200k_base, cl100k_base, r50k_base, qwen3,
//!    mistral-7b-v0.1) loads from `manifest.json`, with its size, EOS ids and load time, and
//!    the shared r50k_base equals the embedded default;
//! 3. the workspace's `#[ignore]`d tests, which need these corpora, run with `SIEVE_SHARED`
//!    pointing at the shared folder: the reference decodings of every vocabulary, and masks
//!    equal to brute force at every step of walks over every shipped grammar with o200k_base;
//! 4. every `.lark` grammar that llguidance compiles, sieve compiles (see `lark`);
//! 5. the harness workloads' `grammar.lark` give the same masks as their `grammar.gbnf`.

use std::path::{Path, PathBuf};

fn gbnf_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            gbnf_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "gbnf") {
            out.push(path);
        }
    }
    Ok(())
}

/// Compiles one grammar through the front-end and the library's pipeline (normalisation,
/// automata) with its default options; the summary or the rendered errors.
fn compile(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let name = path.display().to_string();
    let source = sieve_diagnostics::SourceFile::new(&name, &text);
    let parsed = sieve_gbnf::compile(&text, &sieve_gbnf::Options::default()).map_err(|errors| {
        errors
            .as_slice()
            .iter()
            .map(|e| source.render_error(e))
            .collect::<String>()
    })?;
    let options = sieve_matcher::Options::default();
    let normalized =
        sieve_matcher::pipeline::normalize(&parsed, &options).map_err(|e| e.to_string())?;
    let fsms =
        sieve_matcher::pipeline::automata(&normalized, &options).map_err(|e| e.to_string())?;
    Ok(format!(
        "{} rules, {} normalised, {} FSM states",
        parsed.rules().len(),
        normalized.rules().len(),
        fsms.state_count()
    ))
}

/// Runs every check over the shared corpora; the error names each part that failed.
pub fn run(shared: &Path) -> Result<(), String> {
    let results = [
        grammars(shared),
        vocabularies(shared),
        ignored_tests(shared),
        crate::lark::corpus(shared),
        crate::lark::workloads(shared),
    ];
    let errors: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Checks every GBNF grammar of the shared corpus.
fn grammars(shared: &Path) -> Result<(), String> {
    let dir = shared.join("data/grammars");
    if !dir.is_dir() {
        return Err(format!(
            "corpus missing: {} does not exist (pass the shared folder as an argument)",
            dir.display()
        ));
    }
    let mut files = Vec::new();
    gbnf_files(&dir, &mut files)?;
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "corpus missing: no .gbnf file under {}",
            dir.display()
        ));
    }
    let mut failures = 0;
    println!("GBNF grammars under {}:", dir.display());
    for file in &files {
        let shown = file.strip_prefix(&dir).unwrap_or(file).display();
        match compile(file) {
            Ok(summary) => println!("  ok    {shown}: {summary}"),
            Err(errors) => {
                failures += 1;
                println!("  FAIL  {shown}\n{errors}");
            }
        }
    }
    println!("{} passed, {} failed", files.len() - failures, failures);
    if failures > 0 {
        return Err(format!("{failures} grammar(s) failed"));
    }
    Ok(())
}

/// The manifest entries checked.
const VOCABULARIES: &[&str] = &[
    "o200k_base",
    "cl100k_base",
    "gpt2",
    "qwen3",
    "mistral-7b-v0.1",
];

/// Loads one vocabulary from the manifest and checks it; the summary line.
fn check_vocabulary(manifest: &Path, entry: &str) -> Result<String, String> {
    let start = std::time::Instant::now();
    let vocab = sieve_vocab::manifest::load_named(manifest, entry).map_err(|e| e.to_string())?;
    let loaded = start.elapsed();
    if entry == "gpt2" {
        let embedded = sieve_vocab::Vocabulary::embedded_default();
        let same = embedded.n_vocab() == vocab.n_vocab()
            && embedded.eos_ids() == vocab.eos_ids()
            && (0..vocab.n_vocab()).all(|i| {
                let id = sieve_vocab::TokenId::new(i as u32).expect("below n_vocab");
                embedded.bytes(id) == vocab.bytes(id)
                    && embedded.is_special(id) == vocab.is_special(id)
            });
        if !same {
            return Err("the embedded default differs from the shared r50k_base".to_owned());
        }
    }
    Ok(format!(
        "{} ids ({} text, {} special), EOS {:?}, loaded in {:.1} ms",
        vocab.n_vocab(),
        vocab.n_text_tokens(),
        vocab.special_ids().len(),
        vocab
            .eos_ids()
            .iter()
            .map(|t| t.as_u32())
            .collect::<Vec<_>>(),
        loaded.as_secs_f64() * 1e3
    ))
}

/// Checks every vocabulary of the shared tokenizer folder against the reference decodings.
fn vocabularies(shared: &Path) -> Result<(), String> {
    let dir = shared.join("tokenizers");
    let manifest = dir.join("manifest.json");
    if !manifest.is_file() {
        return Err(format!(
            "corpus missing: {} does not exist (pass the shared folder as an argument)",
            manifest.display()
        ));
    }
    println!("vocabularies of {}:", manifest.display());
    let mut failures = 0;
    for &entry in VOCABULARIES {
        match check_vocabulary(&manifest, entry) {
            Ok(summary) => println!("  ok    {entry}: {summary}"),
            Err(error) => {
                failures += 1;
                println!("  FAIL  {entry}: {error}");
            }
        }
    }
    println!(
        "vocab: {} passed, {} failed",
        VOCABULARIES.len() - failures,
        failures
    );
    if failures > 0 {
        return Err(format!("{failures} vocabulary(ies) failed"));
    }
    Ok(())
}

/// Runs the workspace's `#[ignore]`d tests (the ones that need the shared corpora) with
/// `SIEVE_SHARED` set to `shared`. Tests named `known_gap_…` are ignored for another reason
/// (they state a known gap and fail until it is closed), so they are skipped here.
fn ignored_tests(shared: &Path) -> Result<(), String> {
    let shared = shared
        .canonicalize()
        .map_err(|e| format!("{}: {e}", shared.display()))?;
    println!("ignored tests with SIEVE_SHARED={}:", shared.display());
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args([
            "test",
            "--workspace",
            "--locked",
            "--",
            "--ignored",
            "--skip",
            "known_gap_",
        ])
        .env("SIEVE_SHARED", &shared)
        .status()
        .map_err(|e| format!("cannot run cargo test: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the ignored tests failed ({status})"))
    }
}
