//! `sieve generate --max-tokens N`: a token budget by default (the output ends with EOS,
//! complete, within N tokens), `--no-budget` to stop at N whatever the output, and a clear
//! error when no complete output fits.

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
