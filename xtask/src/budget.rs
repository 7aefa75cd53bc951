//! `cargo xtask budget [SHARED_DIR] [--schemas=N] [--seeds=K] [--backend=NAME]`: the evidence
//! for token budgets (issue 13), with the embedded GPT-2 vocabulary, on one backend (default
//! Earley; the inputs a backend refuses are listed as skipped).
//!
//! 1. **Walks.** Every grammar of `grammars/` (GBNF, EBNF, regex, JSON Schema) and `N`
//!    (default 200) JSONSchemaBench schemas taken evenly from the sorted corpus (those that
//!    compile and have a bounded minimum), at budgets of 1.0, 1.25 and 1.5 times the minimum
//!    feasible budget (the completion bound of the empty output plus EOS). Each budget is
//!    walked by `K` (default 2) uniform samplers and one adversary, which takes the allowed
//!    text token leaving the largest completion bound (scoring at most
//!    [`ADVERSARY_CANDIDATES`] allowed tokens drawn at random, EOS only when nothing else is
//!    allowed), once with the guarantee (`Matcher::with_budget`) and once without
//!    (`Matcher::new`, stopped at the budget). A walk counts as *complete* when it ended with
//!    EOS within the budget and its bytes are a sentence (checked again by a fresh
//!    `ByteMatcher`). A guaranteed walk that does not is a failure of the command.
//! 2. **Tightness.** On small grammars with small vocabularies, at every state of seeded
//!    walks: the bound against the exact minimum (breadth-first search over every token
//!    sequence), and how many tokens the budgeted mask at the minimum budget forbids that
//!    could still have finished.
//! 3. **Cost.** Mask time p50/p99 over the walks of part 1, with and without the budget
//!    (every state classified ahead of time, so both modes measure warm masks).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use sieve_ir::Grammar;
use sieve_matcher::{
    AheadOfTime, BackendChoice, ByteMatcher, CompiledGrammar, Matcher, Options, Tokenizer,
};
use sieve_vocab::Vocabulary;

/// The most allowed tokens the adversary scores at each step.
pub const ADVERSARY_CANDIDATES: usize = 48;

/// The budgets walked, as multiples of the minimum feasible budget (in percent).
const FACTORS: [u32; 3] = [100, 125, 150];

/// Settings of the command.
pub struct Settings {
    pub shared: PathBuf,
    pub schemas: usize,
    pub seeds: u64,
    pub backend: BackendChoice,
}

/// One input: a name and its grammar.
struct Input {
    set: &'static str,
    name: String,
    grammar: Grammar,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sampler {
    Uniform,
    Adversary,
}

/// Complete walks out of all, per (set, sampler, factor, guarantee).
#[derive(Default, Clone, Copy)]
struct Tally {
    complete: usize,
    runs: usize,
}

/// (set, sampler, budget factor in percent, with the guarantee).
type TallyKey = (&'static str, &'static str, u32, bool);

/// splitmix64: seeded, no dependency (the walks of `budget` and `record-traces`).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// A number below `n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

pub fn run(root: &Path, settings: &Settings) -> Result<(), String> {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let mut inputs = shipped(root)?;
    inputs.extend(schemas(&settings.shared, settings.schemas)?);
    // Every state classified ahead of time, so mask times compare warm masks in both modes
    // (otherwise whichever walk comes first pays the just-in-time classifications).
    println!("Backend: {}\n", settings.backend);
    let warm = Options {
        ahead_of_time: AheadOfTime::All { parallel: false },
        backend: settings.backend,
        ..Options::default()
    };
    println!(
        "## Walks (GPT-2 r50k_base, {} seeds + 1 adversary per budget)\n",
        settings.seeds
    );
    let mut tallies: Vec<(TallyKey, Tally)> = Vec::new();
    // Mask times per set (grammars/, JSONSchemaBench), with and without the budget.
    let mut masks: [[Vec<f64>; 2]; 2] = Default::default();
    let mut failures = Vec::new();
    // The slowest budgeted mask of each input.
    let mut slowest: Vec<(f64, String)> = Vec::new();
    let mut skipped = Vec::new();
    for input in &inputs {
        let set = usize::from(input.set != "grammars/");
        let timed_before = masks[set][0].len();
        let compiled = match CompiledGrammar::new(&input.grammar, tokenizer.clone(), &warm) {
            Ok(compiled) => Arc::new(compiled),
            Err(e) => {
                skipped.push(format!("{}: {e}", input.name));
                continue;
            }
        };
        let Some(bound) = Matcher::new(compiled.clone()).completion_bound() else {
            skipped.push(format!("{}: no bounded completion", input.name));
            continue;
        };
        let checker =
            ByteMatcher::new(&input.grammar, &Options::default()).map_err(|e| e.to_string())?;
        let min = bound + 1;
        for factor in FACTORS {
            let budget = (min * factor).div_ceil(100);
            for guarantee in [true, false] {
                for (sampler, seed) in (0..settings.seeds)
                    .map(|s| (Sampler::Uniform, s))
                    .chain([(Sampler::Adversary, 0)])
                {
                    let name = if sampler == Sampler::Uniform {
                        "uniform"
                    } else {
                        "adversary"
                    };
                    let seed = seed * 7919 + u64::from(budget);
                    let outcome = walk(
                        &compiled,
                        &checker,
                        budget,
                        guarantee,
                        sampler,
                        seed,
                        &mut masks[set][usize::from(!guarantee)],
                    );
                    let complete = match outcome {
                        Ok(complete) => complete,
                        Err(e) => {
                            failures.push(format!("{} ({name}, budget {budget}): {e}", input.name));
                            false
                        }
                    };
                    if guarantee && !complete {
                        failures.push(format!(
                            "{} ({name}, budget {budget}, seed {seed}): incomplete with the guarantee",
                            input.name
                        ));
                    }
                    let key = (input.set, name, factor, guarantee);
                    let slot = match tallies.iter_mut().find(|(k, _)| *k == key) {
                        Some(slot) => slot,
                        None => {
                            tallies.push((key, Tally::default()));
                            tallies.last_mut().expect("just pushed")
                        }
                    };
                    slot.1.runs += 1;
                    slot.1.complete += usize::from(complete);
                }
            }
        }
        let worst = masks[set][0][timed_before..]
            .iter()
            .copied()
            .fold(0.0, f64::max);
        slowest.push((worst, input.name.clone()));
    }
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    let count = |set: &str| inputs.iter().filter(|i| i.set == set).count();
    println!(
        "inputs: {} from grammars/, {} JSONSchemaBench schemas; {} skipped\n",
        count("grammars/"),
        count("JSONSchemaBench"),
        skipped.len()
    );
    println!("| set | sampler | budget | complete+valid with guarantee | without |");
    println!("|---|---|---|---|---|");
    for set in ["grammars/", "JSONSchemaBench"] {
        for sampler in ["uniform", "adversary"] {
            for factor in FACTORS {
                let get = |guarantee| {
                    tallies
                        .iter()
                        .find(|(k, _)| *k == (set, sampler, factor, guarantee))
                        .map(|(_, t)| *t)
                        .unwrap_or_default()
                };
                let (with, without) = (get(true), get(false));
                println!(
                    "| {set} | {sampler} | {:.2}× min | {}/{} ({:.1} %) | {}/{} ({:.1} %) |",
                    f64::from(factor) / 100.0,
                    with.complete,
                    with.runs,
                    percent(with),
                    without.complete,
                    without.runs,
                    percent(without)
                );
            }
        }
    }
    for line in &skipped {
        println!("skipped: {line}");
    }

    println!("\n## Mask time over these walks\n");
    println!("| set | masks | count | p50 µs | p99 µs |");
    println!("|---|---|---|---|---|");
    for (label, times) in [
        "grammars/ | with budget",
        "grammars/ | without budget",
        "JSONSchemaBench | with budget",
        "JSONSchemaBench | without budget",
    ]
    .iter()
    .zip(masks.iter_mut().flatten())
    {
        times.sort_by(f64::total_cmp);
        if times.is_empty() {
            continue;
        }
        let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
        println!(
            "| {label} | {} | {:.1} | {:.1} |",
            times.len(),
            at(0.5),
            at(0.99)
        );
    }

    println!("\nslowest budgeted masks:");
    for (us, name) in slowest.iter().take(5) {
        println!("  {us:.0} µs  {name}");
    }

    println!("\n## Tightness (small grammars, small vocabularies)\n");
    tightness(settings.backend)?;

    if failures.is_empty() {
        Ok(())
    } else {
        for failure in &failures {
            eprintln!("FAIL {failure}");
        }
        Err(format!("{} walk(s) failed", failures.len()))
    }
}

fn percent(t: Tally) -> f64 {
    if t.runs == 0 {
        0.0
    } else {
        100.0 * t.complete as f64 / t.runs as f64
    }
}

fn allowed(m: &mut Matcher, mask: &mut [u32], times: &mut Vec<f64>) -> Result<Vec<u32>, String> {
    let started = Instant::now();
    m.fill_next_token_bitmask(mask).map_err(|e| e.to_string())?;
    times.push(started.elapsed().as_secs_f64() * 1e6);
    let n = m.compiled().vocabulary().n_vocab() as u32;
    Ok((0..n)
        .filter(|&t| mask[t as usize / 32] & (1 << (t % 32)) != 0)
        .collect())
}

/// One walk; whether it ended with EOS within `budget` on a sentence.
fn walk(
    compiled: &Arc<CompiledGrammar>,
    checker: &ByteMatcher,
    budget: u32,
    guarantee: bool,
    sampler: Sampler,
    seed: u64,
    times: &mut Vec<f64>,
) -> Result<bool, String> {
    let vocab = compiled.vocabulary().clone();
    let mut m = if guarantee {
        Matcher::with_budget(compiled.clone(), budget).map_err(|e| e.to_string())?
    } else {
        Matcher::new(compiled.clone())
    };
    let mut rng = Rng(seed);
    let mut mask = vec![0u32; compiled.bitmask_words()];
    let mut output = Vec::new();
    let mut steps = 0;
    while steps < budget {
        let choices = allowed(&mut m, &mut mask, times)?;
        if choices.is_empty() {
            return Ok(false);
        }
        let pick = match sampler {
            Sampler::Uniform => choices[rng.below(choices.len())],
            Sampler::Adversary => adversary(&m, &choices, &mut rng),
        };
        m.accept_token(pick).map_err(|e| e.to_string())?;
        steps += 1;
        if m.is_terminated() {
            let mut check = checker.clone();
            check.reset();
            for &byte in &output {
                if !check.push_byte(byte).map_err(|e| e.to_string())? {
                    return Ok(false);
                }
            }
            return Ok(check.can_finish());
        }
        let token = vocab.token(pick).ok_or("token out of range")?;
        output.extend_from_slice(vocab.bytes(token));
    }
    Ok(false)
}

/// The allowed text token (among at most [`ADVERSARY_CANDIDATES`] drawn at random) whose
/// completion bound after it is largest; EOS only when nothing else is allowed.
fn adversary(m: &Matcher, choices: &[u32], rng: &mut Rng) -> u32 {
    let vocab = m.compiled().vocabulary();
    let text: Vec<u32> = choices
        .iter()
        .copied()
        .filter(|&t| vocab.token(t).is_some_and(|t| !vocab.is_special(t)))
        .collect();
    if text.is_empty() {
        return choices[0];
    }
    let candidates: Vec<u32> = if text.len() <= ADVERSARY_CANDIDATES {
        text
    } else {
        (0..ADVERSARY_CANDIDATES)
            .map(|_| text[rng.below(text.len())])
            .collect()
    };
    candidates
        .into_iter()
        .max_by_key(|&t| {
            let mut after = m.clone();
            after
                .accept_token(t)
                .ok()
                .and_then(|()| after.completion_bound())
                .unwrap_or(0)
        })
        .expect("not empty")
}

/// Every grammar of `grammars/` but `grammars/bad/`.
fn shipped(root: &Path) -> Result<Vec<Input>, String> {
    let mut files = Vec::new();
    let mut dirs = vec![root.join("grammars")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "bad") {
                    dirs.push(path);
                }
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut inputs = Vec::new();
    for path in files {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let grammar = match path.extension().and_then(|e| e.to_str()) {
            Some("gbnf" | "ebnf") => {
                let root = text
                    .lines()
                    .find_map(|line| line.strip_prefix("# sieve: root="))
                    .map_or_else(|| "root".to_owned(), |name| name.trim().to_owned());
                sieve_gbnf::compile(&text, &sieve_gbnf::Options::with_root(root))
                    .map_err(|e| format!("{}: {e:?}", path.display()))?
            }
            Some("regex") => sieve_regex::compile(text.trim_end_matches('\n'), &Default::default())
                .map_err(|e| format!("{}: {e}", path.display()))?,
            Some("json") => {
                let value: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
                sieve_jsonschema::compile(&value, &Default::default())
                    .map_err(|e| format!("{}: {e}", path.display()))?
                    .grammar
            }
            _ => continue,
        };
        let name = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        inputs.push(Input {
            set: "grammars/",
            name,
            grammar,
        });
    }
    Ok(inputs)
}

/// `wanted` JSONSchemaBench schemas that compile, taken evenly from the sorted corpus.
fn schemas(shared: &Path, wanted: usize) -> Result<Vec<Input>, String> {
    let dir = shared.join("data/jsonschemabench");
    let mut files = Vec::new();
    let mut dirs = vec![dir.clone()];
    while let Some(d) = dirs.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| {
            format!(
                "corpus missing: {}: {e} (pass the shared folder as an argument)",
                d.display()
            )
        })?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut inputs = Vec::new();
    if files.is_empty() || wanted == 0 {
        return Ok(inputs);
    }
    let stride = (files.len() / wanted).max(1);
    let mut next = 0;
    while inputs.len() < wanted && next < files.len() {
        // Try each file of the stride in turn until one compiles.
        let end = (next + stride).min(files.len());
        for path in &files[next..end] {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let Ok(compiled) = sieve_jsonschema::compile(&value, &Default::default()) else {
                continue;
            };
            let name = path
                .strip_prefix(&dir)
                .unwrap_or(path)
                .display()
                .to_string();
            inputs.push(Input {
                set: "JSONSchemaBench",
                name,
                grammar: compiled.grammar,
            });
            break;
        }
        next = end;
    }
    Ok(inputs)
}

/// The small grammars of the tightness table, with their vocabularies (as in
/// `crates/sieve-matcher/tests/budget.rs`).
const SMALL: &[(&str, &str, &[&str])] = &[
    (
        "nesting",
        r#"root ::= "(" root ")" | "x""#,
        &["(", ")", "x", "((", "))", "x)", "(x)", ")))"],
    ),
    (
        "list",
        "root ::= \"[\" ( v ( \",\" v )* )? \"]\"\nv ::= \"1\" | \"22\" | root",
        &[
            "[", "]", ",", "1", "2", "[1", "1]", "22", ",[", "]]", "[]", ",1,",
        ],
    ),
    (
        "counted",
        r#"root ::= ( "x" | "yz" ){3,5} "!""#,
        &["x", "y", "z", "!", "xx", "xxx", "yzy", "z!", "x!"],
    ),
    (
        "keys",
        "root ::= \"{\" pair ( \",\" pair )* \"}\"\npair ::= \"\\\"\" [a-c]+ \"\\\":\" [0-9]",
        &[
            "{", "}", ",", "\"", ":", "a", "b", "c", "0", "1", "9", "\":", "{\"", "ab", "\":1",
            "},",
        ],
    ),
];

/// The tightness table on `backend` (a grammar it refuses gets a row saying so).
fn tightness(backend: BackendChoice) -> Result<(), String> {
    println!("| grammar | states | bound = exact | mean gap | max gap | tokens forbidden at the minimum budget that could finish / allowed by the grammar |");
    println!("|---|---|---|---|---|---|");
    for &(name, text, tokens) in SMALL {
        let mut list: String = tokens
            .iter()
            .map(|t| serde_json::to_string(t).expect("string") + "\n")
            .collect();
        list.push_str("special:\"</s>\"\n");
        let vocab = sieve_vocab::plain::parse(list.as_bytes(), &Default::default())
            .map_err(|e| e.to_string())?;
        let grammar =
            sieve_gbnf::compile(text, &Default::default()).map_err(|e| format!("{e:?}"))?;
        let tokenizer = Arc::new(Tokenizer::new(Arc::new(vocab)));
        let options = Options {
            backend,
            ..Options::default()
        };
        let compiled = match CompiledGrammar::new(&grammar, tokenizer, &options) {
            Ok(compiled) => Arc::new(compiled),
            Err(refused) => {
                println!("| {name} | refused: {refused} | | | | |");
                continue;
            }
        };
        let ids: Vec<u32> = (0..tokens.len() as u32).collect();
        let (mut states, mut equal, mut gap_sum, mut gap_max) = (0u32, 0u32, 0u32, 0u32);
        let (mut forbidden_live, mut grammatical) = (0usize, 0usize);
        let mut seen = HashSet::new();
        for seed in 1..=20u64 {
            let mut rng = Rng(seed);
            let mut m = Matcher::new(compiled.clone());
            let mut out: Vec<u8> = Vec::new();
            for _ in 0..10 {
                let bound = m.completion_bound().ok_or("unbounded")?;
                if seen.insert(out.clone()) {
                    let exact = exact_min(&m, &ids, bound)
                        .ok_or_else(|| format!("{name}: unsound bound"))?;
                    states += 1;
                    equal += u32::from(exact == bound);
                    gap_sum += bound - exact;
                    gap_max = gap_max.max(bound - exact);
                    // The budgeted mask at the smallest budget that admits this state.
                    for &id in &ids {
                        let mut after = m.clone();
                        if after.accept_token(id).is_err() {
                            continue;
                        }
                        grammatical += 1;
                        let after_bound = after.completion_bound().ok_or("unbounded")?;
                        let after_exact =
                            exact_min(&after, &ids, after_bound).ok_or("unsound bound")?;
                        // With `bound + 1` tokens left, the mask allows `id` iff
                        // `after_bound <= bound - 1`; it could finish iff `after_exact <= bound - 1`.
                        if after_bound + 1 > bound && after_exact < bound {
                            forbidden_live += 1;
                        }
                    }
                }
                let mut mask = vec![0u32; compiled.bitmask_words()];
                let choices: Vec<u32> = allowed(&mut m, &mut mask, &mut Vec::new())?
                    .into_iter()
                    .filter(|&t| (t as usize) < tokens.len())
                    .collect();
                if choices.is_empty() {
                    break;
                }
                let pick = choices[rng.below(choices.len())];
                m.accept_token(pick).map_err(|e| e.to_string())?;
                out.extend_from_slice(tokens[pick as usize].as_bytes());
            }
        }
        println!(
            "| {name} | {states} | {equal} | {:.2} | {gap_max} | {forbidden_live} / {grammatical} |",
            f64::from(gap_sum) / f64::from(states.max(1))
        );
    }
    Ok(())
}

/// The fewest text tokens that make the output a sentence (breadth-first over every token
/// sequence, outputs deduplicated), up to `cap`.
fn exact_min(m: &Matcher, ids: &[u32], cap: u32) -> Option<u32> {
    if m.can_terminate() {
        return Some(0);
    }
    let vocab = m.compiled().vocabulary().clone();
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let mut frontier = vec![(Vec::new(), m.clone())];
    for level in 1..=cap {
        let mut next = Vec::new();
        for (bytes, m) in &frontier {
            for &id in ids {
                let mut m = m.clone();
                if m.accept_token(id).is_err() {
                    continue;
                }
                let mut grown: Vec<u8> = bytes.clone();
                grown.extend_from_slice(vocab.bytes(vocab.token(id)?));
                if !seen.insert(grown.clone()) {
                    continue;
                }
                if m.can_terminate() {
                    return Some(level);
                }
                next.push((grown, m));
            }
        }
        frontier = next;
    }
    None
}
