//! Batch mask filling: every row equals the matcher's own mask, whatever the thread pool;
//! refused batches write nothing; failing and terminated matchers get an all-zero row.

use std::sync::Arc;

use sieve_matcher::{
    fill_next_token_bitmasks, fill_next_token_bitmasks_at, BatchError, CompiledGrammar, Matcher,
    MatcherError, Options, Tokenizer, PARALLEL_MIN_BATCH,
};
use sieve_vocab::Vocabulary;

/// Fills the words outside what a call may write, to see that it was left alone.
const SENTINEL: u32 = 0xDEAD_BEEF;

fn gpt2() -> Arc<Tokenizer> {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    Arc::new(Tokenizer::new(vocab))
}

fn compile_with(gbnf: &str, tokenizer: &Arc<Tokenizer>, options: &Options) -> Arc<CompiledGrammar> {
    let grammar = sieve_gbnf::compile(gbnf, &Default::default()).expect("valid GBNF");
    Arc::new(CompiledGrammar::new(&grammar, tokenizer.clone(), options).expect("compiles"))
}

fn compile(gbnf: &str, tokenizer: &Arc<Tokenizer>) -> Arc<CompiledGrammar> {
    compile_with(gbnf, tokenizer, &Options::default())
}

const YES_NO: &str = r#"root ::= "yes" | "no""#;
const LIST: &str = r#"root ::= "[" num ("," " "? num)* "]"
num ::= "-"? [0-9]+"#;
const OBJECT: &str = r#"root ::= "{" ws pair (ws "," ws pair)* ws "}"
pair ::= str ws ":" ws value
value ::= str | [0-9]+ | "true" | "false" | "null" | root
str ::= "\"" [a-z ]* "\""
ws ::= [ \n]*"#;

/// A matcher of `compiled` after `prefix`, terminated too when `eos`.
fn matcher_at(compiled: &Arc<CompiledGrammar>, prefix: &str, eos: bool) -> Matcher {
    let mut matcher = Matcher::new(compiled.clone());
    matcher.accept_bytes(prefix.as_bytes()).expect("a prefix");
    if eos {
        let eos = compiled.vocabulary().eos_ids()[0].as_u32();
        matcher.accept_token(eos).expect("complete");
    }
    matcher
}

/// Matchers of three grammars over one tokenizer, at many positions, some terminated.
fn mixed_matchers(tokenizer: &Arc<Tokenizer>) -> Vec<Matcher> {
    let yes_no = compile(YES_NO, tokenizer);
    let list = compile(LIST, tokenizer);
    let object = compile(OBJECT, tokenizer);
    let mut matchers = Vec::new();
    for (compiled, sentence) in [
        (&yes_no, "yes"),
        (&yes_no, "no"),
        (&list, "[12, -3,4]"),
        (&object, r#"{"a b": 12, "c":{ "d" : true}}"#),
        (&object, "{\n\"x\":null}"),
    ] {
        for end in 0..=sentence.len() {
            matchers.push(matcher_at(compiled, &sentence[..end], false));
        }
        matchers.push(matcher_at(compiled, sentence, true));
    }
    // Interleave the grammars, so neighbouring rows (and threads) differ.
    let n = matchers.len();
    (0..n)
        .map(|i| matchers[(i * 7) % n].clone())
        .collect::<Vec<_>>()
}

/// Each matcher's own mask, one after another, rows of `words` words.
fn one_at_a_time(matchers: &mut [Matcher], words: usize) -> Vec<u32> {
    let mut expected = vec![0u32; matchers.len() * words];
    for (matcher, row) in matchers.iter_mut().zip(expected.chunks_exact_mut(words)) {
        matcher.fill_next_token_bitmask(row).expect("no limit");
    }
    expected
}

#[test]
fn batch_masks_equal_one_at_a_time_masks() {
    let tokenizer = gpt2();
    let mut matchers = mixed_matchers(&tokenizer);
    assert!(
        matchers.len() >= 2 * PARALLEL_MIN_BATCH,
        "exercises the parallel path"
    );
    let words = matchers[0].compiled().bitmask_words();
    let expected = one_at_a_time(&mut matchers, words);
    assert!(expected.iter().any(|&w| w != 0));

    // The global pool, pools of one and of several threads, and batches of sizes on both
    // sides of the threshold at many offsets.
    let pools: Vec<rayon::ThreadPool> = [1, 3]
        .into_iter()
        .map(|threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a pool")
        })
        .collect();
    let run = |matchers: &mut [Matcher], bitmask: &mut [u32]| {
        let results = fill_next_token_bitmasks(matchers, bitmask, words).expect("a valid batch");
        assert_eq!(results.len(), matchers.len());
        assert!(results.iter().all(Result::is_ok), "{results:?}");
    };
    let mut bitmask = vec![SENTINEL; matchers.len() * words];
    run(&mut matchers, &mut bitmask);
    assert_eq!(bitmask, expected);
    for pool in &pools {
        bitmask.fill(SENTINEL);
        pool.install(|| run(&mut matchers, &mut bitmask));
        assert_eq!(bitmask, expected, "{} threads", pool.current_num_threads());
    }
    let threshold = PARALLEL_MIN_BATCH;
    for size in [1, 2, 3, 5, threshold - 1, threshold, threshold + 3] {
        for start in (0..matchers.len() - size).step_by(size) {
            let mut bitmask = vec![SENTINEL; size * words];
            run(&mut matchers[start..start + size], &mut bitmask);
            assert_eq!(
                bitmask,
                expected[start * words..(start + size) * words],
                "batch of {size} at {start}"
            );
        }
    }
    // Filling leaves the matchers as they were: a second round gives the same masks.
    assert_eq!(one_at_a_time(&mut matchers, words), expected);
}

#[test]
fn batch_takes_mutable_references_and_padded_rows() {
    let tokenizer = gpt2();
    let mut owned = mixed_matchers(&tokenizer);
    let needed = owned[0].compiled().bitmask_words();
    let expected = one_at_a_time(&mut owned, needed);
    let mut refs: Vec<&mut Matcher> = owned.iter_mut().collect();
    let words = needed + 3;
    // One spare row past the batch, which must stay untouched.
    let mut bitmask = vec![SENTINEL; (refs.len() + 1) * words];
    let results = fill_next_token_bitmasks(&mut refs, &mut bitmask, words).expect("valid");
    assert!(results.iter().all(Result::is_ok));
    for (i, row) in bitmask.chunks_exact(words).enumerate() {
        if i == refs.len() {
            assert!(row.iter().all(|&w| w == SENTINEL), "spare row written");
        } else {
            assert_eq!(
                row[..needed],
                expected[i * needed..(i + 1) * needed],
                "row {i}"
            );
            assert!(row[needed..].iter().all(|&w| w == 0), "padding of row {i}");
        }
    }
}

#[test]
fn terminated_matcher_row_is_all_zero() {
    let tokenizer = gpt2();
    let compiled = compile(YES_NO, &tokenizer);
    let words = compiled.bitmask_words();
    let mut matchers: Vec<Matcher> = (0..2 * PARALLEL_MIN_BATCH + 1)
        .map(|i| matcher_at(&compiled, "yes", i % 2 == 1))
        .collect();
    let mut bitmask = vec![SENTINEL; matchers.len() * words];
    let results = fill_next_token_bitmasks(&mut matchers, &mut bitmask, words).expect("valid");
    let eos = compiled.vocabulary().eos_ids()[0].index();
    for (i, row) in bitmask.chunks_exact(words).enumerate() {
        assert_eq!(results[i], Ok(()));
        if i % 2 == 1 {
            assert!(matchers[i].is_terminated());
            assert!(row.iter().all(|&w| w == 0), "terminated row {i}");
        } else {
            // After "yes" only EOS is allowed.
            let allowed = compiled.allowed_tokens(row);
            assert_eq!(allowed.len(), 1, "row {i}");
            assert_eq!(allowed[0].index(), eos);
        }
    }
}

#[test]
fn failing_matcher_row_is_zero_and_the_others_are_filled() {
    let tokenizer = gpt2();
    // A history as long as the prefix: the matcher holding it cannot try the tokens that need
    // the recogniser (here those leaving the number, such as `}` or `,"`), so its mask hits
    // the limit.
    let full = r#"{"a":1"#;
    let mut options = Options::default();
    options.earley.max_bytes_history = full.len();
    let tight = compile_with(OBJECT, &tokenizer, &options);
    let roomy = compile(OBJECT, &tokenizer);
    let mut probe = matcher_at(&tight, full, false);
    let mut row = vec![0u32; tight.bitmask_words()];
    let Err(MatcherError::Limit(_)) = probe.fill_next_token_bitmask(&mut row) else {
        panic!("expected the history limit at {} bytes", full.len());
    };
    // Row 1 of every four fails; a batch of four runs in the caller's thread, the repeated
    // one on the pool.
    let pattern = [
        matcher_at(&roomy, full, false),
        matcher_at(&tight, full, false),
        matcher_at(&tight, "{", false),
        matcher_at(&roomy, "{\"a\"", false),
    ];
    let words = roomy.bitmask_words();
    let expected = one_at_a_time(&mut [pattern[0].clone()], words)
        .into_iter()
        .chain(vec![0; words])
        .chain(one_at_a_time(&mut pattern[2..].to_vec(), words))
        .collect::<Vec<u32>>();
    for repeats in [1, PARALLEL_MIN_BATCH.div_ceil(4) + 1] {
        let mut matchers: Vec<Matcher> = (0..repeats).flat_map(|_| pattern.clone()).collect();
        let mut bitmask = vec![SENTINEL; matchers.len() * words];
        let results = fill_next_token_bitmasks(&mut matchers, &mut bitmask, words).expect("valid");
        for (i, row) in bitmask.chunks_exact(words).enumerate() {
            if i % 4 == 1 {
                assert!(
                    matches!(results[i], Err(MatcherError::Limit(_))),
                    "{results:?}"
                );
            } else {
                assert_eq!(results[i], Ok(()), "row {i}");
            }
            let k = i % 4;
            assert_eq!(row, &expected[k * words..(k + 1) * words], "row {i}");
        }
        // The failing matchers are unchanged.
        for matcher in matchers.iter().skip(1).step_by(4) {
            assert_eq!(matcher.output_len(), full.len());
        }
    }
}

#[test]
fn vocabulary_mismatch_is_refused_untouched() {
    let tokenizer = gpt2();
    let list = "\"y\"\n\"e\"\n\"s\"\n\"n\"\n\"o\"\nspecial:\"</s>\"\n";
    let small = sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("a list");
    let small = Arc::new(Tokenizer::new(Arc::new(small)));
    let gpt2_matcher = Matcher::new(compile(YES_NO, &tokenizer));
    let small_matcher = Matcher::new(compile(YES_NO, &small));
    let n_small = small_matcher.compiled().vocabulary().n_vocab();
    let n_gpt2 = gpt2_matcher.compiled().vocabulary().n_vocab();
    let words = gpt2_matcher.compiled().bitmask_words();
    let mut matchers = vec![gpt2_matcher.clone(), gpt2_matcher, small_matcher];
    let mut bitmask = vec![SENTINEL; matchers.len() * words];
    let refused = fill_next_token_bitmasks(&mut matchers, &mut bitmask, words).unwrap_err();
    assert_eq!(
        refused,
        BatchError::VocabularyMismatch {
            index: 2,
            n_vocab: n_small,
            expected: n_gpt2,
        }
    );
    assert!(bitmask.iter().all(|&w| w == SENTINEL));
    assert!(refused.to_string().contains("vocabulary"));
}

#[test]
fn short_rows_and_short_buffers_are_refused_untouched() {
    let tokenizer = gpt2();
    let compiled = compile(YES_NO, &tokenizer);
    let words = compiled.bitmask_words();
    let mut matchers: Vec<Matcher> = (0..3).map(|_| Matcher::new(compiled.clone())).collect();

    let mut bitmask = vec![SENTINEL; 3 * words];
    assert_eq!(
        fill_next_token_bitmasks(&mut matchers, &mut bitmask, words - 1),
        Err(BatchError::RowTooShort {
            words_per_row: words - 1,
            needed: words,
        })
    );
    assert_eq!(
        fill_next_token_bitmasks(&mut matchers, &mut bitmask, 0),
        Err(BatchError::RowTooShort {
            words_per_row: 0,
            needed: words,
        })
    );
    assert!(bitmask.iter().all(|&w| w == SENTINEL));

    let mut short = vec![SENTINEL; 3 * words - 1];
    assert_eq!(
        fill_next_token_bitmasks(&mut matchers, &mut short, words),
        Err(BatchError::BitmaskTooSmall {
            given: 3 * words - 1,
            needed: 3 * words,
            rows: 3,
            words_per_row: words,
        })
    );
    assert!(short.iter().all(|&w| w == SENTINEL));

    // A row length whose product with the batch overflows is too small a buffer, not a panic.
    assert!(matches!(
        fill_next_token_bitmasks(&mut matchers, &mut short, usize::MAX / 2),
        Err(BatchError::BitmaskTooSmall {
            needed: usize::MAX,
            ..
        })
    ));
    assert!(short.iter().all(|&w| w == SENTINEL));
}

#[test]
fn empty_batch_writes_nothing() {
    let mut matchers: Vec<Matcher> = Vec::new();
    let mut bitmask = vec![SENTINEL; 4];
    let results = fill_next_token_bitmasks(&mut matchers, &mut bitmask, 0).expect("valid");
    assert!(results.is_empty());
    assert!(bitmask.iter().all(|&w| w == SENTINEL));
}

/// With rows given (XGrammar's `indices`), matcher `i` fills row `rows[i]` with its own mask,
/// on one thread and on several, and every other row keeps what it held.
#[test]
fn batch_at_rows_fills_those_rows_only() {
    let tokenizer = gpt2();
    let mut matchers = mixed_matchers(&tokenizer);
    let words = matchers[0].compiled().bitmask_words();
    let expected = one_at_a_time(&mut matchers, words);
    let n = matchers.len();
    // Rows in a scattered order across a buffer twice as tall, half of it left alone.
    let rows: Vec<usize> = (0..n).map(|i| (i * 5 + 3) % (2 * n)).collect();
    let mut distinct = rows.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), n, "the test's rows are distinct");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .expect("a pool");
    for threads in [false, true] {
        let mut bitmask = vec![SENTINEL; 2 * n * words];
        let mut run = || fill_next_token_bitmasks_at(&mut matchers, &rows, &mut bitmask, words);
        let results = if threads { pool.install(run) } else { run() }.expect("a valid batch");
        assert!(results.iter().all(Result::is_ok), "{results:?}");
        for (row, chunk) in bitmask.chunks_exact(words).enumerate() {
            match rows.iter().position(|&r| r == row) {
                Some(i) => assert_eq!(chunk, &expected[i * words..(i + 1) * words], "row {row}"),
                None => assert!(chunk.iter().all(|&w| w == SENTINEL), "row {row} touched"),
            }
        }
    }
}

#[test]
fn batch_at_rows_refuses_bad_rows_untouched() {
    let tokenizer = gpt2();
    let compiled = compile(YES_NO, &tokenizer);
    let words = compiled.bitmask_words();
    let mut matchers = vec![Matcher::new(compiled.clone()), Matcher::new(compiled)];
    let mut bitmask = vec![SENTINEL; 3 * words];
    let cases: [(&[usize], BatchError); 3] = [
        (
            &[0],
            BatchError::RowCount {
                matchers: 2,
                rows: 1,
            },
        ),
        (&[2, 2], BatchError::RowRepeated { row: 2 }),
        (
            &[0, 3],
            BatchError::RowOutOfRange {
                row: 3,
                rows: 3,
                words_per_row: words,
            },
        ),
    ];
    for (rows, error) in cases {
        assert_eq!(
            fill_next_token_bitmasks_at(&mut matchers, rows, &mut bitmask, words),
            Err(error)
        );
        assert!(bitmask.iter().all(|&w| w == SENTINEL), "{rows:?} wrote");
    }
}
