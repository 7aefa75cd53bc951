//! `--tools FILE --tool-format NAME` (with `--tool-choice`, `--parallel-tool-calls`,
//! `--reasoning`) on `check`, `ir`, `match` and `generate`.

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

/// A fresh folder holding `file` with `content`; returns the file's path.
fn write(dir: &str, file: &str, content: &Value) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(file);
    std::fs::write(&path, content.to_string()).unwrap();
    path
}

fn weather_tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": false,
        }}},
        {"type": "function", "function": {"name": "get_time", "parameters": {
            "type": "object", "properties": {}, "additionalProperties": false,
        }}},
    ])
}

const WEATHER: &str =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
const TIME: &str = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";

/// `sieve match --tools FILE --tool-format qwen_3 EXTRA… --text TEXT`'s exit code.
fn qwen(file: &Path, extra: &[&str], text: &str) -> i32 {
    let mut args = vec![
        "match",
        "--tools",
        file.to_str().unwrap(),
        "--tool-format",
        "qwen_3",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--text", text]);
    let (code, out, err) = sieve(&args);
    assert!(code == 0 || code == 1, "{out}{err}");
    code
}

#[test]
fn check_ir_and_match_take_tools() {
    let file = write("tools_array", "tools.json", &weather_tools());
    let f = file.to_str().unwrap();
    let (code, out, err) = sieve(&["check", "--tools", f, "--tool-format", "qwen_3"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ok"), "{out}");
    let (code, out, _) = sieve(&[
        "ir",
        "--tools",
        f,
        "--tool-format",
        "llama",
        "--stage",
        "parsed",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("get_weather"), "{out}");

    let off = ["--reasoning", "off"];
    assert_eq!(
        qwen(&file, &off, &format!("Checking.{WEATHER} and {TIME}")),
        0
    );
    assert_eq!(qwen(&file, &off, "Just text."), 0);
    let unknown = WEATHER.replace("get_weather", "get_wether");
    assert_eq!(qwen(&file, &off, &unknown), 1);
    assert_eq!(
        qwen(
            &file,
            &off,
            &WEATHER.replace("Paris\"", "Paris\", \"x\": 1")
        ),
        1
    );
}

#[test]
fn tool_choice_parallel_calls_and_reasoning_flags() {
    let file = write("tools_flags", "tools.json", &weather_tools());
    let two = format!("{WEATHER}{TIME}");
    let off = ["--reasoning", "off"];
    // required: a call is needed; parallel calls off: one only.
    let required = ["--reasoning", "off", "--tool-choice", "required"];
    assert_eq!(qwen(&file, &required, "Just text."), 1);
    assert_eq!(qwen(&file, &required, &two), 0);
    let single = [
        "--reasoning",
        "off",
        "--tool-choice",
        "required",
        "--parallel-tool-calls",
        "false",
    ];
    assert_eq!(qwen(&file, &single, WEATHER), 0);
    assert_eq!(qwen(&file, &single, &two), 1);
    // none: text only, in which a call's spelling is plain text.
    let none = ["--reasoning", "off", "--tool-choice", "none"];
    assert_eq!(qwen(&file, &none, "Just text."), 0);
    assert_eq!(
        qwen(
            &file,
            &none,
            &WEATHER.replace("Paris\"", "Paris\", \"x\": 1")
        ),
        0
    );
    // A named tool: exactly that call.
    let named = ["--reasoning", "off", "--tool-choice", "get_time"];
    assert_eq!(qwen(&file, &named, TIME), 0);
    assert_eq!(qwen(&file, &named, WEATHER), 1);
    assert_eq!(qwen(&file, &off, &format!("</think>{WEATHER}")), 1);
    // Reasoning on: the prompt opened <think>, the output closes it.
    let on = ["--reasoning", "on"];
    assert_eq!(qwen(&file, &on, &format!("Hmm.</think>\n\n{WEATHER}")), 0);
    assert_eq!(qwen(&file, &on, WEATHER), 1);
    // Auto: a whole block or none.
    let auto = ["--reasoning", "auto"];
    assert_eq!(
        qwen(&file, &auto, &format!("<think>Hmm.</think>\n\n{WEATHER}")),
        0
    );
    assert_eq!(qwen(&file, &auto, WEATHER), 0);
}

#[test]
fn a_request_file_and_flags_over_it() {
    let request = json!({
        "tools": weather_tools(),
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "reasoning": "disabled",
    });
    let file = write("tools_request", "request.json", &request);
    assert_eq!(qwen(&file, &[], WEATHER), 0);
    assert_eq!(qwen(&file, &[], TIME), 1);
    // The flags win over the file.
    assert_eq!(qwen(&file, &["--tool-choice", "auto"], "Just text."), 0);
    assert_eq!(qwen(&file, &["--reasoning", "on"], WEATHER), 1);
}

#[test]
fn generate_follows_a_forced_call() {
    let file = write("tools_generate", "tools.json", &weather_tools());
    let (code, out, err) = sieve(&[
        "generate",
        "--tools",
        file.to_str().unwrap(),
        "--tool-format",
        "llama",
        "--tool-choice",
        "get_time",
        "--max-tokens",
        "64",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("{\"name\": \"get_time\", \"parameters\": "),
        "{out}"
    );
}

#[test]
fn errors_are_located_and_formats_listed() {
    let file = write("tools_errors", "tools.json", &weather_tools());
    let f = file.to_str().unwrap();
    let (code, _, err) = sieve(&["check", "--tools", f, "--tool-format", "gpt_2"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown tool format \"gpt_2\""), "{err}");
    assert!(
        err.contains("harmony") && err.contains("deepseek_v4_1"),
        "{err}"
    );

    let (code, _, err) = sieve(&[
        "check",
        "--tools",
        f,
        "--tool-format",
        "qwen_3",
        "--tool-choice",
        "nope",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("/tool_choice") && err.contains("\"nope\""),
        "{err}"
    );

    let bad = write(
        "tools_errors_field",
        "tools.json",
        &json!([{"type": "function", "function": {"name": "f", "parameter": {}}}]),
    );
    let (code, _, err) = sieve(&[
        "check",
        "--tools",
        bad.to_str().unwrap(),
        "--tool-format",
        "llama",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("/0/function/parameter: unknown field"),
        "{err}"
    );

    // The tool flags need --tools, and go with no other constraint.
    let (code, _, _) = sieve(&[
        "match",
        "--regex",
        "a",
        "--tool-choice",
        "auto",
        "--text",
        "a",
    ]);
    assert_eq!(code, 2);
    let (code, _, _) = sieve(&["check", "--tools", f]);
    assert_eq!(code, 2);
    let (code, _, _) = sieve(&["check", "--tool-format", "llama", f]);
    assert_eq!(code, 2);
}
