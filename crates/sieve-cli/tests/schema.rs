//! End-to-end tests of `--schema FILE`: JSON Schemas through `sieve check`, `match`, `ir` and
//! `generate`, their exit codes, and how their errors name the file, the JSON pointer and the
//! keyword.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `text` to a fresh file named `name` under the test's temporary folder.
fn schema_file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schema-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `sieve` with `args`; exit code, stdout, stderr.
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

#[test]
fn text_that_is_not_json_is_located() {
    let path = schema_file("broken.json", "{\n  \"type\": \n}\n");
    let shown = path.to_str().unwrap();
    let (code, _, stderr) = sieve(&["check", "--schema", shown]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("{shown}:3:1: not JSON: ")),
        "{stderr}"
    );
    let (code, _, stderr) = sieve(&["match", "--schema", shown, "--text", "1"]);
    assert_eq!(code, 2, "match exits 2 on a bad schema: {stderr}");
}

#[test]
fn a_schema_that_does_not_compile_names_file_and_pointer() {
    // `type` must be a string or an array of strings: never compiles, whatever the
    // front-end supports.
    let path = schema_file("bad-type.json", r#"{"properties": {"a": {"type": 5}}}"#);
    let shown = path.to_str().unwrap();
    let (code, stdout, stderr) = sieve(&["check", "--schema", shown]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.starts_with(&format!("{shown}: ")), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for args in [
        &["match", "--schema", shown, "--text", "{}"][..],
        &["generate", "--schema", shown, "--max-tokens", "4"][..],
        &["ir", "--schema", shown, "--stage", "parsed"][..],
    ] {
        let (code, _, stderr) = sieve(args);
        let expected = if args[0] == "ir" { 1 } else { 2 };
        assert_eq!(code, expected, "{args:?}: {stderr}");
        assert!(stderr.starts_with(&format!("{shown}: ")), "{stderr}");
    }
}

#[test]
fn schema_conflicts_with_the_other_sources() {
    let path = schema_file("empty.json", "{}");
    let shown = path.to_str().unwrap();
    let (code, _, _) = sieve(&["check", "grammars/x.gbnf", "--schema", shown]);
    assert_eq!(code, 2);
    let (code, _, _) = sieve(&["match", "--regex", "a", "--schema", shown, "--text", "a"]);
    assert_eq!(code, 2);
    let (code, _, _) = sieve(&["match", "--schema", shown, "--order", "sideways"]);
    assert_eq!(code, 2);
}

#[test]
fn match_follows_the_layout_options() {
    let path = schema_file(
        "object.json",
        r#"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
            "required": ["a", "b"], "additionalProperties": false}"#,
    );
    let shown = path.to_str().unwrap();
    let run = |extra: &[&str], text: &str| {
        let mut args = vec!["match", "--schema", shown, "--text", text];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = sieve(&args);
        assert!(stderr.is_empty(), "{stderr}");
        (code, stdout)
    };
    assert_eq!(run(&[], r#"{"a":1,"b":"x"}"#), (0, "accepted\n".to_owned()));
    assert_eq!(
        run(&[], r#"{"a":"1","b":"x"}"#),
        (1, "rejected at byte 5\n".to_owned())
    );
    // Property order: the schema's by default, any with --order any.
    assert_eq!(run(&[], r#"{"b":"x","a":1}"#).0, 1);
    assert_eq!(run(&["--order", "any"], r#"{"b":"x","a":1}"#).0, 0);
    // Whitespace: none by default, some with --whitespace flexible.
    assert_eq!(run(&[], r#"{"a": 1,"b":"x"}"#).0, 1);
    assert_eq!(
        run(&["--whitespace", "flexible"], r#"{"a": 1, "b": "x"}"#).0,
        0
    );
    // Escapes: any spelling by default, one with --escapes canonical.
    assert_eq!(run(&[], r#"{"a":1,"b":"\u0078"}"#).0, 0);
    assert_eq!(
        run(&["--escapes", "canonical"], r#"{"a":1,"b":"\u0078"}"#).0,
        1
    );
}

#[test]
fn check_summarises_and_lenient_mode_warns() {
    // Unique items in an unbounded array of objects: not context-free, so never enforced.
    let path = schema_file(
        "unique.json",
        r#"{"type": "object",
            "properties": {"a": {"type": "array", "items": {"type": "object"}, "uniqueItems": true}}}"#,
    );
    let shown = path.to_str().unwrap();
    let (code, _, stderr) = sieve(&["check", "--schema", shown]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "{shown}: /properties/a/uniqueItems: uniqueItems: "
        )),
        "{stderr}"
    );
    let (code, stdout, stderr) = sieve(&["check", "--schema", shown, "--lenient"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with(&format!("{shown}: ok: ")), "{stdout}");
    assert!(
        stderr.starts_with(&format!(
            "{shown}: /properties/a/uniqueItems: uniqueItems: not enforced: "
        )),
        "{stderr}"
    );
    let (code, stdout, _) = sieve(&["ir", "--schema", shown, "--lenient", "--stage", "fsm"]);
    assert_eq!(code, 0);
    assert!(!stdout.is_empty());
}

/// The README's first command: documents generated under the shipped example schema end with
/// EOS and match the schema, in both escape policies.
#[test]
fn generated_documents_match_the_example_schema() {
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../grammars/json-schema/person.json");
    let schema = schema.to_str().unwrap();
    for (seed, escapes) in [("1", "canonical"), ("2", "canonical"), ("3", "any")] {
        let args = [
            "generate",
            "--schema",
            schema,
            "--escapes",
            escapes,
            "--seed",
            seed,
        ];
        let (code, stdout, stderr) = sieve(&args);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("stopped at EOS"), "{stderr}");
        let text = stdout.strip_suffix('\n').expect("a final newline");
        let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
        // `-0` is a valid integer 0; keys may be spelled with escapes under `any`.
        let age = value["age"].as_f64().expect("age is a number");
        assert!(
            value["name"].is_string() && (0.0..=120.0).contains(&age),
            "{text}"
        );
        let (code, verdict, _) = sieve(&["match", "--schema", schema, "--text", text]);
        assert_eq!((code, verdict.as_str()), (0, "accepted\n"), "{text}");
    }
}

/// Schemas built to be expensive go through every stage (normalisation and automata
/// included), where before each was refused past a limit: an `enum` of 10,000 strings (each
/// character a choice of spellings), 300 properties sharing one `format`, and 2,000 optional
/// properties of an object without other keys.
#[test]
fn large_schemas_compile_through_every_stage() {
    let values: Vec<String> = (0..10_000).map(|i| format!("\"value_{i:05}\"")).collect();
    let enum_of_strings = format!("{{\"enum\": [{}]}}", values.join(","));
    let members = |n: usize, schema: &str| {
        (0..n)
            .map(|i| format!("\"p{i}\": {schema}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let shared_format = format!(
        "{{\"properties\": {{{}}}}}",
        members(300, r#"{"type": "string", "format": "email"}"#)
    );
    let wide_closed = format!(
        "{{\"properties\": {{{}}}, \"additionalProperties\": false}}",
        members(2_000, r#"{"type": "string", "format": "date-time"}"#)
    );
    for (name, text) in [
        ("enum-of-strings.json", enum_of_strings),
        ("shared-format.json", shared_format),
        ("wide-closed.json", wide_closed),
    ] {
        let path = schema_file(name, &text);
        let (code, out, err) = sieve(&["check", "--schema", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains(": ok: "), "{name}: {out}");
    }
}
