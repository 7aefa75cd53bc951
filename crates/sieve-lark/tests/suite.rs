//! sieve-lark's suite: llguidance's verdicts on the checked-in differential fixtures
//! (`tests/fixtures/generate.py`), IR snapshots of the fixture grammars in `grammars/lark/`,
//! located errors (snapshots rendered as the CLI shows them), token masks against the
//! brute-force oracle, and the shared corpus (with `$SIEVE_SHARED`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use sieve_diagnostics::SourceFile;
use sieve_ir::Grammar;
use sieve_lark::{compile, ErrorKind, Options};
use sieve_matcher::{ByteMatcher, CompiledGrammar, Matcher, Options as CompileOptions, Tokenizer};
use sieve_vocab::Vocabulary;

fn grammars_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../grammars/lark")
}

fn lark_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(grammars_dir())
        .expect("grammars/lark exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lark"))
        .collect();
    files.sort();
    files
}

fn compile_text(text: &str) -> Grammar {
    compile(text, &Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Whether the full compile pipeline (normalised, automata, Earley) accepts `text`.
fn accepts(grammar: &Grammar, text: &[u8]) -> bool {
    let mut matcher =
        ByteMatcher::new(grammar, &CompileOptions::default()).expect("grammar compiles");
    text.iter()
        .all(|&b| matcher.push_byte(b).expect("within the work limit"))
        && matcher.can_finish()
}

// ---------------------------------------------------------------------------------------------
// Differential fixtures: llguidance's verdicts.

#[test]
fn llguidance_fixtures() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llguidance.json");
    let fixtures: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixtures")).expect("JSON");
    let mut checked = 0;
    let mut failures = Vec::new();
    for fixture in fixtures["fixtures"].as_array().expect("list") {
        let name = fixture["name"].as_str().expect("name");
        let text = match fixture["file"].as_str() {
            Some(file) => std::fs::read_to_string(grammars_dir().join(file)).expect("grammar"),
            None => fixture["grammar"].as_str().expect("grammar").to_owned(),
        };
        let grammar = compile(&text, &Options::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        for case in fixture["cases"].as_array().expect("cases") {
            let input = case["text"].as_str().expect("text");
            let expected = case["sieve"]
                .as_bool()
                .unwrap_or_else(|| case["llguidance"].as_bool().expect("verdict"));
            if accepts(&grammar, input.as_bytes()) != expected {
                failures.push(format!("{name}: {input:?}: expected {expected}"));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 70, "only {checked} cases");
}

// ---------------------------------------------------------------------------------------------
// The AST prints back to text that parses to the same AST.

#[test]
fn ast_prints_back_to_the_same_ast() {
    let mut texts: Vec<String> = lark_files()
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("readable"))
        .collect();
    texts.push(sieve_lark::COMMON_LARK.to_owned());
    texts.push("start: (a | b)* ~(C & D)+ \"\\x01\"i x{2,} y{,3} z{4} \"\"\na.-2[lazy, suffix=\"!\"]: /a\\/b/s\n%ignore (\" \" | \"\\t\")+\n%llguidance {}\n%import common (INT, WS)".to_owned());
    for text in texts {
        let limits = sieve_lark::Limits::default();
        let first = sieve_lark::parse(&text, &limits)
            .expect("parses")
            .to_string();
        let second = sieve_lark::parse(&first, &limits)
            .unwrap_or_else(|e| panic!("{e} in\n{first}"))
            .to_string();
        assert_eq!(first, second);
        // And the printed grammar means the same: the same IR.
        if text.contains("start") {
            let a = compile(&text, &Options::default()).map(|g| g.to_string());
            let b = compile(&first, &Options::default()).map(|g| g.to_string());
            assert_eq!(a.is_ok(), b.is_ok(), "{first}");
            if let (Ok(a), Ok(b)) = (a, b) {
                assert_eq!(a, b, "{first}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// IR snapshots.

#[test]
fn ir_snapshots_of_fixture_grammars() {
    for path in lark_files() {
        let text = std::fs::read_to_string(&path).expect("readable");
        let grammar = compile_text(&text);
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        insta::assert_snapshot!(format!("ir-{name}"), grammar.to_string());
    }
}

// ---------------------------------------------------------------------------------------------
// Errors.

fn error(text: &str) -> (ErrorKind, String) {
    let errors = compile(text, &Options::default()).expect_err("should not compile");
    let source = SourceFile::new("test.lark", text);
    let rendered: String = errors
        .as_slice()
        .iter()
        .map(|e| source.render_error(e))
        .collect();
    (errors.first().kind, rendered)
}

#[test]
fn errors_are_located() {
    let cases: &[(&str, &str, ErrorKind)] = &[
        ("special_token", "start: <|eot_id|> \"a\"", ErrorKind::Token),
        (
            "special_token_id",
            "start: \"a\" <[128009x]>",
            ErrorKind::Syntax,
        ),
        (
            "template",
            "start: sep{\"a\", \",\"}\nsep{x, d}: x (d x)*",
            ErrorKind::Unsupported,
        ),
        ("unknown_name", "start: a b\na: \"x\"", ErrorKind::Name),
        ("no_start", "begin: \"x\"", ErrorKind::Name),
        ("duplicate", "start: \"a\"\nstart: \"b\"", ErrorKind::Name),
        (
            "terminal_uses_rule",
            "start: A\nA: \"a\" b\nb: \"b\"",
            ErrorKind::Name,
        ),
        (
            "recursive_terminal",
            "start: A\nA: \"(\" A? \")\"",
            ErrorKind::Name,
        ),
        ("nested_lookahead", "start: /(a(?=b))b/", ErrorKind::Regex),
        (
            "mixed_lookaround",
            "start: /(?=a)a(?<=a)/",
            ErrorKind::Unsupported,
        ),
        (
            "regex_error_position",
            "start: \"x\" /ab[/",
            ErrorKind::Regex,
        ),
        (
            "import_other",
            "%import .other.X\nstart: X",
            ErrorKind::Unsupported,
        ),
        (
            "import_unknown",
            "%import common.NOPE\nstart: NOPE",
            ErrorKind::Name,
        ),
        (
            "and_in_rule",
            "start: a & b\na: \"a\"\nb: \"b\"",
            ErrorKind::Unsupported,
        ),
        ("empty_terminal", "start: A\nA: /a/ & /b/", ErrorKind::Empty),
        (
            "json_in_terminal",
            "start: A\nA: %json {}",
            ErrorKind::Unsupported,
        ),
        (
            "json_bad_schema",
            "start: %json {\"type\": \"frob\"}",
            ErrorKind::Json,
        ),
        (
            "x_guidance_unknown",
            "start: %json {\"x-guidance\": {\"whitespace_pattern\": \"x\"}}",
            ErrorKind::Json,
        ),
        (
            "stop_attribute",
            "start: a \"<end>\"\na[stop=\"<end>\"]: /.*/",
            ErrorKind::Unsupported,
        ),
        (
            "declare",
            "%declare X\nstart: \"a\"",
            ErrorKind::Unsupported,
        ),
        ("unterminated_string", "start: \"abc\n", ErrorKind::Syntax),
        ("unterminated_regex", "start: /abc\n", ErrorKind::Syntax),
        ("missing_colon", "start \"a\"", ErrorKind::Syntax),
        ("unclosed_group", "start: (\"a\"", ErrorKind::Syntax),
        ("bad_range", "start: \"ab\"..\"c\"", ErrorKind::Syntax),
        ("regex_flag", "start: /a/l", ErrorKind::Unsupported),
        (
            "nesting",
            &format!("start: {}\"a\"{}", "(".repeat(300), ")".repeat(300)),
            ErrorKind::Limit,
        ),
    ];
    for (name, text, kind) in cases {
        let (got, rendered) = error(text);
        assert_eq!(got, *kind, "{name}: {rendered}");
        insta::assert_snapshot!(format!("err-{name}"), rendered);
    }
}

/// llguidance's lexer is greedy; sieve's reading is scannerless (docs/lark.md, "Longest
/// match"), so this split is accepted where llguidance refuses it.
#[test]
#[ignore = "known gap: greedy (longest-match) lexing is not modelled; see docs/lark.md"]
fn known_gap_greedy_lexing_as_llguidance() {
    let grammar = compile_text("start: A B\nA: /a+/\nB: /a/");
    assert!(!accepts(&grammar, b"aa"), "llguidance's A takes both bytes");
}

#[test]
fn arbitrary_text_never_panics() {
    // Deterministic pseudo-random texts over Lark's punctuation and a few words.
    let pieces = [
        "start",
        ":",
        " ",
        "\n",
        "|",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "~",
        "&",
        "*",
        "+",
        "?",
        ",",
        "..",
        "->",
        "\"a\"",
        "/b+/",
        "A",
        "B",
        "%ignore",
        "%import",
        "common.INT",
        "%json",
        "%regex",
        "<|x|>",
        "[lazy]",
        ".2",
        "2",
        "#",
        "_x",
        "!",
        "\"",
        "/",
        "%json {}",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..3000 {
        let mut text = String::new();
        let len = (state % 24) as usize;
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(pieces[(state % pieces.len() as u64) as usize]);
        }
        state = state.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(1);
        // Either result is fine; a panic fails the test.
        let _ = compile(&text, &Options::default());
    }
}

/// All strings over `alphabet` up to `len` bytes.
fn all_strings(alphabet: &[u8], len: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut layer = vec![Vec::new()];
    for _ in 0..len {
        let mut next = Vec::new();
        for s in &layer {
            for &b in alphabet {
                let mut t: Vec<u8> = s.clone();
                t.push(b);
                next.push(t);
            }
        }
        out.extend(next.iter().cloned());
        layer = next;
    }
    out
}

#[test]
fn lookaround_equals_its_definition() {
    type Definition = fn(&[u8]) -> bool;
    let cases: &[(&str, Definition)] = &[
        (r"/a(?!b)[abc]*/", |s| {
            s.first() == Some(&b'a') && s.get(1) != Some(&b'b')
        }),
        (r"/[abc]*(?<=b)c/", |s| s.ends_with(b"bc")),
        (r"/(?=[abc]*c)[ab]*c|b/", |s| {
            s == b"b" || (s.ends_with(b"c") && s[..s.len() - 1].iter().all(|b| *b != b'c'))
        }),
        (r"/[abc]*(?<!a)/", |s| !s.ends_with(b"a")),
        (r"/(?![abc]*aa)[abc]*/", |s| {
            !s.windows(2).any(|w| w == b"aa")
        }),
        (r"/a(?=b)[abc](?!c)[abc]*/", |s| {
            s.starts_with(b"ab") && s.get(2) != Some(&b'c')
        }),
    ];
    for (pattern, definition) in cases {
        let grammar = compile_text(&format!("start: {pattern}"));
        for text in all_strings(b"abc", 5) {
            assert_eq!(
                accepts(&grammar, &text),
                definition(&text),
                "{pattern} on {:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }
}

#[test]
fn errors_are_collected() {
    let errors = compile("start: a b c", &Options::default()).unwrap_err();
    assert_eq!(errors.as_slice().len(), 3);
}

/// A `%json` schema's shared rules (the tails of keys other than the declared ones) stay
/// shared in the Lark grammar, and the embedded language is the schema's.
#[test]
fn json_schemas_keep_their_shared_rules() {
    let grammar = compile_text(
        r#"start: "x" %json {"type": "object", "properties": {"ab": {"type": "integer"}}}"#,
    );
    assert!(grammar.shared_rules().count() > 0, "{grammar}");
    for (text, verdict) in [
        (r#"x{"ab": 1}"#, true),
        (r#"x{"ab": 1, "abc": {}}"#, true),
        (r#"x{"a": 1}"#, true),
        (r#"x{"ab": "1"}"#, false),
    ] {
        assert_eq!(accepts(&grammar, text.as_bytes()), verdict, "{text}");
    }
}

#[test]
fn priorities_and_tree_shaping_keep_the_language() {
    let plain = compile_text("start: a b\na: \"x\"+\nb: B\nB: \"y\"");
    let shaped = compile_text("?start: _a b -> alias\n!_a.2: \"x\"+\nb: B\nB.3: \"y\"");
    for text in ["xy", "xxy", "y", "x", "xyy"] {
        assert_eq!(
            accepts(&plain, text.as_bytes()),
            accepts(&shaped, text.as_bytes()),
            "{text}"
        );
    }
}

#[test]
fn common_imports_match_their_definitions() {
    let grammar = compile_text(
        "start: (NUMBER | ESCAPED_STRING | CNAME | C_COMMENT) (\",\" start)?\n%import common (NUMBER, ESCAPED_STRING, CNAME, C_COMMENT)",
    );
    for (text, ok) in [
        ("12", true),
        ("1.5e-3", true),
        (".5", true),
        ("\"a\\\"b\"", true),
        ("\"a\\\"", false),
        ("_x9", true),
        ("9x", false),
        ("/* a * b **/", true),
        ("/* a */ */", false),
        ("1,\"x\",y", true),
    ] {
        assert_eq!(accepts(&grammar, text.as_bytes()), ok, "{text}");
    }
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
fn masks_equal_brute_force_on_fixture_grammars() {
    let cases: &[(&str, &[&str])] = &[
        ("arith.lark", &["1 + 2*x", "-(a - 3) / 4"]),
        (
            "json.lark",
            &["{\"a\": [1, 2.5, -3e2, true, null]}", "[ {}, \"x\\\"y\" ]"],
        ),
        ("operators.lark", &["a b\nzz q", "a\nb a<end>"]),
        (
            "tool_call.lark",
            &[
                "hi <call>{\"name\": \"add\", \"arguments\": {\"a\":1,\"b\":2}}</call> done <cal",
                "<call>{\"name\": \"echo\", \"arguments\": {\"text\":\"x\"}}</call>",
            ],
        ),
        ("substring.lark", &[" -- Yorick.", "to be or -- Ab."]),
        ("terminals.lark", &["SELECT,0x1f,abc!,Ab_c,'it''s'"]),
    ];
    for (file, texts) in cases {
        let text = std::fs::read_to_string(grammars_dir().join(file)).expect("grammar");
        let grammar = compile_text(&text);
        let vocab = Arc::new(synthetic_vocab(texts));
        let tokenizer = Arc::new(Tokenizer::new(vocab));
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer, &CompileOptions::default())
                .expect("compiles"),
        );
        for t in *texts {
            walk(&compiled, t, file);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// sieve's regex extensions (docs/regex-extensions.md) inside Lark regexes.

#[test]
fn regex_extensions_work_in_lark_regexes() {
    let grammar = compile_text(
        "start: \"<tool>\" BODY \" \" TAGS\nBODY: /(?P<TEXT_UNTIL><\\/tool>|<stop>)/\nTAGS: /(?P<DELIMITED_SUBSEQUENCE_OF>red|green|blue)/\n",
    );
    for (text, ok) in [
        ("<tool>a</b></tool> red", true),
        ("<tool>x<stop> green, blue", true),
        ("<tool></tool></tool> red", false),
        ("<tool>x</tool> blue, red", false),
    ] {
        assert_eq!(accepts(&grammar, text.as_bytes()), ok, "{text}");
    }
    let err = compile("start: /(?P<TEXT_UNTILL>x)/\n", &Options::default()).unwrap_err();
    assert!(
        err.to_string().contains("did you mean `TEXT_UNTIL`"),
        "{err}"
    );
}

/// Known gap: `&`, `~`, lazy lexemes and look-around build automata with `dfa.rs`, whose
/// Thompson construction refuses rules that refer to themselves, and `TEXT_UNTIL` and
/// `UNQUOTED_TEXT` are emitted as right-linear rules with cycles. (Acyclic extensions work.)
#[test]
#[ignore = "known gap: dfa.rs refuses the cyclic right-linear rules of TEXT_UNTIL inside & / ~ / lazy lexemes"]
fn known_gap_regex_extensions_inside_terminal_operators() {
    let grammar = compile_text("start: BODY\nBODY: /(?P<TEXT_UNTIL>ab)/ & /[a-z]{0,6}/\n");
    assert!(accepts(&grammar, b"xxab"));
    assert!(!accepts(&grammar, b"xxabab"));
}

#[test]
fn acyclic_regex_extensions_inside_terminal_operators() {
    let grammar = compile_text("start: WORD\nWORD: /(?P<SUBSTRING_OF>banana)/ & /[a-z]*n[a-z]*/\n");
    for (text, ok) in [("nan", true), ("ana", true), ("bab", false), ("ba", false)] {
        assert_eq!(accepts(&grammar, text.as_bytes()), ok, "{text}");
    }
}
