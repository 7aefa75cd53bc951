//! The cost of classifying one state against a whole vocabulary (o200k_base), for every
//! scannable state of the peer harness's workloads and of a sample of JSONSchemaBench schemas:
//! what a step pays the first time it meets a state, and what ahead-of-time classification
//! pays per grammar.
//!
//! `cargo bench -p sieve-benches --bench classify [-- --limit N]` (N JSONSchemaBench schemas,
//! default 500, taken evenly over the sorted corpus). Reads `SIEVE_SHARED` (default
//! `../shared` beside the workspace); a missing corpus is an error. Prints the distribution of
//! per-state times (p50/p90/p99/max), how many states took over 1 ms, the per-grammar
//! ahead-of-time totals, and the slowest states by grammar.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use serde_json::Value;
use sieve_backend::{Backend, Key};
use sieve_earley::EarleyGrammar;
use sieve_ir::Grammar;
use sieve_matcher::pipeline;
use sieve_vocab::TokenTrie;

/// The `sieve` binary's allocator, so figures here are the ones the command shows.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const VOCABULARY: &str = "o200k_base";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("classify: {message}");
            ExitCode::FAILURE
        }
    }
}

/// One classified state.
struct Sample {
    ms: f64,
    grammar: usize,
    state: u32,
    accepted: usize,
    uncertain: usize,
}

fn run() -> Result<(), String> {
    let limit = sieve_benches::limit_argument("classify", 500)?;
    let shared = sieve_benches::shared_dir();
    let trie = TokenTrie::new(&sieve_benches::manifest_vocabulary(&shared, VOCABULARY)?);
    let mut grammars = workload_grammars(&shared.join("bench/workloads"))?;
    let workloads = grammars.len();
    grammars.extend(schema_grammars(
        &shared.join("data/jsonschemabench"),
        limit,
    )?);
    println!(
        "{VOCABULARY}: {} token readings (each text token by its bytes and by its token-terminal encoding); {workloads} harness workloads and {} JSONSchemaBench schemas",
        trie.len(),
        grammars.len() - workloads
    );

    if let Ok(name) = std::env::var("SIEVE_CLASSIFY_LIST") {
        return list_states(&grammars, &trie, &name);
    }
    if let Ok(focus) = std::env::var("SIEVE_CLASSIFY_FOCUS") {
        return focus_on(&grammars, &trie, &focus);
    }
    let mut samples = Vec::new();
    let mut per_grammar: Vec<(f64, usize)> = Vec::new();
    let mut failed = 0;
    for (index, (_, grammar)) in grammars.iter().enumerate() {
        let Some(engine) = engine(grammar) else {
            failed += 1;
            continue;
        };
        let mut total = 0.0;
        let mut states = 0;
        for state in 0..Backend::state_count(&engine) as u32 {
            if !engine.is_scannable(state) {
                continue;
            }
            let started = Instant::now();
            let classification = engine.classify(Key::bare(state), &trie);
            let ms = started.elapsed().as_secs_f64() * 1e3;
            total += ms;
            states += 1;
            samples.push(Sample {
                ms,
                grammar: index,
                state,
                accepted: classification.accepted.len(),
                uncertain: classification.uncertain_count(),
            });
        }
        per_grammar.push((total, states));
    }
    if failed > 0 {
        println!("{failed} grammars did not compile (skipped)");
    }
    report(&grammars, &mut samples, &mut per_grammar);
    Ok(())
}

fn report(
    grammars: &[(String, Grammar)],
    samples: &mut [Sample],
    per_grammar: &mut [(f64, usize)],
) {
    samples.sort_by(|a, b| a.ms.total_cmp(&b.ms));
    let times: Vec<f64> = samples.iter().map(|s| s.ms).collect();
    println!("\nper state ({} states), ms:", times.len());
    println!("| p50 | p90 | p99 | p99.9 | max | mean | over 1 ms |");
    println!("|---|---|---|---|---|---|---|");
    let over = times.iter().filter(|&&t| t > 1.0).count();
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    println!(
        "| {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {over} |",
        quantile(&times, 0.5),
        quantile(&times, 0.9),
        quantile(&times, 0.99),
        quantile(&times, 0.999),
        times.last().copied().unwrap_or(0.0),
        mean
    );
    per_grammar.sort_by(|a, b| a.0.total_cmp(&b.0));
    let totals: Vec<f64> = per_grammar.iter().map(|g| g.0).collect();
    println!(
        "\nahead of time, every state of a grammar, one thread ({} grammars), ms: p50 {:.2}, p90 {:.2}, p99 {:.2}, max {:.2}",
        totals.len(),
        quantile(&totals, 0.5),
        quantile(&totals, 0.9),
        quantile(&totals, 0.99),
        totals.last().copied().unwrap_or(0.0)
    );
    println!("\nslowest states:");
    for s in samples.iter().rev().take(10) {
        println!(
            "  {:.3} ms  {} state {} ({} accepted, {} uncertain)",
            s.ms, grammars[s.grammar].0, s.state, s.accepted, s.uncertain
        );
    }
}

/// Every scannable state of grammar `name`, with its time and counts, most uncertain first.
fn list_states(grammars: &[(String, Grammar)], trie: &TokenTrie, name: &str) -> Result<(), String> {
    let (_, grammar) = grammars
        .iter()
        .find(|(n, _)| n == name)
        .ok_or_else(|| format!("no grammar {name}"))?;
    let engine = engine(grammar).ok_or("does not compile")?;
    let mut rows = Vec::new();
    for state in 0..Backend::state_count(&engine) as u32 {
        if engine.is_scannable(state) {
            let started = Instant::now();
            let c = engine.classify(Key::bare(state), trie);
            let ms = started.elapsed().as_secs_f64() * 1e3;
            rows.push((c.uncertain_count(), c.accepted.len(), ms, state));
        }
    }
    rows.sort_by_key(|row| std::cmp::Reverse(row.0));
    for (uncertain, accepted, ms, state) in rows {
        println!("state {state}: {accepted} accepted, {uncertain} uncertain, {ms:.3} ms");
    }
    Ok(())
}

/// `NAME:STATE`: classifies that state 20 times and prints the fastest and slowest time.
fn focus_on(grammars: &[(String, Grammar)], trie: &TokenTrie, focus: &str) -> Result<(), String> {
    let (name, state) = focus
        .rsplit_once(':')
        .ok_or("SIEVE_CLASSIFY_FOCUS is NAME:STATE")?;
    let state: u32 = state.parse().map_err(|e| format!("{focus}: {e}"))?;
    let (_, grammar) = grammars
        .iter()
        .find(|(n, _)| n == name)
        .ok_or_else(|| format!("no grammar {name}"))?;
    let engine = engine(grammar).ok_or("does not compile")?;
    let reps: usize = std::env::var("SIEVE_CLASSIFY_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    let mut times: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(engine.classify(Key::bare(state), trie));
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let first = times[0];
    times.sort_by(f64::total_cmp);
    println!("first classification (class regions not yet built): {first:.3} ms");
    println!(
        "{name} state {state}: min {:.3} ms, median {:.3} ms, max {:.3} ms",
        times[0],
        times[times.len() / 2],
        times[times.len() - 1]
    );
    Ok(())
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The Earley tables of `grammar`, compiled by the library's pipeline as
/// `CompiledGrammar::new` does.
fn engine(grammar: &Grammar) -> Option<EarleyGrammar> {
    let options = sieve_matcher::Options::default();
    let normalized = pipeline::normalize(grammar, &options).ok()?;
    let fsms = pipeline::automata(&normalized, &options).ok()?;
    Some(pipeline::earley(&fsms, &options))
}

/// Each harness workload's grammar, by the harness's preference: JSON Schema (compact, the
/// workload's whitespace), regex, GBNF.
fn workload_grammars(dir: &Path) -> Result<Vec<(String, Grammar)>, String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for path in names {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let read = |file: &str| std::fs::read_to_string(path.join(file)).ok();
        let grammar = if let Some(text) = read("schema.json") {
            let options: Value = read("workload.json")
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
            let mut json = sieve_jsonschema::Options::default();
            if options.pointer("/json/whitespace").and_then(Value::as_str) == Some("flexible") {
                json.whitespace = sieve_jsonschema::Whitespace::Flexible;
            }
            let schema: Value = serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))?;
            sieve_jsonschema::compile(&schema, &json)
                .map(|c| c.grammar)
                .ok()
        } else if let Some(text) = read("regex.txt") {
            sieve_regex::compile(text.trim_end_matches('\n'), &Default::default()).ok()
        } else if let Some(text) = read("grammar.gbnf") {
            sieve_gbnf::compile(&text, &Default::default()).ok()
        } else {
            None
        };
        if let Some(grammar) = grammar {
            out.push((name, grammar));
        }
    }
    if out.is_empty() {
        return Err(format!("{}: no workloads", dir.display()));
    }
    Ok(out)
}

/// `limit` JSONSchemaBench schemas taken evenly over the sorted corpus, those the front-end
/// compiles.
fn schema_grammars(corpus: &Path, limit: usize) -> Result<Vec<(String, Grammar)>, String> {
    let files = sieve_benches::corpus_files(corpus)?;
    let step = (files.len() / limit.max(1)).max(1);
    let mut out = Vec::new();
    for (name, path) in files.iter().step_by(step).take(limit) {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(file) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let Some(schema) = file.get("schema") else {
            continue;
        };
        if let Ok(compiled) = sieve_jsonschema::compile(schema, &Default::default()) {
            out.push((name.clone(), compiled.grammar));
        }
    }
    Ok(out)
}
