//! `--structural-tag FILE` on `check`, `ir`, `match` and `generate`, and the `structural_tag`
//! kind of `sieve bench`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn sieve(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sieve"))
        .args(args)
        .output()
        .expect("sieve runs");
    (
        out.status.code().expect("exited"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A fresh folder holding `tag.json`: free text with `<c>N</c>` calls.
fn workspace(name: &str, format: Value) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let doc = json!({"type": "structural_tag", "format": format});
    std::fs::write(dir.join("tag.json"), doc.to_string()).unwrap();
    dir
}

fn calls() -> Value {
    json!({"type": "triggered_tags", "triggers": ["<c>"], "tags": [
        {"begin": "<c>", "content": {"type": "regex", "pattern": "[0-9]+"}, "end": "</c>"}
    ]})
}

#[test]
fn check_ir_and_match_take_a_structural_tag() {
    let dir = workspace("structural_match", calls());
    let tag = dir.join("tag.json");
    let tag = tag.to_str().unwrap();
    let (code, out, err) = sieve(&["check", "--structural-tag", tag]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ok"), "{out}");
    let (code, out, _) = sieve(&["ir", "--structural-tag", tag, "--stage", "parsed"]);
    assert_eq!(code, 0);
    assert!(out.contains("triggered_tags"), "{out}");
    let (code, _, _) = sieve(&["match", "--structural-tag", tag, "--text", "a <c>12</c> b"]);
    assert_eq!(code, 0);
    let (code, out, _) = sieve(&["match", "--structural-tag", tag, "--text", "a <c>x</c>"]);
    assert_eq!(code, 1);
    assert!(out.contains("rejected at byte 5"), "{out}");
}

#[test]
fn errors_name_the_json_pointer() {
    let dir = workspace(
        "structural_error",
        json!({"type": "sequence", "elements": [{"type": "token", "token": "<|im_end|>"}]}),
    );
    let tag = dir.join("tag.json");
    let (code, _, err) = sieve(&["check", "--structural-tag", tag.to_str().unwrap()]);
    assert_eq!(code, 1);
    // The embedded GPT-2 vocabulary has no `<|im_end|>`: the token's own pointer.
    assert!(err.contains("/format/elements/0/token: "), "{err}");
    assert!(err.contains("is not a token of this tokenizer"), "{err}");
}

#[test]
fn generate_follows_the_structural_tag() {
    let dir = workspace(
        "structural_generate",
        json!({"type": "tag", "begin": "<c>", "content": {"type": "regex", "pattern": "[0-9]{3}"}, "end": "</c>"}),
    );
    let tag = dir.join("tag.json");
    let (code, out, err) = sieve(&[
        "generate",
        "--structural-tag",
        tag.to_str().unwrap(),
        "--seed",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    let text = out.lines().next().unwrap_or_default();
    assert!(
        text.starts_with("<c>") && text.ends_with("</c>") && text.len() == 10,
        "{out}"
    );
}

#[test]
fn bench_runs_the_structural_tag_kind() {
    let dir = workspace("structural_bench", calls());
    let vocab = "\"<c>\"\n\"</c>\"\n\"1\"\n\"a\"\nspecial:\"</s>\"\n";
    std::fs::write(dir.join("tiny.list"), vocab).unwrap();
    let manifest = dir.join("manifest.json");
    let entry = json!({"format": "plain", "path": "tiny.list", "n_vocab": 5, "eos_token_ids": [4]});
    std::fs::write(&manifest, json!({ "tiny": entry }).to_string()).unwrap();
    let mut tokenizer = entry.clone();
    tokenizer["name"] = json!("tiny");
    tokenizer["manifest"] = json!(manifest);
    // The harness offers `lark` before `structural_tag`; `--kinds` picks the structural tag.
    std::fs::write(dir.join("calls.lark"), "start: \"never\"\n").unwrap();
    let request = json!({
        "protocol": "peers-engine/1",
        "workload": {"name": "calls", "dir": dir, "options": {}},
        "grammars": {"structural_tag": dir.join("tag.json"), "lark": dir.join("calls.lark")},
        "preferred_kinds": ["json_schema", "regex", "gbnf", "lark", "structural_tag"],
        "json_options": {"whitespace": "flexible"},
        "tokenizer": tokenizer,
        "n_vocab": 5,
        "eos_token_ids": [4],
        "special_token_ids": [4],
        "compile_repeats": 1,
        "walk_repeats": 1,
        // a <c>1</c>
        "samples": [{"index": 0, "tokens": [3, 0, 2, 1]}],
    });
    let path = dir.join("request.json");
    std::fs::write(&path, request.to_string()).unwrap();
    let (code, out, _) = sieve(&["bench", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("\"grammar_kind\":\"lark\""), "{out}");
    let (code, _, err) = sieve(&["bench", "--kinds", "nope", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    let (code, out, err) = sieve(&["bench", "--kinds", "structural_tag", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["grammar_kind"], "structural_tag");
    let steps: Vec<&Value> = lines.iter().filter(|l| l.get("step").is_some()).collect();
    assert_eq!(steps.len(), 5);
    assert!(steps.iter().all(|s| s["ok"] == true), "{out}");
    // After `<c>` only `1` may follow (the content is digits; `</c>` needs one first).
    assert_eq!(steps[2]["allowed"], 1);
    assert!(lines.iter().all(|l| l["type"] != "error"), "{out}");
}
