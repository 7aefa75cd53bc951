//! JSON-Schema compile time over JSONSchemaBench with the o200k_base vocabulary: p50, p90,
//! p99, max and mean per stage, and the slowest schemas by name (GitHub issue 4, "compile
//! cost").
//!
//! This is a corpus sweep, not a micro-benchmark: each schema is compiled once, in the
//! release (bench) profile, on one thread, and the distribution over the corpus is the
//! result. Nothing is asserted. Run it with
//!
//! ```text
//! cargo bench -p sieve-benches --bench schema_compile -- [FILTER] [--limit N] [--json FILE] [--unshared]
//! ```
//!
//! `FILTER` keeps the schemas whose path under the corpus (`Github_hard/o1234.json`)
//! contains it; `--limit N` stops after N schemas; `--json FILE` writes every schema's
//! outcome and times. The corpus is `$SIEVE_SHARED/data/jsonschemabench/<Subset>/*.json`
//! and the vocabulary the `o200k_base` entry of `$SIEVE_SHARED/tokenizers/manifest.json`
//! (`SIEVE_SHARED` defaults to `../shared` beside the workspace); a missing corpus is an
//! error, never an empty run.
//!
//! What is timed, with [`Instant`], for each schema, the stages being the library's
//! (`sieve_matcher::pipeline`, default options), each run once:
//! 1. *front-end*: `sieve_jsonschema::compile` with default options (the schema is parsed
//!    from its file beforehand, untimed: the files also carry test instances);
//! 2. *normalize*: `pipeline::normalize`;
//! 3. *automata*: `pipeline::automata_cached` with the tokenizer's cache of rule automata, as
//!    `CompiledGrammar::new` does, so later schemas take the rules earlier ones built (a
//!    server's steady state); `--unshared` uses `pipeline::automata`, as if every schema
//!    were the first of its process;
//! 4. *earley*: `CompiledGrammar::from_automata` against the shared tokenizer: the Earley
//!    tables from those automata and the empty token-mask cache;
//! 5. *compile*: the sum of 1–4, which is what `CompiledGrammar::new` after the front-end
//!    runs — the pipeline `sieve bench` times (`crates/sieve-cli/src/commands/bench.rs`) —
//!    less freeing the intermediate grammar and automata, left untimed;
//! 6. *first mask*: `Matcher::new` plus the first `fill_next_token_bitmask`. sieve
//!    classifies tokens lazily, per automaton state, so the first mask carries work that
//!    XGrammar does in its compile; *compile + first mask* is the figure to set beside
//!    XGrammar's compile time.
//!
//! The vocabulary and its token trie (`Tokenizer`) are built once, untimed, as an engine
//! shares them across requests. Schemas the front-end refuses are counted by error kind and
//! left out of the percentiles, as are schemas failing a later stage (a limit), counted by
//! stage. A schema taking more than [`SLOW`] in all is named as it happens and stays in the
//! figures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sieve_matcher::{pipeline, CompiledGrammar, Matcher, Tokenizer};

/// The `sieve` binary's allocator, so figures here are the ones the command shows.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A schema whose compile plus first mask takes longer than this is reported by name.
const SLOW: Duration = Duration::from_secs(5);

/// How many of the slowest schemas are listed.
const SLOWEST: usize = 10;

/// The vocabulary measured, by its manifest name.
const VOCABULARY: &str = "o200k_base";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("schema_compile: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The command line.
struct Args {
    filter: Option<String>,
    limit: Option<usize>,
    json: Option<PathBuf>,
    /// `--unshared`: every schema compiled as if first in its process (no automata from
    /// earlier schemas).
    unshared: bool,
}

impl Args {
    fn parse() -> Result<Args, String> {
        let mut args = Args {
            filter: None,
            limit: None,
            json: None,
            unshared: false,
        };
        let mut words = std::env::args().skip(1);
        while let Some(word) = words.next() {
            match word.as_str() {
                // `cargo bench` passes `--bench` to every bench binary.
                "--bench" => {}
                "--limit" => {
                    let n = words.next().ok_or("--limit needs a number")?;
                    let n = n.parse().map_err(|e| format!("--limit {n}: {e}"))?;
                    args.limit = Some(n);
                }
                "--unshared" => args.unshared = true,
                "--json" => {
                    let file = words.next().ok_or("--json needs a file")?;
                    args.json = Some(PathBuf::from(file));
                }
                flag if flag.starts_with("--") => {
                    return Err(format!(
                        "unknown option {flag}; usage: schema_compile [FILTER] [--limit N] [--json FILE] [--unshared]"
                    ))
                }
                _ if args.filter.is_none() => args.filter = Some(word),
                _ => return Err(format!("a second filter {word:?}; give at most one")),
            }
        }
        Ok(args)
    }
}

/// The stages timed, in milliseconds.
#[derive(Clone, Copy)]
struct Times {
    front_end: f64,
    normalize: f64,
    automata: f64,
    earley: f64,
    compile: f64,
    first_mask: f64,
}

impl Times {
    /// The rows of the table: label and value.
    fn rows(&self) -> [(&'static str, f64); 7] {
        [
            ("front-end", self.front_end),
            ("normalize", self.normalize),
            ("automata", self.automata),
            ("earley", self.earley),
            ("compile", self.compile),
            ("first mask", self.first_mask),
            ("compile + first mask", self.total()),
        ]
    }

    fn total(&self) -> f64 {
        self.compile + self.first_mask
    }
}

/// What became of one schema.
enum Outcome {
    Timed(Times),
    /// The front-end refused the schema; the error kind.
    Refused(String),
    /// A stage failed: the stage and the message.
    Failed(&'static str, String),
}

fn run() -> Result<(), String> {
    let args = Args::parse()?;
    let shared = sieve_benches::shared_dir();
    let corpus = shared.join("data/jsonschemabench");
    let mut files = sieve_benches::corpus_files(&corpus)?;
    if let Some(filter) = &args.filter {
        files.retain(|(name, _)| name.contains(filter.as_str()));
    }
    if let Some(limit) = args.limit {
        files.truncate(limit);
    }
    if files.is_empty() {
        return Err(format!(
            "no schema in {} matches {:?}",
            corpus.display(),
            args.filter.as_deref().unwrap_or("")
        ));
    }
    let started = Instant::now();
    let tokenizer = load_tokenizer(&shared)?;
    println!(
        "{VOCABULARY}: {} ids, tokenizer and trie built in {:.0} ms (untimed below)",
        tokenizer.vocabulary().n_vocab(),
        started.elapsed().as_secs_f64() * 1e3
    );
    println!("{} schemas from {}", files.len(), corpus.display());

    let mut mask = vec![0u32; tokenizer.vocabulary().n_vocab().div_ceil(32)];
    let mut outcomes = Vec::with_capacity(files.len());
    let sweep = Instant::now();
    for (i, (name, path)) in files.iter().enumerate() {
        let outcome = measure(path, &tokenizer, &mut mask, !args.unshared);
        if let Outcome::Timed(times) = &outcome {
            if times.total() > SLOW.as_secs_f64() * 1e3 {
                eprintln!("slow: {name}: {:.0} ms", times.total());
            }
        }
        if (i + 1) % 1000 == 0 {
            eprintln!(
                "{} / {} schemas, {:.0} s",
                i + 1,
                files.len(),
                sweep.elapsed().as_secs_f64()
            );
        }
        outcomes.push((name.as_str(), outcome));
    }
    report(&outcomes, sweep.elapsed());
    let automata = tokenizer.automata_stats();
    println!(
        "\nshared rule automata: {} found, {} built, {} held{}",
        automata.hits,
        automata.misses,
        automata.entries,
        if args.unshared {
            " (--unshared: not used)"
        } else {
            ""
        }
    );
    if let Some(file) = &args.json {
        write_json(file, &outcomes)?;
        println!("\nper-schema times written to {}", file.display());
    }
    Ok(())
}

/// The manifest's `o200k_base` entry as a tokenizer.
fn load_tokenizer(shared: &Path) -> Result<Arc<Tokenizer>, String> {
    let vocab = sieve_benches::manifest_vocabulary(shared, VOCABULARY)?;
    Ok(Arc::new(Tokenizer::new(Arc::new(vocab))))
}

/// Compiles the schema in `path` stage by stage, then computes the first mask.
/// Compiles one schema, stage by stage, as `CompiledGrammar::new` does (`shared`: with the
/// tokenizer's cache of rule automata).
fn measure(path: &Path, tokenizer: &Arc<Tokenizer>, mask: &mut [u32], shared: bool) -> Outcome {
    let file: Value = match std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(file) => file,
        Err(message) => return Outcome::Failed("read", message),
    };
    let Some(schema) = file.get("schema") else {
        return Outcome::Failed("read", "no \"schema\" field".to_owned());
    };
    let options = sieve_matcher::Options {
        share_automata: shared,
        ..Default::default()
    };

    let started = Instant::now();
    let compiled = sieve_jsonschema::compile(schema, &sieve_jsonschema::Options::default());
    let front_end = ms(started);
    let grammar = match compiled {
        Ok(compiled) => compiled.grammar,
        Err(error) => return Outcome::Refused(format!("{:?}", error.kind)),
    };

    let started = Instant::now();
    let normalized = pipeline::normalize(&grammar, &options);
    let normalize = ms(started);
    let normalized = match normalized {
        Ok(normalized) => normalized,
        Err(error) => return Outcome::Failed("normalize", error.to_string()),
    };

    let started = Instant::now();
    let fsms = if options.share_automata {
        pipeline::automata_cached(&normalized, &options, tokenizer.automata_cache())
    } else {
        pipeline::automata(&normalized, &options)
    };
    let automata = ms(started);
    let fsms = match fsms {
        Ok(fsms) => fsms,
        Err(error) => return Outcome::Failed("automata", error.to_string()),
    };
    drop(normalized);

    let started = Instant::now();
    let compiled = CompiledGrammar::from_automata(&fsms, tokenizer.clone(), &options);
    let earley = ms(started);
    drop(fsms);
    let compiled = match compiled {
        Ok(compiled) => Arc::new(compiled),
        Err(error) => return Outcome::Failed("compile", error.to_string()),
    };
    let compile = front_end + normalize + automata + earley;

    let started = Instant::now();
    let mut matcher = Matcher::new(compiled);
    let filled = matcher.fill_next_token_bitmask(mask);
    let first_mask = ms(started);
    if let Err(error) = filled {
        return Outcome::Failed("first mask", error.to_string());
    }
    Outcome::Timed(Times {
        front_end,
        normalize,
        automata,
        earley,
        compile,
        first_mask,
    })
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e3
}

/// Prints the counts, the percentile table and the slowest schemas.
fn report(outcomes: &[(&str, Outcome)], elapsed: Duration) {
    let mut timed: Vec<(&str, Times)> = Vec::new();
    let mut refused: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, outcome) in outcomes {
        match outcome {
            Outcome::Timed(times) => timed.push((name, *times)),
            Outcome::Refused(kind) => *refused.entry(kind).or_default() += 1,
            Outcome::Failed(stage, _) => failed.entry(stage).or_default().push(name),
        }
    }
    let refused_total: usize = refused.values().sum();
    let failed_total: usize = failed.values().map(Vec::len).sum();
    println!(
        "\n{} schemas in {:.0} s: {} compiled, {refused_total} refused by the front-end, {failed_total} failed a later stage",
        outcomes.len(),
        elapsed.as_secs_f64(),
        timed.len()
    );
    for (kind, count) in &refused {
        println!("  refused {kind}: {count}");
    }
    for (stage, names) in &failed {
        println!(
            "  failed at {stage}: {} ({})",
            names.len(),
            names.join(", ")
        );
    }
    if timed.is_empty() {
        return;
    }

    println!(
        "\nms over the {} compiled schemas (nearest-rank percentiles)",
        timed.len()
    );
    println!(
        "{:<22}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "stage", "p50", "p90", "p99", "max", "mean"
    );
    let rows = timed[0].1.rows().len();
    for row in 0..rows {
        let mut values: Vec<f64> = timed.iter().map(|(_, t)| t.rows()[row].1).collect();
        values.sort_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        println!(
            "{:<22}{:>10.2}{:>10.2}{:>10.2}{:>10.2}{:>10.2}",
            timed[0].1.rows()[row].0,
            percentile(&values, 0.50),
            percentile(&values, 0.90),
            percentile(&values, 0.99),
            values[values.len() - 1],
            mean
        );
    }

    let over: Vec<&str> = timed
        .iter()
        .filter(|(_, t)| t.total() > SLOW.as_secs_f64() * 1e3)
        .map(|(name, _)| *name)
        .collect();
    println!(
        "\n{} schemas over {} s (compile + first mask){}{}",
        over.len(),
        SLOW.as_secs(),
        if over.is_empty() { "" } else { ": " },
        over.join(", ")
    );

    timed.sort_by(|a, b| b.1.total().total_cmp(&a.1.total()));
    println!("\nthe {SLOWEST} slowest (ms)");
    println!(
        "{:<40}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "schema", "front", "norm", "fsm", "earley", "compile", "mask", "total"
    );
    for (name, t) in timed.iter().take(SLOWEST) {
        println!(
            "{name:<40}{:>10.1}{:>10.1}{:>10.1}{:>10.1}{:>10.1}{:>10.1}{:>10.1}",
            t.front_end,
            t.normalize,
            t.automata,
            t.earley,
            t.compile,
            t.first_mask,
            t.total()
        );
    }
}

/// The nearest-rank `p`-quantile of sorted, non-empty `values`.
fn percentile(values: &[f64], p: f64) -> f64 {
    let rank = (p * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

/// Every schema's outcome and times as a JSON array.
fn write_json(file: &Path, outcomes: &[(&str, Outcome)]) -> Result<(), String> {
    let rows: Vec<Value> = outcomes
        .iter()
        .map(|(name, outcome)| match outcome {
            Outcome::Timed(t) => json!({
                "schema": name, "status": "compiled",
                "front_end_ms": t.front_end, "normalize_ms": t.normalize,
                "automata_ms": t.automata, "earley_ms": t.earley, "compile_ms": t.compile,
                "first_mask_ms": t.first_mask, "total_ms": t.total(),
            }),
            Outcome::Refused(kind) => json!({"schema": name, "status": "refused", "kind": kind}),
            Outcome::Failed(stage, message) => json!({
                "schema": name, "status": "failed", "stage": stage, "message": message,
            }),
        })
        .collect();
    let text = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
    std::fs::write(file, text + "\n").map_err(|e| format!("{}: {e}", file.display()))
}
