//! End-to-end tests of `sieve bench`, the peer harness's engine protocol: a request with a
//! tiny plain vocabulary, whose allowed sets at each step are worked out by hand from the
//! regex's language.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

/// Token ids of the vocabulary written by [`workspace`].
const ONE: u32 = 0;
const TWO: u32 = 1;
const DASH: u32 = 2;
const ONE_TWO: u32 = 3;
const PLUS: u32 = 4;
const EOS: u32 = 5;

/// A fresh folder with a plain vocabulary (`1`, `2`, `-`, `12`, `+`, `</s>`), its manifest,
/// a regex source and a GBNF source for the same language.
fn workspace(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let vocab = "\"1\"\n\"2\"\n\"-\"\n\"12\"\n\"+\"\nspecial:\"</s>\"\n";
    std::fs::write(dir.join("tiny.list"), vocab).unwrap();
    std::fs::write(dir.join("regex.txt"), "[12]+(-[12]+)?\n").unwrap();
    std::fs::write(
        dir.join("grammar.gbnf"),
        "root ::= d+ (\"-\" d+)?\nd ::= [12]\n",
    )
    .unwrap();
    dir
}

fn request(dir: &Path, grammars: Value, samples: Value) -> Value {
    let manifest = dir.join("manifest.json");
    let entry = json!({"format": "plain", "path": "tiny.list", "n_vocab": 6,
                       "eos_token_ids": [EOS]});
    std::fs::write(&manifest, json!({ "tiny": entry }).to_string()).unwrap();
    let mut tokenizer = entry.clone();
    tokenizer["name"] = json!("tiny");
    tokenizer["manifest"] = json!(manifest);
    json!({
        "protocol": "peers-engine/1",
        "workload": {"name": "digits", "dir": dir, "options": {}},
        "grammars": grammars,
        "preferred_kinds": ["json_schema", "regex", "gbnf"],
        "json_options": {"whitespace": "compact"},
        "tokenizer": tokenizer,
        "n_vocab": 6,
        "eos_token_ids": [EOS],
        "special_token_ids": [EOS],
        "compile_repeats": 2,
        "walk_repeats": 2,
        "samples": samples,
    })
}

/// Runs `sieve bench` on the request; exit code and the JSON lines of stdout.
fn bench(dir: &Path, request: &Value) -> (i32, Vec<Value>) {
    let path = dir.join("request.json");
    std::fs::write(&path, request.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sieve"))
        .arg("bench")
        .arg(&path)
        .output()
        .expect("sieve runs");
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect();
    (out.status.code().expect("exited"), lines)
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|line| line.get("type").and_then(Value::as_str).unwrap_or("step") == kind)
        .collect()
}

#[test]
fn walks_report_exact_allowed_counts_and_stable_hashes() {
    let dir = workspace("bench-walks");
    for kind in ["regex", "gbnf"] {
        let file = if kind == "regex" {
            "regex.txt"
        } else {
            "grammar.gbnf"
        };
        let grammars = json!({ kind: dir.join(file) });
        // "12-1", then EOS.
        let samples = json!([{"index": 0, "tokens": [ONE_TWO, DASH, ONE]}]);
        let (code, lines) = bench(&dir, &request(&dir, grammars, samples));
        assert_eq!(code, 0, "{lines:?}");
        assert_eq!(of_type(&lines, "engine")[0]["grammar_kind"], kind);
        let compiles = of_type(&lines, "compile");
        let modes: Vec<&str> = compiles
            .iter()
            .map(|line| line["mode"].as_str().unwrap())
            .collect();
        assert_eq!(modes, ["cold", "cold", "warm", "warm"], "{lines:?}");
        assert_eq!(of_type(&lines, "instantiate").len(), 2);
        assert!(of_type(&lines, "error").is_empty(), "{lines:?}");
        assert_eq!(of_type(&lines, "done").len(), 1);

        let steps = of_type(&lines, "step");
        assert_eq!(steps.len(), 8, "4 steps × 2 walks");
        // Start: 1, 2, 12. After "12": those, "-" and EOS. After "12-": 1, 2, 12.
        // After "12-1": 1, 2, 12 and EOS.
        let allowed: Vec<u64> = steps[..4]
            .iter()
            .map(|s| s["allowed"].as_u64().unwrap())
            .collect();
        assert_eq!(allowed, [3, 5, 3, 4], "{kind}");
        let hash = |i: usize| steps[i]["mask_hash"].as_str().unwrap().to_owned();
        assert_eq!(hash(0), hash(2), "the same set gives the same hash");
        assert_ne!(hash(0), hash(3));
        assert!(steps.iter().all(|s| s["ok"] == true));
        // The second walk repeats the first.
        for i in 0..4 {
            assert_eq!(steps[i + 4]["walk"], 1);
            assert_eq!(steps[i + 4]["mask_hash"], steps[i]["mask_hash"]);
        }
    }
}

#[test]
fn json_schema_is_preferred_and_compiled_with_the_json_options() {
    let dir = workspace("bench-json-schema");
    std::fs::write(dir.join("schema.json"), r#"{"type": "integer"}"#).unwrap();
    let grammars = json!({
        "json_schema": dir.join("schema.json"),
        "regex": dir.join("regex.txt"),
    });
    // "121", then EOS.
    let samples = json!([{"index": 0, "tokens": [ONE_TWO, ONE]}]);
    for whitespace in ["compact", "flexible"] {
        let mut request = request(&dir, grammars.clone(), samples.clone());
        request["json_options"] =
            json!({"whitespace": whitespace, "item_separator": ",", "key_separator": ":"});
        let (code, lines) = bench(&dir, &request);
        assert_eq!(code, 0, "{lines:?}");
        assert_eq!(of_type(&lines, "engine")[0]["grammar_kind"], "json_schema");
        assert!(of_type(&lines, "error").is_empty(), "{lines:?}");
        let steps = of_type(&lines, "step");
        // Start: 1, 2, 12, "-". After "12" and after "121": 1, 2, 12 and EOS (the vocabulary
        // has no whitespace token, so flexible mode allows the same tokens).
        let allowed: Vec<u64> = steps[..3]
            .iter()
            .map(|s| s["allowed"].as_u64().unwrap())
            .collect();
        assert_eq!(allowed, [4, 4, 4], "{whitespace}");
        assert!(steps.iter().all(|s| s["ok"] == true));
    }
    let mut request = request(&dir, grammars, samples);
    request["json_options"] = json!({"whitespace": "sideways"});
    let (code, lines) = bench(&dir, &request);
    assert_eq!(code, 2);
    assert!(lines.iter().any(|l| l["message"]
        .as_str()
        .is_some_and(|m| m.contains("sideways"))));
}

#[test]
fn a_token_outside_the_mask_fails_its_sample_only() {
    let dir = workspace("bench-fail");
    let grammars = json!({ "regex": dir.join("regex.txt") });
    let samples = json!([
        {"index": 0, "tokens": [TWO, PLUS]},
        {"index": 1, "tokens": [ONE]},
    ]);
    let mut request = request(&dir, grammars, samples);
    request["walk_repeats"] = json!(1);
    let (code, lines) = bench(&dir, &request);
    assert_eq!(code, 0);
    let errors = of_type(&lines, "error");
    assert_eq!(errors.len(), 1, "{lines:?}");
    assert_eq!(errors[0]["sample"], 0);
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("step 1:"));
    let steps = of_type(&lines, "step");
    let sample = |i: u64| steps.iter().filter(move |s| s["sample"] == i);
    assert_eq!(sample(0).count(), 2);
    assert_eq!(sample(0).next_back().unwrap()["ok"], false);
    assert_eq!(sample(1).count(), 2);
    assert!(sample(1).all(|s| s["ok"] == true));
}

#[test]
fn unsupported_kinds_and_bad_requests_are_reported() {
    let dir = workspace("bench-unsupported");
    let grammars = json!({ "lark": dir.join("grammar.lark") });
    let request = request(&dir, grammars, json!([]));
    let (code, lines) = bench(&dir, &request);
    assert_eq!(code, 2);
    let message = lines[0]["message"].as_str().unwrap();
    assert!(message.contains("no supported grammar kind"), "{message}");

    let mut wrong_protocol = request.clone();
    wrong_protocol["protocol"] = json!("peers-engine/0");
    let (code, lines) = bench(&dir, &wrong_protocol);
    assert_eq!(code, 2);
    assert!(lines[0]["message"].as_str().unwrap().contains("protocol"));

    let mut wrong_size = request;
    wrong_size["grammars"] = json!({ "regex": dir.join("regex.txt") });
    wrong_size["n_vocab"] = json!(7);
    let (code, lines) = bench(&dir, &wrong_size);
    assert_eq!(code, 2);
    assert!(lines[0]["message"].as_str().unwrap().contains("n_vocab"));
}
