//! Inputs found by fuzzing (`fuzz/fuzz_targets/regex.rs`), each a plain test with a comment
//! saying what went wrong, and the adversarial shapes the fuzzer is slow to reach (long inputs).
//!
//! The first runs (282,488 inputs in 300 s, then 81,602 in 150 s with `-max_len=4096`; inputs
//! grew to 133 bytes, peak RSS about 500 MB under ASan) found no crash, hang or memory blow-up,
//! so the tests below are the stress shapes only.

use sieve_regex::{compile, Error, Options};

/// Nesting far past the limit is refused by the parser before anything recurses.
#[test]
fn deep_nesting_is_refused_early() {
    for pattern in [
        format!("{}a{}", "(".repeat(30_000), ")".repeat(30_000)),
        format!("{}a{}", "[".repeat(30_000), "]".repeat(30_000)),
        format!("{}a{}", "(?:".repeat(10_000), ")*".repeat(10_000)),
    ] {
        let result = compile(&pattern, &Options::default());
        assert!(
            matches!(result, Err(Error::NestTooDeep { .. })),
            "{:?}",
            result.map(|g| g.size())
        );
    }
}

/// Nested counted repetitions multiply to 10^12 but stay unexpanded in the IR.
#[test]
fn nested_counted_repetitions_stay_small() {
    let pattern = "((((a{1000}){1000}){1000}){1000})";
    let grammar = compile(pattern, &Options::default()).unwrap();
    assert!(grammar.size() < 10);
}

/// Many distinct large Unicode classes are cut off by the grammar-size limit, not memory.
#[test]
fn many_distinct_classes_hit_the_size_limit() {
    let pattern: String = (0..2_500)
        .map(|i| format!(r"[\pL--\x{{{:x}}}]", 0x4e00 + i))
        .collect();
    assert!(pattern.len() < 65_536);
    assert!(matches!(
        compile(&pattern, &Options::default()),
        Err(Error::GrammarTooLarge { .. })
    ));
}

/// A long pattern of one repeated big class is shared as one rule.
#[test]
fn a_repeated_big_class_is_one_rule() {
    let pattern = r"\w".repeat(2_000);
    let grammar = compile(&pattern, &Options::default()).unwrap();
    assert_eq!(grammar.rules().len(), 2);
}
