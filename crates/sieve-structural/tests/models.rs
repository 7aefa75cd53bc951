//! Model tool-calling formats (`sieve_structural::models`) against XGrammar 0.2.8's
//! `get_model_structural_tag`: the same structural tag for every format × request in
//! `tests/fixtures/models.json` (made by `models_generate.py`), the same refusals, and the
//! same verdicts on the texts XGrammar judged (kimi_k3 and minimax_m3, whose argument styles
//! came last, in a test of their own).

use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::sync::Arc;

use sieve_matcher::{ByteMatcher, CompiledGrammar, Matcher, Options as CompileOptions, Tokenizer};
use sieve_structural::models::{self, Reasoning, ToolChoice};
use sieve_structural::{compile, model_structural_tag, ErrorKind, Options, ToolRequest};

#[derive(Deserialize)]
struct FixtureFile {
    tools: Map<String, Value>,
    fixtures: Vec<Fixture>,
}

#[derive(Deserialize)]
struct Fixture {
    name: String,
    format: String,
    request: Value,
    structural_tag: Option<Value>,
    #[serde(default)]
    error: bool,
    #[serde(default)]
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    xgrammar: bool,
}

fn fixtures() -> FixtureFile {
    serde_json::from_str(include_str!("fixtures/models.json")).expect("fixture file")
}

/// The fixture's request with its tool names replaced by their definitions.
fn request(file: &FixtureFile, fixture: &Fixture) -> Result<ToolRequest, sieve_structural::Error> {
    let mut request = fixture.request.clone();
    let names = request["tools"].as_array().expect("tool names").clone();
    request["tools"] = names
        .iter()
        .map(|n| file.tools[n.as_str().expect("a tool name")].clone())
        .collect();
    ToolRequest::from_json(&request)
}

/// Whether the whole of `text` is in the grammar's language.
fn accepts(grammar: &sieve_ir::Grammar, text: &str) -> bool {
    let mut matcher = ByteMatcher::new(grammar, &CompileOptions::default()).expect("compiles");
    for &b in text.as_bytes() {
        if !matcher.push_byte(b).expect("within limits") {
            return false;
        }
    }
    matcher.can_finish()
}

#[test]
fn every_xgrammar_format_is_known() {
    let file = fixtures();
    let mut formats: Vec<&str> = file.fixtures.iter().map(|f| f.format.as_str()).collect();
    formats.retain(|f| *f != "gpt_2");
    formats.sort_unstable();
    formats.dedup();
    let mut ours: Vec<&str> = models::format_names().collect();
    ours.sort_unstable();
    assert_eq!(ours, formats);
    assert_eq!(ours.len(), 18);
}

#[test]
fn structural_tags_equal_xgrammars() {
    let file = fixtures();
    let mut failures = Vec::new();
    let (mut built, mut refused) = (0, 0);
    for fixture in &file.fixtures {
        let result =
            request(&file, fixture).and_then(|r| model_structural_tag(&fixture.format, &r));
        match (result, &fixture.structural_tag) {
            (Ok(ours), Some(theirs)) => {
                built += 1;
                if &ours != theirs {
                    failures.push(format!(
                        "{}:\n  sieve    {ours}\n  xgrammar {theirs}",
                        fixture.name
                    ));
                }
            }
            (Err(e), None) => {
                assert!(fixture.error);
                assert_eq!(e.kind, ErrorKind::Invalid, "{}: {e}", fixture.name);
                refused += 1;
            }
            (Ok(_), None) => {
                failures.push(format!("{}: XGrammar refuses, sieve builds", fixture.name))
            }
            (Err(e), Some(_)) => failures.push(format!("{}: sieve refuses: {e}", fixture.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        built >= 180 && refused >= 90,
        "{built} built, {refused} refused"
    );
}

/// What [`verdicts`] found.
struct Verdicts {
    failures: Vec<String>,
    /// Tags compiled.
    compiled: usize,
    /// Tags sieve refused as unsupported (the XML styles of `json_schema`, `any_order`).
    unsupported: usize,
    /// Texts XGrammar accepts among those checked.
    accepted: usize,
}

/// Compiles the selected fixtures' tags and compares the verdicts on their texts.
fn verdicts(select: impl Fn(&Fixture) -> bool) -> Verdicts {
    let file = fixtures();
    let mut failures = Vec::new();
    let (mut compiled, mut unsupported, mut accepted) = (0, 0, 0);
    for fixture in file.fixtures.iter().filter(|f| select(f)) {
        let Some(tag) = &fixture.structural_tag else {
            continue;
        };
        if fixture.cases.is_empty() {
            continue;
        }
        let grammar = match compile(tag, &Options::default()) {
            Ok(g) => g,
            Err(e) if e.kind == ErrorKind::Unsupported => {
                unsupported += 1;
                continue;
            }
            Err(e) => {
                failures.push(format!("{}: {e}", fixture.name));
                continue;
            }
        };
        compiled += 1;
        for case in &fixture.cases {
            accepted += usize::from(case.xgrammar);
            let got = accepts(&grammar, &case.text);
            if got != case.xgrammar {
                failures.push(format!(
                    "{}: {:?}: sieve {got}, XGrammar {}",
                    fixture.name, case.text, case.xgrammar
                ));
            }
        }
    }
    Verdicts {
        failures,
        compiled,
        unsupported,
        accepted,
    }
}

/// The formats whose argument styles (`kimi_k3_xml`, `minimax_m3_xml`) are checked apart.
const WAITING: [&str; 2] = ["kimi_k3", "minimax_m3"];

#[test]
fn texts_get_xgrammars_verdicts() {
    let v = verdicts(|f| !WAITING.contains(&f.format.as_str()));
    assert!(v.failures.is_empty(), "{}", v.failures.join("\n"));
    assert_eq!(v.unsupported, 0, "tags sieve does not compile");
    // 162 tags of 16 formats; 474 of their texts accepted by XGrammar, the rest rejected.
    assert!(v.compiled >= 150, "only {} tags compiled", v.compiled);
    assert!(v.accepted >= 400, "only {} accepted texts", v.accepted);
}

#[test]
fn texts_get_xgrammars_verdicts_on_kimi_k3_and_minimax_m3() {
    let v = verdicts(|f| WAITING.contains(&f.format.as_str()));
    assert!(v.failures.is_empty(), "{}", v.failures.join("\n"));
    assert_eq!(v.unsupported, 0, "tags sieve does not compile yet");
    assert!(v.compiled >= 15 && v.accepted >= 30);
}

#[test]
fn unknown_formats_list_the_known_ones() {
    let e = model_structural_tag("gpt_2", &ToolRequest::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid);
    assert!(e.message.contains("\"gpt_2\""), "{e}");
    for name in models::format_names() {
        assert!(e.message.contains(name), "{name} missing from {e}");
    }
}

#[test]
fn requests_are_read_with_located_errors() {
    let weather =
        json!({"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}});
    let cases = [
        (json!({"tools": {}}), "/tools"),
        (json!({"tools": [weather, 3]}), "/tools/1"),
        (
            json!({"tools": [{"type": "function", "function": {"name": "w", "parameter": {}}}]}),
            "/tools/0/function/parameter",
        ),
        (
            json!({"tools": [{"type": "function", "function": {"name": "w", "parameters": "x"}}]}),
            "/tools/0/function/parameters",
        ),
        (json!({"tools": [{"type": "function"}]}), "/tools/0"),
        (json!({"tool_choice": "sometimes"}), "/tool_choice"),
        (
            json!({"tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "all", "tools": []}}}),
            "/tool_choice/allowed_tools/mode",
        ),
        (
            json!({"tool_choice": {"type": "function", "function": {"name": 3}}}),
            "/tool_choice/function/name",
        ),
        (json!({"reasoning": "sometimes"}), "/reasoning"),
        (
            json!({"parallel_tool_calls": "yes"}),
            "/parallel_tool_calls",
        ),
        (json!({"max_whitespace_cnt": 0}), "/max_whitespace_cnt"),
        (json!({"parallel": false}), "/parallel"),
        (json!([]), ""),
    ];
    for (value, pointer) in cases {
        let e = ToolRequest::from_json(&value).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Invalid, "{value}");
        assert_eq!(e.pointer, pointer, "{value}: {e}");
    }
    let e = ToolRequest::from_json_str("{\"tools\": [").unwrap_err();
    assert!(e.message.contains("line 1"), "{e}");
}

#[test]
fn requests_read_every_field() {
    let r = ToolRequest::from_json(&json!({
        "tools": [
            {"type": "function", "function": {"name": "f", "description": "d", "strict": false}},
            {"type": "web_search_preview", "name": "browser.search"},
        ],
        "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
            {"type": "function", "function": {"name": "f"}},
            {"type": "web_search_preview"},
        ]}},
        "parallel_tool_calls": false,
        "reasoning": false,
        "any_order": true,
        "exclude_special_tokens": false,
        "max_whitespace_cnt": 4,
    }))
    .unwrap();
    assert_eq!(r.tools.len(), 2);
    assert_eq!(
        r.tool_choice,
        ToolChoice::Allowed {
            required: true,
            functions: vec!["f".into()],
            builtins: vec!["web_search_preview".into()],
        }
    );
    assert!(!r.parallel_tool_calls && r.any_order && !r.exclude_special_tokens);
    assert_eq!(r.reasoning, Reasoning::Disabled);
    assert_eq!(r.max_whitespace_cnt, Some(4));
    assert_eq!(
        ToolRequest::from_json(&json!({})).unwrap(),
        ToolRequest::default()
    );
}

#[test]
fn choices_that_cannot_be_met_are_errors_at_tool_choice() {
    let f = json!({"type": "function", "function": {"name": "f"}});
    let search = json!({"type": "web_search_preview"});
    let cases = [
        json!({"tools": [f], "tool_choice": {"type": "function", "function": {"name": "g"}}}),
        json!({"tools": [f], "tool_choice": "required"})
            .as_object()
            .map(|o| {
                let mut o = o.clone();
                o.insert("tools".into(), json!([]));
                Value::Object(o)
            })
            .unwrap(),
        json!({"tools": [f, f], "tool_choice": {"type": "function", "function": {"name": "f"}}}),
        json!({"tools": [search, search], "tool_choice": {"type": "web_search_preview"}}),
    ];
    for value in cases {
        let r = ToolRequest::from_json(&value).unwrap();
        let e = model_structural_tag("qwen_3", &r).unwrap_err();
        assert_eq!(e.pointer, "/tool_choice", "{value}: {e}");
    }
    // A forced builtin tool in a format without builtin calls.
    let r = ToolRequest::from_json(
        &json!({"tools": [search], "tool_choice": {"type": "web_search_preview"}}),
    )
    .unwrap();
    assert!(model_structural_tag("llama", &r).is_err());
    assert!(model_structural_tag("harmony", &r).is_ok());
    // Formats without builtin tools refuse them at /tools.
    let r = ToolRequest::from_json(&json!({"tools": [f, search]})).unwrap();
    for format in ["mimo", "minimax_m3"] {
        assert_eq!(
            model_structural_tag(format, &r).unwrap_err().pointer,
            "/tools"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Token masks of compiled model formats against the brute-force oracle.

fn mask_of(matcher: &mut Matcher) -> Vec<u32> {
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    matcher.fill_next_token_bitmask(&mut mask).expect("mask");
    mask
}

/// Every token tried on its own.
fn oracle_mask(matcher: &mut Matcher) -> Vec<u32> {
    let compiled = matcher.compiled().clone();
    let mut mask = vec![0u32; compiled.bitmask_words()];
    for id in 0..compiled.vocabulary().n_vocab() as u32 {
        if matcher.validate_tokens(&[id]).expect("no limit") == 1 {
            mask[id as usize / 32] |= 1 << (id % 32);
        }
    }
    mask
}

#[test]
fn masks_equal_brute_force_along_accepted_tool_calls() {
    let file = fixtures();
    let picked = [
        "harmony/auto_single_no_reasoning",
        "kimi/required_reasoning_auto",
        "deepseek_r1/required_single",
        "glm_4_7/auto",
        "qwen_3_5/named",
        "minimax/auto_single_no_reasoning",
    ];
    let mut steps = 0;
    for name in picked {
        let fixture = file.fixtures.iter().find(|f| f.name == name).expect(name);
        let texts: Vec<&str> = fixture
            .cases
            .iter()
            .filter(|c| c.xgrammar)
            .map(|c| c.text.as_str())
            .collect();
        assert!(!texts.is_empty(), "{name}: no accepted text");
        let tag = fixture.structural_tag.as_ref().expect(name);
        let grammar = compile(tag, &Options::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let samples: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
        let vocab = Arc::new(sieve_testkit::substring_vocabulary(&samples, 6, None));
        let tokenizer = Arc::new(Tokenizer::new(vocab));
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer, &CompileOptions::default())
                .expect("compiles"),
        );
        for text in texts {
            let tokens = sieve_testkit::greedy_tokenize(compiled.vocabulary(), text.as_bytes());
            steps += tokens.len() + 1;
            let mut matcher = Matcher::new(compiled.clone());
            for (step, &token) in tokens.iter().enumerate() {
                let mask = mask_of(&mut matcher);
                assert!(
                    mask == oracle_mask(&mut matcher),
                    "{name}: {text:?}: step {step}"
                );
                assert!(
                    mask[token as usize / 32] & (1 << (token % 32)) != 0,
                    "{name}: {text:?}: step {step}: token refused"
                );
                matcher.accept_token(token).expect("allowed");
            }
            let mask = mask_of(&mut matcher);
            assert!(
                mask == oracle_mask(&mut matcher),
                "{name}: {text:?}: last step"
            );
            assert!(matcher.can_terminate(), "{name}: {text:?}");
        }
    }
    // 453 steps over 6 formats.
    assert!(steps >= 400, "only {steps} steps");
}
