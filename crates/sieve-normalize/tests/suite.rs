//! Normalisation tests: each pass on small grammars (exact output), and language preservation
//! of every pass on every grammar in `grammars/`, checked with the reference recogniser.

use std::path::Path;

use sieve_ir::{reference::Recognizer, Grammar};
use sieve_normalize::{
    check_stage, normalize, normalize_traced, Config, NormalizeError, Pass, PASSES,
};

fn gbnf(text: &str) -> Grammar {
    sieve_gbnf::compile(text, &sieve_gbnf::Options::default())
        .unwrap_or_else(|e| panic!("test grammar does not compile: {e:?}\n{text}"))
}

fn run_pass(name: &str, grammar: &Grammar) -> Grammar {
    let pass = PASSES.iter().find(|p| p.name == name).expect("known pass");
    let out = (pass.run)(grammar.clone(), &Config::default()).expect("pass succeeds");
    check_stage(&out, pass.establishes).expect("stage holds");
    assert_no_undeclared_growth(pass, grammar, &out);
    out
}

/// A pass that says it cannot grow the grammar (so `normalize` skips its size check) did not.
fn assert_no_undeclared_growth(pass: &Pass, before: &Grammar, after: &Grammar) {
    assert!(
        pass.may_grow || after.size() <= before.size(),
        "pass `{}` grew the grammar from {} to {} nodes but does not declare `may_grow`",
        pass.name,
        before.size(),
        after.size()
    );
}

/// Runs the passes up to and including `last` and returns the dump.
fn dump_through(text: &str, last: &str, config: &Config) -> String {
    let mut out = None;
    let mut grammar = gbnf(text);
    for pass in PASSES {
        let before = grammar.clone();
        grammar = (pass.run)(grammar, config).expect("pass succeeds");
        check_stage(&grammar, pass.establishes).expect("stage holds");
        assert_no_undeclared_growth(pass, &before, &grammar);
        if pass.name == last {
            out = Some(grammar.to_string());
            break;
        }
    }
    out.expect("known pass")
}

mod passes {
    use super::*;

    #[test]
    fn flatten_lifts_nested_groups() {
        let g = gbnf(
            r#"root ::= "{" (pair ("," pair)*)? "}"
pair ::= [a-z]+ "=" ([0-9] | "x")"#,
        );
        assert_eq!(
            run_pass("flatten", &g).to_string(),
            "# root: root\n\
             root ::= \"{\" root_1? \"}\"\n\
             pair ::= [a-z]+ \"=\" pair_1\n\
             root_1 ::= pair root_2*\n\
             root_2 ::= \",\" pair\n\
             pair_1 ::= [0-9] | \"x\"\n"
        );
    }

    #[test]
    fn flatten_lifts_equal_groups_once() {
        // The same group in two places of one rule and in another rule: one lifted rule,
        // named after the first, referenced from all three places.
        let g = gbnf(
            r#"root ::= ("a" | "b") "x" ("a" | "b") other
other ::= "y" ("a" | "b")"#,
        );
        assert_eq!(
            run_pass("flatten", &g).to_string(),
            "# root: root\n\
             root ::= root_1 \"x\" root_1 other\n\
             other ::= \"y\" root_1\n\
             root_1 ::= \"a\" | \"b\"\n"
        );
    }

    #[test]
    fn inline_terminals_stays_within_half_the_size_limit() {
        // `t` (16 nodes) is used 60 times: inlining it everywhere would add ~900 nodes, past
        // half of a 1,000-node limit, so some references stay and normalisation succeeds.
        let uses = vec!["t"; 60].join(" \",\" ");
        let text = format!(
            "root ::= {uses}\nt ::= [a-c] [d-f] [g-i] [j-l] [m-o] [p-r] [s-u] [v-x] \"!\" [0-1] [2-3] [4-5] [6-7] [8-9]"
        );
        let g = gbnf(&text);
        let config = Config {
            max_size: 1_000,
            ..Config::default()
        };
        let normalized = normalize(&g, &config).expect("within the limits");
        assert!(normalized.size() <= 500, "{} nodes", normalized.size());
        assert!(normalized.lookup("t").is_some(), "the references stay");
        // Without the limit everything is inlined.
        let free = normalize(&g, &Config::default()).unwrap();
        assert!(free.lookup("t").is_none());
        // Same language.
        let word = "adgjmpsv!02468";
        let sentence = vec![word; 60].join(",");
        for grammar in [&normalized, &free] {
            let r = Recognizer::new(grammar).unwrap();
            assert!(r.accepts(sentence.as_bytes()));
            assert!(!r.accepts(&sentence.as_bytes()[1..]));
        }
    }

    #[test]
    fn remove_useless_keeps_infinite_productive_rules() {
        let g = gbnf(
            r#"root ::= "ab" root | "ab" a | "ab" b | s
s ::= s
a ::= "c" d
d ::= s "q"
b ::= "a" b
c ::= "dc""#,
        );
        let out = run_pass("remove-useless", &run_pass("flatten", &g)).to_string();
        assert_eq!(
            out,
            "# root: root\nroot ::= \"ab\" root | \"ab\" b\nb ::= \"a\" b\n"
        );
    }

    #[test]
    fn remove_useless_reports_an_empty_language() {
        let g = gbnf("root ::= root \"a\"");
        let err = PASSES[1].run;
        assert_eq!(
            err(g, &Config::default()),
            Err(NormalizeError::EmptyLanguage {
                root: "root".into()
            })
        );
    }

    #[test]
    fn merge_identical_finds_bisimilar_recursive_rules() {
        let g = gbnf(
            r#"root ::= a "," b "," c
a ::= "x" a | "y"
b ::= "x" b | "y"
c ::= "x" c | "z""#,
        );
        assert_eq!(
            run_pass("merge-identical", &g).to_string(),
            "# root: root\nroot ::= a \",\" a \",\" c\na ::= \"x\" a | \"y\"\nc ::= \"x\" c | \"z\"\n"
        );
    }

    #[test]
    fn merge_identical_merges_unrolled_cycles_and_their_unfoldings() {
        // `a`/`b` unroll the loop `c` twice; `d` unfolds it once without being recursive; `e`
        // differs in its exit only.
        let g = gbnf(
            r#"root ::= a "," c "," d "," e
a ::= "x" b | "y"
b ::= "x" a | "y"
c ::= "x" c | "y"
d ::= "x" c | "y"
e ::= "x" e | "z""#,
        );
        assert_eq!(
            run_pass("merge-identical", &g).to_string(),
            "# root: root\nroot ::= a \",\" a \",\" a \",\" e\na ::= \"x\" a | \"y\"\ne ::= \"x\" e | \"z\"\n"
        );
    }

    #[test]
    fn merge_identical_merges_a_cycle_into_one_it_refers_to() {
        // `s`/`t` mirror the cycle `p`/`q`, and `s` refers to `q` itself: the cycle is
        // matched against classes it also names from outside.
        let g = gbnf(
            r#"root ::= p "," s
p ::= "x" q | "u" q
q ::= "x" p | "z"
s ::= "x" t | "u" q
t ::= "x" s | "z""#,
        );
        assert_eq!(
            run_pass("merge-identical", &g).to_string(),
            "# root: root\nroot ::= p \",\" p\np ::= \"x\" q | \"u\" q\nq ::= \"x\" p | \"z\"\n"
        );
    }

    #[test]
    fn merge_identical_keeps_rules_that_differ_deep_in_a_chain() {
        let g = gbnf(
            r#"root ::= a "," b
a ::= "x" a1
a1 ::= "x" a2
a2 ::= "y"
b ::= "x" b1
b1 ::= "x" b2
b2 ::= "z""#,
        );
        assert_eq!(run_pass("merge-identical", &g).to_string(), g.to_string());
    }

    #[test]
    fn unit_rules_are_replaced_by_their_target() {
        let g = gbnf(
            "root ::= value\nvalue ::= num | \"[\" value \"]\"\nnum ::= digit\ndigit ::= [0-9]",
        );
        assert_eq!(
            run_pass("remove-unit-rules", &run_pass("flatten", &g)).to_string(),
            "# root: value\nvalue ::= digit | \"[\" value \"]\"\ndigit ::= [0-9]\n"
        );
    }

    #[test]
    fn nullable_elimination_is_quadratic_not_exponential() {
        let g = gbnf("root ::= \"<\" b? b? b? b? b? \">\" | b? b? b?\nb ::= \"b\"");
        let out = dump_through(
            &g.to_string().replace("# root: root\n", ""),
            "eliminate-nullable",
            &Config::default(),
        );
        assert_eq!(
            out,
            "# root: root\n\
             root ::= \"<\" b? b? b? b? b? \">\" | b b? b? | b b? | b | \"\"\n\
             b ::= \"b\"\n"
        );
    }

    #[test]
    fn nullable_rules_become_optional_references() {
        let out = dump_through(
            "root ::= ws \"x\" ws e\nws ::= | \" \" | \"\\n\" [ \\t]*\ne ::= \"\"",
            "eliminate-nullable",
            &Config::default(),
        );
        assert_eq!(
            out,
            "# root: root\nroot ::= ws? \"x\" ws?\nws ::= \" \" | \"\\n\" [\\t ]*\n"
        );
    }

    #[test]
    fn nullable_root_referenced_elsewhere_gets_a_non_empty_copy() {
        let out = dump_through(
            "root ::= \"(\" root \")\" root | \"\"",
            "eliminate-nullable",
            &Config::default(),
        );
        assert_eq!(
            out,
            "# root: root\n\
             root ::= root_nonempty | \"\"\n\
             root_nonempty ::= \"(\" root_nonempty? \")\" root_nonempty?\n"
        );
    }

    #[test]
    fn literals_merge_and_alternatives_dedupe() {
        let out = dump_through(
            "root ::= \"a\" \"b\" [0-9] \"c\" \"d\" | \"ab\" | \"a\" \"b\"",
            "dedupe-alternatives",
            &Config::default(),
        );
        assert_eq!(out, "# root: root\nroot ::= \"ab\" [0-9] \"cd\" | \"ab\"\n");
    }

    #[test]
    fn small_repetitions_expand_in_place() {
        let config = Config {
            repetition_threshold: 4,
            ..Config::default()
        };
        let out = dump_through(
            "root ::= [0-9]{2,4} \"x\"{3} \"y\"{2,}",
            "repetition",
            &config,
        );
        assert_eq!(
            out,
            "# root: root\nroot ::= [0-9] [0-9] ([0-9] [0-9]?)? \"xxxy\" \"y\"+\n"
        );
    }

    #[test]
    fn large_repetitions_compress_into_counted_rules() {
        let config = Config {
            repetition_threshold: 2,
            ..Config::default()
        };
        let out = dump_through(
            "root ::= [a-z]{5,9} \",\" [a-z]{0,7} \",\" item{3,}\nitem ::= \"ab\" | \"c\"",
            "repetition",
            &config,
        );
        assert_eq!(
            out,
            "# root: root\n\
             root ::= [a-z] [a-z] root_repeat \",\" ([a-z] ([a-z] root_repeat_1?)?)? \",\" item item item+\n\
             item ::= \"ab\" | \"c\"\n\
             root_item ::= [a-z]\n\
             root_repeat ::= root_item{3,7}\n\
             root_repeat_1 ::= root_item{1,5}\n"
        );
    }
}

use sieve_testkit::{compile_file, grammar_files};

/// Sentences sampled from the grammar, and near misses made by editing them.
fn corpus(grammar: &Grammar) -> Vec<Vec<u8>> {
    let recognizer = Recognizer::new(grammar).expect("small repetition bounds");
    let mut out: Vec<Vec<u8>> = vec![Vec::new(), b"a".to_vec(), b"\xff".to_vec()];
    for seed in 0..24u64 {
        let Some(sample) = recognizer.sample(seed, 5 + (seed % 4) as usize) else {
            continue;
        };
        if sample.len() > 120 {
            continue;
        }
        let n = sample.len();
        let k = (seed as usize * 7 + 3) % (n + 1);
        out.push(sample[..k].to_vec());
        if n > 0 {
            let mut deleted = sample.clone();
            deleted.remove(k.min(n - 1));
            out.push(deleted);
            let mut replaced = sample.clone();
            replaced[k.min(n - 1)] = sample[(k * 3) % n];
            out.push(replaced);
        }
        let mut doubled = sample.clone();
        doubled.extend_from_slice(&sample[k..]);
        out.push(doubled);
        out.push(sample);
    }
    out.sort();
    out.dedup();
    out
}

fn check_language_preserved(path: &Path, config: &Config) {
    let original = compile_file(path);
    let corpus = corpus(&original);
    let reference = Recognizer::new(&original).expect("small bounds");
    let verdicts: Vec<bool> = corpus.iter().map(|s| reference.accepts(s)).collect();
    let mut stages = 0;
    normalize_traced(&original, config, |pass, grammar| {
        let stage = PASSES
            .iter()
            .find(|p| p.name == pass)
            .expect("known")
            .establishes;
        check_stage(grammar, stage)
            .unwrap_or_else(|e| panic!("{}: after {pass}: {e}", path.display()));
        let after = Recognizer::new(grammar).expect("small bounds");
        for (input, verdict) in corpus.iter().zip(&verdicts) {
            assert_eq!(
                after.accepts(input),
                *verdict,
                "{}: pass `{pass}` changed the verdict on {:?}\n{grammar}",
                path.display(),
                String::from_utf8_lossy(input)
            );
        }
        stages += 1;
    })
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(stages, PASSES.len());
    // The corpus must tell languages apart: it holds sentences (unless the grammar has none
    // that are finite) and non-sentences.
    assert!(
        verdicts.iter().any(|v| !v),
        "{}: corpus has no rejected string",
        path.display()
    );
    assert!(
        verdicts.iter().filter(|v| **v).count() >= 5,
        "{}: corpus has few sentences",
        path.display()
    );
}

#[test]
fn every_pass_preserves_the_language_of_every_grammar() {
    let files = grammar_files();
    assert!(
        files.len() >= 10,
        "expected the shipped grammars, found {}",
        files.len()
    );
    for path in &files {
        check_language_preserved(path, &Config::default());
        // A tiny threshold drives every repetition through the compression paths.
        check_language_preserved(
            path,
            &Config {
                repetition_threshold: 2,
                ..Config::default()
            },
        );
    }
}

#[test]
fn normalized_grammars_meet_the_final_contract() {
    for path in grammar_files() {
        let out = normalize(&compile_file(&path), &Config::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_stage(out.grammar(), sieve_normalize::Stage::Final)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[test]
fn normalized_reads_as_and_gives_up_its_grammar() {
    let out = normalize(&gbnf(r#"root ::= "a"{2,40} | "b""#), &Config::default()).unwrap();
    let traced = normalize_traced(
        &gbnf(r#"root ::= "a"{2,40} | "b""#),
        &Config::default(),
        |_, _| {},
    )
    .unwrap();
    assert_eq!(out, traced);
    assert_eq!(out.to_string(), out.grammar().to_string());
    assert_eq!(out.rules().len(), out.grammar().rules().len());
    let grammar: &Grammar = &out;
    assert_eq!(grammar, out.grammar());
    assert_eq!(out.clone().into_grammar(), *out.grammar());
}

#[test]
fn size_limits_are_reported() {
    let config = Config {
        max_size: 20,
        ..Config::default()
    };
    let g = gbnf("root ::= [ab]{10} [cd]{10}");
    match normalize(&g, &config) {
        Err(NormalizeError::TooLarge {
            pass: "repetition", ..
        }) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
}
