//! Bad grammars: each file under `grammars/bad/` shows one kind of error; the rendered
//! diagnostics are named snapshots (`errors__<file stem>`).

use sieve_diagnostics::{LineCol, Located, SourceFile};
use sieve_gbnf::{compile, Error, Errors, Limits, Options};

/// Compiles `grammars/bad/<stem>.gbnf`, which must fail, and snapshots the diagnostics.
fn check(stem: &str) -> (String, Errors) {
    let name = format!("grammars/bad/{stem}.gbnf");
    let text = std::fs::read_to_string(crate::repo_root().join(&name)).unwrap();
    let errors = compile(&text, &Options::default()).expect_err(&name);
    let rendered = errors.render(&SourceFile::new(&name, &text));
    insta::assert_snapshot!(stem.to_owned(), rendered);
    (text, errors)
}

fn line_col(text: &str, error: &Error) -> LineCol {
    SourceFile::new("", text).line_col(error.span().start)
}

#[test]
fn every_bad_grammar_has_a_test() {
    let tested = [
        "bad-escape",
        "duplicate-rule",
        "empty-class",
        "invalid-code-point",
        "literal-as-rule-name",
        "lookahead-unsupported",
        "missing-assign",
        "missing-root",
        "repeat-min-over-max",
        "repeat-over-limit",
        "repeat-overflow",
        "reversed-range",
        "rule-attribute",
        "too-deep",
        "unbalanced-paren",
        "undefined-rule",
        "unexpected-end",
        "unexpected-token",
        "unmatched-paren",
        "unterminated-class",
        "unterminated-string",
    ];
    let mut found: Vec<String> = std::fs::read_dir(crate::repo_root().join("grammars/bad"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gbnf"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    assert_eq!(found, tested);
}

#[test]
fn bad_escape() {
    let (text, errors) = check("bad-escape");
    assert_eq!(errors.as_slice().len(), 3, "every bad escape is reported");
    assert!(matches!(&errors.as_slice()[0], Error::BadEscape { escape, .. } if escape == "\\q"));
    assert_eq!(
        line_col(&text, errors.first()),
        LineCol {
            line: 1,
            column: 14
        }
    );
}

#[test]
fn duplicate_rule() {
    let (text, errors) = check("duplicate-rule");
    let [Error::DuplicateRule { first_line, .. }] = errors.as_slice() else {
        panic!("{errors:?}")
    };
    assert_eq!(*first_line, 2);
    assert_eq!(
        line_col(&text, errors.first()),
        LineCol { line: 5, column: 1 }
    );
}

#[test]
fn empty_class() {
    let (_, errors) = check("empty-class");
    assert_eq!(errors.as_slice().len(), 2);
    assert!(errors
        .as_slice()
        .iter()
        .all(|e| matches!(e, Error::EmptyClass { .. })));
}

#[test]
fn invalid_code_point() {
    let (_, errors) = check("invalid-code-point");
    assert_eq!(errors.as_slice().len(), 2);
}

#[test]
fn literal_as_rule_name() {
    check("literal-as-rule-name");
}

#[test]
fn lookahead_unsupported() {
    let (text, errors) = check("lookahead-unsupported");
    assert!(matches!(errors.first(), Error::LookaheadUnsupported { .. }));
    assert_eq!(
        line_col(&text, errors.first()),
        LineCol {
            line: 3,
            column: 20
        }
    );
    // It still parses and round-trips.
    crate::assert_round_trip("lookahead-unsupported", &text);
}

#[test]
fn rule_attribute() {
    let (text, errors) = check("rule-attribute");
    let found: Vec<(usize, &str)> = errors
        .as_slice()
        .iter()
        .map(|e| match e {
            Error::BadRuleAttribute { span, .. } => {
                (line_col(&text, e).line, &text[span.start..span.end])
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        found,
        [
            (3, "max_tokens=0"),
            (4, "max_tokens = lots"),
            (5, "capture"),
            (6, "max_tokens=2"),
        ]
    );
}

#[test]
fn missing_assign() {
    let (_, errors) = check("missing-assign");
    assert!(matches!(
        errors.first(),
        Error::UnexpectedChar { ch: '=', .. }
    ));
}

#[test]
fn missing_root() {
    let (_, errors) = check("missing-root");
    assert!(matches!(errors.first(), Error::MissingRoot { name, .. } if name == "root"));
    // With the right root it compiles.
    let text =
        std::fs::read_to_string(crate::repo_root().join("grammars/bad/missing-root.gbnf")).unwrap();
    compile(&text, &Options::with_root("start")).unwrap();
}

#[test]
fn repeat_min_over_max() {
    let (text, errors) = check("repeat-min-over-max");
    assert!(matches!(
        errors.first(),
        Error::RepeatMinOverMax { min: 5, max: 2, .. }
    ));
    assert_eq!(
        line_col(&text, errors.first()),
        LineCol {
            line: 1,
            column: 13
        }
    );
}

#[test]
fn repeat_over_limit() {
    check("repeat-over-limit");
}

#[test]
fn repeat_overflow() {
    check("repeat-overflow");
}

#[test]
fn reversed_range() {
    check("reversed-range");
}

#[test]
fn too_deep() {
    let (text, errors) = check("too-deep");
    assert!(matches!(errors.first(), Error::TooDeep { limit: 256, .. }));
    assert_eq!(
        line_col(&text, errors.first()),
        LineCol {
            line: 2,
            column: 266
        }
    );
}

#[test]
fn unbalanced_paren() {
    let (text, errors) = check("unbalanced-paren");
    let [Error::UnclosedParen { .. }] = errors.as_slice() else {
        panic!("{errors:?}")
    };
    // The outer `(`: the inner one is closed.
    assert_eq!(
        line_col(&text, errors.first()),
        LineCol {
            line: 1,
            column: 10
        }
    );
}

#[test]
fn undefined_rule() {
    let (text, errors) = check("undefined-rule");
    let names: Vec<&str> = errors
        .as_slice()
        .iter()
        .map(|e| match e {
            Error::UndefinedRule { name, .. } => name.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(names, ["valu", "objekt"]);
    assert_eq!(
        line_col(&text, errors.first()),
        LineCol {
            line: 2,
            column: 21
        }
    );
}

#[test]
fn unexpected_end() {
    check("unexpected-end");
}

#[test]
fn unexpected_token() {
    check("unexpected-token");
}

#[test]
fn unmatched_paren() {
    check("unmatched-paren");
}

#[test]
fn unterminated_class() {
    check("unterminated-class");
}

#[test]
fn unterminated_string() {
    let (text, errors) = check("unterminated-string");
    assert_eq!(
        line_col(&text, errors.first()),
        LineCol {
            line: 1,
            column: 10
        }
    );
}

fn render(text: &str, options: &Options) -> String {
    let errors = compile(text, options).expect_err(text);
    errors.render(&SourceFile::new("<test>", text))
}

#[test]
fn input_too_large() {
    let mut options = Options::default();
    let mut limits = Limits::default();
    limits.max_input_bytes = 16;
    options.limits = limits;
    insta::assert_snapshot!(
        "input-too-large",
        render("root ::= \"0123456789abcdef\"\n", &options)
    );
}

#[test]
fn too_many_rules() {
    let mut options = Options::default();
    options.limits.max_rules = 2;
    insta::assert_snapshot!(
        "too-many-rules",
        render("root ::= a\na ::= b\nb ::= c\nc ::= \"x\"\n", &options)
    );
}

#[test]
fn custom_depth_limit() {
    let mut options = Options::default();
    options.limits.max_depth = 2;
    compile("root ::= ((\"a\"))", &options).unwrap();
    let errors = compile("root ::= (((\"a\")))", &options).unwrap_err();
    assert!(matches!(errors.first(), Error::TooDeep { limit: 2, .. }));
    assert_eq!(errors.first().span().start, 11);
}

#[test]
fn parse_and_lower_errors_come_separately() {
    // `parse` does not resolve names: an undefined rule is a lowering error.
    let ast = sieve_gbnf::parse("root ::= missing").unwrap();
    let errors = sieve_gbnf::lower(&ast, &Options::default()).unwrap_err();
    assert!(matches!(errors.first(), Error::UndefinedRule { .. }));
}

#[test]
fn several_syntax_level_errors_at_once() {
    insta::assert_snapshot!(
        "several-value-errors",
        render("root ::= \"a\\q\" [z-a] \"b\"{3,1}\n", &Options::default())
    );
}

#[test]
fn messages_name_what_was_expected_in_words() {
    let errors = compile("root ::= \"a\"{x}", &Options::default()).unwrap_err();
    let message = errors.first().to_string();
    assert!(!message.contains('"'), "no raw token names: {message}");
    assert!(message.contains("number"), "{message}");
}

#[test]
fn bad_grammars_that_parse_still_round_trip() {
    let dir = crate::repo_root().join("grammars/bad");
    let mut parsed = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if sieve_gbnf::parse(&text).is_ok() {
            crate::assert_round_trip(&path.display().to_string(), &text);
            parsed += 1;
        }
    }
    // duplicate-rule, empty-class, lookahead-unsupported, missing-root, undefined-rule
    assert_eq!(parsed, 5);
}

/// Built-in calls with arguments they do not take: every one is reported. (Inline rather than
/// a file under `grammars/bad/`, whose files every front-end's and the CLI's suites run.)
const BAD_CALLS: &str = r#"# Built-in calls with arguments they do not take.
root ::= text_until() substring_of(word) quoted_text("x") delimited_list(a, b, c) text_until("a", "")
word ::= "abc"
a ::= "a"
b ::= ","
c ::= ";"
"#;

#[test]
fn bad_builtin_arguments() {
    let text = BAD_CALLS;
    let errors = compile(text, &Options::default()).unwrap_err();
    let rendered = errors.render(&SourceFile::new("builtin-arguments.gbnf", text));
    insta::assert_snapshot!("builtin-arguments", rendered);
    crate::assert_round_trip("builtin-arguments", text);
    let found: Vec<(&str, usize)> = errors
        .into_iter()
        .map(|e| match e {
            Error::BadArguments { function, .. } => (*function, line_col(text, e).column),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        found,
        [
            ("text_until", 10),
            ("substring_of", 36),
            ("quoted_text", 42),
            ("delimited_list", 59),
            ("text_until", 99),
        ]
    );
}

#[test]
fn builtin_text_over_the_limit() {
    let mut limits = Limits::default();
    limits.max_call_text = 4;
    let mut options = Options::default();
    options.limits = limits;
    let errors = compile(r#"root ::= substring_of("abcde")"#, &options).unwrap_err();
    assert!(
        matches!(
            errors.first(),
            Error::CallTextTooLong {
                len: 5,
                limit: 4,
                ..
            }
        ),
        "{errors:?}"
    );
}
