//! Per-rule token limits (`name[max_tokens=N] ::=` in GBNF, `any_text.max_tokens` in
//! structural tags, `name[max_tokens=N]:` in Lark): masks against the parser token by token
//! at every step of random walks (with rollbacks), walks that always end with every limited
//! region spelled within its limit — checked from the outside, on the output and the token
//! boundaries — and the typed errors for limits that cannot be honoured. Every check runs on
//! backend, and random limited grammars get the same masks from all three.

use std::sync::Arc;

use sieve_ir::{reference::Recognizer, Grammar};
use sieve_matcher::{BackendKind, CompileError, CompiledGrammar, Matcher, Options, Tokenizer};
use sieve_vocab::Vocabulary;

mod common;
use common::{compile_on, compile_sharing, mask_of};

/// Every backend counts tokens per rule.
const BACKENDS: [BackendKind; 3] = [BackendKind::Earley, BackendKind::TokenDfa, BackendKind::Lr];

/// The backends `grammar` runs on: every one, but LR only when it finds the grammar LR(1).
/// Keeping a limited rule apart can make a grammar not LR(1) (the rule's end must be seen
/// one byte ahead), so a conflict is a fair refusal; any other refusal fails the test.
fn backends_for(grammar: &Grammar) -> Vec<BackendKind> {
    let options = Options {
        backend: BackendKind::Lr.into(),
        ..Options::default()
    };
    let lr1 = match CompiledGrammar::new(grammar, abc_tokenizer(), &options) {
        Ok(_) => true,
        Err(CompileError::Lr(sieve_lr::LrError::Conflict(_))) => false,
        Err(error) => panic!("lr: {error}"),
    };
    BACKENDS
        .into_iter()
        .filter(|&backend| backend != BackendKind::Lr || lr1)
        .collect()
}

/// A constraint with limited regions, found in an output between `open` and the next
/// `close`.
#[derive(Clone)]
struct Case {
    name: &'static str,
    grammar: Grammar,
    limit: usize,
    open: &'static [u8],
    close: &'static [u8],
    /// Whether LR(1) (the LR backend builds it); `any_text` must see its end tag further
    /// ahead than one byte.
    lr1: bool,
}

fn gbnf(text: &str) -> Grammar {
    sieve_gbnf::compile(text, &Default::default()).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn cases() -> Vec<Case> {
    let structural = serde_json::json!({
        "type": "structural_tag",
        "format": {"type": "tag", "begin": "<think>", "content": {"type": "any_text", "max_tokens": 5}, "end": "</think>"}
    });
    let lark = "start: \"[\" item \"]\"\nitem[max_tokens=3]: /[0-9a-z]+/\n";
    vec![
        Case {
            name: "words",
            grammar: gbnf(
                "root ::= \"<\" w \"> <\" w \">\"\nw[max_tokens=3] ::= [a-z]+ (\" \" [a-z]+)*",
            ),
            limit: 3,
            open: b"<",
            close: b">",
            lr1: true,
        },
        Case {
            // Nullable: an empty value spans no token.
            name: "nullable",
            grammar: gbnf(
                "root ::= \"{\\\"k\\\": \\\"\" s \"\\\"}\"\ns[max_tokens=4] ::= [a-z0-9 ]*",
            ),
            limit: 4,
            open: b"\"k\": \"",
            close: b"\"}",
            lr1: true,
        },
        Case {
            name: "structural any_text",
            grammar: sieve_structural::compile(&structural, &Default::default()).expect("compiles"),
            limit: 5,
            open: b"<think>",
            close: b"</think>",
            lr1: false,
        },
        Case {
            name: "lark lexeme",
            grammar: sieve_lark::compile(lark, &Default::default()).expect("compiles"),
            limit: 3,
            open: b"[",
            close: b"]",
            lr1: true,
        },
    ]
}

/// `case` compiled against `vocab` on `backend`; `None` on LR for a case that is not LR(1),
/// once LR has refused it with a conflict.
fn compile_case(
    case: &Case,
    vocab: Arc<Vocabulary>,
    backend: BackendKind,
) -> Option<Arc<CompiledGrammar>> {
    if backend == BackendKind::Lr && !case.lr1 {
        assert_lr_conflict(&case.grammar, vocab);
        return None;
    }
    Some(compile_on(&case.grammar, vocab, backend))
}

/// Asserts that the LR backend refuses `grammar` as not LR(1).
fn assert_lr_conflict(grammar: &Grammar, vocab: Arc<Vocabulary>) {
    let options = Options {
        backend: BackendKind::Lr.into(),
        ..Options::default()
    };
    match CompiledGrammar::new(grammar, Arc::new(Tokenizer::new(vocab)), &options) {
        Err(CompileError::Lr(sieve_lr::LrError::Conflict(_))) => {}
        other => panic!("expected an LR conflict, got {:?}", other.map(|_| ())),
    }
}

/// Every token fed on its own, token end included.
fn oracle_mask(matcher: &mut Matcher) -> Vec<u32> {
    let n = matcher.compiled().vocabulary().n_vocab() as u32;
    let mut mask = vec![0u32; matcher.compiled().bitmask_words()];
    for id in 0..n {
        if matcher.validate_tokens(&[id]).expect("no limit") == 1 {
            mask[id as usize / 32] |= 1 << (id % 32);
        }
    }
    mask
}

fn set_bits(mask: &[u32]) -> Vec<u32> {
    (0..mask.len() as u32 * 32)
        .filter(|&t| mask[t as usize / 32] & (1 << (t % 32)) != 0)
        .collect()
}

/// The first few token ids set in only one of two masks, each way.
fn differences(a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let only = |x: &[u32], y: &[u32]| -> Vec<u32> {
        set_bits(x)
            .into_iter()
            .filter(|&t| y[t as usize / 32] & (1 << (t % 32)) == 0)
            .take(8)
            .collect()
    };
    (only(a, b), only(b, a))
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// One walk sampling uniformly among the allowed tokens until EOS, each mask checked
/// against the oracle (`check_every` steps) and against itself after rollbacks. Returns the
/// output and the tokens' byte lengths.
fn walk(
    compiled: &Arc<CompiledGrammar>,
    seed: u64,
    check_every: usize,
    label: &str,
) -> (Vec<u8>, Vec<usize>) {
    let vocab = compiled.vocabulary();
    let eos = vocab.eos_ids()[0].as_u32();
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut matcher = Matcher::new(compiled.clone());
    let mut tokens: Vec<u32> = Vec::new();
    let mut history: Vec<Vec<u32>> = Vec::new();
    let mut rolled_back_at = 0;
    // Tokens undone by a rollback, re-accepted next (last first), so the masks repeat.
    let mut replay: Vec<u32> = Vec::new();
    for _ in 0..400 {
        let step = tokens.len();
        let mask = mask_of(&mut matcher);
        if step % check_every == 0 {
            let oracle = oracle_mask(&mut matcher);
            let (mask_only, oracle_only) = differences(&mask, &oracle);
            assert!(
                mask_only.is_empty() && oracle_only.is_empty(),
                "{label}: step {step}: tokens only in the mask {mask_only:?}, only in the oracle {oracle_only:?}"
            );
        }
        match history.get(step) {
            Some(before) => assert!(&mask == before, "{label}: step {step} after rollback"),
            None => history.push(mask.clone()),
        }
        let allowed = set_bits(&mask);
        assert!(
            !allowed.is_empty(),
            "{label}: step {step}: no token allowed"
        );
        let token = replay
            .pop()
            .unwrap_or_else(|| allowed[rng.below(allowed.len())]);
        assert!(
            allowed.contains(&token),
            "{label}: step {step}: replayed token refused"
        );
        matcher
            .accept_token(token)
            .expect("an allowed token is accepted");
        if token == eos {
            assert!(matcher.is_terminated());
            let lengths = tokens
                .iter()
                .map(|&t| vocab.bytes(vocab.token(t).expect("in range")).len())
                .collect();
            let output = tokens
                .iter()
                .flat_map(|&t| vocab.bytes(vocab.token(t).expect("in range")).to_vec())
                .collect();
            return (output, lengths);
        }
        tokens.push(token);
        if tokens.len() % 5 == 0 && tokens.len() > rolled_back_at {
            rolled_back_at = tokens.len();
            matcher.rollback(2).expect("two steps to undo");
            replay = vec![tokens[tokens.len() - 1], tokens[tokens.len() - 2]];
            tokens.truncate(tokens.len() - 2);
        }
    }
    panic!("{label}: no EOS within 400 steps");
}

/// The number of tokens holding a byte of each region of `output`.
fn region_tokens(case: &Case, output: &[u8], lengths: &[usize]) -> Vec<usize> {
    let find = |from: usize, needle: &[u8]| {
        output[from..]
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|p| p + from)
    };
    let mut ends = Vec::with_capacity(lengths.len());
    let mut at = 0;
    for &len in lengths {
        ends.push((at, at + len));
        at += len;
    }
    let mut counts = Vec::new();
    let mut from = 0;
    while let Some(open) = find(from, case.open) {
        let start = open + case.open.len();
        let end = find(start, case.close).expect("every region is closed");
        counts.push(ends.iter().filter(|&&(s, e)| s < end && e > start).count());
        from = end + case.close.len();
    }
    counts
}

/// Walks on GPT-2's vocabulary: every output is a sentence of the grammar, every region
/// within its limit, and some region uses its whole limit (so the limit did the work).
#[test]
fn walks_end_complete_with_every_region_within_its_limit() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    for (case, backend) in cases()
        .into_iter()
        .flat_map(|c| BACKENDS.map(|b| (c.clone(), b)))
    {
        let Some(compiled) = compile_case(&case, vocab.clone(), backend) else {
            continue;
        };
        let recognizer = Recognizer::new(&case.grammar).expect("small bounds");
        let mut longest = 0;
        for seed in 0..12 {
            let label = format!("{} on {backend} seed {seed}", case.name);
            let (output, lengths) = walk(&compiled, seed, 3, &label);
            assert!(
                recognizer.accepts(&output),
                "{label}: {:?} is not a sentence",
                String::from_utf8_lossy(&output)
            );
            let counts = region_tokens(&case, &output, &lengths);
            assert!(!counts.is_empty(), "{label}: no region in {output:?}");
            for &count in &counts {
                assert!(
                    count <= case.limit,
                    "{label}: a region spans {count} tokens in {:?}",
                    String::from_utf8_lossy(&output)
                );
                longest = longest.max(count);
            }
        }
        assert_eq!(
            longest, case.limit,
            "{} on {backend}: no walk used the whole limit",
            case.name
        );
    }
}

/// Without the limit, uniform sampling spells the first region with more tokens than it
/// allows (twelve tokens into the output, the region is still open or longer).
#[test]
fn without_the_limit_regions_run_longer() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let unlimited = gbnf("root ::= \"<\" w \"> <\" w \">\"\nw ::= [a-z]+ (\" \" [a-z]+)*");
    let compiled = compile_on(&unlimited, vocab, BackendKind::Earley);
    let vocab = compiled.vocabulary();
    let mut longest = 0;
    for seed in 0..12u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut matcher = Matcher::new(compiled.clone());
        let mut inside = 0;
        for _ in 0..12 {
            let allowed = set_bits(&mask_of(&mut matcher));
            let token = allowed[rng.below(allowed.len())];
            matcher.accept_token(token).expect("allowed");
            let bytes = vocab.bytes(vocab.token(token).expect("in range"));
            if bytes.contains(&b'>') {
                break;
            }
            inside += usize::from(bytes != b"<");
        }
        longest = longest.max(inside);
    }
    assert!(longest > cases()[0].limit, "{longest}");
}

/// A vocabulary of the cases' own pieces (every byte, and substrings crossing the region
/// boundaries) gives tokens that open, close or hold a whole region.
#[test]
fn masks_equal_the_parser_with_tokens_crossing_region_boundaries() {
    for (case, backend) in cases()
        .into_iter()
        .flat_map(|c| BACKENDS.map(|b| (c.clone(), b)))
    {
        let recognizer = Recognizer::new(&case.grammar).expect("small bounds");
        let Some(compiled) = compile_case(&case, substring_vocab(&case), backend) else {
            continue;
        };
        for seed in 0..8 {
            let label = format!(
                "{} (substring vocabulary) on {backend} seed {seed}",
                case.name
            );
            let (output, lengths) = walk(&compiled, seed, 1, &label);
            assert!(recognizer.accepts(&output), "{label}");
            for count in region_tokens(&case, &output, &lengths) {
                assert!(count <= case.limit, "{label}: {count} tokens");
            }
        }
    }
}

fn compile_error(text: &str, backend: BackendKind) -> CompileError {
    let tokenizer = Arc::new(Tokenizer::new(Arc::new(
        Vocabulary::embedded_default().clone(),
    )));
    let options = Options {
        backend: backend.into(),
        ..Options::default()
    };
    CompiledGrammar::new(&gbnf(text), tokenizer, &options).expect_err(text)
}

#[test]
fn limits_that_cannot_be_honoured_are_typed_errors() {
    use sieve_normalize::NormalizeError;
    let recursive = compile_error(
        "root ::= w\nw[max_tokens=3] ::= \"(\" w \")\" | \"x\"",
        BackendKind::Earley,
    );
    assert!(
        matches!(&recursive, CompileError::Normalize(NormalizeError::NotRegular { rule, .. }) if rule == "w"),
        "{recursive:?}"
    );
    let nested = compile_error(
        "root ::= a\na[max_tokens=5] ::= \"x\" b\nb[max_tokens=2] ::= \"y\"+",
        BackendKind::Earley,
    );
    assert!(
        matches!(&nested, CompileError::Normalize(NormalizeError::NestedTokenLimit { outer, inner }) if outer == "a" && inner == "b"),
        "{nested:?}"
    );
    for backend in BACKENDS {
        let small = compile_error(
            "root ::= \"<\" w \">\"\nw[max_tokens=1] ::= [a-z]+",
            backend,
        );
        assert!(
            matches!(&small, CompileError::TokenLimit(m) if m.contains("`w`") && m.contains("at least 2")),
            "{backend}: {small}"
        );
    }
}

/// `auto` picks a backend that counts tokens: Earley just in time, the token DFA (the grammar
/// is regular) ahead of time.
#[test]
fn auto_compiles_limits_on_a_backend_that_counts_tokens() {
    let tokenizer = Arc::new(Tokenizer::new(Arc::new(
        Vocabulary::embedded_default().clone(),
    )));
    let grammar = gbnf("root ::= \"<\" w \">\"\nw[max_tokens=3] ::= [a-z]+");
    for (ahead_of_time, expected) in [
        (sieve_matcher::AheadOfTime::Off, BackendKind::Earley),
        (
            sieve_matcher::AheadOfTime::All { parallel: false },
            BackendKind::TokenDfa,
        ),
    ] {
        let options = Options {
            backend: sieve_matcher::BackendChoice::Auto,
            ahead_of_time,
            ..Options::default()
        };
        let compiled =
            CompiledGrammar::new(&grammar, tokenizer.clone(), &options).expect("auto compiles");
        assert!(compiled.has_token_limits());
        assert_eq!(compiled.backend(), expected);
    }
}

/// The substring vocabulary of `case`'s sampled sentences (see the test above).
fn substring_vocab(case: &Case) -> Arc<Vocabulary> {
    let recognizer = Recognizer::new(&case.grammar).expect("small bounds");
    let samples: Vec<Vec<u8>> = (0..200)
        .filter_map(|seed| recognizer.sample(seed, 6))
        .filter(|s| s.len() <= 60)
        .take(20)
        .collect();
    let slices: Vec<&[u8]> = samples.iter().map(Vec::as_slice).collect();
    Arc::new(sieve_testkit::substring_vocabulary(&slices, 6, Some(1500)))
}

/// One budgeted walk to EOS: uniform, or the adversary taking the allowed text token that
/// leaves the most work; masks checked against the oracle every other step. Returns the
/// output, the token lengths and the steps taken.
fn budgeted_walk(
    compiled: &Arc<CompiledGrammar>,
    budget: u32,
    seed: u64,
    adversary: bool,
    label: &str,
) -> (Vec<u8>, Vec<usize>, usize) {
    let vocab = compiled.vocabulary();
    let eos = vocab.eos_ids()[0].as_u32();
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut m = Matcher::with_budget(compiled.clone(), budget).expect("feasible");
    let mut tokens: Vec<u32> = Vec::new();
    while !m.is_terminated() {
        let mask = mask_of(&mut m);
        if tokens.len() % 2 == 0 {
            let oracle = oracle_mask(&mut m);
            let (mask_only, oracle_only) = differences(&mask, &oracle);
            assert!(
                mask_only.is_empty() && oracle_only.is_empty(),
                "{label}: step {}: only in the mask {mask_only:?}, only in the oracle {oracle_only:?}",
                tokens.len()
            );
        }
        let allowed = set_bits(&mask);
        assert!(
            !allowed.is_empty(),
            "{label}: empty mask after {} tokens",
            tokens.len()
        );
        let token = if adversary {
            allowed
                .iter()
                .copied()
                .filter(|&t| t != eos)
                .max_by_key(|&t| {
                    let mut after = m.clone();
                    after.accept_token(t).expect("allowed");
                    after.completion_bound().unwrap_or(0)
                })
                .unwrap_or(eos)
        } else {
            allowed[rng.below(allowed.len())]
        };
        m.accept_token(token).expect("an allowed token is accepted");
        if token != eos {
            tokens.push(token);
        }
    }
    let bytes = |t: u32| vocab.bytes(vocab.token(t).expect("in range"));
    let output = tokens.iter().flat_map(|&t| bytes(t).to_vec()).collect();
    let lengths = tokens.iter().map(|&t| bytes(t).len()).collect();
    (output, lengths, m.steps())
}

/// The least budget that fits a complete output (the bound of the empty output, and EOS).
fn min_budget(compiled: &Arc<CompiledGrammar>) -> u32 {
    Matcher::new(compiled.clone())
        .completion_bound()
        .expect("bounded")
        + 1
}

/// One [`budgeted_walk`] (`sampler`: seed, adversary) of `case`, checked: within the budget,
/// a sentence, every region within the limit.
fn check_budgeted_walk(
    case: &Case,
    compiled: &Arc<CompiledGrammar>,
    budget: u32,
    (seed, adversary): (u64, bool),
    label: &str,
) {
    let (output, lengths, steps) = budgeted_walk(compiled, budget, seed, adversary, label);
    assert!(steps <= budget as usize, "{label}: {steps} steps");
    let recognizer = Recognizer::new(&case.grammar).expect("small bounds");
    assert!(recognizer.accepts(&output), "{label}: {output:?}");
    for count in region_tokens(case, &output, &lengths) {
        assert!(count <= case.limit, "{label}: {count} tokens");
    }
}

/// A budget and limits together: from the smallest feasible budget to 1.5 times it, with a
/// uniform and an adversarial sampler, every walk ends with EOS within the budget, on a
/// sentence, with every region within its limit; the budgeted masks equal the oracle's.
#[test]
fn budgeted_walks_end_complete_within_the_budget_and_every_limit() {
    for (case, backend) in cases()
        .into_iter()
        .flat_map(|c| BACKENDS.map(|b| (c.clone(), b)))
    {
        let Some(compiled) = compile_case(&case, substring_vocab(&case), backend) else {
            continue;
        };
        let min = min_budget(&compiled);
        for budget in [min, min + 1, min + min / 2 + 1] {
            for adversary in [false, true] {
                for seed in 0..3u64 {
                    let label = format!(
                        "{} on {backend} budget {budget} adversary {adversary} seed {seed}",
                        case.name
                    );
                    check_budgeted_walk(&case, &compiled, budget, (seed, adversary), &label);
                }
            }
        }
    }
}

/// The same on GPT-2's vocabulary with the uniform sampler.
#[test]
fn budgeted_walks_on_gpt2_end_complete() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    for (case, backend) in cases()
        .into_iter()
        .flat_map(|c| BACKENDS.map(|b| (c.clone(), b)))
    {
        let Some(compiled) = compile_case(&case, vocab.clone(), backend) else {
            continue;
        };
        let min = min_budget(&compiled);
        for (budget, seed) in [(min, 1), (min + 2, 2), (min + min / 2 + 1, 3)] {
            let label = format!(
                "{} (GPT-2) on {backend} budget {budget} seed {seed}",
                case.name
            );
            check_budgeted_walk(&case, &compiled, budget, (seed, false), &label);
        }
    }
}

/// An ambiguous prefix: a limited rule and an unlimited one read the same letters, so a token
/// can drop the limited item (too far from its end for the tokens it has left) while the
/// other item keeps the token allowed, at a much higher completion cost. The budget's fast
/// path must not count the dropped item's cheap route: budgeted masks equal the oracle's at
/// every step, and every walk ends within the budget.
#[test]
fn budgets_do_not_count_routes_of_items_a_token_drops() {
    let grammar = gbnf(
        "root ::= w \".\" | [a-z-]+ \".xxxxxxxxxxxx\"\nw[max_tokens=2] ::= [a-z]+ \"-\" [a-z]+",
    );
    let recognizer = Recognizer::new(&grammar).expect("small bounds");
    let pieces: Vec<&[u8]> = vec![
        b"ab-cd.",
        b"abc-d.",
        b"abcd-ef.",
        b"ab-c.xxxxxxxxxxxx",
        b"abcdef.xxxxxxxxxxxx",
    ];
    let vocab = Arc::new(sieve_testkit::substring_vocabulary(&pieces, 3, Some(500)));
    // Not LR(1): the limited rule's end is not seen one byte ahead.
    assert_lr_conflict(&grammar, vocab.clone());
    for backend in [BackendKind::Earley, BackendKind::TokenDfa] {
        let compiled = compile_on(&grammar, vocab.clone(), backend);
        let min = min_budget(&compiled);
        for budget in min..=min + 4 {
            for adversary in [false, true] {
                for seed in 0..6u64 {
                    let label = format!(
                        "ambiguous on {backend} budget {budget} adversary {adversary} seed {seed}"
                    );
                    let (output, _, steps) =
                        budgeted_walk(&compiled, budget, seed, adversary, &label);
                    assert!(steps <= budget as usize, "{label}: {steps} steps");
                    assert!(recognizer.accepts(&output), "{label}: {output:?}");
                }
            }
        }
    }
}

/// A limited rule whose limit is too short to spell it one byte per token: the bound must
/// count the vocabulary's longer tokens inside it (its `rest`), on every backend, so a
/// budget fits and every budgeted walk spells it with them.
#[test]
fn budgets_count_long_tokens_inside_a_limited_rule() {
    let grammar = gbnf("root ::= \"<\" w \">\"\nw[max_tokens=3] ::= \"abcdef\"");
    let pieces: Vec<&[u8]> = vec![b"<abcdef>"];
    let vocab = Arc::new(sieve_testkit::substring_vocabulary(&pieces, 6, None));
    let recognizer = Recognizer::new(&grammar).expect("small bounds");
    for backend in BACKENDS {
        let compiled = compile_on(&grammar, vocab.clone(), backend);
        let min = min_budget(&compiled);
        // "<", "abcdef", ">" and EOS at most, and one more: the least feasible budget.
        assert!(min <= 5, "{backend}: {min}");
        for seed in 0..6u64 {
            let label = format!("abcdef on {backend} budget {min} seed {seed}");
            let (output, _, steps) = budgeted_walk(&compiled, min, seed, seed % 2 == 1, &label);
            assert!(steps <= min as usize, "{label}: {steps} steps");
            assert!(recognizer.accepts(&output), "{label}: {output:?}");
        }
    }
}

/// A tight key's classification is shared across grammars through the tokenizer's store
/// (its fingerprint is its state's with the allowance), so a second request with the same
/// limited text classifies nothing itself, and its masks are the same as unshared.
#[test]
fn tight_classifications_are_shared_across_grammars() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let tag = serde_json::json!({"type": "structural_tag", "format": {"type": "tag",
        "begin": "<think>", "content": {"type": "any_text", "max_tokens": 4}, "end": "</think>"}});
    let grammar = sieve_structural::compile(&tag, &Default::default()).expect("compiles");
    // Four tokens of text: the last is read at allowance 1, under a tight key.
    let text = b"<think>a b c d</think>";
    let walk = |compiled: &Arc<CompiledGrammar>| {
        let trie = compiled.trie();
        let mut matcher = Matcher::new(compiled.clone());
        let mut masks = Vec::new();
        let mut at = 0;
        while at < text.len() {
            masks.push(mask_of(&mut matcher));
            let (len, id) = (1..=(text.len() - at).min(8))
                .rev()
                .find_map(|len| trie.find(&text[at..at + len]).map(|id| (len, id)))
                .expect("single bytes are tokens");
            matcher.accept_token(id.as_u32()).expect("on the text");
            at += len;
        }
        masks.push(mask_of(&mut matcher));
        masks
    };
    let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
    let first = compile_sharing(&grammar, &tokenizer, true);
    let first_masks = walk(&first);
    assert!(first.cache_stats().classified > 0);
    let second = compile_sharing(&grammar, &tokenizer, true);
    let second_masks = walk(&second);
    assert_eq!(
        second.cache_stats().classified,
        0,
        "{:?}",
        second.cache_stats()
    );
    let alone = compile_sharing(&grammar, &Arc::new(Tokenizer::new(vocab)), false);
    assert!(walk(&alone) == first_masks && first_masks == second_masks);
}

/// A tail-recursive component (`root` and the group normalisation lifts from it) whose first
/// member calls a rule kept apart (here the limited `r2`): the token DFA once laid the
/// second member's states over that callee's copy, accepting `aa` as complete. Found by the
/// proptest below; both backends now refuse EOS after `aa` and allow it after `aaa`.
#[test]
fn a_recursive_component_calling_a_limited_rule_masks_alike() {
    let grammar = gbnf("root ::= \"a\" (r2 | \"a\") (root | \"a\")\nr2[max_tokens=2] ::= \"a\"");
    let (a, aa, eos) = (0u32, 6u32, 10u32);
    let masks = |backend| {
        let compiled = compile_abc(&grammar, backend).expect("regular");
        let mut matcher = Matcher::new(compiled);
        let mut masks = Vec::new();
        for token in [aa, a, aa, a] {
            masks.push(mask_of(&mut matcher));
            matcher.accept_token(token).expect("allowed");
        }
        masks
    };
    let earley = masks(BackendKind::Earley);
    assert_eq!(earley, masks(BackendKind::TokenDfa));
    let has = |mask: &[u32], t: u32| mask[t as usize / 32] & (1 << (t % 32)) != 0;
    assert!(!has(&earley[1], eos) && has(&earley[2], eos));
}

/// Tokens over the random grammars' bytes, some crossing rule boundaries, and `</s>` (EOS).
fn abc_tokenizer() -> Arc<Tokenizer> {
    let list: String = ["a", "b", "c", "ab", "ca", "bc", "aa", "abc", "cab", "bca"]
        .iter()
        .map(|t| format!("\"{t}\"\n"))
        .chain(std::iter::once("special:\"</s>\"\n".to_owned()))
        .collect();
    let vocab = sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("valid");
    Arc::new(Tokenizer::new(Arc::new(vocab)))
}

/// `grammar` with rule `rule` (modulo its rule count) limited to `limit` tokens.
fn with_limit(mut grammar: Grammar, rule: usize, limit: u32) -> Grammar {
    let id = sieve_ir::RuleId::new(rule % grammar.rules().len()).expect("small id");
    grammar.set_token_limit(id, Some(limit));
    grammar
}

/// `grammar` compiled on `backend` against [`abc_tokenizer`]; `None` when it is refused.
fn compile_abc(grammar: &Grammar, backend: BackendKind) -> Option<Arc<CompiledGrammar>> {
    let options = Options {
        backend: backend.into(),
        ..Options::default()
    };
    let compiled = CompiledGrammar::new(grammar, abc_tokenizer(), &options).ok()?;
    Some(Arc::new(compiled))
}

/// `grammar` with rule `rule` limited to `limit` tokens, compiled on the default backend
/// against [`abc_tokenizer`]; `None` when the compiler refuses it.
fn limited(grammar: Grammar, rule: usize, limit: u32) -> Option<(Grammar, Arc<CompiledGrammar>)> {
    let grammar = with_limit(grammar, rule, limit);
    let compiled = compile_abc(&grammar, BackendKind::Earley)?;
    Some((grammar, compiled))
}

/// Steps `matcher` by the allowed token each pick selects, until EOS: every mask equals the
/// oracle's and is not empty.
fn checked_steps(
    matcher: &mut Matcher,
    picks: &[usize],
    grammar: &Grammar,
) -> Result<(), proptest::test_runner::TestCaseError> {
    for pick in picks {
        let mask = mask_of(matcher);
        let oracle = oracle_mask(matcher);
        proptest::prop_assert_eq!(&mask, &oracle, "{}", grammar);
        let allowed = set_bits(&mask);
        proptest::prop_assert!(!allowed.is_empty(), "stranded in {}", grammar);
        matcher
            .accept_token(allowed[pick % allowed.len()])
            .expect("an allowed token is accepted");
        if matcher.is_terminated() {
            break;
        }
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, ..Default::default() })]

    /// Random grammars with one rule limited (those the compiler accepts: not recursive
    /// through it, not nested, a limit above what the rule may need), on every backend that
    /// builds them: along random walks, every mask equals the oracle's and is never empty
    /// before EOS (a limited occurrence is always closed in time).
    #[test]
    fn random_limited_grammars_keep_masks_exact_and_walks_alive(
        grammar in sieve_testkit::random::arb_grammar(),
        rule in 0usize..3,
        limit in 2u32..6,
        picks in proptest::collection::vec(0usize..1000, 1..24),
    ) {
        let grammar = with_limit(grammar, rule, limit);
        if compile_abc(&grammar, BackendKind::Earley).is_none() {
            return Ok(());
        }
        for backend in backends_for(&grammar) {
            if let Some(compiled) = compile_abc(&grammar, backend) {
                checked_steps(&mut Matcher::new(compiled), &picks, &grammar)?;
            }
        }
    }

    /// The same grammars with a budget from the least feasible to three more: masks equal
    /// the oracle's, are never empty, and every walk ends with EOS within the budget.
    #[test]
    fn random_limited_grammars_with_budgets_end_within_them(
        grammar in sieve_testkit::random::arb_grammar(),
        rule in 0usize..3,
        limit in 2u32..6,
        slack in 0u32..4,
        picks in proptest::collection::vec(0usize..1000, 40),
    ) {
        let Some((grammar, compiled)) = limited(grammar, rule, limit) else {
            return Ok(());
        };
        let Some(bound) = Matcher::new(compiled.clone()).completion_bound() else {
            return Ok(());
        };
        let budget = bound + 1 + slack;
        let mut matcher = Matcher::with_budget(compiled, budget).expect("feasible");
        checked_steps(&mut matcher, &picks, &grammar)?;
        proptest::prop_assert!(matcher.is_terminated(), "no EOS within the budget: {}", grammar);
        proptest::prop_assert!(matcher.steps() <= budget as usize);
    }

    /// The backends accept the same language: on random limited grammars, the masks of
    /// Earley and of each other backend that builds them (the token DFA on regular ones, LR
    /// on LR(1) ones) are equal at every step of a random walk. (Not under a budget: each
    /// backend bounds completions its own way — the token DFA's exactly, Earley's and LR's
    /// from above — so a tight budget may allow a token on one that another's bound cannot
    /// yet guarantee.)
    #[test]
    fn random_limited_grammars_mask_alike_on_every_backend(
        grammar in sieve_testkit::random::arb_grammar(),
        rule in 0usize..3,
        limit in 2u32..6,
        picks in proptest::collection::vec(0usize..1000, 1..24),
    ) {
        let grammar = with_limit(grammar, rule, limit);
        let Some(earley) = compile_abc(&grammar, BackendKind::Earley) else {
            return Ok(());
        };
        let mut matchers: Vec<(BackendKind, Matcher)> = vec![(BackendKind::Earley, Matcher::new(earley))];
        for backend in backends_for(&grammar).into_iter().skip(1) {
            if let Some(compiled) = compile_abc(&grammar, backend) {
                matchers.push((backend, Matcher::new(compiled)));
            }
        }
        for pick in &picks {
            let mask = mask_of(&mut matchers[0].1);
            for (backend, matcher) in &mut matchers[1..] {
                proptest::prop_assert_eq!(&mask, &mask_of(matcher), "{} on {}", grammar, backend);
            }
            let allowed = set_bits(&mask);
            if allowed.is_empty() {
                break;
            }
            let token = allowed[pick % allowed.len()];
            for (_, matcher) in &mut matchers {
                matcher.accept_token(token).expect("allowed");
            }
            if matchers[0].1.is_terminated() {
                break;
            }
        }
    }
}

/// A case `random_limited_grammars_with_budgets_end_within_them` found (shrunk by proptest):
/// at the fifth step `a` would take the limited `r1`'s occurrence past its three tokens on
/// one parse, leaving only a longer route. `validate_tokens` read the completion bound before
/// the token's end dropped that parse, so it accepted `a`, which the mask leaves out and
/// `accept_token` refuses as over the budget. Both now read the bound after the token's end.
#[test]
fn budgeted_masks_agree_with_validation_inside_a_limited_loop() {
    use sieve_ir::{ByteClass, Expr, GrammarBuilder};
    let mut builder = GrammarBuilder::new();
    let [r0, r1, r2] = ["r0", "r1", "r2"].map(|name| builder.declare(name).expect("fresh"));
    let ab = || Expr::class(ByteClass::from_ranges([(b'a', b'b')])).expect("not empty");
    let bytes = |text: &str| Expr::bytes(text.as_bytes().to_vec());
    let choice = |alts: Vec<Expr>| Expr::choice(alts).expect("alternatives");
    // r0 ::= ("b" | r0) [ab] r1 "c" ("a" | r2)
    builder.define(
        r0,
        Expr::seq([
            choice(vec![bytes("b"), Expr::rule(r0)]),
            ab(),
            Expr::rule(r1),
            bytes("c"),
            choice(vec![bytes("a"), Expr::rule(r2)]),
        ]),
    );
    // r1 ::= "ab" r1 | "ab", limited to 3 tokens below
    builder.define(
        r1,
        choice(vec![Expr::seq([bytes("ab"), Expr::rule(r1)]), bytes("ab")]),
    );
    // r2 ::= r1 | [ab] "a"
    builder.define(
        r2,
        choice(vec![Expr::rule(r1), Expr::seq([ab(), bytes("a")])]),
    );
    let grammar = builder.build(r0).expect("valid");
    let (grammar, compiled) = limited(grammar, 1, 3).expect("compiles");
    let bound = Matcher::new(compiled.clone())
        .completion_bound()
        .expect("completable");
    let mut matcher = Matcher::with_budget(compiled, bound + 3).expect("feasible");
    let mut picks = vec![0, 3, 941, 44, 469];
    picks.resize(40, 0);
    checked_steps(&mut matcher, &picks, &grammar).expect("masks equal the oracle's");
    assert!(matcher.is_terminated(), "no EOS within the budget");
}
