//! Hygiene and layering checks over the repository's own source.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The sieve crates each crate may depend on (normal and build dependencies; dev-dependencies
/// are free, since tests may use any front-end). A crate missing here may depend on nothing
/// from sieve, which is also what a new crate gets until it is added.
const ALLOWED_EDGES: &[(&str, &[&str])] = &[
    ("sieve-diagnostics", &[]),
    ("sieve-ir", &[]),
    ("sieve-gbnf", &["sieve-ir", "sieve-diagnostics"]),
    ("sieve-regex", &["sieve-ir", "sieve-diagnostics"]),
    ("sieve-jsonschema", &["sieve-ir", "sieve-regex"]),
    (
        "sieve-structural",
        &[
            "sieve-ir",
            "sieve-diagnostics",
            "sieve-gbnf",
            "sieve-regex",
            "sieve-jsonschema",
        ],
    ),
    (
        "sieve-lark",
        &[
            "sieve-ir",
            "sieve-diagnostics",
            "sieve-regex",
            "sieve-jsonschema",
        ],
    ),
    ("sieve-normalize", &["sieve-ir"]),
    ("sieve-fsm", &["sieve-ir", "sieve-normalize"]),
    ("sieve-vocab", &["sieve-ir"]),
    // The seam sits on the automata layer: every backend is built from rule FSMs, and the
    // token-limit rule they share (`token_limits::rule_limits`) reads them.
    ("sieve-backend", &["sieve-ir", "sieve-fsm", "sieve-vocab"]),
    (
        "sieve-earley",
        &["sieve-ir", "sieve-fsm", "sieve-backend", "sieve-vocab"],
    ),
    (
        "sieve-lr",
        &[
            "sieve-ir",
            "sieve-normalize",
            "sieve-fsm",
            "sieve-backend",
            "sieve-vocab",
        ],
    ),
    (
        "sieve-tokendfa",
        &[
            "sieve-ir",
            "sieve-normalize",
            "sieve-fsm",
            "sieve-backend",
            "sieve-vocab",
        ],
    ),
    ("sieve-tokencache", &["sieve-backend", "sieve-vocab"]),
    (
        "sieve-testkit",
        &[
            "sieve-backend",
            "sieve-ir",
            "sieve-gbnf",
            "sieve-regex",
            "sieve-jsonschema",
            "sieve-lark",
            "sieve-vocab",
        ],
    ),
    (
        "sieve-matcher",
        &[
            "sieve-ir",
            "sieve-normalize",
            "sieve-fsm",
            "sieve-backend",
            "sieve-earley",
            "sieve-lr",
            "sieve-tokendfa",
            "sieve-tokencache",
            "sieve-vocab",
        ],
    ),
    (
        "sieve-cli",
        &[
            "sieve-ir",
            "sieve-diagnostics",
            "sieve-gbnf",
            "sieve-regex",
            "sieve-jsonschema",
            "sieve-structural",
            "sieve-lark",
            "sieve-normalize",
            "sieve-fsm",
            "sieve-vocab",
            "sieve-matcher",
        ],
    ),
    (
        "sieve-benches",
        &[
            "sieve-gbnf",
            "sieve-regex",
            "sieve-jsonschema",
            "sieve-normalize",
            "sieve-fsm",
            "sieve-earley",
            "sieve-ir",
            "sieve-matcher",
            "sieve-vocab",
        ],
    ),
    (
        "xtask",
        &[
            "sieve-diagnostics",
            "sieve-ir",
            "sieve-gbnf",
            "sieve-jsonschema",
            "sieve-lark",
            "sieve-matcher",
            "sieve-regex",
            "sieve-structural",
            "sieve-testkit",
            "sieve-vocab",
        ],
    ),
];

/// Runs every check; the error lists every problem found.
pub fn run(root: &Path) -> Result<(), String> {
    let mut problems = source_problems(root);
    problems.extend(layering_problems(root)?);
    if problems.is_empty() {
        println!("tidy: ok");
        Ok(())
    } else {
        Err(format!(
            "tidy found {} problem(s):\n{}",
            problems.len(),
            problems.join("\n")
        ))
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "corpus" && name != "artifacts" {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Module docs and forbidden macros.
pub fn source_problems(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["crates", "xtask", "benches", "fuzz/fuzz_targets"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    let mut problems = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let first_code_line = text
            .lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with("#!["));
        if !first_code_line.is_some_and(|l| l.starts_with("//!")) {
            problems.push(format!("{shown}: does not start with a `//!` module doc"));
        }
        for (number, line) in text.lines().enumerate() {
            // Spelled in two parts so this line does not flag itself.
            for forbidden in [
                concat!("dbg", "!("),
                concat!("todo", "!("),
                concat!("unimplemented", "!("),
            ] {
                if line.contains(forbidden) && !line.trim_start().starts_with("//") {
                    problems.push(format!("{shown}:{}: `{forbidden}` left in", number + 1));
                }
            }
        }
    }
    problems
}

/// Forbidden dependency edges between workspace crates, read from `cargo metadata`.
pub fn layering_problems(root: &Path) -> Result<Vec<String>, String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let packages = metadata["packages"]
        .as_array()
        .ok_or("cargo metadata: no packages")?;
    let mut problems = Vec::new();
    for package in packages {
        let name = package["name"].as_str().unwrap_or_default();
        let allowed = ALLOWED_EDGES
            .iter()
            .find(|(crate_name, _)| *crate_name == name)
            .map_or(&[][..], |(_, deps)| *deps);
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or_default();
            let is_dev = dep["kind"].as_str() == Some("dev");
            if dep_name.starts_with("sieve-") && !is_dev && !allowed.contains(&dep_name) {
                problems.push(format!(
                    "{name} must not depend on {dep_name} (see xtask/src/tidy.rs)"
                ));
            }
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        crate::workspace_root()
    }

    #[test]
    fn every_rust_file_is_documented_and_clean() {
        let problems = source_problems(&root());
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn crate_layering_holds() {
        let problems = layering_problems(&root()).expect("cargo metadata runs");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
