//! Every error kind: its variant, its span, and its rendered message (a named snapshot per
//! case, showing the caret under the span).

use sieve_diagnostics::{Located, SourceFile, Span};
use sieve_regex::{Error, Limits, LookAround, Options};

/// Compiles `pattern`, expects an error at `span`, snapshots its rendering as `name`, and
/// returns it for further checks.
fn check_err(name: &str, pattern: &str, options: &Options, span: (usize, usize)) -> Error {
    let err = match sieve_regex::compile(pattern, options) {
        Ok(grammar) => panic!("{name}: {pattern:?} compiled to\n{grammar}"),
        Err(err) => err,
    };
    assert_eq!(err.span(), Span::new(span.0, span.1), "{name}: {err:?}");
    let rendered = SourceFile::new("<regex>", pattern).render_error(&err);
    insta::assert_snapshot!(name, format!("{rendered}{err:?}"));
    err
}

fn err(name: &str, pattern: &str, span: (usize, usize)) -> Error {
    check_err(name, pattern, &Options::default(), span)
}

fn limited(limits: Limits) -> Options {
    Options {
        limits,
        ..Options::default()
    }
}

#[test]
fn syntax_errors_keep_regex_syntax_spans_and_messages() {
    for (name, pattern, span, message) in [
        ("syntax_unclosed_group", "ab(cd", (2, 3), "unclosed group"),
        ("syntax_unopened_group", "ab)", (2, 3), "unopened group"),
        (
            "syntax_class_range",
            "[z-a]",
            (1, 4),
            "invalid character class range, the start must be <= the end",
        ),
        (
            "syntax_missing_repetition",
            "*a",
            (0, 0),
            "repetition operator missing expression",
        ),
        (
            "syntax_repetition_bounds",
            "a{3,2}",
            (1, 6),
            "invalid repetition count range, the start must be <= the end",
        ),
        (
            "syntax_unknown_property",
            r"x\p{Klingon}",
            (1, 12),
            "Unicode property not found",
        ),
        (
            "syntax_unknown_escape",
            r"\y",
            (0, 2),
            "unrecognized escape sequence",
        ),
    ] {
        let e = err(name, pattern, span);
        assert!(matches!(e, Error::Syntax { .. }), "{e:?}");
        assert_eq!(e.to_string(), message);
    }
}

#[test]
fn look_around_is_named() {
    for (name, pattern, span, kind, message) in [
        (
            "look_ahead",
            "a(?=b)",
            (1, 4),
            LookAround::LookAhead,
            "look-ahead assertions `(?=…)` are not supported",
        ),
        (
            "negative_look_ahead",
            "(?!b)a",
            (0, 3),
            LookAround::NegativeLookAhead,
            "negative look-ahead assertions `(?!…)` are not supported",
        ),
        (
            "look_behind",
            "a(?<=a)b",
            (1, 5),
            LookAround::LookBehind,
            "look-behind assertions `(?<=…)` are not supported",
        ),
        (
            "negative_look_behind",
            "x(?<!a)",
            (1, 5),
            LookAround::NegativeLookBehind,
            "negative look-behind assertions `(?<!…)` are not supported",
        ),
    ] {
        let e = err(name, pattern, span);
        assert_eq!(
            e,
            Error::LookAround {
                span: Span::new(span.0, span.1),
                kind
            }
        );
        assert_eq!(e.to_string(), message);
    }
    // Under `x`, whitespace may sit inside the opening.
    let e = err("look_behind_extended", "(?x)a( ?<! b)", (5, 10));
    assert!(matches!(
        e,
        Error::LookAround {
            kind: LookAround::NegativeLookBehind,
            ..
        }
    ));
}

#[test]
fn back_references_are_rejected() {
    for (name, pattern, span, text) in [
        ("backref_number", r"(a)\1", (3, 5), r"\1"),
        ("backref_nine", r"a\9", (1, 3), r"\9"),
        ("backref_k_angle", r"(?<x>a)\k<x>", (7, 12), r"\k<x>"),
        ("backref_k_brace", r"(?<x>a)\k{x}b", (7, 12), r"\k{x}"),
        ("backref_python", r"(?P<x>a)(?P=x)", (8, 14), "(?P=x)"),
    ] {
        let e = err(name, pattern, span);
        assert_eq!(
            e.to_string(),
            format!("back-references (`{text}`) are not supported")
        );
    }
}

#[test]
fn word_boundaries_are_always_rejected() {
    for (name, pattern, span) in [
        ("word_boundary", r"\bword\b", (0, 2)),
        ("not_word_boundary", r"a\Bb", (1, 3)),
        ("word_start_angle", r"\<a", (0, 2)),
        ("word_end_angle", r"a\>", (1, 3)),
        ("word_start_special", r"\b{start}a", (0, 9)),
        ("word_end_half", r"a\b{end-half}", (1, 13)),
    ] {
        let e = err(name, pattern, span);
        assert!(matches!(e, Error::WordBoundary { .. }), "{e:?}");
        assert!(e.to_string().starts_with("word-boundary assertions"));
    }
}

#[test]
fn anchors_in_the_middle_are_rejected() {
    for (name, pattern, span, at_start, multi_line) in [
        ("anchor_start_in_middle", "a^b", (1, 2), true, false),
        ("anchor_end_in_middle", "a$b", (1, 2), false, false),
        ("anchor_text_start_in_middle", r"a\Ab", (1, 3), true, false),
        ("anchor_text_end_in_middle", r"a\zb", (1, 3), false, false),
        ("anchor_multi_line_start", "(?m)a\n^b", (6, 7), true, true),
        ("anchor_multi_line_end", "(?m:a$)\nb", (5, 6), false, true),
        (
            "anchor_end_in_group_not_last",
            "(a$|b)c",
            (2, 3),
            false,
            false,
        ),
        ("anchor_in_repetition", "(^a)*", (1, 2), true, false),
        ("anchor_start_at_end", "a^", (1, 2), true, false),
        ("anchor_end_at_start", "$a", (0, 1), false, false),
        ("anchor_after_anchor", "(^)^a", (3, 4), true, false),
    ] {
        let e = err(name, pattern, span);
        match e {
            Error::MisplacedAnchor {
                at_start: s,
                multi_line: m,
                ..
            } => assert_eq!((s, m), (at_start, multi_line), "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn empty_languages_point_at_the_empty_class() {
    for (name, pattern, span) in [
        ("empty_class_negated_all", r"[^\x00-\x{10FFFF}]", (0, 18)),
        ("empty_class_intersection", "ab[a&&b]", (2, 8)),
        ("empty_class_bytes", r"(?-u)x[^\x00-\xff]", (6, 18)),
        ("empty_class_any_complement", r"(a|b)\P{any}+", (5, 12)),
        (
            "empty_class_case_insensitive",
            r"(?i)a(?-i:[a&&A])",
            (10, 16),
        ),
        ("empty_class_all_flags_on", r"(?imx)a [a&&b]", (8, 14)),
    ] {
        let e = err(name, pattern, span);
        assert_eq!(
            e,
            Error::MatchesNothing {
                span: Span::new(span.0, span.1),
                whole: false
            }
        );
    }
}

#[test]
fn limits_are_enforced_with_a_location() {
    let e = check_err(
        "limit_pattern_length",
        "abcdefghij",
        &limited(Limits {
            max_pattern_len: 8,
            ..Limits::default()
        }),
        (8, 10),
    );
    assert_eq!(
        e.to_string(),
        "the pattern is 10 bytes long, over the limit of 8"
    );

    let e = check_err(
        "limit_nesting",
        "((((a))))",
        &limited(Limits {
            nest_limit: 3,
            ..Limits::default()
        }),
        (3, 6),
    );
    assert_eq!(
        e,
        Error::NestTooDeep {
            span: Span::new(3, 6),
            limit: 3
        }
    );
    let deep = format!("{}a{}", "(".repeat(500), ")".repeat(500));
    assert!(matches!(
        sieve_regex::compile(&deep, &Options::default()),
        Err(Error::NestTooDeep { limit: 128, .. })
    ));

    for (name, pattern, span, bound) in [
        ("limit_repeat_exact", "a{10001}", (1, 8), 10_001),
        ("limit_repeat_range", "(ab){2,20000}", (4, 13), 20_000),
        ("limit_repeat_at_least", "x{4294967295,}", (1, 14), u32::MAX),
    ] {
        let e = err(name, pattern, span);
        assert_eq!(
            e,
            Error::RepeatTooLarge {
                span: Span::new(span.0, span.1),
                bound,
                limit: 10_000
            }
        );
    }

    let e = check_err(
        "limit_grammar_size",
        r"\p{Greek}\p{Latin}\p{Cyrillic}",
        &limited(Limits {
            max_grammar_size: 100,
            ..Limits::default()
        }),
        (0, 30),
    );
    assert_eq!(
        e.to_string(),
        "the regex needs a grammar of more than 100 nodes"
    );
}

#[test]
fn an_empty_rule_name_is_an_error() {
    let options = Options {
        rule_name: String::new(),
        ..Options::default()
    };
    let e = check_err("empty_rule_name", "abc", &options, (0, 0));
    assert_eq!(e, Error::EmptyRuleName { span: Span::at(0) });
}

#[test]
fn extension_errors_are_located() {
    for (name, pattern, span, message) in [
        (
            "ext_text_until_not_literal",
            "(?P<TEXT_UNTIL>end|[ab])",
            (19, 23),
            "`TEXT_UNTIL` takes a literal text (no classes, repetitions or case-insensitive letters)",
        ),
        (
            "ext_text_until_case_insensitive",
            "(?i)(?P<TEXT_UNTIL>end)",
            (19, 22),
            "`TEXT_UNTIL` takes a literal text (no classes, repetitions or case-insensitive letters)",
        ),
        (
            "ext_text_until_empty",
            "a(?P<TEXT_UNTIL>)",
            (1, 17),
            "`TEXT_UNTIL` takes one or more stop phrases separated by `|`",
        ),
        (
            "ext_text_until_empty_alternative",
            "(?P<TEXT_UNTIL>a|)",
            (17, 17),
            "`TEXT_UNTIL` takes a non-empty literal text",
        ),
        (
            "ext_substring_of_not_literal",
            r"(?P<SUBSTRING_OF>ab\d)",
            (17, 21),
            "`SUBSTRING_OF` takes a literal text (no classes, repetitions or case-insensitive letters)",
        ),
        (
            "ext_substring_of_not_utf8",
            r"(?-u:(?P<SUBSTRING_OF>a\xFF))",
            (22, 27),
            "`SUBSTRING_OF` takes valid UTF-8 text",
        ),
        (
            "ext_quoted_text_content",
            "(?P<QUOTED_TEXT>x)",
            (16, 17),
            "`QUOTED_TEXT` takes nothing: the group is written empty",
        ),
        (
            "ext_list_without_item",
            "(?P<DELIMITED_LIST>(?P<DELIMITER>,))",
            (19, 35),
            "`DELIMITED_LIST` takes the pattern of one item",
        ),
    ] {
        let e = err(name, pattern, span);
        assert!(matches!(e, Error::ExtensionContent { .. }), "{e:?}");
        assert_eq!(e.to_string(), message);
    }
}

#[test]
fn extension_names_are_checked() {
    let e = err("ext_unknown", "a(?P<TEXT_UNTILL>b)", (5, 16));
    assert_eq!(
        e,
        Error::UnknownExtension {
            span: Span::new(5, 16),
            name: "TEXT_UNTILL".into(),
            suggestion: "TEXT_UNTIL".into()
        }
    );
    let e = err("ext_token_level", "(?P<PARAGRAPH_TOKEN>)+", (4, 19));
    assert!(matches!(e, Error::TokenLevelExtension { .. }), "{e:?}");
    for (name, pattern, span) in [
        ("ext_delimiter_alone", "a(?P<DELIMITER>,)", (1, 17)),
        (
            "ext_delimiter_not_last",
            "(?P<DELIMITED_LIST>a(?P<DELIMITER>,)b)",
            (20, 36),
        ),
        (
            "ext_delimiter_in_text_until",
            "(?P<TEXT_UNTIL>a(?P<DELIMITER>,))",
            (16, 32),
        ),
    ] {
        let e = err(name, pattern, span);
        assert!(matches!(e, Error::MisplacedDelimiter { .. }), "{e:?}");
    }
}

#[test]
fn extension_limits_are_errors() {
    let options = limited(Limits {
        max_extension_text: 8,
        ..Limits::default()
    });
    let e = check_err(
        "ext_text_too_long",
        "x(?P<SUBSTRING_OF>abcdefghi)",
        &options,
        (1, 28),
    );
    assert!(
        matches!(
            e,
            Error::ExtensionTooLarge {
                len: 9,
                limit: 8,
                ..
            }
        ),
        "{e:?}"
    );
    let e = check_err(
        "ext_stops_too_long",
        "(?P<TEXT_UNTIL>abcde|fghi)",
        &options,
        (0, 26),
    );
    assert!(
        matches!(e, Error::ExtensionTooLarge { len: 9, .. }),
        "{e:?}"
    );
    // Anchors inside an extension are never at the ends of the output.
    let e = err("ext_anchor_inside", "(?P<DELIMITED_LIST>^a)", (19, 20));
    assert!(matches!(e, Error::MisplacedAnchor { .. }), "{e:?}");
}
