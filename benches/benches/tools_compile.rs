//! A 128-tool list in the Qwen structural-tag format, end to end with the o200k_base
//! vocabulary (issue 11 deliverable 6): compile time per stage, the first mask, and the mask
//! time of every step of a walk through free text, a tool call and free text again.
//!
//! This is a sweep, not a criterion micro-benchmark: the figures are the distribution over a
//! few compiles and one walk, in the release (bench) profile, on one thread. Nothing is
//! asserted. Run it with
//!
//! ```text
//! cargo bench -p sieve-benches --bench tools_compile -- [--tools N] [--repeats N] [--unshared] [--parallel] [--once]
//! ```
//!
//! The tools are the first `N` (default 128) distinct function definitions of BFCL's
//! `BFCL_v4_multiple.json` then `BFCL_v4_live_multiple.json`, read from
//! `$SIEVE_SHARED/data/tool-calling/bfcl` (`SIEVE_SHARED` defaults to `../shared` beside the
//! workspace; a missing folder is an error, never an empty run). BFCL writes its parameter
//! schemas with Python's type names; they become JSON Schema's (`dict` → `object`, `float` →
//! `number`, `tuple` → `array`, `any` → no `type`). The structural tag is Qwen's
//! (`<tool_call>\n{"name": "NAME", "arguments": ` … `}\n</tool_call>`): one `triggered_tags`
//! with the trigger `<tool_call>` and one tag per tool whose content is its parameters as a
//! `json_schema`, as XGrammar's `get_model_structural_tag` builds for `qwen_3`.
//!
//! What is timed, with [`Instant`], the stages being the library's
//! (`sieve_matcher::pipeline`, default options, as `CompiledGrammar::new` runs them):
//! *front-end* (`sieve_structural::compile`, the document parsed beforehand), *normalize*,
//! *automata* (with the tokenizer's automaton cache unless `--unshared`), *earley*
//! (`CompiledGrammar::from_automata`), *compile* (their sum) and *first mask* (`Matcher::new`
//! plus the first `fill_next_token_bitmask`). The first compile of the process is reported on
//! its own (cold code and allocator, empty cross-grammar caches); then the same list is
//! compiled `--repeats` times (default 10) and the medians reported; `--unshared` compiles
//! every repeat without the tokenizer's shared caches, as if each were the first of its
//! process. `--parallel` builds the rule automata across rayon's threads
//! (`sieve_fsm::Config::parallel`). `--once` stops after the first compile and its first mask (for callgrind).
//!
//! The walk (on the first compile's grammar, so its states are met cold) is free text, a call
//! of the first tool with arguments made from its schema, and free text again, tokenised
//! greedily; each step's `fill_next_token_bitmask` is timed and the free-text steps are
//! reported apart. The same walk is then run again with a new matcher on the same grammar,
//! whose states are now classified (warm: a server's later requests with this tool list).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Map, Value};
use sieve_matcher::{pipeline, CompiledGrammar, Matcher, Options, Tokenizer};

/// The `sieve` binary's allocator, so figures here are the ones the command shows.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The vocabulary measured, by its manifest name.
const VOCABULARY: &str = "o200k_base";

/// The BFCL files the tools are taken from, in order.
const BFCL_FILES: [&str; 2] = ["BFCL_v4_multiple.json", "BFCL_v4_live_multiple.json"];

/// The trigger and tag text of Qwen's tool calls.
const TRIGGER: &str = "<tool_call>";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tools_compile: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The command line.
struct Args {
    tools: usize,
    repeats: usize,
    unshared: bool,
    parallel: bool,
    once: bool,
}

impl Args {
    fn parse() -> Result<Args, String> {
        let mut args = Args {
            tools: 128,
            repeats: 10,
            unshared: false,
            parallel: false,
            once: false,
        };
        let usage =
            "usage: tools_compile [--tools N] [--repeats N] [--unshared] [--parallel] [--once]";
        let mut words = std::env::args().skip(1);
        while let Some(word) = words.next() {
            let mut number = |flag: &str| -> Result<usize, String> {
                let n = words.next().ok_or(format!("{flag} needs a number"))?;
                n.parse().map_err(|e| format!("{flag} {n}: {e}"))
            };
            match word.as_str() {
                // `cargo bench` passes `--bench` to every bench binary.
                "--bench" => {}
                "--tools" => args.tools = number("--tools")?,
                "--repeats" => args.repeats = number("--repeats")?,
                "--unshared" => args.unshared = true,
                "--parallel" => args.parallel = true,
                "--once" => args.once = true,
                other => return Err(format!("unknown argument {other}; {usage}")),
            }
        }
        Ok(args)
    }
}

/// The stages timed, in milliseconds.
#[derive(Clone, Copy, Default)]
struct Times {
    front_end: f64,
    normalize: f64,
    automata: f64,
    earley: f64,
    first_mask: f64,
    /// Rules and size of the grammar, of the normalised grammar, and automaton states.
    sizes: [usize; 5],
}

impl Times {
    fn compile(&self) -> f64 {
        self.front_end + self.normalize + self.automata + self.earley
    }

    fn rows(&self) -> [(&'static str, f64); 7] {
        [
            ("front-end", self.front_end),
            ("normalize", self.normalize),
            ("automata", self.automata),
            ("earley", self.earley),
            ("compile", self.compile()),
            ("first mask", self.first_mask),
            ("compile + first mask", self.compile() + self.first_mask),
        ]
    }
}

fn run() -> Result<(), String> {
    let args = Args::parse()?;
    let shared = sieve_benches::shared_dir();
    let tools = bfcl_tools(&shared.join("data/tool-calling/bfcl"), args.tools)?;
    let document = qwen_structural_tag(&tools);
    let started = Instant::now();
    let vocab = sieve_benches::manifest_vocabulary(&shared, VOCABULARY)
        .map_err(|e| format!("{e}; set SIEVE_SHARED to the folder holding tokenizers/"))?;
    let tokenizer = Arc::new(Tokenizer::new(Arc::new(vocab)));
    println!(
        "{VOCABULARY}: {} ids, tokenizer built in {:.0} ms (untimed); {} BFCL tools, structural tag of {} bytes",
        tokenizer.vocabulary().n_vocab(),
        started.elapsed().as_secs_f64() * 1e3,
        tools.len(),
        document.to_string().len(),
    );
    let mut mask = vec![0u32; tokenizer.vocabulary().n_vocab().div_ceil(32)];
    let options = Options {
        share_automata: !args.unshared,
        share_classifications: !args.unshared,
        fsm: sieve_fsm::Config::new().parallel(args.parallel),
        ..Options::default()
    };

    let (first, compiled) = compile(&document, &tokenizer, &options, &mut mask)?;
    print_times("first compile of the process", &first);
    if args.once {
        return Ok(());
    }

    let mut repeats = Vec::with_capacity(args.repeats);
    for _ in 0..args.repeats {
        // Unshared repeats get a tokenizer of their own, so nothing carries over.
        let tokenizer = if args.unshared {
            Arc::new(Tokenizer::with_store_budget(
                tokenizer.vocabulary().clone(),
                0,
            ))
        } else {
            tokenizer.clone()
        };
        repeats.push(compile(&document, &tokenizer, &options, &mut mask)?.0);
    }
    if !repeats.is_empty() {
        let median = |pick: fn(&Times) -> f64| {
            let mut values: Vec<f64> = repeats.iter().map(pick).collect();
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        let medians = Times {
            front_end: median(|t| t.front_end),
            normalize: median(|t| t.normalize),
            automata: median(|t| t.automata),
            earley: median(|t| t.earley),
            first_mask: median(|t| t.first_mask),
            sizes: repeats[0].sizes,
        };
        let totals = median(|t| t.compile() + t.first_mask);
        print_times(
            &format!(
                "median of {} repeats{}",
                repeats.len(),
                if args.unshared { " (unshared)" } else { "" }
            ),
            &medians,
        );
        println!("  (median of compile + first mask per repeat: {totals:.2} ms)");
    }

    walk(&compiled, &tools[0], &mut mask)
}

/// Compiles `document` stage by stage and takes the first mask.
fn compile(
    document: &Value,
    tokenizer: &Arc<Tokenizer>,
    options: &Options,
    mask: &mut [u32],
) -> Result<(Times, Arc<CompiledGrammar>), String> {
    let mut times = Times::default();
    let at = Instant::now();
    let grammar = sieve_structural::compile(document, &sieve_structural::Options::default())
        .map_err(|e| format!("structural tag: {e}"))?;
    times.front_end = ms(at);
    let at = Instant::now();
    let normalized = pipeline::normalize(&grammar, options).map_err(|e| e.to_string())?;
    times.normalize = ms(at);
    let at = Instant::now();
    let fsms = if options.share_automata {
        pipeline::automata_cached(&normalized, options, tokenizer.automata_cache())
    } else {
        pipeline::automata(&normalized, options)
    }
    .map_err(|e| e.to_string())?;
    times.automata = ms(at);
    let at = Instant::now();
    let compiled = Arc::new(
        CompiledGrammar::from_automata(&fsms, tokenizer.clone(), options)
            .map_err(|e| e.to_string())?,
    );
    times.earley = ms(at);
    times.sizes = [
        grammar.rules().len(),
        grammar.size(),
        normalized.grammar().rules().len(),
        normalized.grammar().size(),
        fsms.state_count(),
    ];
    let at = Instant::now();
    let mut matcher = Matcher::new(compiled.clone());
    matcher
        .fill_next_token_bitmask(mask)
        .map_err(|e| e.to_string())?;
    times.first_mask = ms(at);
    drop((grammar, normalized, fsms));
    Ok((times, compiled))
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

fn print_times(title: &str, times: &Times) {
    let [rules, size, normal_rules, normal_size, states] = times.sizes;
    println!(
        "{title} ({rules} rules of size {size}; normalised {normal_rules} of size {normal_size}; {states} automaton states):"
    );
    for (label, value) in times.rows() {
        println!("  {label:<22} {value:>9.2} ms");
    }
}

/// The walk: free text, a call of `tool`, free text; every step's mask timed.
fn walk(compiled: &Arc<CompiledGrammar>, tool: &Value, mask: &mut [u32]) -> Result<(), String> {
    let name = tool["name"].as_str().unwrap_or_default();
    let arguments = instance(&tool["parameters"]);
    let before = "Sure, let me look that up for you. I will check the <tool> docs and then \
                  call the right function with the values you gave me: ";
    let call =
        format!("{TRIGGER}\n{{\"name\": \"{name}\", \"arguments\": {arguments}}}\n</tool_call>");
    let after = " Done — the call is above; tell me if anything should change (ünïcödé 字 ok).";
    let trie = compiled.trie();
    let mut pieces = Vec::new();
    for (text, free) in [(before, true), (call.as_str(), false), (after, true)] {
        let tokens = sieve_benches::tokenize(trie, text.as_bytes())
            .ok_or_else(|| format!("no tokenisation of {text:?}"))?;
        pieces.extend(tokens.into_iter().map(|t| (t, free)));
    }
    for label in ["cold states", "warm states"] {
        walk_once(compiled, &pieces, mask, label)?;
    }
    Ok(())
}

/// One walk over `pieces` (token, whether it is free text) with a new matcher, every mask
/// timed; prints the distributions under `label`.
fn walk_once(
    compiled: &Arc<CompiledGrammar>,
    pieces: &[(u32, bool)],
    mask: &mut [u32],
    label: &str,
) -> Result<(), String> {
    let mut matcher = Matcher::new(compiled.clone());
    let (mut free_us, mut all_us) = (Vec::new(), Vec::new());
    for &(token, free) in pieces {
        let at = Instant::now();
        matcher
            .fill_next_token_bitmask(mask)
            .map_err(|e| e.to_string())?;
        let us = at.elapsed().as_secs_f64() * 1e6;
        all_us.push(us);
        if free {
            free_us.push(us);
        }
        if mask[token as usize / 32] >> (token % 32) & 1 == 0 {
            return Err(format!("the walk's token {token} is masked out"));
        }
        matcher.accept_token(token).map_err(|e| e.to_string())?;
    }
    println!("walk ({} steps, {label}):", all_us.len());
    for (label, values) in [("free-text steps", free_us), ("all steps", all_us)] {
        let mut values = values;
        values.sort_by(f64::total_cmp);
        let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
        println!(
            "  {label:<16} n={:<4} p50 {:>8.1} µs  p99 {:>8.1} µs  max {:>8.1} µs",
            values.len(),
            at(0.5),
            at(0.99),
            at(1.0)
        );
    }
    Ok(())
}

/// The first `count` distinct functions of [`BFCL_FILES`] (JSON Lines, each line's `function`
/// array), their parameter schemas in JSON Schema's type names.
fn bfcl_tools(folder: &Path, count: usize) -> Result<Vec<Value>, String> {
    let mut tools = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for file in BFCL_FILES {
        let path = folder.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{}: {e}; set SIEVE_SHARED to the folder holding data/tool-calling/bfcl",
                path.display()
            )
        })?;
        for (n, line) in text.lines().enumerate() {
            let entry: Value = serde_json::from_str(line)
                .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
            for function in entry["function"].as_array().into_iter().flatten() {
                let Some(name) = function["name"].as_str() else {
                    continue;
                };
                if tools.len() < count && seen.insert(name.to_owned()) {
                    let mut function = function.clone();
                    bfcl_to_json_schema(&mut function["parameters"]);
                    tools.push(function);
                }
            }
        }
    }
    if tools.len() < count {
        return Err(format!(
            "{}: only {} distinct functions, {count} asked",
            folder.display(),
            tools.len()
        ));
    }
    Ok(tools)
}

/// Rewrites BFCL's Python type names into JSON Schema's, through properties and items.
fn bfcl_to_json_schema(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    match object.get("type").and_then(Value::as_str) {
        Some("dict") => drop(object.insert("type".into(), json!("object"))),
        Some("float") => drop(object.insert("type".into(), json!("number"))),
        Some("tuple") => drop(object.insert("type".into(), json!("array"))),
        Some("any") => drop(object.remove("type")),
        _ => {}
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.values_mut().for_each(bfcl_to_json_schema);
    }
    match object.get_mut("items") {
        Some(Value::Array(items)) => items.iter_mut().for_each(bfcl_to_json_schema),
        Some(items) => bfcl_to_json_schema(items),
        None => {}
    }
}

/// Qwen's structural tag for `tools` (XGrammar's `qwen_3` format, calls in any number).
fn qwen_structural_tag(tools: &[Value]) -> Value {
    let tags: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let name = tool["name"].as_str().unwrap_or_default();
            json!({
                "type": "tag",
                "begin": format!("{TRIGGER}\n{{\"name\": \"{name}\", \"arguments\": "),
                "content": {"type": "json_schema", "json_schema": tool["parameters"]},
                "end": "}\n</tool_call>",
            })
        })
        .collect();
    json!({
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": [TRIGGER],
            "tags": tags,
            "at_least_one": false,
            "stop_after_first": false,
        }
    })
}

/// A small instance of `schema`: its required properties with the first enum value or a
/// value of their type.
fn instance(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match schema["type"].as_str() {
        Some("object") => {
            let mut object = Map::new();
            for name in schema["required"].as_array().into_iter().flatten() {
                if let Some(name) = name.as_str() {
                    object.insert(name.into(), instance(&schema["properties"][name]));
                }
            }
            Value::Object(object)
        }
        Some("array") => json!([]),
        Some("integer") => json!(3),
        Some("number") => json!(2.5),
        Some("boolean") => json!(true),
        Some("null") => Value::Null,
        _ => json!("Paris"),
    }
}
