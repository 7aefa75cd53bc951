//! The Lark steps of `cargo xtask corpus`:
//! 1. every `.lark` under `shared/data/grammars` that llguidance compiles (its verdicts are
//!    checked in as `xtask/expected/lark-corpus.tsv`, written by `lark_corpus.py`) compiles
//!    with sieve through every stage; a file llguidance compiles and sieve does not is a
//!    failure, and the counts are printed (also of the files llguidance refuses that sieve
//!    compiles);
//! 2. on every harness workload with both a `grammar.lark` and a `grammar.gbnf`, sieve's
//!    masks from the Lark grammar equal its masks from the GBNF twin at every step of every
//!    sample (greedy tokenisation with o200k_base), EOS included.

use std::path::Path;
use std::sync::Arc;

use sieve_ir::Grammar;
use sieve_matcher::{CompiledGrammar, Matcher, Options, Tokenizer};

const EXPECTED: &str = include_str!("../expected/lark-corpus.tsv");

/// Workloads whose Lark and GBNF grammars are known to differ in sieve, and why. A listed
/// workload that differs is reported, not failed; one that no longer differs fails, so the
/// entry is removed.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[(
    "tool_call_llama31",
    "its %json blocks ask for llguidance's escape set `nrbtf\\\"` (no \\u escapes, no raw U+007F, as the GBNF twin spells out); sieve-jsonschema's nearest option, Escapes::Canonical, also allows \\u00XX for control characters and raw U+007F (docs/lark.md)",
)];

/// Compiles one Lark file through every stage; the summary or the rendered errors.
fn compile(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let grammar = front_end(path, &text)?;
    let options = Options::default();
    let normalized =
        sieve_matcher::pipeline::normalize(&grammar, &options).map_err(|e| e.to_string())?;
    let fsms =
        sieve_matcher::pipeline::automata(&normalized, &options).map_err(|e| e.to_string())?;
    Ok(format!(
        "{} rules, {} normalised, {} FSM states",
        grammar.rules().len(),
        normalized.rules().len(),
        fsms.state_count()
    ))
}

fn front_end(path: &Path, text: &str) -> Result<Grammar, String> {
    let name = path.display().to_string();
    let source = sieve_diagnostics::SourceFile::new(&name, text);
    sieve_lark::compile(text, &sieve_lark::Options::default()).map_err(|errors| {
        errors
            .as_slice()
            .iter()
            .map(|e| source.render_error(e))
            .collect()
    })
}

/// Step 1: the shared `.lark` files.
pub fn corpus(shared: &Path) -> Result<(), String> {
    let dir = shared.join("data/grammars");
    let mut expected = Vec::new();
    for line in EXPECTED.lines().filter(|l| !l.starts_with('#')) {
        let (file, verdict) = line
            .split_once('\t')
            .ok_or_else(|| format!("lark-corpus.tsv: bad line {line:?}"))?;
        expected.push((file, verdict == "ok"));
    }
    println!(
        "Lark grammars under {} (llguidance's verdict from xtask/expected/lark-corpus.tsv):",
        dir.display()
    );
    let (mut both, mut regressions, mut beyond, mut refused_both) = (0, 0, 0, 0);
    for (file, llguidance) in &expected {
        let path = dir.join(file);
        if !path.is_file() {
            return Err(format!("corpus missing: {}", path.display()));
        }
        match (compile(&path), llguidance) {
            (Ok(summary), true) => {
                both += 1;
                println!("  ok    {file}: {summary}");
            }
            (Ok(summary), false) => {
                beyond += 1;
                println!("  ok    {file} (llguidance refuses it): {summary}");
            }
            (Err(errors), true) => {
                regressions += 1;
                println!("  FAIL  {file} (llguidance compiles it)\n{errors}");
            }
            (Err(errors), false) => {
                refused_both += 1;
                let first = errors.lines().next().unwrap_or_default();
                println!("  --    {file} (refused by both): {first}");
            }
        }
    }
    println!(
        "lark: {both} of {} compiled by llguidance compile with sieve, {regressions} do not; sieve also compiles {beyond} that llguidance refuses; {refused_both} refused by both",
        both + regressions
    );
    if regressions > 0 {
        return Err(format!(
            "{regressions} Lark grammar(s) llguidance compiles failed"
        ));
    }
    Ok(())
}

/// Greedy longest-match tokenisation; `None` if some byte starts no token.
pub(crate) fn tokenize(trie: &sieve_vocab::TokenTrie, text: &[u8]) -> Option<Vec<u32>> {
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let (len, id) = (1..=rest.len().min(64))
            .rev()
            .find_map(|len| trie.find(&rest[..len]).map(|id| (len, id.as_u32())))?;
        tokens.push(id);
        at += len;
    }
    Some(tokens)
}

fn mask(matcher: &mut Matcher) -> Result<Vec<u32>, String> {
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    matcher
        .fill_next_token_bitmask(&mut mask)
        .map_err(|e| e.to_string())?;
    Ok(mask)
}

/// Step 2: Lark against the GBNF twin on the harness workloads.
pub fn workloads(shared: &Path) -> Result<(), String> {
    let dir = shared.join("bench/workloads");
    let manifest = shared.join("tokenizers/manifest.json");
    let vocab = sieve_vocab::manifest::load_named(&manifest, "o200k_base")
        .map_err(|e| format!("{}: {e}", manifest.display()))?;
    let tokenizer = Arc::new(Tokenizer::new(Arc::new(vocab)));
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("grammar.lark").is_file() && p.join("grammar.gbnf").is_file())
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(format!(
            "corpus missing: no workload with grammar.lark and grammar.gbnf under {}",
            dir.display()
        ));
    }
    println!("Lark against the GBNF twin (o200k_base), masks at every step of every sample:");
    let mut failures = 0;
    let (mut equal, mut known) = (0, 0);
    for workload in &names {
        let name = workload.file_name().unwrap_or_default().to_string_lossy();
        let expected = KNOWN_DIFFERENCES.iter().find(|(w, _)| *w == name);
        match (compare(workload, &tokenizer), expected) {
            (Ok((samples, steps)), None) => {
                equal += 1;
                println!("  ok    {name}: {samples} samples, {steps} steps, masks equal");
            }
            (Ok(_), Some(_)) => {
                failures += 1;
                println!("  FAIL  {name}: masks are now equal; remove it from KNOWN_DIFFERENCES in xtask/src/lark.rs");
            }
            (Err(e), Some((_, why))) => {
                known += 1;
                println!("  known {name}: {e}\n        because {why}");
            }
            (Err(e), None) => {
                failures += 1;
                println!("  FAIL  {name}: {e}");
            }
        }
    }
    println!(
        "lark vs gbnf: {equal} of {} workloads with equal masks, {known} known difference(s)",
        names.len()
    );
    if failures > 0 {
        return Err(format!(
            "{failures} workload(s) differ between grammar.lark and grammar.gbnf"
        ));
    }
    Ok(())
}

fn compare(workload: &Path, tokenizer: &Arc<Tokenizer>) -> Result<(usize, usize), String> {
    let lark_path = workload.join("grammar.lark");
    let lark_text = std::fs::read_to_string(&lark_path).map_err(|e| e.to_string())?;
    let lark = front_end(&lark_path, &lark_text)?;
    let gbnf_text =
        std::fs::read_to_string(workload.join("grammar.gbnf")).map_err(|e| e.to_string())?;
    let gbnf = sieve_gbnf::compile(&gbnf_text, &sieve_gbnf::Options::default())
        .map_err(|e| format!("grammar.gbnf: {e}"))?;
    let options = Options::default();
    let lark = Arc::new(
        CompiledGrammar::new(&lark, tokenizer.clone(), &options).map_err(|e| e.to_string())?,
    );
    let gbnf = Arc::new(
        CompiledGrammar::new(&gbnf, tokenizer.clone(), &options).map_err(|e| e.to_string())?,
    );
    let samples =
        std::fs::read_to_string(workload.join("samples.jsonl")).map_err(|e| e.to_string())?;
    let (mut count, mut steps) = (0, 0);
    for (i, line) in samples.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let sample: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let text = sample["text"].as_str().ok_or("a sample without text")?;
        let tokens = tokenize(lark.trie(), text.as_bytes())
            .ok_or_else(|| format!("sample {i}: not tokenisable"))?;
        let mut a = Matcher::new(lark.clone());
        let mut b = Matcher::new(gbnf.clone());
        for (step, &token) in tokens.iter().enumerate() {
            let (ma, mb) = (mask(&mut a)?, mask(&mut b)?);
            steps += 1;
            if ma != mb {
                let count = |m: &[u32]| m.iter().map(|w| w.count_ones()).sum::<u32>();
                let vocab = lark.vocabulary();
                let differing: Vec<String> = (0..vocab.n_vocab())
                    .filter(|&t| (ma[t / 32] ^ mb[t / 32]) & (1 << (t % 32)) != 0)
                    .take(5)
                    .map(|t| {
                        let id = sieve_vocab::TokenId::new(t as u32).expect("below n_vocab");
                        let side = if ma[t / 32] & (1 << (t % 32)) != 0 {
                            "lark"
                        } else {
                            "gbnf"
                        };
                        format!(
                            "{side} only: {:?}",
                            String::from_utf8_lossy(vocab.bytes(id))
                        )
                    })
                    .collect();
                return Err(format!(
                    "sample {i}, step {step}: {} tokens allowed by the Lark grammar, {} by the GBNF ({})",
                    count(&ma),
                    count(&mb),
                    differing.join(", ")
                ));
            }
            if a.accept_token(token).is_err() || b.accept_token(token).is_err() {
                break;
            }
        }
        count += 1;
    }
    Ok((count, steps))
}
