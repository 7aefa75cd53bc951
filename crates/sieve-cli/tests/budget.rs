//! `sieve generate --max-tokens N`: a token budget by default (the output ends with EOS,
//! complete, within N tokens), `--no-budget` to stop at N whatever the output, and a clear
//! error when no complete output fits; the bench protocol's `max_tokens` request field.

use std::path::Path;
use std::process::Command;

fn sieve(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sieve"))
        .args(args)
        .output()
        .expect("sieve runs");
    (
        out.status.code().expect("exited"),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

fn person() -> String {
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../grammars/json-schema/person.json");
    schema.to_str().expect("utf-8 path").to_owned()
}

/// The token count `generate` reports on stderr.
fn tokens(stderr: &str) -> usize {
    stderr
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no token count in {stderr:?}"))
}

#[test]
fn budgeted_generation_ends_complete_within_max_tokens() {
    let schema = person();
    for (max, seed) in [("22", "1"), ("25", "2"), ("30", "3"), ("40", "4")] {
        let args = [
            "generate",
            "--schema",
            &schema,
            "--max-tokens",
            max,
            "--seed",
            seed,
        ];
        let (code, stdout, stderr) = sieve(&args);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("stopped at EOS"), "{max}: {stderr}");
        assert!(tokens(&stderr) <= max.parse().unwrap(), "{stderr}");
        let text = stdout.strip_suffix('\n').expect("a final newline");
        let (code, verdict, _) = sieve(&["match", "--schema", &schema, "--text", text]);
        assert_eq!((code, verdict.as_str()), (0, "accepted\n"), "{text}");
    }
}

#[test]
fn no_budget_stops_at_max_tokens_and_a_budget_too_small_is_refused() {
    let schema = person();
    let args = [
        "generate",
        "--schema",
        &schema,
        "--max-tokens",
        "10",
        "--seed",
        "1",
    ];
    let (code, stdout, stderr) = sieve(&args);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("cannot guarantee a complete output"),
        "{stderr}"
    );
    let (code, _, stderr) = sieve(&[&args[..], &["--no-budget"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("10 tokens (stopped at the token limit)"),
        "{stderr}"
    );
}

/// Runs `sieve bench` on a request over the regex `[12]+(-[12]+)?` with the vocabulary `1`,
/// `2`, `-`, `12`, `+`, `</s>` (ids 0 to 5) and the token budget `max_tokens`; the JSON lines.
fn bench_with_budget(
    name: &str,
    max_tokens: u32,
    samples: serde_json::Value,
) -> Vec<serde_json::Value> {
    use serde_json::json;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("tiny.list"),
        "\"1\"\n\"2\"\n\"-\"\n\"12\"\n\"+\"\nspecial:\"</s>\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("regex.txt"), "[12]+(-[12]+)?\n").unwrap();
    let manifest = dir.join("manifest.json");
    let entry = json!({"format": "plain", "path": "tiny.list", "n_vocab": 6, "eos_token_ids": [5]});
    std::fs::write(&manifest, json!({ "tiny": entry }).to_string()).unwrap();
    let mut tokenizer = entry.clone();
    tokenizer["name"] = json!("tiny");
    tokenizer["manifest"] = json!(manifest);
    let request = json!({
        "protocol": "peers-engine/1",
        "grammars": {"regex": dir.join("regex.txt")},
        "preferred_kinds": ["regex"],
        "tokenizer": tokenizer,
        "n_vocab": 6,
        "eos_token_ids": [5],
        "samples": samples,
        "max_tokens": max_tokens,
    });
    let path = dir.join("request.json");
    std::fs::write(&path, request.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sieve"))
        .arg("bench")
        .arg(&path)
        .output()
        .expect("sieve runs");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect()
}

#[test]
fn bench_requests_take_a_token_budget() {
    use serde_json::json;
    let kind = |line: &serde_json::Value| {
        line.get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("step")
            .to_owned()
    };
    // A budget of 2: "1" then EOS fits; after "1" only EOS is allowed, so "1" "1" fails.
    let samples = json!([{"index": 0, "tokens": [0]}, {"index": 1, "tokens": [0, 0]}]);
    let lines = bench_with_budget("bench-budget", 2, samples);
    let steps: Vec<_> = lines.iter().filter(|l| kind(l) == "step").collect();
    let allowed: Vec<u64> = steps
        .iter()
        .map(|s| s["allowed"].as_u64().unwrap())
        .collect();
    // Sample 0: {1, 2, 12}, then {EOS}; sample 1: the same, and its second "1" is refused.
    assert_eq!(allowed, [3, 1, 3, 1], "{lines:?}");
    let errors: Vec<_> = lines.iter().filter(|l| kind(l) == "error").collect();
    assert_eq!(errors.len(), 1, "{lines:?}");
    assert_eq!(errors[0]["sample"], 1);
    // A budget of 1 cannot hold a complete output: every sample is refused at once.
    let lines = bench_with_budget(
        "bench-budget-small",
        1,
        json!([{"index": 0, "tokens": [0]}]),
    );
    let errors: Vec<_> = lines.iter().filter(|l| kind(l) == "error").collect();
    assert_eq!(errors.len(), 1, "{lines:?}");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("cannot guarantee a complete output"),
        "{message}"
    );
}
