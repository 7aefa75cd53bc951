//! sieve-structural's suite: XGrammar's verdicts on the checked-in differential fixtures
//! (texts, and token sequences for the token formats), located errors, and token masks of
//! compiled structural tags against the brute-force oracle at every step of walks.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};
use sieve_ir::token::SharedNames;
use sieve_ir::Grammar;
use sieve_matcher::{
    BackendKind, ByteMatcher, CompiledGrammar, Matcher, Options as CompileOptions, Tokenizer,
};
use sieve_structural::{compile, ErrorKind, Options};
use sieve_vocab::Vocabulary;

// ---------------------------------------------------------------------------------------------
// Differential fixtures (tests/fixtures/generate.py, judged by XGrammar 0.2.8).

#[derive(Deserialize)]
struct FixtureFile {
    fixtures: Vec<Fixture>,
}

#[derive(Deserialize)]
struct Fixture {
    name: String,
    structural_tag: Value,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: Option<String>,
    hex: Option<String>,
    xgrammar: bool,
    /// sieve's verdict where it differs on purpose (documented under `why`).
    sieve: Option<bool>,
    why: Option<String>,
}

impl Case {
    fn bytes(&self) -> Vec<u8> {
        match (&self.text, &self.hex) {
            (Some(text), _) => text.as_bytes().to_vec(),
            (None, Some(hex)) => (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect(),
            (None, None) => panic!("a case needs text or hex"),
        }
    }
}

/// Whether the whole of `text` is in the grammar's language, by the real pipeline.
fn accepts(grammar: &Grammar, text: &[u8]) -> bool {
    let mut matcher = ByteMatcher::new(grammar, &CompileOptions::default()).expect("compiles");
    for &b in text {
        if !matcher.push_byte(b).expect("within limits") {
            return false;
        }
    }
    matcher.can_finish()
}

/// Checks every case of a fixture file (XGrammar's verdict, or sieve's documented one);
/// returns the number of structural tags and of texts.
fn check_fixtures(text: &str) -> (usize, usize) {
    let file: FixtureFile = serde_json::from_str(text).expect("fixture file");
    let docs = include_str!("../../../docs/structural-tags.md");
    let mut failures = Vec::new();
    let (mut differences, mut texts) = (0, 0);
    for fixture in &file.fixtures {
        let grammar = compile(&fixture.structural_tag, &Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}", fixture.name));
        for case in &fixture.cases {
            texts += 1;
            let expected = match (case.sieve, &case.why) {
                (Some(sieve), Some(why)) => {
                    differences += 1;
                    assert!(
                        docs.contains(&format!("## {why}")),
                        "{}: the difference {why:?} is not a heading of docs/structural-tags.md",
                        fixture.name
                    );
                    sieve
                }
                _ => case.xgrammar,
            };
            let bytes = case.bytes();
            let got = accepts(&grammar, &bytes);
            if got != expected {
                failures.push(format!(
                    "{}: {:?}: sieve {got}, expected {expected} (XGrammar {})",
                    fixture.name,
                    String::from_utf8_lossy(&bytes),
                    case.xgrammar
                ));
            }
        }
    }
    assert!(differences > 0, "the documented differences are exercised");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    (file.fixtures.len(), texts)
}

#[test]
fn xgrammar_fixtures() {
    let (tags, _) = check_fixtures(include_str!("fixtures/structural_tags.json"));
    assert!(tags >= 20);
}

#[test]
fn xgrammar_xml_style_fixtures() {
    let (tags, texts) = check_fixtures(include_str!("fixtures/xml_styles.json"));
    assert!(tags >= 15 && texts >= 150, "{tags} tags, {texts} texts");
}

// ---------------------------------------------------------------------------------------------
// Errors: located, and the formats sieve cannot compile yet refused.

fn error_of(format: Value) -> sieve_structural::Error {
    compile(
        &json!({"type": "structural_tag", "format": format}),
        &Options::default(),
    )
    .expect_err("refused")
}

/// The fixtures' vocabulary (`fixtures/tokens_vocab.txt`, written by
/// `fixtures/generate_tokens.py`): text tokens, then `<|endoftext|>` (the EOS),
/// `<|im_start|>` and `<|im_end|>` as specials.
fn token_vocab(eos: u32) -> Arc<Vocabulary> {
    let list = include_str!("fixtures/tokens_vocab.txt");
    let options = sieve_vocab::plain::Options::new().eos([eos]);
    Arc::new(sieve_vocab::plain::parse(list.as_bytes(), &options).expect("vocabulary"))
}

/// Options whose token formats resolve against `vocab`.
fn token_options(vocab: &Arc<Vocabulary>) -> Options {
    Options {
        tokens: Some(SharedNames(vocab.clone())),
        ..Options::default()
    }
}

#[derive(Deserialize)]
struct TokenFixtureFile {
    eos: u32,
    fixtures: Vec<TokenFixture>,
}

#[derive(Deserialize)]
struct TokenFixture {
    name: String,
    structural_tag: Value,
    cases: Vec<TokenCase>,
}

#[derive(Deserialize)]
struct TokenCase {
    tokens: Vec<u32>,
    show: String,
    xgrammar: bool,
    sieve: Option<bool>,
    why: Option<String>,
}

/// XGrammar's verdicts on token sequences (`fixtures/tokens.json`), token by token through
/// the matcher on every backend that compiles the tag (Earley must), with the mask equal to
/// the brute-force oracle at every step of every sequence (up to the first refused token)
/// and at the end.
#[test]
fn xgrammar_token_fixtures() {
    let file: TokenFixtureFile =
        serde_json::from_str(include_str!("fixtures/tokens.json")).expect("fixture file");
    let docs = include_str!("../../../docs/structural-tags.md");
    let vocab = token_vocab(file.eos);
    let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
    let options = token_options(&vocab);
    let mut failures = Vec::new();
    let (mut texts, mut differences, mut steps) = (0, 0, 0);
    let mut backends_run = 0;
    for fixture in &file.fixtures {
        let grammar = compile(&fixture.structural_tag, &options)
            .unwrap_or_else(|e| panic!("{}: {e}", fixture.name));
        for backend in BackendKind::ALL {
            let compile_options = CompileOptions {
                backend: backend.into(),
                ..CompileOptions::default()
            };
            let compiled = match CompiledGrammar::new(&grammar, tokenizer.clone(), &compile_options)
            {
                Ok(compiled) => Arc::new(compiled),
                Err(e) => {
                    assert_ne!(backend, BackendKind::Earley, "{}: {e}", fixture.name);
                    continue;
                }
            };
            backends_run += 1;
            let name = format!("{}/{backend}", fixture.name);
            for case in &fixture.cases {
                texts += 1;
                let expected = match (case.sieve, &case.why) {
                    (Some(sieve), Some(why)) => {
                        differences += 1;
                        assert!(
                            docs.contains(&format!("## {why}")),
                            "{name}: the difference {why:?} is not a heading of docs/structural-tags.md"
                        );
                        sieve
                    }
                    _ => case.xgrammar,
                };
                let mut matcher = Matcher::new(compiled.clone());
                let mut got = true;
                for &token in &case.tokens {
                    let mask = mask_of(&mut matcher);
                    assert!(
                        mask == oracle_mask(&mut matcher),
                        "{name}: {:?}: step {}",
                        case.show,
                        matcher.steps()
                    );
                    steps += 1;
                    if mask[token as usize / 32] & (1 << (token % 32)) == 0 {
                        got = false;
                        break;
                    }
                    matcher.accept_token(token).expect("allowed by the mask");
                }
                if got {
                    let mask = mask_of(&mut matcher);
                    assert!(
                        mask == oracle_mask(&mut matcher),
                        "{name}: {:?}: end",
                        case.show
                    );
                    got = matcher.can_terminate();
                }
                if got != expected {
                    failures.push(format!(
                        "{name}: {:?}: sieve {got}, expected {expected} (XGrammar {})",
                        case.show, case.xgrammar
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(differences >= 3, "the documented differences are exercised");
    assert!(
        file.fixtures.len() >= 20 && texts >= 90 && steps >= 300,
        "{} tags, {texts} sequences, {steps} steps",
        file.fixtures.len()
    );
    // Earley for every tag, and the LR or token-DFA backend for some.
    assert!(
        backends_run > file.fixtures.len(),
        "{backends_run} backends run"
    );
}

/// A schema's shared rules (the tails of keys other than the declared ones) stay shared
/// inside a structural tag, and the embedded language is the schema's.
#[test]
fn embedded_schemas_keep_their_shared_rules() {
    let format = json!({"type": "structural_tag", "format": {"type": "json_schema", "json_schema": {
        "type": "object",
        "properties": {"ab": {"type": "integer"}},
        "additionalProperties": {"type": "integer"}
    }}});
    let grammar = compile(&format, &Options::default()).expect("compiles");
    assert!(grammar.shared_rules().count() > 0, "{grammar}");
    for (text, verdict) in [
        (r#"{"ab": 1}"#, true),
        (r#"{"ab": 1, "abc": 2}"#, true),
        (r#"{"a": 1, "b": 2}"#, true),
        (r#"{"ab": 1, "ab": 2}"#, false),
        (r#"{"abc": "x"}"#, false),
    ] {
        assert_eq!(accepts(&grammar, text.as_bytes()), verdict, "{text}");
    }
}

/// Tags that all close with the same end have it written once after the choice of their
/// begins and contents; tags with different ends keep their own. Either way the language is
/// the tags' (an end of one tag never closes another's content).
#[test]
fn triggered_tags_share_a_common_end() {
    let tags = |third_end: &str| {
        json!({"type": "structural_tag", "format": {"type": "triggered_tags",
        "triggers": ["<call"],
        "tags": [
            {"type": "tag", "begin": "<call a>", "content": {"type": "const_string", "value": "1"}, "end": "</call>"},
            {"type": "tag", "begin": "<call b>", "content": {"type": "const_string", "value": "2"}, "end": "</call>"},
            {"type": "tag", "begin": "<call c>", "content": {"type": "const_string", "value": "3"}, "end": third_end},
        ]}})
    };
    let occurrences = |grammar: &Grammar, needle: &str| grammar.to_string().matches(needle).count();
    let shared = compile(&tags("</call>"), &Options::default()).expect("compiles");
    let apart = compile(&tags("</end>"), &Options::default()).expect("compiles");
    assert_eq!(occurrences(&shared, r#""</call>""#), 1, "{shared}");
    assert_eq!(occurrences(&apart, r#""</call>""#), 2, "{apart}");
    assert_eq!(occurrences(&apart, r#""</end>""#), 1, "{apart}");
    for (text, shared_verdict, apart_verdict) in [
        ("x<call a>1</call>", true, true),
        ("x<call b>2</call>y<call c>3</call>", true, false),
        ("x<call b>2</call>y<call c>3</end>", false, true),
        ("x<call c>3</call>", true, false),
        ("x<call c>3</end>", false, true),
        ("<call a>2</call>", false, false),
        ("<call a>1</end>", false, false),
    ] {
        assert_eq!(accepts(&shared, text.as_bytes()), shared_verdict, "{text}");
        assert_eq!(accepts(&apart, text.as_bytes()), apart_verdict, "{text}");
    }
}

/// Tags whose begins end alike (`"name": "NAME", "arguments": `) refer to that ending as one
/// shared rule, with each begin's start before it; begins without a long enough common
/// ending keep their whole strings. The language is the tags' either way, `at_least_one`'s
/// first call included.
#[test]
fn triggered_tags_share_a_common_begin_ending() {
    let tags = |second: &str, at_least_one: bool| {
        json!({"type": "structural_tag", "format": {"type": "triggered_tags",
        "triggers": ["<call"], "at_least_one": at_least_one,
        "tags": [
            {"type": "tag", "begin": "<call>{\"name\": \"add\", \"args\": ", "content": {"type": "const_string", "value": "1"}, "end": "}"},
            {"type": "tag", "begin": second, "content": {"type": "const_string", "value": "2"}, "end": "}"},
        ]}})
    };
    let shared_rule = |grammar: &Grammar| {
        grammar
            .shared_rules()
            .map(|id| grammar.rule(id).body().clone())
            .collect::<Vec<_>>()
    };
    for at_least_one in [false, true] {
        let alike = compile(
            &tags("<call>{\"name\": \"sub\", \"args\": ", at_least_one),
            &Options::default(),
        )
        .expect("compiles");
        assert_eq!(
            shared_rule(&alike),
            [sieve_ir::Expr::bytes(*br#"", "args": "#)],
            "{alike}"
        );
        let unlike = compile(
            &tags("<call>{\"name\": \"sub\"}, ", at_least_one),
            &Options::default(),
        )
        .expect("compiles");
        assert!(shared_rule(&unlike).is_empty(), "{unlike}");
        for (text, verdict) in [
            ("<call>{\"name\": \"add\", \"args\": 1}", true),
            ("x<call>{\"name\": \"sub\", \"args\": 2}y", !at_least_one),
            ("<call>{\"name\": \"sub\", \"args\": 2}y", true),
            ("<call>{\"name\": \"add\", \"args\": 2}", false),
            ("<call>{\"name\": \"sub\", \"args\": 1}", false),
            ("<call>{\"name\": \"add\", \"args\" 1}", false),
            ("no call", !at_least_one),
        ] {
            assert_eq!(
                accepts(&alike, text.as_bytes()),
                verdict,
                "{text} ({at_least_one})"
            );
        }
        assert!(accepts(&unlike, b"<call>{\"name\": \"sub\"}, 2}"));
        assert!(!accepts(&unlike, b"<call>{\"name\": \"sub\", \"args\": 2}"));
    }
}

/// A nested `grammar` format gets the vocabulary too, so its token terminals resolve.
#[test]
fn nested_grammars_resolve_token_names() {
    let vocab = token_vocab(107);
    let format = json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "grammar", "grammar": "root ::= \"a\" <|im_end|>"},
        {"type": "token", "token": "<think>"}
    ]}});
    let grammar = compile(&format, &token_options(&vocab)).expect("compiles");
    let compiled = Arc::new(
        CompiledGrammar::new(
            &grammar,
            Arc::new(Tokenizer::new(vocab.clone())),
            &CompileOptions::default(),
        )
        .expect("compiles"),
    );
    let id = |name: &str| {
        use sieve_ir::token::TokenNames;
        vocab
            .special_id(name)
            .or_else(|| vocab.text_id(name.as_bytes()))
            .expect("a token")
    };
    let mut matcher = Matcher::new(compiled);
    for token in [id("a"), id("<|im_end|>"), id("<think>")] {
        matcher.accept_token(token).expect("accepted");
    }
    assert!(matcher.can_terminate());
    let e = compile(&format, &Options::default()).unwrap_err();
    assert_eq!(
        (e.kind, e.pointer.as_str()),
        (ErrorKind::Embedded, "/format/elements/0/grammar"),
        "{e}"
    );
}

#[test]
fn token_errors_are_located() {
    let vocab = token_vocab(107);
    let with = token_options(&vocab);
    let without = Options::default();
    let a = json!({"type": "const_string", "value": "a"});
    let tag =
        |begin: Value, end: Value| json!({"type": "tag", "begin": begin, "content": a, "end": end});
    let token = |t: Value| json!({"type": "token", "token": t});
    let cases: Vec<(Value, &Options, ErrorKind, &str)> = vec![
        (
            token(json!("<|nope|>")),
            &with,
            ErrorKind::Invalid,
            "/format/token",
        ),
        (
            token(json!(5000)),
            &with,
            ErrorKind::Invalid,
            "/format/token",
        ),
        (token(json!(-1)), &with, ErrorKind::Invalid, "/format/token"),
        (token(json!("")), &with, ErrorKind::Invalid, "/format/token"),
        (
            token(json!(1.5)),
            &with,
            ErrorKind::Invalid,
            "/format/token",
        ),
        (
            token(json!("<|im_end|>")),
            &without,
            ErrorKind::Unsupported,
            "/format/token",
        ),
        (
            json!({"type": "exclude_token", "exclude_tokens": [1]}),
            &without,
            ErrorKind::Unsupported,
            "/format",
        ),
        (
            json!({"type": "any_tokens", "exclude_tokens": ["a", "<|nope|>"]}),
            &with,
            ErrorKind::Invalid,
            "/format/exclude_tokens/1",
        ),
        (
            json!({"type": "any_tokens", "max_tokens": 1_000_000}),
            &with,
            ErrorKind::Limit,
            "/format/max_tokens",
        ),
        (
            json!({"type": "exclude_token", "exclude_tokens": "a"}),
            &with,
            ErrorKind::Invalid,
            "/format/exclude_tokens",
        ),
        (
            tag(token(json!("<|nope|>")), json!("x")),
            &with,
            ErrorKind::Invalid,
            "/format/begin/token",
        ),
        (
            tag(json!("x"), json!({"type": "token", "token": 3, "extra": 1})),
            &with,
            ErrorKind::Invalid,
            "/format/end/extra",
        ),
        (
            tag(json!("x"), json!({"type": "const_string", "value": "x"})),
            &with,
            ErrorKind::Invalid,
            "/format/end/type",
        ),
        (
            json!({"type": "token_triggered_tags", "trigger_tokens": ["<think>"], "tags": [tag(json!("<think>"), json!("x"))]}),
            &with,
            ErrorKind::Invalid,
            "/format/tags/0/begin",
        ),
        (
            json!({"type": "token_triggered_tags", "trigger_tokens": ["<think>"], "tags": [tag(token(json!("<tool_call>")), json!("x"))]}),
            &with,
            ErrorKind::Invalid,
            "/format/tags/0/begin",
        ),
        (
            json!({"type": "token_triggered_tags", "trigger_tokens": ["<think>", "<think>"], "tags": [tag(token(json!("<think>")), json!("x"))]}),
            &with,
            ErrorKind::Invalid,
            "/format/tags/0/begin",
        ),
        (
            json!({"type": "token_triggered_tags", "trigger_tokens": [], "tags": []}),
            &with,
            ErrorKind::Invalid,
            "/format/trigger_tokens",
        ),
        (
            json!({"type": "token_triggered_tags", "trigger_tokens": [3], "tags": []}),
            &with,
            ErrorKind::Invalid,
            "/format/tags",
        ),
        (
            json!({"type": "triggered_tags", "triggers": ["<"], "tags": [tag(token(json!("<think>")), json!("x"))]}),
            &with,
            ErrorKind::Invalid,
            "/format/tags/0/begin",
        ),
        (
            json!({"type": "token_dispatch", "rules": [[3, a], ["#", a]]}),
            &with,
            ErrorKind::Invalid,
            "/format/rules/1/0",
        ),
        (
            json!({"type": "token_dispatch", "rules": [[3, a], [[3], a]]}),
            &with,
            ErrorKind::Invalid,
            "/format/rules/1/0",
        ),
        (
            json!({"type": "token_dispatch", "rules": []}),
            &with,
            ErrorKind::Invalid,
            "/format/rules",
        ),
    ];
    for (format, options, kind, pointer) in cases {
        let e = compile(
            &json!({"type": "structural_tag", "format": format}),
            options,
        )
        .expect_err("refused");
        assert_eq!(
            (e.kind, e.pointer.as_str()),
            (kind, pointer),
            "{format}: {e}"
        );
    }
    // Every token excluded leaves `exclude_token` nothing to match.
    let all: Vec<u32> = (0..110).collect();
    let e = compile(
        &json!({"type": "structural_tag", "format": {"type": "exclude_token", "exclude_tokens": all}}),
        &with,
    )
    .expect_err("refused");
    assert_eq!(
        (e.kind, e.pointer.as_str()),
        (ErrorKind::Invalid, "/format/exclude_tokens"),
        "{e}"
    );
    // Ids alone need no tokenizer.
    compile(
        &json!({"type": "structural_tag", "format": tag(token(json!(3)), json!({"type": "token", "token": 4}))}),
        &without,
    )
    .expect("ids compile without a tokenizer");
}

/// `any_text`'s `max_tokens` is a rule with that token limit (enforced by the matcher,
/// `sieve-matcher/tests/token_limits.rs`); `0` is the empty text, as in XGrammar.
#[test]
fn any_text_max_tokens_is_a_token_limit() {
    let tag = |max_tokens: Value| {
        compile(
            &json!({"type": "structural_tag", "format": {"type": "tag", "begin": "<a>",
                "content": {"type": "any_text", "max_tokens": max_tokens}, "end": "</a>"}}),
            &Options::default(),
        )
        .expect("compiles")
    };
    let limited = tag(json!(5));
    let limits: Vec<u32> = limited.token_limits().map(|(_, k)| k).collect();
    assert_eq!(limits, [5]);
    let text = sieve_ir::reference::Recognizer::new(&limited).expect("small");
    assert!(text.accepts(b"<a>any text</a>") && !text.accepts(b"<a>x</a>y</a>"));
    let empty = tag(json!(0));
    assert_eq!(empty.token_limits().count(), 0);
    let empty = sieve_ir::reference::Recognizer::new(&empty).expect("small");
    assert!(empty.accepts(b"<a></a>") && !empty.accepts(b"<a>x</a>"));
    assert_eq!(tag(Value::Null).token_limits().count(), 0);
}

#[test]
fn unsupported_options_are_located() {
    let schema = json!({"type": "object"});
    for (format, pointer) in [
        (
            json!({"type": "json_schema", "style": "kimi_k3_xml", "excludes": ["<|open|>"], "json_schema":
                {"type": "object", "properties": {"p": {"type": "string", "maxLength": 3}}}}),
            "/format/json_schema/properties/p",
        ),
        (
            json!({"type": "json_schema", "style": "kimi_k3_xml", "excludes": ["<|open|>"], "json_schema":
                {"type": "object", "properties": {"p": {"type": "array", "items": {"type": "integer"}}}}}),
            "/format/json_schema/properties/p",
        ),
        (
            json!({"type": "json_schema", "json_schema": schema, "style": "kimi_k3_xml", "excludes": ["<|open|>"]}),
            "/format/json_schema",
        ),
        (
            json!({"type": "json_schema", "any_order": true, "json_schema":
                {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {}}}}}}),
            "/format/json_schema/properties/a",
        ),
        (
            json!({"type": "json_schema", "any_order": true, "style": "qwen_xml", "json_schema":
                {"type": "object", "properties": {"a": {"type": "array", "items": {"properties": {"b": {}}}}}}}),
            "/format/json_schema/properties/a",
        ),
        (
            json!({"type": "json_schema", "any_order": true, "json_schema":
                {"type": "object", "properties": {"a": {}}, "additionalProperties": true}}),
            "/format/json_schema/additionalProperties",
        ),
        (
            json!({"type": "json_schema", "json_schema": schema, "style": "glm_xml", "excludes": ["x"]}),
            "/format/excludes",
        ),
        (
            json!({"type": "json_schema", "json_schema": schema, "excludes": ["x"]}),
            "/format/excludes",
        ),
    ] {
        let e = error_of(format);
        assert_eq!(
            (e.kind, e.pointer.as_str()),
            (ErrorKind::Unsupported, pointer),
            "{e}"
        );
    }
}

/// What an XML style cannot write exactly is refused at the keyword, never ignored.
#[test]
fn xml_style_keywords_sieve_cannot_honour_are_located() {
    let params = |p: Value| json!({"type": "object", "properties": {"p": p}});
    for (style, schema, pointer) in [
        (
            "qwen_xml",
            json!({"type": "object", "properties": {}, "additionalProperties": true}),
            "/format/json_schema/additionalProperties",
        ),
        (
            "minimax_xml",
            json!({"type": "object", "minProperties": 1}),
            "/format/json_schema/minProperties",
        ),
        (
            "glm_xml",
            json!({"type": "array"}),
            "/format/json_schema/type",
        ),
        // XGrammar 0.2.8 refuses these in minimax_m3_xml too.
        (
            "minimax_m3_xml",
            params(json!({"type": "string", "maxLength": 3})),
            "/format/json_schema/properties/p/maxLength",
        ),
        (
            "minimax_m3_xml",
            params(json!({"type": "string", "pattern": "a+"})),
            "/format/json_schema/properties/p/pattern",
        ),
        (
            "minimax_m3_xml",
            params(json!({})),
            "/format/json_schema/properties/p",
        ),
        (
            "minimax_m3_xml",
            params(
                json!({"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": true}),
            ),
            "/format/json_schema/properties/p/additionalProperties",
        ),
        (
            "qwen_xml",
            params(json!({"type": "string", "format": "date"})),
            "/format/json_schema/properties/p/format",
        ),
        (
            "qwen_xml",
            params(json!({"type": "string", "pattern": "a", "maxLength": 3})),
            "/format/json_schema/properties/p/maxLength",
        ),
        (
            "glm_xml",
            params(json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})),
            "/format/json_schema/properties/p/oneOf",
        ),
        (
            "minimax_xml",
            params(json!({"enum": ["a", 1.5]})),
            "/format/json_schema/properties/p/enum/1",
        ),
        (
            "qwen_xml",
            params(json!({"$ref": "#/properties/q"})),
            "/format/json_schema/properties/p/$ref",
        ),
        (
            "qwen_xml",
            params(json!({"type": "object", "properties": {"q": {"$ref": "#"}}})),
            "/format/json_schema/properties/p",
        ),
        (
            "cohere_xml",
            json!({"type": "object", "properties": {"a\"b": {"type": "string"}}}),
            "/format/json_schema/properties/a\"b",
        ),
        (
            "cohere_xml",
            params(json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true})),
            "/format/json_schema/properties/p/uniqueItems",
        ),
        (
            "cohere_xml",
            params(json!({"type": "object", "properties": {}, "patternProperties": {"x": {}}})),
            "/format/json_schema/properties/p/patternProperties",
        ),
    ] {
        let e = error_of(json!({"type": "json_schema", "json_schema": schema, "style": style}));
        assert_eq!(
            (e.kind, e.pointer.as_str()),
            (ErrorKind::Unsupported, pointer),
            "{style}: {e}"
        );
    }
    // Recursion is bounded, not followed forever: a `$ref` cycle, a recursive cohere dict.
    let cycle = json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}});
    let e = error_of(json!({"type": "json_schema", "json_schema": cycle, "style": "qwen_xml"}));
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    let node = json!({"$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}},
                      "$ref": "#/$defs/node"});
    let e = error_of(json!({"type": "json_schema", "json_schema": node, "style": "cohere_xml"}));
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    // Definitions that use each other twice, 25 deep: 2^25 visits if nothing counted.
    let mut defs = serde_json::Map::new();
    for i in 0..25 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"a": next, "b": next}}),
        );
    }
    defs.insert("d25".to_owned(), json!({"type": "string"}));
    let dag = json!({"$defs": defs, "$ref": "#/$defs/d0"});
    let e = error_of(json!({"type": "json_schema", "json_schema": dag, "style": "cohere_xml"}));
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    assert!(e.message.contains("visits"), "{e}");
    // In JSON values (qwen), a recursive schema is sieve-jsonschema's recursive rules.
    compile(
        &json!({"type": "structural_tag", "format": {"type": "json_schema", "json_schema": node, "style": "qwen_xml"}}),
        &Options::default(),
    )
    .expect("recursive JSON values compile");
    // A value's own schema error keeps its place inside the schema.
    let e = error_of(
        json!({"type": "json_schema", "style": "qwen_xml", "json_schema": params(json!({"type": "integer", "minimum": "x"}))}),
    );
    assert!(
        e.pointer.starts_with("/format/json_schema/properties/p"),
        "{e}"
    );
    let e = error_of(json!({"type": "json_schema", "json_schema": {}, "style": "yaml"}));
    assert_eq!(
        (e.kind, e.pointer.as_str()),
        (ErrorKind::Invalid, "/format/style"),
        "{e}"
    );
}

#[test]
fn invalid_documents_are_located() {
    let c = |v: &str| json!({"type": "const_string", "value": v});
    let cases = [
        (json!({"type": "nope"}), "/format/type"),
        (json!({"type": "const_string"}), "/format"),
        (json!({"type": "const_string", "value": 3}), "/format/value"),
        (
            json!({"type": "const_string", "value": "a", "vlaue": "b"}),
            "/format/vlaue",
        ),
        (
            json!({"type": "sequence", "elements": []}),
            "/format/elements",
        ),
        (
            json!({"type": "repeat", "min": 3, "max": 2, "content": c("a")}),
            "/format/max",
        ),
        (
            json!({"type": "or", "elements": [c("a"), {"type": "regex", "pattern": "(?=a)"}]}),
            "/format/elements/1/pattern",
        ),
        (
            json!({"type": "grammar", "grammar": "root ::= undefined_rule"}),
            "/format/grammar",
        ),
        (
            json!({"type": "triggered_tags", "triggers": ["<a"], "tags": [{"begin": "<b>", "content": c("x"), "end": "</b>"}]}),
            "/format/tags/0/begin",
        ),
        (
            json!({"type": "triggered_tags", "triggers": ["<a", "<"], "tags": [{"begin": "<a>", "content": c("x"), "end": "</a>"}]}),
            "/format/tags/0/begin",
        ),
        (
            json!({"type": "triggered_tags", "triggers": [""], "tags": []}),
            "/format/triggers/0",
        ),
        (
            json!({"type": "any_text", "excludes": [""]}),
            "/format/excludes/0",
        ),
        (
            json!({"type": "tag", "begin": "<a>", "content": {"type": "any_text"}, "end": ""}),
            "/format/end",
        ),
        (
            json!({"type": "dispatch", "rules": [["x", c("1")], ["x", c("2")]]}),
            "/format/rules/1/0",
        ),
        (
            json!({"type": "json_schema", "json_schema": {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}}),
            "/format/json_schema/properties/a/$ref",
        ),
    ];
    for (format, pointer) in cases {
        let e = error_of(format.clone());
        assert_eq!(e.pointer, pointer, "{format}: {e}");
    }
    let e = sieve_structural::compile_str("{", &Options::default()).unwrap_err();
    assert_eq!((e.kind, e.pointer.as_str()), (ErrorKind::Invalid, ""));
    let deep = (0..100).fold(
        json!({"type": "const_string", "value": "x"}),
        |inner, _| json!({"type": "optional", "content": inner}),
    );
    assert_eq!(error_of(deep).kind, ErrorKind::Limit);
    // A document built in memory, nested deeper than serde_json would parse: refused before
    // any recursive walk.
    let schema = (0..1_000).fold(json!(true), |inner, _| json!({"not": inner}));
    let e = error_of(json!({"type": "json_schema", "json_schema": schema}));
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
}

// ---------------------------------------------------------------------------------------------
// Masks against brute force.

/// Every single byte, the substrings of 2 to 6 bytes of the samples, and `</s>` as EOS.
fn synthetic_vocab(samples: &[&str]) -> Vocabulary {
    let samples: Vec<&[u8]> = samples.iter().map(|s| s.as_bytes()).collect();
    sieve_testkit::substring_vocabulary(&samples, 6, None)
}

fn mask_of(matcher: &mut Matcher) -> Vec<u32> {
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    matcher.fill_next_token_bitmask(&mut mask).expect("mask");
    mask
}

/// The brute-force mask: every token tried on its own.
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

/// Walks `text` token by token, the mask equal to the oracle's at every step, then EOS.
fn walk(compiled: &Arc<CompiledGrammar>, text: &str, label: &str) {
    let tokens = sieve_testkit::greedy_tokenize(compiled.vocabulary(), text.as_bytes());
    let mut matcher = Matcher::new(compiled.clone());
    for (step, &token) in tokens.iter().enumerate() {
        let mask = mask_of(&mut matcher);
        assert!(
            mask == oracle_mask(&mut matcher),
            "{label}: {text:?}: step {step}"
        );
        assert!(
            mask[token as usize / 32] & (1 << (token % 32)) != 0,
            "{label}: {text:?}: step {step}: token refused"
        );
        matcher.accept_token(token).expect("allowed");
    }
    let mask = mask_of(&mut matcher);
    assert!(
        mask == oracle_mask(&mut matcher),
        "{label}: {text:?}: final step"
    );
    assert!(matcher.can_terminate(), "{label}: {text:?} is a sentence");
}

#[test]
fn masks_equal_brute_force_on_tool_calls_and_free_text() {
    let weather =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "triggered_tags",
            json!({"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [
                {"type": "tag", "begin": "<tool_call>{\"name\": \"w\", \"arguments\": ", "content": {"type": "json_schema", "json_schema": weather}, "end": "}</tool_call>"},
                {"type": "tag", "begin": "<tool_call>{\"name\": \"t\", \"arguments\": ", "content": {"type": "json_schema", "json_schema": {"type": "object"}}, "end": "}</tool_call>"}
            ], "excludes": ["<|im_end|>"]}),
            vec![
                "Sure <tool_call>{\"name\": \"w\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call> done é",
                "<tool_call>{\"name\": \"t\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"w\", \"arguments\": {\"city\":\"x\"}}</tool_call>",
                "no call at all, <tool_ only",
            ],
        ),
        (
            "think_then_answer",
            json!({"type": "sequence", "elements": [
                {"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"},
                {"type": "any_text", "max_chars": 12}
            ]}),
            vec!["<think>a </thin b</think>answer", "<think></think>日本"],
        ),
        (
            "dispatch_no_loop",
            json!({"type": "dispatch", "rules": [["@@", {"type": "regex", "pattern": "[0-9]+;"}]], "loop": false, "excludes": ["!!"]}),
            vec!["hi @@12;", "a!b@c", "@@7;"],
        ),
    ];
    for (label, format, texts) in cases {
        let grammar = compile(
            &json!({"type": "structural_tag", "format": format}),
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{label}: {e}"));
        let vocab = Arc::new(synthetic_vocab(&texts));
        let tokenizer = Arc::new(Tokenizer::new(vocab));
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer, &CompileOptions::default())
                .expect("compiles"),
        );
        for text in texts {
            walk(&compiled, text, label);
        }
    }
}

#[test]
fn masks_equal_brute_force_on_xml_styles() {
    let params = json!({"type": "object", "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1},
        "unit": {"enum": ["c", "f"]},
        "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
    }, "required": ["city"]});
    let call = |style: &str| {
        json!({"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [
            {"type": "tag", "begin": "<tool_call>\n<function=w>\n", "content": {"type": "json_schema", "json_schema": params, "style": style}, "end": "</function>\n</tool_call>"}
        ]})
    };
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "qwen_xml",
            vec![
                "Sure. <tool_call>\n<function=w>\n<parameter=city>\nSão Paulo\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=tags>[\"a\"]</parameter>\n</function>\n</tool_call>",
                "<tool_call>\n<function=w>\n<parameter=city></param</parameter><parameter=unit> f </parameter><parameter=where>{\"lat\": -1.5}</parameter></function>\n</tool_call> ok",
            ],
        ),
        (
            "minimax_xml",
            vec!["<tool_call>\n<function=w>\n<parameter name=\"city\">Oslo</parameter><parameter name=\"days\">12</parameter></function>\n</tool_call>"],
        ),
        (
            "glm_xml",
            vec!["x <tool_call>\n<function=w>\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n<arg_key>unit</arg_key><arg_value>c</arg_value></function>\n</tool_call>"],
        ),
        (
            "cohere_xml",
            vec!["<tool_call>\n<function=w>\n<cofl:value name=\"city\" type=\"raw\">Oslo</cofl:value><cofl:value name=\"where\" type=\"dict\"> <cofl:value name=\"lat\" type=\"json\">2</cofl:value> </cofl:value><cofl:value name=\"tags\" type=\"list\"><cofl:value type=\"raw\">a</cofl:value><cofl:value type=\"raw\">b</cofl:value></cofl:value>\n</function>\n</tool_call>"],
        ),
    ];
    // Any values, nested any elements, and any_order.
    let loose = json!({"type": "object", "properties": {"x": {}, "n": {"type": "integer"}}, "required": ["n"]});
    for (style, text) in [
        ("cohere_xml", "<cofl:value name=\"x\" type=\"list\"><cofl:value type=\"dict\"><cofl:value name=\"k&amp;\" type=\"json\">1</cofl:value></cofl:value></cofl:value><cofl:value name=\"n\" type=\"json\">2</cofl:value>"),
        ("glm_xml", "<arg_key>n</arg_key><arg_value>1</arg_value><arg_key>x</arg_key><arg_value>[{\"a\": null}]</arg_value><arg_key>n</arg_key><arg_value>2</arg_value>"),
    ] {
        let grammar = compile(
            &json!({"type": "structural_tag", "format": {"type": "json_schema", "json_schema": loose, "style": style, "any_order": true}}),
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{style}: {e}"));
        let vocab = Arc::new(synthetic_vocab(&[text]));
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, Arc::new(Tokenizer::new(vocab)), &CompileOptions::default())
                .expect("compiles"),
        );
        walk(&compiled, text, style);
    }
    let cases = cases.into_iter().chain([
        (
            "deepseek_xml",
            vec!["<tool_call>\n<function=w>\n<｜DSML｜parameter name=\"city\" string=\"true\">Oslo</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\"> 7 </｜DSML｜parameter></function>\n</tool_call>"],
        ),
        (
            "minimax_m3_xml",
            vec!["<tool_call>\n<function=w>\n]<]minimax[>[<city>Oslo]<]minimax[>[</city>\n]<]minimax[>[<where> ]<]minimax[>[<lat>-1.5]<]minimax[>[</lat>\n]<]minimax[>[</where>]<]minimax[>[<tags>]<]minimax[>[<item>a ]<]minimax]<]minimax[>[</item>]<]minimax[>[</tags>\n</function>\n</tool_call>"],
        ),
        (
            "kimi_k3_xml",
            vec!["<tool_call>\n<function=w>\n<|open|>argument key=\"city\" type=\"string\"<|sep|>Oslo<|close|>argument<|sep|>\n<|open|>argument key=\"days\" type=\"number\"<|sep|> 7 <|close|>argument<|sep|><|open|>argument key=\"where\" type=\"object\"<|sep|>{\"lat\": 1}<|close|>argument<|sep|></function>\n</tool_call>"],
        ),
    ]);
    for (style, texts) in cases {
        let grammar = compile(
            &json!({"type": "structural_tag", "format": call(style)}),
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{style}: {e}"));
        let vocab = Arc::new(synthetic_vocab(&texts));
        let tokenizer = Arc::new(Tokenizer::new(vocab));
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer, &CompileOptions::default())
                .expect("compiles"),
        );
        for text in texts {
            walk(&compiled, text, style);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// No panics: random documents built from the format vocabulary.

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn text(&mut self) -> String {
        const PIECES: [&str; 9] = ["<", ">", "a", "b", "</t>", "<t>", "é", "", "→"];
        (0..self.below(4))
            .map(|_| PIECES[self.below(PIECES.len())])
            .collect()
    }

    fn texts(&mut self) -> Vec<String> {
        (0..self.below(3)).map(|_| self.text()).collect()
    }

    /// A format of at most `depth` levels, sometimes malformed on purpose.
    fn format(&mut self, depth: usize) -> Value {
        let leaf = depth == 0;
        match self.below(if leaf { 5 } else { 14 }) {
            0 => json!({"type": "const_string", "value": self.text()}),
            1 => json!({"type": "any_text", "excludes": self.texts()}),
            2 => {
                let pattern = ["a+", "[", "(?=x)", "é*b"][self.below(4)];
                json!({"type": "regex", "pattern": pattern})
            }
            3 => {
                let schema = [
                    json!(true),
                    json!({"type": "integer"}),
                    json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                    json!({"enum": []}),
                ][self.below(4)]
                .clone();
                json!({"type": "json_schema", "json_schema": schema})
            }
            4 => {
                let ty = ["token", "bogus", "grammar"][self.below(3)];
                json!({"type": ty, "grammar": "root ::= \"x\""})
            }
            5 => {
                json!({"type": "sequence", "elements": (0..self.below(3)).map(|_| self.format(depth - 1)).collect::<Vec<_>>()})
            }
            6 => {
                json!({"type": "or", "elements": (0..self.below(3)).map(|_| self.format(depth - 1)).collect::<Vec<_>>()})
            }
            7 => {
                json!({"type": "tag", "begin": self.text(), "content": self.format(depth - 1), "end": self.text()})
            }
            8 => {
                let triggers = self.texts();
                let tags: Vec<Value> = (0..self.below(3))
                    .map(|_| json!({"begin": self.text(), "content": self.format(depth - 1), "end": self.text()}))
                    .collect();
                json!({"type": "triggered_tags", "triggers": triggers, "tags": tags,
                       "at_least_one": self.below(2) == 0, "stop_after_first": self.below(2) == 0,
                       "excludes": self.texts()})
            }
            9 => {
                let tags: Vec<Value> = (0..self.below(3))
                    .map(|_| json!({"begin": self.text(), "content": self.format(depth - 1), "end": self.text()}))
                    .collect();
                json!({"type": "tags_with_separator", "tags": tags, "separator": self.text(),
                       "at_least_one": self.below(2) == 0, "stop_after_first": self.below(2) == 0})
            }
            10 => {
                let rules: Vec<Value> = (0..self.below(3))
                    .map(|_| json!([self.text(), self.format(depth - 1)]))
                    .collect();
                json!({"type": "dispatch", "rules": rules, "loop": self.below(2) == 0, "excludes": self.texts()})
            }
            11 => {
                let ty = ["optional", "star", "plus"][self.below(3)];
                json!({"type": ty, "content": self.format(depth - 1)})
            }
            12 => {
                let (min, max) = (self.below(4) as i64 - 1, self.below(5) as i64 - 1);
                json!({"type": "repeat", "min": min, "max": max, "content": self.format(depth - 1)})
            }
            _ => json!({"type": "any_text", "max_chars": self.below(4), "excludes": self.texts()}),
        }
    }

    /// A token as written, sometimes one no vocabulary has.
    fn token(&mut self) -> Value {
        [
            json!("<|im_end|>"),
            json!("<think>"),
            json!("a"),
            json!(108),
            json!(3),
            json!("<|nope|>"),
            json!(99_999),
        ][self.below(7)]
        .clone()
    }

    fn token_list(&mut self) -> Vec<Value> {
        (0..self.below(3)).map(|_| self.token()).collect()
    }

    /// A tag's begin or end: a string or a token format.
    fn tag_side(&mut self) -> Value {
        if self.below(2) == 0 {
            json!({"type": "token", "token": self.token()})
        } else {
            json!(self.text())
        }
    }

    /// Like [`Rng::format`], with the token formats in the mix.
    fn token_format(&mut self, depth: usize) -> Value {
        let leaf = depth == 0;
        match self.below(if leaf { 4 } else { 10 }) {
            0 => json!({"type": "token", "token": self.token()}),
            1 => json!({"type": "exclude_token", "exclude_tokens": self.token_list()}),
            2 => {
                json!({"type": "any_tokens", "exclude_tokens": self.token_list(), "max_tokens": self.below(3)})
            }
            3 => self.format(0),
            4 => {
                json!({"type": "tag", "begin": self.tag_side(), "content": self.token_format(depth - 1), "end": self.tag_side()})
            }
            5 => {
                let triggers = self.token_list();
                let tags: Vec<Value> = (0..self.below(3))
                    .map(|_| json!({"begin": self.tag_side(), "content": self.token_format(depth - 1), "end": self.tag_side()}))
                    .collect();
                json!({"type": "token_triggered_tags", "trigger_tokens": triggers, "tags": tags,
                       "at_least_one": self.below(2) == 0, "stop_after_first": self.below(2) == 0,
                       "exclude_tokens": self.token_list()})
            }
            6 => {
                let rules: Vec<Value> = (0..self.below(3))
                    .map(|_| json!([self.token(), self.token_format(depth - 1)]))
                    .collect();
                json!({"type": "token_dispatch", "rules": rules, "loop": self.below(2) == 0, "exclude_tokens": self.token_list()})
            }
            7 => {
                json!({"type": "sequence", "elements": (0..self.below(3)).map(|_| self.token_format(depth - 1)).collect::<Vec<_>>()})
            }
            8 => {
                let tags: Vec<Value> = (0..self.below(3))
                    .map(|_| json!({"begin": self.tag_side(), "content": self.token_format(depth - 1), "end": self.tag_side()}))
                    .collect();
                json!({"type": "tags_with_separator", "tags": tags, "separator": self.text()})
            }
            _ => self.format(depth - 1),
        }
    }
}

/// Random documents with token formats: compiled, or refused at a pointer into the format;
/// what compiles takes a few random tokens through the matcher without a panic.
#[test]
fn random_token_documents_compile_or_fail_without_panicking() {
    let vocab = token_vocab(107);
    let options = token_options(&vocab);
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let mut rng = Rng(11);
    let (mut compiled, mut refused) = (0, 0);
    for _ in 0..1500 {
        let doc = json!({"type": "structural_tag", "format": rng.token_format(3)});
        match compile(&doc, &options) {
            Ok(grammar) => {
                compiled += 1;
                if let Ok(c) =
                    CompiledGrammar::new(&grammar, tokenizer.clone(), &CompileOptions::default())
                {
                    let mut matcher = Matcher::new(Arc::new(c));
                    for _ in 0..4 {
                        let token = rng.below(110) as u32;
                        if matcher.validate_tokens(&[token]).expect("no limit") == 1 {
                            matcher.accept_token(token).expect("validated");
                        }
                    }
                }
            }
            Err(e) => {
                refused += 1;
                assert!(e.pointer.starts_with("/format"), "{e}");
            }
        }
    }
    assert!(
        compiled > 200 && refused > 200,
        "{compiled} compiled, {refused} refused"
    );
}

#[test]
fn random_documents_compile_or_fail_without_panicking() {
    let mut rng = Rng(7);
    let (mut compiled, mut refused) = (0, 0);
    for _ in 0..3000 {
        let doc = json!({"type": "structural_tag", "format": rng.format(3)});
        match compile(&doc, &Options::default()) {
            Ok(grammar) => {
                compiled += 1;
                // The IR is one the rest of the pipeline takes (or refuses with an error).
                if let Ok(mut matcher) = ByteMatcher::new(&grammar, &CompileOptions::default()) {
                    for &b in b"a<t>\xc3\xa9</t>" {
                        if !matcher.push_byte(b).expect("within limits") {
                            break;
                        }
                    }
                }
            }
            Err(e) => {
                refused += 1;
                assert!(
                    e.pointer.is_empty() || e.pointer.starts_with("/format"),
                    "{e}"
                );
            }
        }
    }
    assert!(
        compiled > 300 && refused > 300,
        "{compiled} compiled, {refused} refused"
    );
}

/// The shared corpus folder: `$SIEVE_SHARED`, else `../shared` beside the repository.
fn shared_dir() -> std::path::PathBuf {
    std::env::var_os("SIEVE_SHARED").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        std::path::PathBuf::from,
    )
}

#[test]
#[ignore = "needs ../shared (tokenizers, bench workloads) or $SIEVE_SHARED; 200k oracle checks a step"]
fn masks_equal_brute_force_on_the_harness_tool_calls_with_o200k_base() {
    let shared = shared_dir();
    let manifest = shared.join("tokenizers/manifest.json");
    let vocab = Arc::new(
        sieve_vocab::manifest::load_named(&manifest, "o200k_base")
            .unwrap_or_else(|e| panic!("{}: {e}", manifest.display())),
    );
    let workload = shared.join("bench/workloads/tool_call_qwen_structtag");
    let text = std::fs::read_to_string(workload.join("structural_tag.json")).expect("workload");
    let grammar = sieve_structural::compile_str(&text, &Options::default()).expect("compiles");
    let tokenizer = Arc::new(Tokenizer::new(vocab));
    let compiled = Arc::new(
        CompiledGrammar::new(&grammar, tokenizer, &CompileOptions::default()).expect("compiles"),
    );
    let samples = std::fs::read_to_string(workload.join("samples.jsonl")).expect("samples");
    for line in samples.lines() {
        let sample: Value = serde_json::from_str(line).expect("JSON line");
        walk(
            &compiled,
            sample["text"].as_str().expect("text"),
            "o200k_base",
        );
    }
}

/// The token fixtures' tag with its token ids (of `small`) written as names, so it means the
/// same in another vocabulary.
fn ids_as_names(value: &Value, small: &Vocabulary) -> Value {
    let name = |v: &Value| match v.as_u64() {
        Some(id) => {
            let t = sieve_vocab::TokenId::new(id as u32).expect("an id");
            let text = small
                .special_name(t)
                .map(str::to_owned)
                .unwrap_or_else(|| String::from_utf8(small.bytes(t).to_vec()).expect("UTF-8"));
            Value::String(text)
        }
        None => ids_as_names(v, small),
    };
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("token", _) => name(v),
                        ("exclude_tokens" | "trigger_tokens", Value::Array(items)) => {
                            Value::Array(items.iter().map(name).collect())
                        }
                        ("rules", Value::Array(rules))
                            if map.get("type") == Some(&json!("token_dispatch")) =>
                        {
                            Value::Array(
                                rules
                                    .iter()
                                    .map(|r| json!([name(&r[0]), ids_as_names(&r[1], small)]))
                                    .collect(),
                            )
                        }
                        _ => ids_as_names(v, small),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| ids_as_names(v, small)).collect()),
        other => other.clone(),
    }
}

/// A token sequence of `small` in `big`: named tokens (specials and Qwen 3's `<think>`-like
/// text tokens) by name, runs of other text tokenized greedily.
fn retokenize(ids: &[u32], small: &Vocabulary, big: &Vocabulary) -> Vec<u32> {
    use sieve_ir::token::TokenNames;
    let mut out = Vec::new();
    let mut text = Vec::new();
    for &id in ids {
        let t = sieve_vocab::TokenId::new(id).expect("an id");
        let bytes = small.bytes(t);
        let name = small.special_name(t).map(str::to_owned).or_else(|| {
            (bytes.len() > 2 && bytes.starts_with(b"<") && bytes.ends_with(b">"))
                .then(|| String::from_utf8(bytes.to_vec()).expect("UTF-8"))
        });
        match name {
            Some(name) => {
                out.extend(sieve_testkit::greedy_tokenize(big, &text));
                text.clear();
                let id = big
                    .special_id(&name)
                    .or_else(|| big.text_id(name.as_bytes()))
                    .unwrap_or_else(|| panic!("{name} is not in the big vocabulary"));
                out.push(id);
            }
            None => text.extend_from_slice(bytes),
        }
    }
    out.extend(sieve_testkit::greedy_tokenize(big, &text));
    out
}

#[test]
#[ignore = "needs ../shared (tokenizers) or $SIEVE_SHARED; 152k oracle checks a step"]
fn token_fixture_masks_equal_brute_force_with_qwen3() {
    let file: TokenFixtureFile =
        serde_json::from_str(include_str!("fixtures/tokens.json")).expect("fixture file");
    let small = token_vocab(file.eos);
    let manifest = shared_dir().join("tokenizers/manifest.json");
    let qwen3 = Arc::new(
        sieve_vocab::manifest::load_named(&manifest, "qwen3")
            .unwrap_or_else(|e| panic!("{}: {e}", manifest.display())),
    );
    let tokenizer = Arc::new(Tokenizer::new(qwen3.clone()));
    let options = token_options(&qwen3);
    let mut steps = 0;
    for fixture in &file.fixtures {
        let tag = ids_as_names(&fixture.structural_tag, &small);
        let grammar = compile(&tag, &options).unwrap_or_else(|e| panic!("{}: {e}", fixture.name));
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer.clone(), &CompileOptions::default())
                .expect("compiles"),
        );
        for case in &fixture.cases {
            let mut matcher = Matcher::new(compiled.clone());
            for token in retokenize(&case.tokens, &small, &qwen3) {
                let mask = mask_of(&mut matcher);
                assert!(
                    mask == oracle_mask(&mut matcher),
                    "{}: {:?}: step {}",
                    fixture.name,
                    case.show,
                    matcher.steps()
                );
                steps += 1;
                if mask[token as usize / 32] & (1 << (token % 32)) == 0 {
                    break;
                }
                matcher.accept_token(token).expect("allowed by the mask");
            }
        }
    }
    assert!(steps >= 200, "{steps} steps");
}
