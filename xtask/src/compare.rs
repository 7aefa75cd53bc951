//! `cargo xtask compare [SHARED_DIR] [--repeats=N]`: the backends side by side, on the backend
//! corpus (`grammars/traces/`, GPT-2's embedded vocabulary) and on the peer harness's workloads
//! (`SHARED_DIR/bench/workloads`, o200k_base): compile time, memory of the compiled tables,
//! mask p50/p99/max, cold cost per request, and which constraints each backend refuses and why.
//!
//! Every compile is cold: nothing is shared between grammars or backends (the token-set store
//! and the automaton cache are off), so a backend's figures do not depend on which ran first.
//! Masks of the first walk over a freshly compiled grammar are the cold masks; the later walks
//! (`--repeats`) are warm. *Cold cost per request* is the compile plus the first walk's masks,
//! divided by the samples, as the peer harness defines it. Workload samples are tokenised by
//! greedy longest match (not the tokenizer's BPE merges): every backend walks the same tokens,
//! which is what a comparison between backends needs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use sieve_matcher::{BackendKind, CompiledGrammar, Matcher, Options, Tokenizer};
use sieve_vocab::{TokenTrie, Vocabulary};

/// What `compare` reads and how often it walks.
pub struct Settings {
    /// The shared folder (`bench/workloads`, `tokenizers/manifest.json`).
    pub shared: PathBuf,
    /// Walks over every sample (the first cold).
    pub repeats: usize,
}

/// One constraint to compare on: a grammar and its token sequences.
struct Input {
    name: String,
    grammar: sieve_ir::Grammar,
    walks: Vec<Vec<u32>>,
}

/// One backend's figures on one input.
#[derive(Default)]
struct Figures {
    compile_ms: f64,
    table_bytes: usize,
    /// Mask times of the first walk over every sample (µs).
    cold: Vec<f64>,
    /// Mask times of every walk (µs).
    all: Vec<f64>,
    samples: usize,
}

impl Figures {
    fn cold_cost_ms(&self) -> f64 {
        let cold: f64 = self.cold.iter().sum::<f64>() / 1e3;
        (self.compile_ms + cold) / self.samples.max(1) as f64
    }
}

/// Cold options: nothing shared with other grammars or backends.
fn options(backend: BackendKind) -> Options {
    Options {
        backend: backend.into(),
        share_classifications: false,
        share_automata: false,
        ..Options::default()
    }
}

pub fn run(root: &Path, settings: &Settings) -> Result<(), String> {
    println!("# Backends compared\n");
    println!(
        "Command: `cargo xtask compare` (repeats = {}).\n",
        settings.repeats
    );
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let gpt2 = Arc::new(Tokenizer::new(vocab));
    let corpus = corpus_inputs(root)?;
    println!(
        "## The backend corpus (grammars/traces/, {} grammars, GPT-2 r50k_base)\n",
        corpus.len()
    );
    let figures = measure_all(&corpus, &gpt2, settings.repeats)?;
    summary_table(&corpus, &figures);

    let manifest = settings.shared.join("tokenizers/manifest.json");
    let vocab = sieve_vocab::manifest::load_named(&manifest, "o200k_base")
        .map_err(|e| format!("{}: {e}", manifest.display()))?;
    let o200k = Arc::new(Tokenizer::new(Arc::new(vocab)));
    let workloads = workload_inputs(&settings.shared.join("bench/workloads"), o200k.trie())?;
    println!(
        "\n## The peer harness's workloads ({} workloads, o200k_base)\n",
        workloads.len()
    );
    let figures = measure_all(&workloads, &o200k, settings.repeats)?;
    per_input_table(&workloads, &figures);
    summary_table(&workloads, &figures);
    Ok(())
}

/// Per input, per backend: the figures or the refusal.
type Results = Vec<Vec<Result<Figures, String>>>;

fn measure_all(
    inputs: &[Input],
    tokenizer: &Arc<Tokenizer>,
    repeats: usize,
) -> Result<Results, String> {
    inputs
        .iter()
        .map(|input| {
            BackendKind::ALL
                .iter()
                .map(|&backend| measure(input, tokenizer, backend, repeats))
                .collect::<Result<Vec<_>, String>>()
        })
        .collect()
}

/// `Ok(Err(reason))` when the backend refuses the input; `Err` when a walk fails (a bug).
fn measure(
    input: &Input,
    tokenizer: &Arc<Tokenizer>,
    backend: BackendKind,
    repeats: usize,
) -> Result<Result<Figures, String>, String> {
    let started = Instant::now();
    let compiled = match CompiledGrammar::new(&input.grammar, tokenizer.clone(), &options(backend))
    {
        Ok(compiled) => Arc::new(compiled),
        Err(e) => return Ok(Err(e.to_string())),
    };
    let first = Matcher::new(compiled.clone());
    let mut figures = Figures {
        compile_ms: started.elapsed().as_secs_f64() * 1e3,
        table_bytes: compiled.table_bytes(),
        samples: input.walks.len(),
        ..Figures::default()
    };
    drop(first);
    let mut mask = vec![0u32; compiled.bitmask_words()];
    for walk in 0..repeats.max(1) {
        for tokens in &input.walks {
            let mut matcher = Matcher::new(compiled.clone());
            // Every token's step, then the EOS step.
            for token in tokens.iter().copied().map(Some).chain([None]) {
                let started = Instant::now();
                matcher
                    .fill_next_token_bitmask(&mut mask)
                    .map_err(|e| format!("{} on {backend}: {e}", input.name))?;
                let us = started.elapsed().as_secs_f64() * 1e6;
                if walk == 0 {
                    figures.cold.push(us);
                }
                figures.all.push(us);
                match token {
                    Some(token) if matcher.accept_token(token).is_ok() => {}
                    _ => break,
                }
            }
        }
    }
    Ok(Ok(figures))
}

/// The `q`-quantile of `values` (nearest rank); 0 when empty.
fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn per_input_table(inputs: &[Input], results: &Results) {
    println!("| input | backend | compile ms | tables KiB | walk-1 p50 µs | walk-1 p99 | walk-1 max | all p50 µs | all p99 | cold cost ms/request |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (input, row) in inputs.iter().zip(results) {
        for (backend, result) in BackendKind::ALL.iter().zip(row) {
            match result {
                Ok(f) => println!(
                    "| {} | {backend} | {:.2} | {} | {:.1} | {:.0} | {:.0} | {:.1} | {:.0} | {:.2} |",
                    input.name,
                    f.compile_ms,
                    f.table_bytes / 1024,
                    quantile(&f.cold, 0.5),
                    quantile(&f.cold, 0.99),
                    quantile(&f.cold, 1.0),
                    quantile(&f.all, 0.5),
                    quantile(&f.all, 0.99),
                    f.cold_cost_ms(),
                ),
                Err(reason) => println!(
                    "| {} | {backend} | refused: {} |||||||| ",
                    input.name,
                    one_line(reason)
                ),
            }
        }
    }
}

/// Per backend over every input it accepts: medians of the per-input figures, quantiles of
/// the masks pooled, and the refusals with their reasons.
fn summary_table(inputs: &[Input], results: &Results) {
    println!("\n| backend | accepted | compile p50 ms | tables p50 KiB | mask p50 µs | p99 | max | cold cost p50 ms/request |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut refusals = Vec::new();
    for (b, backend) in BackendKind::ALL.iter().enumerate() {
        let accepted: Vec<&Figures> = results
            .iter()
            .filter_map(|row| row[b].as_ref().ok())
            .collect();
        let masks: Vec<f64> = accepted
            .iter()
            .flat_map(|f| f.all.iter().copied())
            .collect();
        let per = |f: fn(&Figures) -> f64| {
            let values: Vec<f64> = accepted.iter().map(|x| f(x)).collect();
            quantile(&values, 0.5)
        };
        println!(
            "| {backend} | {} of {} | {:.2} | {:.0} | {:.1} | {:.0} | {:.0} | {:.2} |",
            accepted.len(),
            inputs.len(),
            per(|f| f.compile_ms),
            per(|f| f.table_bytes as f64 / 1024.0),
            quantile(&masks, 0.5),
            quantile(&masks, 0.99),
            quantile(&masks, 1.0),
            per(Figures::cold_cost_ms),
        );
        for (input, row) in inputs.iter().zip(results) {
            if let Err(reason) = &row[b] {
                refusals.push(format!(
                    "- {backend} refuses {}: {}",
                    input.name,
                    one_line(reason)
                ));
            }
        }
    }
    if !refusals.is_empty() {
        println!("\nRefused:\n");
        for line in refusals {
            println!("{line}");
        }
    }
}

fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.len() > 160 {
        let mut end = 160;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &line[..end])
    } else {
        line.to_owned()
    }
}

/// The corpus: every trace file's grammar, walked along its traces.
fn corpus_inputs(root: &Path) -> Result<Vec<Input>, String> {
    let grammars = root.join("grammars");
    Ok(sieve_testkit::traces::load_all()
        .into_iter()
        .map(|(_, file)| Input {
            name: file.grammar.clone(),
            grammar: sieve_testkit::compile_any(&grammars.join(&file.grammar)),
            walks: file.traces.into_iter().map(|t| t.tokens).collect(),
        })
        .collect())
}

/// The sources sieve compiles from a workload folder, in the order it prefers them.
const SOURCES: [&str; 5] = [
    "schema.json",
    "regex.txt",
    "grammar.gbnf",
    "grammar.lark",
    "structural_tag.json",
];

fn workload_inputs(dir: &Path, trie: &TokenTrie) -> Result<Vec<Input>, String> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("corpus missing: {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("workload.json").is_file())
        .collect();
    folders.sort();
    if folders.is_empty() {
        return Err(format!(
            "corpus missing: no workload under {}",
            dir.display()
        ));
    }
    folders
        .iter()
        .map(|folder| workload(folder, trie))
        .collect()
}

fn workload(folder: &Path, trie: &TokenTrie) -> Result<Input, String> {
    let name = folder
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let read = |file: &str| {
        std::fs::read_to_string(folder.join(file)).map_err(|e| format!("{name}/{file}: {e}"))
    };
    let settings: serde_json::Value =
        serde_json::from_str(&read("workload.json")?).map_err(|e| format!("{name}: {e}"))?;
    let flexible = settings["json"]["whitespace"].as_str() == Some("flexible");
    let json = sieve_jsonschema::Options {
        whitespace: if flexible {
            sieve_jsonschema::Whitespace::Flexible
        } else {
            sieve_jsonschema::Whitespace::Compact
        },
        ..Default::default()
    };
    let source = SOURCES
        .iter()
        .find(|file| folder.join(file).is_file())
        .ok_or_else(|| format!("{name}: no source sieve compiles"))?;
    let text = read(source)?;
    let grammar = match *source {
        "schema.json" => {
            let schema = serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))?;
            sieve_jsonschema::compile(&schema, &json)
                .map_err(|e| format!("{name}: {e}"))?
                .grammar
        }
        "regex.txt" => sieve_regex::compile(text.trim_end_matches('\n'), &Default::default())
            .map_err(|e| format!("{name}: {e}"))?,
        "grammar.gbnf" => {
            sieve_gbnf::compile(&text, &Default::default()).map_err(|e| format!("{name}: {e}"))?
        }
        "grammar.lark" => {
            let options = sieve_lark::Options {
                json,
                ..Default::default()
            };
            sieve_lark::compile(&text, &options).map_err(|e| format!("{name}: {e}"))?
        }
        _ => {
            let document = serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))?;
            let options = sieve_structural::Options {
                json,
                ..Default::default()
            };
            sieve_structural::compile(&document, &options).map_err(|e| format!("{name}: {e}"))?
        }
    };
    let samples = read("samples.jsonl")?;
    let mut walks = Vec::new();
    for (i, line) in samples.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let sample: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{name}: sample {i}: {e}"))?;
        let text = sample["text"]
            .as_str()
            .ok_or_else(|| format!("{name}: sample {i} has no text"))?;
        walks.push(
            crate::lark::tokenize(trie, text.as_bytes())
                .ok_or_else(|| format!("{name}: sample {i}: a byte starts no token"))?,
        );
    }
    Ok(Input {
        name: format!("{name} ({source})"),
        grammar,
        walks,
    })
}
