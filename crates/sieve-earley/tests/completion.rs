//! The completion bounds through the seam, against their contracts, at every step of random
//! walks over every shipped grammar with a synthetic vocabulary (every byte a token, plus
//! substrings of sampled sentences): descent, the memo equal to the plain bound, caps at
//! least the bound after every token, the backend's decisions (fits / exceeds a limit) right
//! for every token the parser accepts.
use sieve_backend::{Backend, Recognizer};
use sieve_earley::Parser;
use sieve_ir::reference::Recognizer as Reference;
use sieve_vocab::{TokenTrie, Vocabulary};

mod common;
use common::compile;

/// Every byte, and the substrings of length 2 to 6 of `samples` (tokens crossing rules).
fn vocabulary(samples: &[Vec<u8>]) -> Vocabulary {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for sample in samples {
        for len in 2..=6 {
            for window in sample.windows(len).step_by(len / 2) {
                tokens.push(window.to_vec());
            }
        }
    }
    tokens.sort();
    tokens.dedup();
    tokens.truncate(1200);
    let list: String = tokens
        .iter()
        .map(|t| {
            format!(
                "hex:{}\n",
                t.iter().map(|b| format!("{b:02x}")).collect::<String>()
            )
        })
        .collect();
    sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("valid list")
}

/// The bound after feeding `bytes` (`None`: rejected).
fn bound_after(
    parser: &mut Parser,
    table: &sieve_earley::CompletionTable,
    bytes: &[u8],
) -> Option<u32> {
    let mut pushed = 0;
    for &byte in bytes {
        if !Recognizer::push_byte(parser, byte).expect("no limit") {
            break;
        }
        pushed += 1;
    }
    let bound = (pushed == bytes.len())
        .then(|| Recognizer::completion_bound(parser, table).unwrap_or(u32::MAX));
    Recognizer::pop_bytes(parser, pushed);
    bound
}

fn check_state(
    name: &str,
    parser: &mut Parser,
    table: &sieve_earley::CompletionTable,
    trie: &TokenTrie,
) -> Vec<usize> {
    let bound = Recognizer::completion_bound(&*parser, table).expect("every byte is a token");
    assert_eq!(
        bound == 0,
        parser.can_finish(),
        "{name}: bound 0 iff a sentence"
    );
    let memo = Recognizer::completion_memo(&*parser, table);
    let mut caps = vec![0u32; trie.max_token_len() + 1];
    Recognizer::completion_caps(&*parser, table, &mut caps);
    // The backend's decisions at limits around the bound: (limit, fits, exceeds).
    let words = trie.n_vocab().div_ceil(32);
    let decisions: Vec<(u32, Vec<u32>, Vec<u32>)> = [bound.saturating_sub(1), bound, bound + 2]
        .into_iter()
        .map(|limit| {
            let (mut fits, mut exceeds) = (vec![0u32; words], vec![0u32; words]);
            Recognizer::completion_decide(
                &*parser,
                table,
                &memo,
                trie,
                limit,
                &mut fits,
                &mut exceeds,
            );
            (limit, fits, exceeds)
        })
        .collect();
    let bit = |bits: &[u32], id: u32| bits[id as usize / 32] & (1 << (id % 32)) != 0;
    let mut descends = bound == 0;
    let mut accepted = Vec::new();
    for i in 0..trie.len() {
        let bytes = trie.bytes_at(i);
        let id = trie.token(i).as_u32();
        let Some(after) = bound_after(parser, table, bytes) else {
            continue;
        };
        accepted.push(i);
        descends |= after < bound;
        for (limit, fits, exceeds) in &decisions {
            if bit(fits, id) {
                assert!(
                    after <= *limit,
                    "{name}: decided to fit {limit}, {after} after {bytes:?}"
                );
            }
            if bit(exceeds, id) {
                assert!(
                    after > *limit,
                    "{name}: decided to exceed {limit}, {after} after {bytes:?}"
                );
            }
        }
        assert!(
            caps[bytes.len()] >= after,
            "{name}: cap {} under {after} after {bytes:?}",
            caps[bytes.len()]
        );
        // The memo, with the token's bytes on top of the bytes it was made for.
        for &byte in bytes {
            Recognizer::push_byte(parser, byte).expect("no limit");
        }
        let from = Recognizer::completion_bound_from(&*parser, table, &memo).unwrap_or(u32::MAX);
        Recognizer::pop_bytes(parser, bytes.len());
        assert_eq!(from, after, "{name}: memo after {bytes:?}");
    }
    assert!(descends, "{name}: no token lowers the bound {bound}");
    accepted
}

#[test]
fn bounds_keep_their_contracts_on_every_shipped_grammar() {
    let mut checked = 0;
    for path in sieve_testkit::grammar_files() {
        let name = path.display().to_string();
        let grammar = sieve_testkit::compile_file(&path);
        let reference = Reference::new(&grammar).expect("small bounds");
        let samples: Vec<Vec<u8>> = (0..4)
            .filter_map(|seed| reference.sample(seed, 6))
            .collect();
        let vocab = vocabulary(&samples);
        let trie = TokenTrie::new(&vocab);
        let g = compile(&grammar);
        let table = g.completion_table(&trie);
        let mut parser = Parser::new(g.clone());
        let mut seed = 0x2545_f491_u64;
        for _ in 0..12 {
            let accepted = check_state(&name, &mut parser, &table, &trie);
            checked += accepted.len();
            if accepted.is_empty() {
                break;
            }
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let pick = accepted[(seed % accepted.len() as u64) as usize];
            for &byte in trie.bytes_at(pick) {
                Recognizer::push_byte(&mut parser, byte).expect("no limit");
            }
        }
    }
    // Every grammar contributes: the walks are not vacuous.
    assert!(checked > 5_000, "only {checked} tokens checked");
}
