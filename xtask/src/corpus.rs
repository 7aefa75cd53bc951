//! Runs over corpora written by others, kept outside the repository in `../shared`.
//!
//! Today: every `.gbnf` grammar under `shared/data/grammars` must compile through every stage
//! (front-end, normalisation, automata); and every vocabulary of `shared/tokenizers` (o200k_base,
//! cl100k_base, r50k_base, qwen3, mistral-7b-v0.1) must load from `manifest.json` and decode
//! the reference token sequences in `crates/sieve-vocab/tests/fixtures/decode_*.json` to the
//! reference bytes. The tables printed are the pass rates; any failure, or a missing corpus,
//! makes the command fail.

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

/// Compiles one grammar through every stage; the summary or the rendered errors.
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
    let normalized = sieve_normalize::normalize(&parsed, &sieve_normalize::Config::default())
        .map_err(|e| e.to_string())?;
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&normalized)
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "{} rules, {} normalised, {} FSM states",
        parsed.rules().len(),
        normalized.rules().len(),
        fsms.state_count()
    ))
}

/// Runs every check over the shared corpora; the error names each part that failed.
pub fn run(shared: &Path) -> Result<(), String> {
    let results = [grammars(shared), vocabularies(shared)];
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

/// The manifest entries checked, with the name of their reference-decoding fixture.
const VOCABULARIES: &[(&str, &str)] = &[
    ("o200k_base", "o200k_base"),
    ("cl100k_base", "cl100k_base"),
    ("gpt2", "r50k_base"),
    ("qwen3", "qwen3"),
    ("mistral-7b-v0.1", "mistral-7b-v0.1"),
];

/// Decodes every case of `decode_<fixture>.json`; the number of cases.
fn check_decodings(vocab: &sieve_vocab::Vocabulary, fixture: &str) -> Result<usize, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/sieve-vocab/tests/fixtures")
        .join(format!("decode_{fixture}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let cases = value["cases"].as_array().ok_or("fixture without cases")?;
    for case in cases {
        let ids = case["ids"]
            .as_array()
            .ok_or("case without ids")?
            .iter()
            .map(|v| {
                v.as_u64()
                    .and_then(|id| u32::try_from(id).ok())
                    .and_then(sieve_vocab::TokenId::new)
                    .ok_or_else(|| format!("bad id {v}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let hex = case["hex"].as_str().ok_or("case without hex")?;
        let want: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("bad hex: {e}"))?;
        let got = vocab.decode(&ids).map_err(|e| e.to_string())?;
        if got != want {
            return Err(format!(
                "{}: decoded {:?}, reference {:?}",
                case["note"],
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            ));
        }
    }
    Ok(cases.len())
}

/// Loads one vocabulary from the manifest and checks it; the summary line.
fn check_vocabulary(manifest: &Path, entry: &str, fixture: &str) -> Result<String, String> {
    let start = std::time::Instant::now();
    let vocab = sieve_vocab::manifest::load_named(manifest, entry).map_err(|e| e.to_string())?;
    let loaded = start.elapsed();
    let cases = check_decodings(&vocab, fixture)?;
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
        "{} ids ({} text, {} special), EOS {:?}, {cases} reference decodings ok, loaded in {:.1} ms",
        vocab.n_vocab(),
        vocab.n_text_tokens(),
        vocab.special_ids().len(),
        vocab.eos_ids().iter().map(|t| t.as_u32()).collect::<Vec<_>>(),
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
    for &(entry, fixture) in VOCABULARIES {
        match check_vocabulary(&manifest, entry, fixture) {
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
