//! End-to-end tests of the `sieve` binary: named insta snapshots of `sieve ir` at every stage
//! for every grammar in `grammars/`, of `sieve check` summaries, and of the diagnostics for
//! every file in `grammars/bad/`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn grammars_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../grammars")
        .canonicalize()
        .expect("grammars/ exists")
}

fn repo_root() -> PathBuf {
    grammars_dir()
        .parent()
        .expect("grammars/ has a parent")
        .to_path_buf()
}

/// Runs `sieve` from the repository root (so paths in messages are relative and stable).
fn sieve(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sieve"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("sieve runs");
    (
        out.status.code().expect("exited"),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

/// Grammar files under `grammars/` as paths relative to the repository root, sorted; `bad`
/// selects `grammars/bad/` or everything else.
fn grammar_files(bad: bool) -> Vec<String> {
    let mut files = Vec::new();
    let mut dirs = vec![grammars_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("grammars/ exists") {
            let path = entry.expect("readable").path();
            let in_bad = path.components().any(|c| c.as_os_str() == "bad");
            if path.is_dir() {
                dirs.push(path);
            } else if in_bad == bad
                && matches!(
                    path.extension().and_then(|e| e.to_str()),
                    Some("gbnf" | "ebnf" | "regex")
                )
            {
                let relative = path.strip_prefix(repo_root()).expect("inside");
                files.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files.sort();
    files
}

/// `--root NAME` when the file names its root with a `# sieve: root=NAME` line (the
/// convention of `grammars/`), else the file alone.
fn file_args(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo_root().join(file)).expect("readable");
    let mut args = vec![file.to_owned()];
    if let Some(root) = text.lines().find_map(|l| l.strip_prefix("# sieve: root=")) {
        args.extend(["--root".to_owned(), root.trim().to_owned()]);
    }
    args
}

/// A snapshot name for a grammar path: `grammars/llama.cpp/json.gbnf` → `llama_cpp-json-gbnf`,
/// `grammars/bad/x.gbnf` → `x-gbnf`.
fn snapshot_name(path: &str) -> String {
    path.trim_start_matches("grammars/")
        .trim_start_matches("bad/")
        .replace(['/', '.'], "-")
        .replace("llama-cpp", "llama_cpp")
}

#[test]
fn ir_at_every_stage_for_every_grammar() {
    let files = grammar_files(false);
    assert!(files.len() >= 10, "found only {files:?}");
    for file in &files {
        for stage in ["parsed", "normalized", "fsm"] {
            let mut args = vec!["ir".to_owned(), "--stage".to_owned(), stage.to_owned()];
            args.extend(file_args(file));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, stdout, stderr) = sieve(&args);
            assert_eq!(code, 0, "sieve ir {file} --stage {stage}: {stderr}");
            assert!(stderr.is_empty(), "{stderr}");
            insta::assert_snapshot!(format!("ir-{stage}-{}", snapshot_name(file)), stdout);
        }
    }
}

#[test]
fn check_summarises_every_grammar() {
    let mut summary = String::new();
    for file in grammar_files(false) {
        let mut args = vec!["check".to_owned()];
        args.extend(file_args(&file));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = sieve(&args);
        assert_eq!(code, 0, "sieve check {file}: {stderr}");
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        assert!(stdout.starts_with(&format!("{file}: ok: ")), "{stdout}");
        summary.push_str(&stdout);
    }
    insta::assert_snapshot!("check-summaries", summary);
}

#[test]
fn check_reports_every_bad_grammar_with_a_location() {
    let files = grammar_files(true);
    assert!(files.len() >= 10, "found only {files:?}");
    for file in &files {
        let (code, stdout, stderr) = sieve(&["check", file]);
        assert_eq!(code, 1, "sieve check {file} should fail: {stdout}{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        let location = format!("{file}:");
        assert!(
            stderr.starts_with(&location)
                && stderr[location.len()..]
                    .split(':')
                    .take(2)
                    .all(|n| n.parse::<usize>().is_ok()),
            "{file}: no file:line:col in {stderr}"
        );
        insta::assert_snapshot!(format!("check-bad-{}", snapshot_name(file)), stderr);
    }
}

#[test]
fn format_comes_from_the_flag_or_the_extension() {
    let (code, _, stderr) = sieve(&["check", "Cargo.toml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown grammar format"), "{stderr}");
    let (code, stdout, _) = sieve(&[
        "ir",
        "--format",
        "gbnf",
        "--stage",
        "parsed",
        "grammars/llama.cpp/list.gbnf",
    ]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("# root: root\n"), "{stdout}");
    let (code, _, stderr) = sieve(&["check", "grammars/does-not-exist.gbnf"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("does-not-exist.gbnf"), "{stderr}");
}

#[test]
fn custom_root_and_threshold_flags() {
    let dir = std::env::temp_dir().join(format!("sieve-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("start.gbnf");
    std::fs::write(&file, "start ::= \"a\"{40}\n").unwrap();
    let file = file.to_str().unwrap();
    let (code, _, stderr) = sieve(&["check", file]);
    assert_eq!(code, 1);
    assert!(stderr.contains("root"), "{stderr}");
    let (code, stdout, stderr) =
        sieve(&["ir", file, "--root", "start", "--repetition-threshold", "4"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "# root: start\nstart ::= \"aaaa\" start_repeat\nstart_item ::= \"a\"\nstart_repeat ::= start_item{36}\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn match_reports_acceptance_and_the_offset_of_rejection() {
    let json = "grammars/llama.cpp/json.gbnf";
    let (code, stdout, _) = sieve(&["match", "--grammar", json, "--text", r#"{"a": [1, 2.5e3]}"#]);
    assert_eq!((code, stdout.as_str()), (0, "accepted\n"));
    let (code, stdout, _) = sieve(&["match", "--grammar", json, "--text", r#"{"a" 1}"#]);
    assert_eq!((code, stdout.as_str()), (1, "rejected at byte 5\n"));
    let (code, stdout, _) = sieve(&["match", "--grammar", json, "--text", r#"{"a": "#]);
    assert_eq!(code, 1);
    assert!(
        stdout.starts_with("rejected at byte 6: the input ends"),
        "{stdout}"
    );
    let (code, _, stderr) = sieve(&["match", "--regex", "a(?=b)", "--text", "ab"]);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("<regex>:1:2: look-ahead"), "{stderr}");
    let (code, _, _) = sieve(&["match", "--regex", "[0-9]{2,3}", "--text", "123"]);
    assert_eq!(code, 0);
    let (code, _, _) = sieve(&["match", "--regex", "[0-9]{2,3}", "--text", "1234"]);
    assert_eq!(code, 1);
}

#[test]
fn generate_output_is_in_the_language() {
    for (grammar, seed) in [
        ("grammars/regex/iso-date.regex", "1"),
        ("grammars/regex/uuid.regex", "2"),
        ("grammars/regex/hex-color.regex", "3"),
    ] {
        let (code, stdout, stderr) = sieve(&["generate", "--grammar", grammar, "--seed", seed]);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("stopped at EOS"), "{grammar}: {stderr}");
        assert!(stderr.contains("mask time mean"), "{stderr}");
        let text = stdout.strip_suffix('\n').expect("a final newline");
        let (code, verdict, _) = sieve(&["match", "--grammar", grammar, "--text", text]);
        assert_eq!(
            (code, verdict.as_str()),
            (0, "accepted\n"),
            "{grammar}: {text:?}"
        );
        // The same seed gives the same text.
        let (_, again, _) = sieve(&["generate", "--grammar", grammar, "--seed", seed]);
        assert_eq!(again, stdout);
    }
}

#[test]
fn backend_flag_selects_reports_and_refuses() {
    let (code, out, _) = sieve(&[
        "check",
        "--backend",
        "token-dfa",
        "grammars/regex/uuid.regex",
    ]);
    assert_eq!(code, 0);
    assert!(out.ends_with("token-dfa backend\n"), "{out}");
    let (code, out, _) = sieve(&["check", "--backend", "auto", "grammars/regex/uuid.regex"]);
    assert_eq!(code, 0);
    assert!(
        out.ends_with("earley backend\n"),
        "auto just in time is Earley: {out}"
    );
    // Refusals are diagnostics naming the backend and the reason.
    let (code, _, err) = sieve(&["check", "--backend", "lr", "grammars/llama.cpp/c.gbnf"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("the lr backend refuses this grammar: the grammar is not LR(1)"),
        "{err}"
    );
    let (code, _, err) = sieve(&[
        "check",
        "--backend",
        "token-dfa",
        "grammars/llama.cpp/json.gbnf",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("the grammar is recursive"), "{err}");
    // Every backend matches the same input.
    for backend in ["earley", "lr", "token-dfa", "auto"] {
        let (code, out, _) = sieve(&[
            "match",
            "--backend",
            backend,
            "--grammar",
            "grammars/regex/uuid.regex",
            "--text",
            "123e4567-e89b-12d3-a456-426614174000",
        ]);
        assert_eq!((code, out.as_str()), (0, "accepted\n"), "{backend}");
    }
    let (code, _, err) = sieve(&["check", "--backend", "lalr", "grammars/regex/uuid.regex"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown backend \"lalr\""), "{err}");
}
