//! `cargo xtask`: the project's automation.
//!
//! - `cargo xtask tidy` — hygiene: every Rust file starts with a `//!` module doc, no `dbg!`,
//!   `todo!` or `unimplemented!` in crates, and the crate layering holds (front-ends never
//!   depend on passes or automata, the IR depends on no other sieve crate). The same checks
//!   run as tests, so the README's test command enforces them.
//! - `cargo xtask corpus [SHARED_DIR]` — compiles every GBNF grammar under
//!   `SHARED_DIR/data/grammars` (default `../shared`) through every stage, loads every shared
//!   vocabulary and checks its reference decodings, compiles every `.lark` grammar there that
//!   llguidance compiles and compares the workloads' Lark grammars with their GBNF twins, and
//!   prints a table. A missing corpus is an error, never a silent skip.
//! - `cargo xtask lark [SHARED_DIR]` — only the Lark steps of `corpus`.
//! - `cargo xtask schema-suites [SHARED_DIR] [--update]` — the JSON Schema front-end against
//!   JSON-Schema-Test-Suite, SchemaStore and JSONSchemaBench, per-suite tables, and a ratchet
//!   against `xtask/expected/schema-suites.tsv` (see `schema_suites`); `--suite=NAME` runs
//!   one suite.
//! - `cargo xtask budget [SHARED_DIR] [--schemas=N] [--seeds=K] [--backend=NAME]` — the evidence for token
//!   budgets: seeded walks with and without the guarantee over `grammars/` and JSONSchemaBench,
//!   the bound's tightness against exhaustive search, mask times (see `budget`).
//! - `cargo xtask compare [SHARED_DIR] [--repeats=N]` — every backend side by side on the
//!   backend corpus and the peer harness's workloads: compile time, table memory, mask
//!   p50/p99/max, cold cost per request, refusals and their reasons (see `compare`).
//! - `cargo xtask record-traces` — records the backend corpus `grammars/traces/`: seeded token
//!   walks over every shipped grammar, replayed on every backend by sieve-matcher's `corpus`
//!   test (see `traces`).

mod budget;
mod compare;
mod corpus;
mod lark;
mod schema_suites;
mod tidy;
mod traces;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("tidy") => tidy::run(&workspace_root()),
        Some("record-traces") => traces::record(&workspace_root()),
        Some("compare") => {
            let shared = args[1..]
                .iter()
                .find(|a| !a.starts_with("--"))
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace_root().join("../shared"));
            let repeats = args
                .iter()
                .find_map(|a| a.strip_prefix("--repeats="))
                .map_or(Ok(3), |n| {
                    n.parse()
                        .map_err(|_| format!("--repeats={n} is not a number"))
                });
            repeats.and_then(|repeats| {
                compare::run(&workspace_root(), &compare::Settings { shared, repeats })
            })
        }
        Some("corpus") => {
            let shared = args
                .get(1)
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace_root().join("../shared"));
            corpus::run(&shared)
        }
        Some("lark") => {
            let shared = args
                .get(1)
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace_root().join("../shared"));
            lark::corpus(&shared).and(lark::workloads(&shared))
        }
        Some("schema-suites") => {
            let update = args.iter().any(|a| a == "--update");
            let only = args
                .iter()
                .find_map(|a| a.strip_prefix("--suite="))
                .map(str::to_owned);
            let shared = args[1..]
                .iter()
                .find(|a| !a.starts_with("--"))
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace_root().join("../shared"));
            let expected = workspace_root().join("xtask/expected/schema-suites.tsv");
            schema_suites::run(&shared, &expected, update, only.as_deref())
        }
        Some("budget") => {
            let number = |name: &str, default: u64| {
                args.iter()
                    .find_map(|a| a.strip_prefix(name))
                    .map_or(Ok(default), |n| {
                        n.parse().map_err(|_| format!("{name}{n} is not a number"))
                    })
            };
            let shared = args[1..]
                .iter()
                .find(|a| !a.starts_with("--"))
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace_root().join("../shared"));
            number("--schemas=", 200).and_then(|schemas| {
                let backend = args
                    .iter()
                    .find_map(|a| a.strip_prefix("--backend="))
                    .unwrap_or("earley")
                    .parse()
                    .map_err(|e: sieve_matcher::UnknownBackend| e.to_string())?;
                let settings = budget::Settings {
                    shared,
                    schemas: schemas as usize,
                    seeds: number("--seeds=", 2)?,
                    backend,
                };
                budget::run(&workspace_root(), &settings)
            })
        }
        _ => Err(
            "usage: cargo xtask (tidy | record-traces | compare [SHARED_DIR] [--repeats=N] | corpus [SHARED_DIR] | lark [SHARED_DIR] | schema-suites [SHARED_DIR] [--update] [--suite=NAME] | budget [SHARED_DIR] [--schemas=N] [--seeds=K] [--backend=NAME])"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The repository root (the parent of `xtask/`).
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ has a parent")
        .to_path_buf()
}
