//! The compile pipeline: every stage honours its part of the caller's options, through
//! `CompiledGrammar::new` and through `ByteMatcher`; the stages composed by hand give what
//! `CompiledGrammar::new` gives; and `ByteMatcher` accepts what the token `Matcher` accepts.

use std::sync::Arc;

use sieve_ir::{reference::Recognizer, Grammar};
use sieve_matcher::{
    pipeline, ByteMatcher, CompileError, CompiledGrammar, Matcher, MatcherError, Options, Tokenizer,
};
use sieve_testkit::{compile_file, grammar_files};

fn gbnf(text: &str) -> Grammar {
    sieve_gbnf::compile(text, &Default::default()).expect("test grammar compiles")
}

/// Every single byte as a token, and `</s>` as EOS: enough to feed any text to a `Matcher`.
fn byte_tokenizer() -> Arc<Tokenizer> {
    let mut list: String = (0..=255u8).map(|b| format!("hex:{b:02x}\n")).collect();
    list.push_str("special:\"</s>\"\n\n");
    let vocab = sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("valid");
    Arc::new(Tokenizer::new(Arc::new(vocab)))
}

fn compile(grammar: &Grammar, options: &Options) -> Result<CompiledGrammar, CompileError> {
    CompiledGrammar::new(grammar, byte_tokenizer(), options)
}

/// Whether `text` is a sentence for a `ByteMatcher`.
fn byte_accepts(matcher: &mut ByteMatcher, text: &[u8]) -> bool {
    matcher.reset();
    text.iter().all(|&b| matcher.push_byte(b) == Ok(true)) && matcher.can_finish()
}

#[test]
fn the_fsm_state_limit_reaches_every_entry_point() {
    let grammar = gbnf(r#"root ::= "abcdefgh" | "ijklmnop""#);
    let tight = Options {
        fsm: sieve_fsm::Config::new().state_limit(4),
        ..Options::default()
    };
    assert!(matches!(
        compile(&grammar, &tight),
        Err(CompileError::Automata(e)) if e.size_limit() == Some(4)
    ));
    assert!(matches!(
        ByteMatcher::new(&grammar, &tight),
        Err(CompileError::Automata(_))
    ));
    let normalized = pipeline::normalize(&grammar, &tight).unwrap();
    assert!(pipeline::automata(&normalized, &tight).is_err());

    assert!(compile(&grammar, &Options::default()).is_ok());
    let mut matcher = ByteMatcher::new(&grammar, &Options::default()).unwrap();
    assert!(byte_accepts(&mut matcher, b"ijklmnop"));
}

#[test]
fn the_repetition_threshold_reaches_every_entry_point() {
    // Expanded in place (threshold 256), `[xy]{0,200}` needs about 200 states; compressed
    // (threshold 4) into a counted rule plus 4 copies it needs a dozen. A state limit of 100
    // tells the two apart.
    let grammar = gbnf(r#"root ::= "<" [xy]{0,200} ">""#);
    let with_threshold = |threshold| Options {
        normalize: sieve_normalize::Config {
            repetition_threshold: threshold,
            ..sieve_normalize::Config::default()
        },
        fsm: sieve_fsm::Config::new().state_limit(100),
        ..Options::default()
    };
    let expanded = with_threshold(256);
    let compressed = with_threshold(4);

    assert!(matches!(
        compile(&grammar, &expanded),
        Err(CompileError::Automata(_))
    ));
    assert!(matches!(
        ByteMatcher::new(&grammar, &expanded),
        Err(CompileError::Automata(_))
    ));

    let compiled = Arc::new(compile(&grammar, &compressed).expect("compressed fits"));
    let mut bytes = ByteMatcher::new(&grammar, &compressed).expect("compressed fits");
    let mut long = b"<".to_vec();
    long.extend(std::iter::repeat_n(b'x', 200));
    long.push(b'>');
    let mut too_long = long.clone();
    too_long.insert(1, b'y');
    for (text, expected) in [(&long, true), (&too_long, false)] {
        assert_eq!(byte_accepts(&mut bytes, text), expected);
        let mut matcher = Matcher::new(compiled.clone());
        let accepted = matcher.accept_bytes(text).is_ok() && matcher.can_terminate();
        assert_eq!(accepted, expected);
    }
}

#[test]
fn normalisation_limits_reach_every_entry_point() {
    let grammar = gbnf(r#"root ::= [ab]{10} [cd]{10}"#);
    let tight = Options {
        normalize: sieve_normalize::Config {
            max_size: 20,
            ..sieve_normalize::Config::default()
        },
        ..Options::default()
    };
    assert!(matches!(
        compile(&grammar, &tight),
        Err(CompileError::Normalize(_))
    ));
    assert!(matches!(
        ByteMatcher::new(&grammar, &tight),
        Err(CompileError::Normalize(_))
    ));
    assert!(matches!(
        pipeline::normalize(&grammar, &tight),
        Err(CompileError::Normalize(_))
    ));
}

#[test]
fn recogniser_limits_reach_every_entry_point() {
    let grammar = gbnf(r#"root ::= [a-z]+"#);
    let tight = Options {
        earley: sieve_earley::Config {
            max_bytes_history: 3,
            ..sieve_earley::Config::default()
        },
        ..Options::default()
    };
    let mut bytes = ByteMatcher::new(&grammar, &tight).unwrap();
    for &b in b"abc" {
        assert_eq!(bytes.push_byte(b), Ok(true));
    }
    assert!(bytes.push_byte(b'd').is_err());
    assert_eq!(bytes.len(), 3, "a limit leaves the matcher unchanged");

    let mut matcher = Matcher::new(Arc::new(compile(&grammar, &tight).unwrap()));
    assert!(matches!(
        matcher.accept_bytes(b"abcd"),
        Err(MatcherError::Limit(_))
    ));

    let mut roomy = ByteMatcher::new(&grammar, &Options::default()).unwrap();
    assert!(byte_accepts(&mut roomy, b"abcd"));
}

#[test]
fn the_stages_composed_by_hand_are_compiled_grammar_new() {
    let grammar = gbnf(
        r#"root ::= "{" pair ("," pair)* "}"
pair ::= [a-z]+ "=" [0-9]{1,20}"#,
    );
    let options = Options::default();
    let normalized = pipeline::normalize(&grammar, &options).unwrap();
    let fsms = pipeline::automata(&normalized, &options).unwrap();
    let tokenizer = byte_tokenizer();
    let staged =
        Arc::new(CompiledGrammar::from_automata(&fsms, tokenizer.clone(), &options).unwrap());
    let direct = Arc::new(CompiledGrammar::new(&grammar, tokenizer, &options).unwrap());
    let earley = pipeline::earley(&fsms, &options);
    assert!(earley.state_count() > 0);

    let mut staged_matcher = Matcher::new(staged.clone());
    let mut direct_matcher = Matcher::new(direct.clone());
    let mut staged_mask = vec![0u32; staged.bitmask_words()];
    let mut direct_mask = vec![0u32; direct.bitmask_words()];
    for &byte in b"{ab=12,c=3}" {
        staged_matcher
            .fill_next_token_bitmask(&mut staged_mask)
            .unwrap();
        direct_matcher
            .fill_next_token_bitmask(&mut direct_mask)
            .unwrap();
        assert_eq!(staged_mask, direct_mask);
        let _ = staged_matcher.accept_bytes(&[byte]);
        let _ = direct_matcher.accept_bytes(&[byte]);
    }
    assert_eq!(
        staged_matcher.can_terminate(),
        direct_matcher.can_terminate()
    );
}

#[test]
fn byte_matcher_agrees_with_the_matcher_and_the_reference() {
    let tokenizer = byte_tokenizer();
    let options = Options::default();
    for path in grammar_files() {
        let grammar = compile_file(&path);
        let reference = Recognizer::new(&grammar).expect("small bounds");
        let compiled = Arc::new(
            CompiledGrammar::new(&grammar, tokenizer.clone(), &options)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        );
        let mut bytes = ByteMatcher::new(&grammar, &options).unwrap();
        // Sentences, their prefixes, and each with one byte changed or dropped.
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for seed in 0..6 {
            let Some(sentence) = reference.sample(seed, 6) else {
                continue;
            };
            if sentence.len() > 200 {
                continue;
            }
            let mid = sentence.len() / 2;
            texts.push(sentence[..mid].to_vec());
            if !sentence.is_empty() {
                let mut changed = sentence.clone();
                changed[mid.min(sentence.len() - 1)] ^= 0x21;
                texts.push(changed);
                let mut dropped = sentence.clone();
                dropped.remove(mid.min(sentence.len() - 1));
                texts.push(dropped);
            }
            texts.push(sentence);
        }
        assert!(texts.len() >= 4, "{}: few samples", path.display());
        for text in &texts {
            bytes.reset();
            let mut matcher = Matcher::new(compiled.clone());
            // Each `accept_bytes` call ends a token, so a grammar with token limits takes
            // fewer bytes one call at a time than the byte matcher, which has no tokens:
            // there only the byte matcher and the reference are compared.
            let tokens_count = !compiled.has_token_limits();
            for (offset, &byte) in text.iter().enumerate() {
                let allowed = bytes.allowed_bytes().contains(byte);
                let by_bytes = bytes.push_byte(byte) == Ok(true);
                assert_eq!(allowed, by_bytes);
                let by_tokens = tokens_count && matcher.accept_bytes(&[byte]).is_ok();
                assert!(
                    !tokens_count || by_bytes == by_tokens,
                    "{}: byte {offset} of {:?}",
                    path.display(),
                    String::from_utf8_lossy(text)
                );
                assert_eq!(by_bytes, reference.accepts_prefix(&text[..=offset]));
                if !by_bytes {
                    break;
                }
            }
            if bytes.len() == text.len() {
                if tokens_count {
                    assert_eq!(bytes.can_finish(), matcher.can_terminate());
                }
                assert_eq!(bytes.can_finish(), reference.accepts(text));
            }
        }
    }
}

#[test]
fn a_nullable_root_can_finish_at_once() {
    for text in [
        r#"root ::= "a"{0,100}"#,
        r#"root ::= "a"*"#,
        r#"root ::= "" | "b""#,
    ] {
        let grammar = gbnf(text);
        let matcher = ByteMatcher::new(&grammar, &Options::default()).unwrap();
        assert!(matcher.is_empty());
        assert!(matcher.can_finish(), "{text}");
        let compiled = Arc::new(compile(&grammar, &Options::default()).unwrap());
        assert!(Matcher::new(compiled).can_terminate(), "{text}");
    }
}

#[test]
fn allowed_bytes_are_exactly_the_bytes_pushed() {
    let grammar = gbnf(r#"root ::= ("ab" | "ac" | [x-z]) "!""#);
    let mut matcher = ByteMatcher::new(&grammar, &Options::default()).unwrap();
    for prefix in [&b""[..], b"a", b"ab", b"x!"] {
        matcher.reset();
        for &b in prefix {
            assert_eq!(matcher.push_byte(b), Ok(true));
        }
        let allowed = matcher.allowed_bytes();
        for byte in 0..=255u8 {
            let mut probe = matcher.clone();
            assert_eq!(probe.push_byte(byte) == Ok(true), allowed.contains(byte));
        }
    }
}
