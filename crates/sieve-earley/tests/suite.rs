//! The integration suite of sieve-earley, through the public API only: agreement with the
//! reference recogniser (`sieve_ir::reference::Recognizer`, on the original grammar) on every
//! shipped grammar and on random small grammars, `allowed_bytes` against brute force, the
//! push/pop stack discipline, counted repetitions with large bounds, Leo's optimisation, left
//! recursion and the limits.

use std::sync::Arc;

use proptest::prelude::*;
use sieve_earley::{Config, EarleyGrammar, LimitError, Parser};
use sieve_ir::reference::Recognizer;
use sieve_ir::{ByteClass, Grammar};
use sieve_testkit::random::arb_grammar;

mod common;
use common::{compile, compile_with};

// ---------------------------------------------------------------------------------------------
// Helpers

fn gbnf(text: &str) -> Grammar {
    sieve_gbnf::compile(text, &sieve_gbnf::Options::default()).expect("test grammar compiles")
}

fn regex(pattern: &str) -> Grammar {
    sieve_regex::compile(pattern, &sieve_regex::Options::default()).expect("test regex compiles")
}

fn parser_for(grammar: &Grammar) -> Parser {
    Parser::new(compile(grammar))
}

/// Feeds `input`; the number of bytes accepted before the first rejection.
fn feed(parser: &mut Parser, input: &[u8]) -> usize {
    for (i, &b) in input.iter().enumerate() {
        if !parser.push_byte(b).expect("no limit in this test") {
            return i;
        }
    }
    input.len()
}

fn accepts(grammar: &Grammar, input: &[u8]) -> bool {
    let mut p = parser_for(grammar);
    feed(&mut p, input) == input.len() && p.can_finish()
}

/// The bytes a clone of `parser` accepts, one `push_byte` each.
fn brute_allowed(parser: &Parser) -> ByteClass {
    let mut out = ByteClass::EMPTY;
    for b in 0..=255u8 {
        let mut clone = parser.clone();
        if clone.push_byte(b).expect("no limit in this test") {
            out.insert(b);
            assert_eq!(clone.len(), parser.len() + 1);
        } else {
            assert_eq!(clone.len(), parser.len());
        }
    }
    out
}

/// Small deterministic generator for edits and walks.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Near-misses of `sentence`: one byte deleted, inserted, replaced or the tail cut.
fn near_misses(sentence: &[u8], rng: &mut Rng, count: usize) -> Vec<Vec<u8>> {
    let alphabet: Vec<u8> = sentence.to_vec();
    (0..count)
        .map(|_| {
            let mut s = sentence.to_vec();
            let at = rng.below(s.len() + 1);
            let byte = if !alphabet.is_empty() && rng.below(2) == 0 {
                alphabet[rng.below(alphabet.len())]
            } else {
                rng.below(256) as u8
            };
            match rng.below(4) {
                0 if at < s.len() => {
                    s.remove(at);
                }
                1 => s.insert(at, byte),
                2 if at < s.len() => s[at] = byte,
                _ => s.truncate(at),
            }
            s
        })
        .collect()
}

/// Runs `input` through a fresh parser and checks it against the oracles at every prefix:
/// `push_byte` against `prefix_oracle.accepts_prefix`, `can_finish` against
/// `oracle.accepts`, and (every `allowed_every` steps) `allowed_bytes` against brute force.
fn check_input(
    engine: &Arc<EarleyGrammar>,
    oracle: &Recognizer,
    prefix_oracle: &Recognizer,
    input: &[u8],
    allowed_every: usize,
    what: &str,
) {
    let mut parser = Parser::new(engine.clone());
    let shown = || String::from_utf8_lossy(input).into_owned();
    assert_eq!(
        parser.can_finish(),
        oracle.accepts(b""),
        "{what}: empty input"
    );
    for (i, &b) in input.iter().enumerate() {
        if allowed_every > 0 && i % allowed_every == 0 {
            assert_eq!(
                parser.allowed_bytes(),
                brute_allowed(&parser),
                "{what}: allowed bytes after {i} bytes of {:?}",
                shown()
            );
        }
        let pushed = parser.push_byte(b).expect("no limit");
        let expected = prefix_oracle.accepts_prefix(&input[..=i]);
        assert_eq!(
            pushed,
            expected,
            "{what}: push of byte {i} ({:?}) of {:?}",
            b as char,
            shown()
        );
        if !pushed {
            assert_eq!(parser.len(), i);
            assert!(!oracle.accepts(input), "{what}: {:?}", shown());
            return;
        }
        assert_eq!(
            parser.can_finish(),
            oracle.accepts(&input[..=i]),
            "{what}: can_finish after {} bytes of {:?}",
            i + 1,
            shown()
        );
    }
    if allowed_every > 0 {
        assert_eq!(
            parser.allowed_bytes(),
            brute_allowed(&parser),
            "{what}: end"
        );
    }
}

/// Every shipped grammar that compiles, with its file name.
fn shipped_grammars() -> Vec<(String, Grammar)> {
    let mut out: Vec<(String, Grammar)> = sieve_testkit::grammar_files()
        .iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, sieve_testkit::compile_file(path))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 20, "found {} grammars", out.len());
    out
}

// ---------------------------------------------------------------------------------------------
// Oracle on the shipped grammars

#[test]
fn shipped_grammars_agree_with_the_reference_recogniser() {
    for (name, grammar) in shipped_grammars() {
        let engine = compile(&grammar);
        let oracle = Recognizer::new(&grammar).expect("small bounds");
        let mut rng = Rng(name.len() as u64);
        let mut sentences = 0;
        for seed in 0..12u64 {
            let Some(sentence) = oracle.sample(seed, 5) else {
                continue;
            };
            if sentence.len() > 400 {
                continue;
            }
            sentences += 1;
            let every = if sentence.len() <= 40 { 1 } else { 7 };
            check_input(&engine, &oracle, &oracle, &sentence, every, &name);
            let mut p = Parser::new(engine.clone());
            assert_eq!(feed(&mut p, &sentence), sentence.len(), "{name}");
            assert!(p.can_finish(), "{name}: sample must be accepted");
            for miss in near_misses(&sentence, &mut rng, 6) {
                check_input(&engine, &oracle, &oracle, &miss, 0, &name);
            }
        }
        assert!(sentences > 0, "{name}: no sample");
    }
}

#[test]
fn leo_on_and_off_agree_on_the_shipped_grammars() {
    for (name, grammar) in shipped_grammars() {
        let normalize = sieve_normalize::Config::default();
        let on = compile_with(&grammar, &normalize, Config::default()).unwrap();
        let off_config = Config {
            leo: false,
            ..Config::default()
        };
        let off = compile_with(&grammar, &normalize, off_config).unwrap();
        let oracle = Recognizer::new(&grammar).unwrap();
        for seed in 100..106u64 {
            let Some(sentence) = oracle.sample(seed, 6) else {
                continue;
            };
            let (mut a, mut b) = (Parser::new(on.clone()), Parser::new(off.clone()));
            for &byte in &sentence {
                assert_eq!(a.allowed_bytes(), b.allowed_bytes(), "{name}");
                assert_eq!(a.can_finish(), b.can_finish(), "{name}");
                assert!(a.push_byte(byte).unwrap() && b.push_byte(byte).unwrap());
            }
            assert!(a.can_finish() && b.can_finish(), "{name}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stack discipline

/// A random walk of pushes (allowed bytes, sometimes a rejected one) and pops; after every pop
/// the parser must match a fresh parser fed the same input, down to the stored item count.
fn random_walk(engine: &Arc<EarleyGrammar>, seed: u64, steps: usize, what: &str) {
    let mut rng = Rng(seed);
    let mut parser = Parser::new(engine.clone());
    let mut input: Vec<u8> = Vec::new();
    for _ in 0..steps {
        if rng.below(4) == 0 && !input.is_empty() {
            let k = 1 + rng.below(input.len().min(6));
            parser.pop_bytes(k);
            input.truncate(input.len() - k);
            let mut fresh = Parser::new(engine.clone());
            assert_eq!(feed(&mut fresh, &input), input.len(), "{what}");
            assert_eq!(parser.len(), fresh.len(), "{what}");
            assert_eq!(parser.allowed_bytes(), fresh.allowed_bytes(), "{what}");
            assert_eq!(parser.can_finish(), fresh.can_finish(), "{what}");
            assert_eq!(parser.stats(), fresh.stats(), "{what}");
            continue;
        }
        let allowed: Vec<u8> = parser.allowed_bytes().iter().collect();
        if allowed.is_empty() {
            break;
        }
        let byte = if rng.below(8) == 0 {
            rng.below(256) as u8
        } else {
            allowed[rng.below(allowed.len())]
        };
        let before = (parser.len(), parser.stats());
        let pushed = parser.push_byte(byte).unwrap();
        assert_eq!(pushed, allowed.contains(&byte), "{what}");
        if pushed {
            input.push(byte);
        } else {
            assert_eq!(
                (parser.len(), parser.stats()),
                before,
                "{what}: rejected byte"
            );
        }
    }
    parser.reset();
    let fresh = Parser::new(engine.clone());
    assert_eq!(parser.stats(), fresh.stats(), "{what}: reset");
    assert_eq!(
        parser.allowed_bytes(),
        fresh.allowed_bytes(),
        "{what}: reset"
    );
}

#[test]
fn pop_restores_exactly_on_the_shipped_grammars() {
    for (name, grammar) in shipped_grammars() {
        let engine = compile(&grammar);
        for seed in 0..4 {
            random_walk(&engine, seed, 200, &name);
        }
    }
}

#[test]
fn pop_zero_and_pop_all() {
    let mut p = parser_for(&gbnf(r#"root ::= "ab" root | "c""#));
    assert_eq!(feed(&mut p, b"abab"), 4);
    p.pop_bytes(0);
    assert_eq!(p.len(), 4);
    p.pop_bytes(4);
    assert!(p.is_empty());
    assert_eq!(
        p.allowed_bytes(),
        ByteClass::from_ranges([(b'a', b'a'), (b'c', b'c')])
    );
}

#[test]
#[should_panic(expected = "cannot pop")]
fn popping_too_much_panics() {
    let mut p = parser_for(&gbnf(r#"root ::= "a""#));
    p.pop_bytes(1);
}

// ---------------------------------------------------------------------------------------------
// Counted repetitions

fn counted(pattern: &str) -> Arc<EarleyGrammar> {
    let normalize = sieve_normalize::Config {
        repetition_threshold: 4,
        ..sieve_normalize::Config::default()
    };
    compile_with(&regex(pattern), &normalize, Config::default()).unwrap()
}

#[test]
fn counted_repetition_boundaries() {
    let engine = counted("[a-z]{0,5000}");
    let mut p = Parser::new(engine.clone());
    assert!(p.can_finish());
    for i in 1..=5000 {
        assert!(p.push_byte(b'a' + (i % 26) as u8).unwrap(), "byte {i}");
        if i >= 4998 {
            assert!(p.can_finish(), "length {i}");
        }
    }
    assert!(p.allowed_bytes().is_empty());
    assert!(!p.push_byte(b'a').unwrap(), "length 5001");
    assert_eq!(p.len(), 5000);
    p.pop_bytes(1);
    assert!(p.can_finish(), "length 4999");
    assert_eq!(p.allowed_bytes(), ByteClass::range(b'a', b'z'));
    // Work per set stays small: the count lives in the item.
    assert!(p.stats().max_set_work < 64, "{:?}", p.stats());

    let engine = counted("[a-z]{3000,5000}");
    let mut p = Parser::new(engine);
    for i in 1..=5000usize {
        assert!(p.push_byte(b'q').unwrap());
        assert_eq!(p.can_finish(), i >= 3000, "length {i}");
    }
    assert!(!p.push_byte(b'q').unwrap());
}

#[test]
fn counted_repetition_of_a_group_and_unbounded() {
    let engine = counted("(ab|c){10,1000}x");
    let oracle = Recognizer::new(&regex("(ab|c){10,1000}x")).unwrap();
    for n in [9usize, 10, 11, 999, 1000, 1001] {
        let mut s: Vec<u8> = (0..n)
            .flat_map(|i| {
                if i % 2 == 0 {
                    b"ab".to_vec()
                } else {
                    b"c".to_vec()
                }
            })
            .collect();
        s.push(b'x');
        let mut p = Parser::new(engine.clone());
        let ok = feed(&mut p, &s) == s.len() && p.can_finish();
        assert_eq!(ok, (10..=1000).contains(&n), "n = {n}");
        assert_eq!(ok, oracle.accepts(&s), "n = {n}");
    }
    let engine = counted("a{7,}b");
    for n in 0..40usize {
        let mut s = vec![b'a'; n];
        s.push(b'b');
        let mut p = Parser::new(engine.clone());
        let ok = feed(&mut p, &s) == s.len() && p.can_finish();
        assert_eq!(ok, n >= 7, "n = {n}");
        // Unbounded counts are clamped at the minimum, so sets do not grow.
        assert!(p.stats().max_set_work < 32);
    }
}

// ---------------------------------------------------------------------------------------------
// Leo, left recursion

#[test]
fn leo_keeps_right_recursion_sets_bounded() {
    // Mutual right recursion: a direct `root ::= "a" root | "a"` would become a loop in
    // normalisation (`tail-loops`) and never reach Leo.
    let grammar = gbnf(
        r#"root ::= "a" next | "a"
next ::= "a" root"#,
    );
    let mut p = parser_for(&grammar);
    let n = 20_000;
    for _ in 0..n {
        assert!(p.push_byte(b'a').unwrap());
    }
    assert_eq!(p.can_finish(), n % 2 == 1);
    let stats = p.stats();
    assert!(stats.max_set_work <= 8, "{stats:?}");
    assert!(stats.stored_items <= 8 * (n + 1), "{stats:?}");

    // Without Leo the chain of completions is walked: work grows with the input.
    let off = compile_with(
        &grammar,
        &sieve_normalize::Config::default(),
        Config {
            leo: false,
            ..Config::default()
        },
    )
    .unwrap();
    let mut q = Parser::new(off);
    for _ in 0..1000 {
        assert!(q.push_byte(b'a').unwrap());
    }
    assert!(q.stats().max_set_work > 900, "{:?}", q.stats());
}

#[test]
fn leo_through_mutual_right_recursion_and_an_outer_context() {
    // The chain passes through two rules and ends inside a non-recursive parent.
    let grammar = gbnf(
        r#"root ::= "<" a ">" | a
a ::= "x" b | "x"
b ::= "y" a"#,
    );
    let engine = compile(&grammar);
    let oracle = Recognizer::new(&grammar).unwrap();
    let mut long = b"<".to_vec();
    for _ in 0..2000 {
        long.extend_from_slice(b"xy");
    }
    long.extend_from_slice(b"x>");
    let mut p = Parser::new(engine.clone());
    assert_eq!(feed(&mut p, &long), long.len());
    assert!(p.can_finish());
    assert!(p.stats().max_set_work <= 12, "{:?}", p.stats());
    for input in [
        &b"xyx"[..],
        b"<xyx>",
        b"<xy>",
        b"xy",
        b"<x>",
        b"x>",
        b"<xyxyx",
    ] {
        check_input(&engine, &oracle, &oracle, input, 1, "mutual");
    }
}

#[test]
fn left_recursion_is_recognised_with_bounded_sets() {
    let grammar = gbnf(
        r#"root ::= root "+" term | term
term ::= term "*" num | num
num ::= [0-9]+ | "(" root ")""#,
    );
    let engine = compile(&grammar);
    let oracle = Recognizer::new(&grammar).unwrap();
    for input in [
        &b"1"[..],
        b"1+2*3",
        b"(1+2)*3+4",
        b"1++2",
        b"((1)",
        b"1+(2*(3+4))*5",
        b"*1",
    ] {
        check_input(&engine, &oracle, &oracle, input, 1, "arith");
    }
    let mut long = Vec::new();
    for i in 0..3000 {
        long.extend_from_slice(if i % 2 == 0 { b"12+" } else { b"3*" });
    }
    long.push(b'7');
    let mut p = Parser::new(engine);
    assert_eq!(feed(&mut p, &long), long.len());
    assert!(p.can_finish());
    assert!(p.stats().max_set_work <= 32, "{:?}", p.stats());
}

// ---------------------------------------------------------------------------------------------
// Nullable root, ε, infinite rules

#[test]
fn nullable_root_referenced_from_inside() {
    // `root` is nullable and referenced, so normalisation adds a non-empty copy.
    let grammar = gbnf(r#"root ::= "(" root ")" root | """#);
    let engine = compile(&grammar);
    let oracle = Recognizer::new(&grammar).unwrap();
    assert!(Parser::new(engine.clone()).can_finish());
    for input in [&b"()"[..], b"(())()", b"(()", b")", b"()()(()())", b"(()))"] {
        check_input(&engine, &oracle, &oracle, input, 1, "parens");
    }
}

#[test]
fn pumping_infinite_rule_accepts_prefixes_forever() {
    // `b` has no finite sentence; its prefixes are still viable.
    let grammar = gbnf(
        r#"root ::= "x" | "y" b
b ::= "a" b"#,
    );
    let mut p = parser_for(&grammar);
    assert!(p.push_byte(b'y').unwrap());
    for _ in 0..100 {
        assert!(p.push_byte(b'a').unwrap());
        assert!(!p.can_finish());
    }
    assert!(!p.push_byte(b'b').unwrap());
    assert!(accepts(&grammar, b"x"));
}

// ---------------------------------------------------------------------------------------------
// Limits

#[test]
fn ambiguous_grammar_hits_the_set_limit_and_stays_unchanged() {
    let grammar = gbnf(r#"root ::= root root | "a""#);
    let config = Config {
        max_items_per_set: 2000,
        // The work limit would stop this grammar first.
        max_work_per_byte: usize::MAX,
        ..Config::default()
    };
    let engine = compile_with(&grammar, &sieve_normalize::Config::default(), config).unwrap();
    let oracle = Recognizer::new(&grammar).unwrap();
    let mut p = Parser::new(engine);
    let error = loop {
        let before = (p.len(), p.stats(), p.allowed_bytes(), p.can_finish());
        match p.push_byte(b'a') {
            Ok(true) => {
                assert!(p.can_finish());
                if p.len() < 30 {
                    assert!(oracle.accepts(&vec![b'a'; p.len()]));
                }
            }
            Ok(false) => panic!("`a`s are always accepted"),
            Err(e) => {
                assert_eq!(
                    (p.len(), p.stats(), p.allowed_bytes(), p.can_finish()),
                    before
                );
                break e;
            }
        }
        assert!(p.len() < 10_000, "the limit never triggered");
    };
    assert_eq!(error.limit_name(), "max_items_per_set");
    assert_eq!(error.limit(), 2000);
    assert!(
        error.to_string().contains("max_items_per_set is 2000"),
        "{error}"
    );
    // Popping makes room again.
    p.pop_bytes(10);
    assert!(p.push_byte(b'a').unwrap());
}

/// Pushes `a`s until a limit stops the parser; checks that the error left it unchanged and
/// that every set built so far stayed within the work limit. Returns the error and the parser.
fn push_as_until_a_limit(engine: Arc<EarleyGrammar>, give_up: usize) -> (LimitError, Parser) {
    let mut p = Parser::new(engine.clone());
    let error = loop {
        let before = (p.len(), p.stats(), p.allowed_bytes(), p.can_finish());
        match p.push_byte(b'a') {
            Ok(true) => assert!(p.can_finish()),
            Ok(false) => panic!("`a`s are always accepted"),
            Err(e) => {
                let after = (p.len(), p.stats(), p.allowed_bytes(), p.can_finish());
                assert_eq!(
                    after, before,
                    "a limit error must leave the parser unchanged"
                );
                break e;
            }
        }
        assert!(p.len() < give_up, "no limit triggered in {give_up} bytes");
    };
    // The initial set is exempt; every pushed byte stayed within the fuel.
    let fuel = engine.config().max_work_per_byte;
    let mut q = Parser::new(engine);
    for _ in 0..p.len() {
        assert!(q.push_byte(b'a').unwrap());
        assert!(q.stats().top_set_fuel <= fuel, "{:?}", q.stats());
    }
    assert_eq!(q.stats(), p.stats());
    (error, p)
}

#[test]
fn ambiguous_grammar_hits_the_work_limit_and_stays_unchanged() {
    // Sets grow linearly but completion visits every waiter of every origin set: quadratic
    // work per byte, which `max_items_per_set` alone does not catch.
    let grammar = gbnf(r#"root ::= root root | "a""#);
    let config = Config {
        max_work_per_byte: 20_000,
        ..Config::default()
    };
    let engine = compile_with(&grammar, &sieve_normalize::Config::default(), config).unwrap();
    let (error, mut p) = push_as_until_a_limit(engine, 10_000);
    assert_eq!(error.limit_name(), "max_work_per_byte");
    assert_eq!(error.limit(), 20_000);
    assert!(
        error.to_string().contains("max_work_per_byte is 20000"),
        "{error}"
    );
    // Sets stay far below the item limit: the work, not the size, stopped the parser.
    assert!(p.stats().max_set_work < 2000, "{:?}", p.stats());
    let n = p.len();
    assert!((100..1000).contains(&n), "stopped after {n} bytes");
    // The same byte fails the same way again; the parser is still usable.
    assert_eq!(p.push_byte(b'a'), Err(error));
    assert_eq!(p.len(), n);
    assert!(!p.push_byte(b'b').unwrap(), "a rejected byte is no error");
    assert!(p.allowed_bytes().contains(b'a') && p.can_finish());
    // Popping makes room again.
    p.pop_bytes(10);
    assert!(p.push_byte(b'a').unwrap());
    assert_eq!(p.len(), n - 9);
}

#[test]
fn default_work_limit_stops_the_ambiguous_grammar_within_a_thousand_bytes() {
    let grammar = gbnf(r#"root ::= root root | "a""#);
    let engine = compile(&grammar);
    let (error, p) = push_as_until_a_limit(engine, 2000);
    assert_eq!(error.limit_name(), "max_work_per_byte");
    assert_eq!(error.limit(), Config::default().max_work_per_byte);
    assert!(p.len() < 1000, "stopped after {} bytes", p.len());
}

/// A long JSON text in the layout of llama.cpp's `json.gbnf`: nested objects and arrays,
/// escapes, numbers, optional whitespace.
fn long_json(rng: &mut Rng, target: usize) -> Vec<u8> {
    fn value(rng: &mut Rng, out: &mut Vec<u8>, depth: usize) {
        let ws = |rng: &mut Rng, out: &mut Vec<u8>| match rng.below(4) {
            0 => out.push(b' '),
            1 => out.extend_from_slice(b"\n    "),
            _ => {}
        };
        let string = |rng: &mut Rng, out: &mut Vec<u8>| {
            out.push(b'"');
            for _ in 0..rng.below(12) {
                match rng.below(10) {
                    0 => out.extend_from_slice(b"\\n"),
                    1 => out.extend_from_slice(b"\\u00e9"),
                    2 => out.extend_from_slice("é".as_bytes()),
                    _ => out.push(b'a' + rng.below(26) as u8),
                }
            }
            out.push(b'"');
        };
        match if depth > 12 {
            2 + rng.below(3)
        } else {
            rng.below(5)
        } {
            0 | 1 => {
                let object = rng.below(2) == 0;
                out.push(if object { b'{' } else { b'[' });
                ws(rng, out);
                for i in 0..rng.below(6) {
                    if i > 0 {
                        out.push(b',');
                        ws(rng, out);
                    }
                    if object {
                        string(rng, out);
                        ws(rng, out);
                        out.push(b':');
                        ws(rng, out);
                    }
                    value(rng, out, depth + 1);
                }
                out.push(if object { b'}' } else { b']' });
            }
            2 => string(rng, out),
            3 => {
                let n = rng.next() % 1_000_000;
                out.extend_from_slice(format!("-{n}.25e+7").as_bytes());
            }
            _ => out.extend_from_slice([&b"true"[..], b"false", b"null"][rng.below(3)]),
        }
        ws(rng, out);
    }
    let mut out = b"{\"items\": [".to_vec();
    while out.len() < target {
        if out.len() > 12 {
            out.extend_from_slice(b", ");
        }
        value(rng, &mut out, 0);
    }
    out.extend_from_slice(b"]}");
    out
}

#[test]
fn normal_grammars_stay_far_below_the_work_limit() {
    let limit = Config::default().max_work_per_byte;
    // Every shipped grammar, on sampled sentences.
    for (name, grammar) in shipped_grammars() {
        let engine = compile(&grammar);
        let oracle = Recognizer::new(&grammar).expect("small bounds");
        let mut most = 0;
        for seed in 0..40u64 {
            let Some(sentence) = oracle.sample(seed, 8) else {
                continue;
            };
            let mut p = Parser::new(engine.clone());
            assert_eq!(feed(&mut p, &sentence), sentence.len(), "{name}");
            most = most.max(p.stats().max_set_fuel);
        }
        assert!(most < limit / 1000, "{name}: {most} units for one byte");
    }
    // A long JSON text (nested, with escapes) through llama.cpp's JSON grammar.
    let path = sieve_testkit::grammars_dir().join("llama.cpp/json.gbnf");
    let engine = compile(&sieve_testkit::compile_file(&path));
    let text = long_json(&mut Rng(42), 200_000);
    let mut p = Parser::new(engine);
    assert_eq!(feed(&mut p, &text), text.len());
    assert!(p.can_finish());
    let most = p.stats().max_set_fuel;
    assert!(most < limit / 1000, "json.gbnf: {most} units for one byte");
    // A long regex match.
    let engine = compile(&regex(
        r"([a-z]+|[0-9]+(\.[0-9]+)?)( ([a-z]+|[0-9]+(\.[0-9]+)?))*",
    ));
    let mut p = Parser::new(engine);
    let mut rng = Rng(7);
    let mut text = b"start".to_vec();
    while text.len() < 100_000 {
        text.push(b' ');
        let word = if rng.below(2) == 0 { "word" } else { "3.14" };
        text.extend_from_slice(word.as_bytes());
    }
    assert_eq!(feed(&mut p, &text), text.len());
    assert!(p.can_finish());
    assert!(p.stats().max_set_fuel < 64, "{:?}", p.stats());
}

#[test]
fn history_and_total_item_limits() {
    let grammar = gbnf(r#"root ::= [a-z]+"#);
    let engine = compile_with(
        &grammar,
        &sieve_normalize::Config::default(),
        Config {
            max_bytes_history: 10,
            ..Config::default()
        },
    )
    .unwrap();
    let mut p = Parser::new(engine);
    assert_eq!(feed(&mut p, b"abcdefghij"), 10);
    let e = p.push_byte(b'k').unwrap_err();
    assert_eq!((e.limit_name(), e.limit()), ("max_bytes_history", 10));
    assert_eq!(p.len(), 10);
    // A rejected byte is not an error, even at the limit.
    assert!(!p.push_byte(b'0').unwrap());

    let grammar = gbnf(r#"root ::= root root | "a""#);
    let engine = compile_with(
        &grammar,
        &sieve_normalize::Config::default(),
        Config {
            max_total_items: 500,
            ..Config::default()
        },
    )
    .unwrap();
    let mut p = Parser::new(engine);
    let e = loop {
        match p.push_byte(b'a') {
            Ok(true) => {}
            Ok(false) => panic!("accepted"),
            Err(e) => break e,
        }
    };
    assert_eq!(e.limit_name(), "max_total_items");
    assert!(p.stats().stored_items <= 500);
}

// ---------------------------------------------------------------------------------------------
// Random small grammars

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Full sentences against the original grammar; prefixes against the normalised one (the
    /// original may keep useless rules, over which the oracle's prefix test is optimistic).
    #[test]
    fn random_grammars_agree_with_the_reference(
        grammar in arb_grammar(),
        inputs in prop::collection::vec(prop::collection::vec(prop::sample::select(b"abc".to_vec()), 0..8), 6),
        threshold in 1u32..4,
    ) {
        let normalize = sieve_normalize::Config { repetition_threshold: threshold, ..Default::default() };
        let Ok(normalized) = sieve_normalize::normalize(&grammar, &normalize) else {
            return Ok(());
        };
        let Some(engine) = compile_with(&grammar, &normalize, Config::default()) else {
            return Ok(());
        };
        let oracle = Recognizer::new(&grammar).unwrap();
        let prefix_oracle = Recognizer::new(&normalized).unwrap();
        let mut all = inputs;
        for seed in 0..4 {
            if let Some(s) = oracle.sample(seed, 4) {
                if s.len() < 40 {
                    all.push(s);
                }
            }
        }
        for input in &all {
            check_input(&engine, &oracle, &prefix_oracle, input, 1, &grammar.to_string());
        }
        random_walk(&engine, 7, 40, &grammar.to_string());
    }
}

#[test]
fn leo_chain_stops_at_a_complete_root() {
    // In set 0, `y` waits on `root` with nothing after it, so completing `root` from 0 has a
    // Leo entry; a chain reaching a complete `root` from 0 must still make it visible.
    let grammar = gbnf(
        r#"root ::= "a" b | y "z"
y ::= root | "q"
b ::= "b" | "b" b"#,
    );
    let engine = compile(&grammar);
    let oracle = Recognizer::new(&grammar).unwrap();
    for input in [
        &b"ab"[..],
        b"abbb",
        b"abz",
        b"qz",
        b"abzz",
        b"qzz",
        b"a",
        b"abbzz",
    ] {
        check_input(&engine, &oracle, &oracle, input, 1, "root in chain");
    }
}

#[test]
fn nullable_root_referenced_without_normalisation() {
    // The automata builder accepts a nullable root that references itself; completing it with
    // an empty span happens when a waiter is created (Aycock–Horspool), not by completion.
    let grammar = gbnf(r#"root ::= "(" root ")" root | "x" root | """#);
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build(&grammar)
        .expect("only the root is nullable");
    let engine = Arc::new(EarleyGrammar::new(&fsms, true, Config::default()));
    assert!(engine.root_nullable());
    let oracle = Recognizer::new(&grammar).unwrap();
    for input in [
        &b"()"[..],
        b"(())x()",
        b"(()",
        b")",
        b"x(x)x",
        b"(()))",
        b"xx",
    ] {
        check_input(&engine, &oracle, &oracle, input, 1, "unnormalised parens");
    }
}
