//! The `sieve` binary on Lark grammars: `.lark` files and `--format lark` on every command,
//! located diagnostics, and the bench protocol's grammar kind `lark`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Runs `sieve` from the repository root; exit code, stdout, stderr.
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

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lark");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn lark_files_check_match_and_print() {
    let (code, out, err) = sieve(&["check", "grammars/lark/arith.lark"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("grammars/lark/arith.lark: ok:"), "{out}");

    let (code, _, err) = sieve(&[
        "match",
        "--grammar",
        "grammars/lark/arith.lark",
        "--text",
        "1 + 2*x",
    ]);
    assert_eq!(code, 0, "{err}");
    // Ignored text only between lexemes: a leading space is rejected at byte 0.
    let (code, out, _) = sieve(&[
        "match",
        "--grammar",
        "grammars/lark/arith.lark",
        "--text",
        " 1",
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("rejected at byte 0"), "{out}");

    let (code, out, err) = sieve(&["ir", "grammars/lark/operators.lark", "--stage", "parsed"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("and_dfa ::= [ b-z]* (\"a\" and | \"\")"),
        "{out}"
    );

    let (code, out, err) = sieve(&[
        "generate",
        "--grammar",
        "grammars/lark/json.lark",
        "--seed",
        "1",
        "--max-tokens",
        "40",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.is_empty());
}

#[test]
fn format_flag_and_located_errors() {
    let path = tmp("grammar.txt", "start: \"a\" <|eot_id|>\n");
    let shown = path.to_string_lossy().into_owned();
    let (code, _, err) = sieve(&["check", &shown]);
    assert_eq!(code, 2, "an unknown extension is a usage error: {err}");
    assert!(err.contains(".lark"), "{err}");
    let (code, _, err) = sieve(&["check", "--format", "lark", &shown]);
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "grammar.txt:1:12: token `<|eot_id|>`: `<|eot_id|>` is not a token of this tokenizer"
        ),
        "{err}"
    );
    assert!(err.contains("^^^^^^^^^^"), "{err}");
    // The embedded GPT-2 vocabulary has `<|endoftext|>`.
    let path = tmp("special.lark", "start: \"a\" <|endoftext|>\n");
    let (code, out, err) = sieve(&["check", &path.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ok"), "{out}");
}

#[test]
fn bench_runs_the_lark_kind() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-lark");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Tokens: 0 "1", 1 "2", 2 "-", 3 "12", 4 "+", 5 EOS.
    std::fs::write(
        dir.join("tiny.list"),
        "\"1\"\n\"2\"\n\"-\"\n\"12\"\n\"+\"\nspecial:\"</s>\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("grammar.lark"),
        "start: D (\"-\" D)?\nD: /[12]+/\n",
    )
    .unwrap();
    let manifest = dir.join("manifest.json");
    let entry = json!({"format": "plain", "path": "tiny.list", "n_vocab": 6, "eos_token_ids": [5]});
    std::fs::write(&manifest, json!({ "tiny": entry }).to_string()).unwrap();
    let mut tokenizer = entry.clone();
    tokenizer["name"] = json!("tiny");
    tokenizer["manifest"] = json!(manifest);
    let request = json!({
        "protocol": "peers-engine/1",
        "workload": {"name": "digits", "dir": dir, "options": {}},
        "grammars": {"lark": dir.join("grammar.lark")},
        "preferred_kinds": ["json_schema", "regex", "gbnf", "lark", "structural_tag"],
        "json_options": {"whitespace": "compact"},
        "tokenizer": tokenizer,
        "n_vocab": 6,
        "eos_token_ids": [5],
        "special_token_ids": [5],
        "compile_repeats": 1,
        "walk_repeats": 1,
        "samples": [{"index": 0, "tokens": [3, 2, 0]}],
    });
    let path = dir.join("request.json");
    std::fs::write(&path, request.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sieve"))
        .arg("bench")
        .arg(&path)
        .output()
        .expect("sieve runs");
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let engine = lines
        .iter()
        .find(|l| l["type"] == "engine")
        .expect("engine line");
    assert_eq!(engine["grammar_kind"], "lark");
    let allowed: Vec<u64> = lines
        .iter()
        .filter(|l| l.get("type").is_none() || l["type"] == "step")
        .filter_map(|l| l["allowed"].as_u64())
        .collect();
    // Start: 1, 2, 12. After "12": those, "-" and EOS. After "12-": 1, 2, 12. After "12-1":
    // 1, 2, 12 and EOS.
    assert_eq!(allowed, [3, 5, 3, 4], "{lines:?}");
}
