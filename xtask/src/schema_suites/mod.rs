//! `cargo xtask schema-suites [SHARED_DIR] [--update]`: the JSON Schema front-end against
//! three suites written by others, with a ratchet.
//!
//! The suites (under `SHARED_DIR/data`, default `../shared`): JSON-Schema-Test-Suite
//! `draft2020-12` and `draft7` (not `optional/`), SchemaStore (schemas with their `test/` and
//! `negative_test/` instances; YAML and TOML instances converted to JSON) and JSONSchemaBench.
//!
//! Each schema is compiled with the default [`sieve_jsonschema::Options`] (strict, compact,
//! schema property order); each instance is serialised with `serde_json::to_string` (compact,
//! key order kept) and recognised by a `sieve_matcher::ByteMatcher` (the library's compile
//! pipeline with its default options: normalise → automata → Earley).
//! A valid instance rejected there is tried again against the schema compiled with
//! [`sieve_jsonschema::PropertyOrder::Any`], since instances need not list properties in the
//! schema's order. Every instance lands in one [`Category`].
//!
//! The command fails when any instance is accepted although invalid, when compiling or running
//! any schema panics, or when any result is worse than in the checked-in expected file
//! (`xtask/expected/schema-suites.tsv`, one line per schema: suite, file, case, the schema's
//! status and one letter per instance). Improvements are reported; `--update` rewrites the
//! file. Nothing here depends on time: limits are the compiler's and the backend's own, so
//! results are the same on every machine. Work is spread over the available cores.

mod load;
mod ratchet;
mod report;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use sieve_jsonschema::{Options, PropertyOrder};
use sieve_matcher::{ByteMatcher, CompileError};

use load::{Case, Job};

/// Where each instance landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Compiled, and the grammar agrees with the label.
    Right,
    /// Valid, rejected in the schema's property order, accepted in any order.
    RightAnyOrder,
    /// The schema did not compile (refused by the front-end, or a limit of a later stage).
    Unsupported,
    /// Compiled; a valid instance was rejected in both property orders.
    RejectedValid,
    /// Compiled; an invalid instance was accepted. Never allowed.
    AcceptedInvalid,
    /// Compiling or running the schema panicked. Never allowed.
    Panic,
    /// The instance could not be read (a YAML or TOML file that does not parse); not counted.
    Skipped,
}

impl Category {
    /// The letter in the expected-results file.
    pub fn code(self) -> char {
        match self {
            Category::Right => 'R',
            Category::RightAnyOrder => 'A',
            Category::Unsupported => 'U',
            Category::RejectedValid => 'V',
            Category::AcceptedInvalid => 'I',
            Category::Panic => 'P',
            Category::Skipped => '-',
        }
    }

    /// The category of a letter of the expected-results file.
    pub fn from_code(code: char) -> Option<Category> {
        Some(match code {
            'R' => Category::Right,
            'A' => Category::RightAnyOrder,
            'U' => Category::Unsupported,
            'V' => Category::RejectedValid,
            'I' => Category::AcceptedInvalid,
            'P' => Category::Panic,
            '-' => Category::Skipped,
            _ => return None,
        })
    }

    /// Higher is better: right, then not right (unsupported or rejected), then wrong.
    pub fn rank(self) -> u8 {
        match self {
            Category::Right | Category::RightAnyOrder => 2,
            Category::Unsupported | Category::RejectedValid | Category::Skipped => 1,
            Category::AcceptedInvalid | Category::Panic => 0,
        }
    }
}

/// The results of one schema.
pub struct SchemaResult {
    /// The suite (one of [`load::SUITES`]).
    pub suite: &'static str,
    /// The file's name in the ratchet.
    pub file: String,
    /// The table row it counts in.
    pub group: String,
    /// The schema's index in its file.
    pub index: usize,
    /// The case's description (test suite only).
    pub description: String,
    /// `ok`, `unsupported:KIND:KEYWORD`, `panic` or `unreadable`.
    pub status: String,
    /// One per instance.
    pub categories: Vec<Category>,
    /// The instances' descriptions, in order.
    pub instance_descriptions: Vec<String>,
    /// The time compiling and running it took (reported, never compared).
    pub time: Duration,
}

/// Runs the command; `only` restricts the run to one suite (then the ratchet compares that
/// suite only, and `--update` is refused).
pub fn run(shared: &Path, expected: &Path, update: bool, only: Option<&str>) -> Result<(), String> {
    if let Some(suite) = only {
        if !load::SUITES.contains(&suite) {
            return Err(format!(
                "no suite {suite:?}; the suites are {:?}",
                load::SUITES
            ));
        }
        if update {
            return Err("--update records every suite: leave out --suite".to_owned());
        }
    }
    let started = Instant::now();
    let mut jobs = load::jobs(shared)?;
    jobs.retain(|job| only.is_none_or(|suite| job.suite == suite));
    let results = run_jobs(&jobs);
    let elapsed = started.elapsed();
    report::tables(&results);
    report::llguidance(shared, &results);
    report::slowest(&results);
    println!(
        "{} schemas, {} instances in {:.1} s",
        results.len(),
        results.iter().map(|r| r.categories.len()).sum::<usize>(),
        elapsed.as_secs_f64()
    );

    let mut failures = Vec::new();
    let wrong: Vec<String> = results
        .iter()
        .flat_map(|r| {
            r.categories
                .iter()
                .enumerate()
                .filter(|(_, c)| matches!(c, Category::AcceptedInvalid | Category::Panic))
                .map(move |(i, c)| {
                    format!(
                        "{} {} #{} instance {i} ({}): {c:?}",
                        r.suite, r.file, r.index, r.instance_descriptions[i]
                    )
                })
        })
        .collect();
    if !wrong.is_empty() {
        failures.push(format!(
            "{} instances accepted although invalid, or panicking:\n  {}",
            wrong.len(),
            wrong.join("\n  ")
        ));
    }
    let panics: Vec<String> = results
        .iter()
        .filter(|r| r.status.starts_with("panic"))
        .map(|r| format!("{} {} #{}: {}", r.suite, r.file, r.index, r.status))
        .collect();
    if !panics.is_empty() {
        failures.push(format!(
            "{} schemas panicked:\n  {}",
            panics.len(),
            panics.join("\n  ")
        ));
    }

    let current = ratchet::Table::from_results(&results);
    if update {
        current.write(expected)?;
        println!("wrote {}", expected.display());
    } else {
        let mut previous = ratchet::Table::read(expected)?;
        if let Some(suite) = only {
            previous.retain_suite(suite);
        }
        let comparison = ratchet::compare(&previous, &current);
        comparison.print();
        if !comparison.regressions.is_empty() {
            failures.push(format!(
                "{} results are worse than in {} (listed above); if that is intended, run \
                 `cargo xtask schema-suites --update` and commit the file",
                comparison.regressions.len(),
                expected.display()
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// Runs every job over the available cores (at most 4 threads); results sorted by suite,
/// file and case.
fn run_jobs(jobs: &[Job]) -> Vec<SchemaResult> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let next = AtomicUsize::new(0);
    // Panics are caught and reported per schema; the default hook would print each one.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut results: Vec<SchemaResult> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        out.extend(run_job(job));
                    }
                    out
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("workers catch their panics"))
            .collect()
    });
    std::panic::set_hook(hook);
    let suite_order = |s: &str| load::SUITES.iter().position(|x| *x == s);
    results.sort_by(|a, b| {
        (suite_order(a.suite), &a.file, a.index).cmp(&(suite_order(b.suite), &b.file, b.index))
    });
    results
}

fn run_job(job: &Job) -> Vec<SchemaResult> {
    let cases = match job.cases() {
        Ok(cases) => cases,
        Err(message) => {
            eprintln!("schema-suites: {} {}: {message}", job.suite, job.file);
            return vec![SchemaResult {
                suite: job.suite,
                file: job.file.clone(),
                group: job.group.clone(),
                index: 0,
                description: String::new(),
                status: "unreadable".to_owned(),
                categories: Vec::new(),
                instance_descriptions: Vec::new(),
                time: Duration::ZERO,
            }];
        }
    };
    cases
        .into_iter()
        .map(|case| {
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| run_case(&case)));
            let (status, categories) = outcome.unwrap_or_else(|payload| {
                let message = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)");
                let categories = case
                    .instances
                    .iter()
                    .map(|i| match i.text {
                        Ok(_) => Category::Panic,
                        Err(_) => Category::Skipped,
                    })
                    .collect();
                (format!("panic: {}", one_line(message)), categories)
            });
            SchemaResult {
                suite: job.suite,
                file: job.file.clone(),
                group: job.group.clone(),
                index: case.index,
                description: case.description,
                status,
                categories,
                instance_descriptions: case.instances.into_iter().map(|i| i.description).collect(),
                time: started.elapsed(),
            }
        })
        .collect()
}

/// The schema's status and each instance's category.
fn run_case(case: &Case) -> (String, Vec<Category>) {
    let readable = |category| {
        move |i: &load::Instance| match i.text {
            Ok(_) => category,
            Err(_) => Category::Skipped,
        }
    };
    let schema = match &case.schema {
        Ok(schema) => schema,
        Err(_) => {
            let skipped = case.instances.iter().map(|_| Category::Skipped).collect();
            return ("unreadable".to_owned(), skipped);
        }
    };
    let strict = match Recognizer::build(schema, PropertyOrder::Schema) {
        Ok(strict) => strict,
        Err(status) => {
            let unsupported = case
                .instances
                .iter()
                .map(readable(Category::Unsupported))
                .collect();
            return (status, unsupported);
        }
    };
    let mut any_order: Option<Option<Recognizer>> = None;
    let categories = case
        .instances
        .iter()
        .map(|instance| {
            let Ok(text) = &instance.text else {
                return Category::Skipped;
            };
            match (instance.valid, strict.accepts(text.as_bytes())) {
                (true, true) | (false, false) => Category::Right,
                (false, true) => Category::AcceptedInvalid,
                (true, false) => {
                    let any = any_order
                        .get_or_insert_with(|| Recognizer::build(schema, PropertyOrder::Any).ok());
                    if any.as_ref().is_some_and(|r| r.accepts(text.as_bytes())) {
                        Category::RightAnyOrder
                    } else {
                        Category::RejectedValid
                    }
                }
            }
        })
        .collect();
    ("ok".to_owned(), categories)
}

/// A compiled schema, ready to recognise texts: a byte matcher at the start of the input.
struct Recognizer(ByteMatcher);

impl Recognizer {
    /// Compiles with the default options but `order`; the error is the schema's status.
    fn build(schema: &Value, order: PropertyOrder) -> Result<Recognizer, String> {
        let options = Options {
            property_order: order,
            ..Options::default()
        };
        let compiled = sieve_jsonschema::compile(schema, &options).map_err(|e| {
            format!(
                "unsupported:{:?}:{}",
                e.kind,
                one_line(if e.keyword.is_empty() {
                    "(schema)"
                } else {
                    &e.keyword
                })
            )
        })?;
        let matcher = ByteMatcher::new(&compiled.grammar, &sieve_matcher::Options::default())
            .map_err(|e| match e {
                CompileError::Normalize(_) => "unsupported:Pipeline:normalize".to_owned(),
                CompileError::Automata(_) => "unsupported:Pipeline:automata".to_owned(),
                _ => "unsupported:Pipeline:compile".to_owned(),
            })?;
        Ok(Recognizer(matcher))
    }

    /// Whether the whole text is in the language; a recogniser limit counts as a rejection.
    fn accepts(&self, text: &[u8]) -> bool {
        let mut matcher = self.0.clone();
        text.iter()
            .all(|&byte| matches!(matcher.push_byte(byte), Ok(true)))
            && matcher.can_finish()
    }
}

/// `text` without tabs and line breaks, for one field of the expected file.
fn one_line(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect();
    line.chars().take(120).collect()
}

/// Counts of each category over some results.
#[derive(Default, Clone)]
pub struct Counts {
    /// Schemas.
    pub schemas: usize,
    /// Schemas that compiled.
    pub compiled: usize,
    /// Instances per category.
    pub by_category: BTreeMap<Category, usize>,
}

impl Counts {
    /// Adds one schema's results.
    pub fn add(&mut self, result: &SchemaResult) {
        self.schemas += 1;
        self.compiled += usize::from(result.status == "ok");
        for &category in &result.categories {
            *self.by_category.entry(category).or_default() += 1;
        }
    }

    /// Instances in `category`.
    pub fn get(&self, category: Category) -> usize {
        self.by_category.get(&category).copied().unwrap_or(0)
    }

    /// Instances counted (not skipped).
    pub fn instances(&self) -> usize {
        self.by_category
            .iter()
            .filter(|(c, _)| **c != Category::Skipped)
            .map(|(_, n)| n)
            .sum()
    }
}
