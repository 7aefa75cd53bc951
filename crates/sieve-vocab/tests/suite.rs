//! sieve-vocab's integration suite: the loaders on the checked-in fixtures (good and
//! malformed), the embedded default against its reference decodings, the token trie's
//! invariants on random vocabularies, and — `#[ignore]`d, run by `cargo xtask corpus` — the
//! real vocabularies of `../shared/tokenizers` against theirs.
//!
//! Reference decodings (`tests/fixtures/decode_*.json`) were made once with PyPI `tiktoken` /
//! `tokenizers` by `tests/fixtures/make_decode_fixtures.py`.

use proptest::prelude::*;
use sieve_vocab::{hf, manifest, plain, tiktoken, Error, Step, TokenId, TokenTrie, Vocabulary};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn t(id: u32) -> TokenId {
    TokenId::new(id).unwrap()
}

fn ids(raw: &[u32]) -> Vec<TokenId> {
    raw.iter().map(|&i| t(i)).collect()
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Checks every case of `tests/fixtures/decode_<name>.json`; returns how many.
fn check_decode_fixture(vocab: &Vocabulary, name: &str) -> usize {
    let path = fixtures().join(format!("decode_{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = value["cases"].as_array().unwrap();
    for case in cases {
        let raw: Vec<u32> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        let got = vocab.decode(&ids(&raw)).unwrap();
        let want = hex(case["hex"].as_str().unwrap());
        assert!(
            got == want,
            "{name}, {}: ids {raw:?}\n got {:?}\nwant {:?}",
            case["note"],
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
    }
    assert!(cases.len() >= 50, "{name}: only {} cases", cases.len());
    cases.len()
}

mod embedded {
    use super::*;

    #[test]
    fn is_gpt2_with_endoftext_as_eos() {
        let v = Vocabulary::embedded_default();
        assert_eq!(v.n_vocab(), 50257);
        assert_eq!(v.n_text_tokens(), 50256);
        assert_eq!(v.special_by_name("<|endoftext|>"), Some(t(50256)));
        assert_eq!(v.eos_ids(), &[t(50256)]);
        assert_eq!(v.special_ids(), &[t(50256)]);
        assert!(v.is_special(t(50256)) && v.is_eos(t(50256)));
        assert_eq!(v.bytes(t(0)), b"!");
        assert_eq!(v.bytes(t(220)), b" ");
        assert_eq!(v.bytes(t(50256)), b"");
        assert!(std::ptr::eq(v, Vocabulary::embedded_default()));
    }

    #[test]
    fn decodes_like_tiktoken() {
        check_decode_fixture(Vocabulary::embedded_default(), "r50k_base");
    }

    #[test]
    fn decode_rejects_unknown_ids_and_skips_specials() {
        let v = Vocabulary::embedded_default();
        assert_eq!(
            v.decode(&ids(&[15496, 50256, 995])).unwrap(),
            b"Hello world"
        );
        let err = v.decode(&ids(&[15496, 50257])).unwrap_err();
        assert!(
            matches!(err, Error::IdOutOfRange { id: 50257, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("position 1"), "{err}");
        assert_eq!(v.get_bytes(t(50257)), None);
        assert_eq!(v.token(50257), None);
    }

    #[test]
    fn trie_finds_tokens() {
        let v = Vocabulary::embedded_default();
        let trie = v.trie();
        // The texts without the marker byte, then every id (the EOS one included) under its
        // encoding.
        let with_marker = (0..50256)
            .filter(|&i| v.bytes(t(i)).contains(&0xFF))
            .count();
        assert!(with_marker >= 1, "GPT-2 has a token for the byte 0xFF");
        assert_eq!(trie.len(), 50256 - with_marker + 50257);
        assert_eq!(trie.find(b"Hello"), Some(t(15496)));
        assert_eq!(trie.find(b"<|endoftext|>"), None);
        let eos = sieve_ir::token::encode(50256);
        assert_eq!(trie.find(&eos), Some(t(50256)));
        assert!(trie.is_encoding(trie.len() - 1) && !trie.is_encoding(0));
        let range = trie.prefix_range(b" hel");
        assert!(range.len() > 5);
        for i in range {
            assert!(trie.bytes_at(i).starts_with(b" hel"));
        }
    }
}

mod tiny {
    use super::*;

    #[test]
    fn tiktoken_file() {
        let options = tiktoken::Options::new()
            .special("<|endoftext|>", 9)
            .n_vocab(11);
        let v = tiktoken::load(&fixtures().join("tiny.tiktoken"), &options).unwrap();
        assert_eq!(v.n_vocab(), 11);
        assert_eq!(v.bytes(t(4)), [0xff]);
        assert_eq!(v.bytes(t(7)), b" ab");
        // 8 and 10 are unused: special, nameless.
        assert_eq!(v.special_ids(), &ids(&[8, 9, 10])[..]);
        assert_eq!(v.special_name(t(8)), None);
        assert_eq!(v.eos_ids(), &[t(9)]);
        assert_eq!(v.decode(&ids(&[5, 8, 9, 0])).unwrap(), b"\xe2\x82a");
    }

    #[test]
    fn byte_level_tokenizer_json_with_config_eos() {
        let v = hf::load(
            &fixtures().join("byte_level/tokenizer.json"),
            &hf::Options::new(),
        )
        .unwrap();
        assert_eq!(v.n_vocab(), 21);
        // tokenizer_config.json names <|im_end|>; <|endoftext|> follows by the default names.
        assert_eq!(v.eos_ids(), &ids(&[19, 18])[..]);
        assert_eq!(v.special_ids(), &ids(&[18, 19])[..]);
        assert_eq!(v.bytes(t(4)), b" ");
        assert_eq!(v.bytes(t(8)), b" w");
        assert_eq!(v.bytes(t(11)), "é".as_bytes());
        assert_eq!(v.bytes(t(13)), b"\0");
        // A non-special added token is text.
        assert_eq!(v.bytes(t(20)), b"<tool_call>");
        // The same decoding as `tokenizers` gives for every id (see the fixture's generation).
        let all: Vec<TokenId> = (0..21).map(t).collect();
        assert_eq!(
            v.decode(&all).unwrap(),
            "helo \nhell wéé\t\0hellowrd<tool_call>".as_bytes()
        );
    }

    #[test]
    fn sentencepiece_tokenizer_json() {
        let path = fixtures().join("sentencepiece.json");
        let v = hf::load(&path, &hf::Options::new()).unwrap();
        assert_eq!(v.n_vocab(), 269);
        assert_eq!(v.eos_ids(), &[t(2)]);
        assert_eq!(v.special_ids(), &ids(&[0, 1, 2])[..]);
        assert_eq!(v.special_by_name("<s>"), Some(t(1)));
        assert_eq!(v.bytes(t(3 + 0x41)), b"A");
        assert_eq!(v.bytes(t(3 + 0xE2)), [0xE2]);
        assert_eq!(v.bytes(t(259)), b" ");
        assert_eq!(v.bytes(t(266)), b"  ");
        assert_eq!(v.bytes(t(267)), b"x y");
        // `tokenizers` encodes "the é€x y" to these ids and decodes them (after a leading "a",
        // so its decoder's Strip does not apply) to " the é€x y".
        let encoded = ids(&[260, 261, 262, 259, 265, 229, 133, 175, 123, 259, 124]);
        assert_eq!(v.decode(&encoded).unwrap(), " the é€x y".as_bytes());
        // Forcing raw mode keeps the pieces as they are written.
        let raw = hf::load(
            &path,
            &hf::Options::new().vocab_type(sieve_vocab::VocabType::Raw),
        )
        .unwrap();
        assert_eq!(raw.bytes(t(259)), "▁".as_bytes());
    }

    #[test]
    fn eos_can_be_overridden() {
        let path = fixtures().join("byte_level/tokenizer.json");
        let v = hf::load(&path, &hf::Options::new().eos([18])).unwrap();
        assert_eq!(v.eos_ids(), &[t(18)]);
        let v = hf::load(&path, &hf::Options::new().eos_token("<|endoftext|>")).unwrap();
        assert_eq!(v.eos_ids(), &ids(&[18, 19])[..]);
        // with_eos makes a text token special: an end marker is never text.
        let v = v.with_eos([t(20)]).unwrap();
        assert_eq!(v.eos_ids(), &[t(20)]);
        assert!(v.is_special(t(20)));
        assert_eq!(v.bytes(t(20)), b"");
        assert_eq!(v.bytes(t(17)), b"d");
        assert_eq!(v.special_ids(), &ids(&[18, 19, 20])[..]);
        let v = v.with_eos_names(&["<|endoftext|>"]).unwrap();
        assert_eq!(v.eos_ids(), &[t(18)]);
        assert!(matches!(
            v.clone().with_eos_names(&["<nope>"]),
            Err(Error::UnknownName { .. })
        ));
        assert!(matches!(
            v.with_eos([t(21)]),
            Err(Error::IdOutOfRange { id: 21, .. })
        ));
        let unknown = hf::load(&path, &hf::Options::new().eos_token("<nope>")).unwrap_err();
        assert!(matches!(unknown.innermost(), Error::UnknownName { .. }));
    }

    #[test]
    fn plain_list() {
        let v = plain::load(&fixtures().join("tiny.list"), &plain::Options::new()).unwrap();
        assert_eq!(v.n_vocab(), 7);
        assert_eq!(v.bytes(t(2)), [0xff, b'\n']);
        assert_eq!(v.bytes(t(3)), "é".as_bytes());
        assert_eq!(v.bytes(t(6)), b"\" \\");
        assert_eq!(v.special_ids(), &ids(&[4, 5])[..]);
        assert_eq!(v.eos_ids(), &[t(5)]);
        for (text, line) in [
            ("\"a\"\nb\n", 2),
            ("\"a\"\nhex:f\n", 2),
            ("hex:zz\n", 1),
            ("\"\"\n", 1),
            ("special:</s>\n", 1),
        ] {
            let err = plain::parse(text.as_bytes(), &plain::Options::new()).unwrap_err();
            assert!(
                matches!(err, Error::Line { line: l, .. } if l == line),
                "{text:?}: {err}"
            );
        }
        let dup = plain::parse(b"special:\"x\"\nspecial:\"x\"\n", &plain::Options::new());
        assert!(matches!(dup, Err(Error::DuplicateId { .. })), "{dup:?}");
    }

    #[test]
    fn manifest_entries() {
        let m = fixtures().join("manifest.json");
        let v = manifest::load_named(&m, "tiny_tiktoken").unwrap();
        assert_eq!(v.n_vocab(), 12);
        assert_eq!(v.special_by_name("<|fim|>"), Some(t(10)));
        assert_eq!(v.special_ids(), &ids(&[8, 9, 10, 11])[..]);
        assert_eq!(v.eos_ids(), &[t(9)]);
        let v = manifest::load_named(&m, "tiny_byte_level").unwrap();
        assert_eq!(v.n_vocab(), 24);
        assert_eq!(v.eos_ids(), &ids(&[19, 18])[..]);
        assert_eq!(v.special_ids(), &ids(&[18, 19, 21, 22, 23])[..]);
        let v = manifest::load_named(&m, "tiny_sentencepiece").unwrap();
        assert_eq!(v.bytes(t(263)), b" the");
        let v = manifest::load_named(&m, "tiny_plain").unwrap();
        assert_eq!(v.eos_ids(), &[t(5)]);

        // from_manifest_entry takes the `tokenizer` object of the bench protocol as it is.
        let text = std::fs::read_to_string(&m).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let v = Vocabulary::from_manifest_entry(&value["tiny_tiktoken"], &fixtures()).unwrap();
        assert_eq!(v.n_vocab(), 12);

        let err = |name: &str| manifest::load_named(&m, name).unwrap_err();
        assert!(err("bad_format").to_string().contains("unknown format"));
        let e = err("bad_special");
        assert!(
            matches!(e.innermost(), Error::JsonContent { path, .. } if path == "special_tokens[\"<|x|>\"]"),
            "{e}"
        );
        assert!(matches!(
            err("special_on_ranked").innermost(),
            Error::DuplicateId { id: 3, .. }
        ));
        assert!(matches!(err("missing_file"), Error::Io { .. }));
        assert!(matches!(
            err("no_such_entry").innermost(),
            Error::UnknownName { .. }
        ));
    }
}

mod malformed {
    use super::*;

    fn tiktoken_err(name: &str) -> Error {
        let path = fixtures().join("bad").join(name);
        let err = tiktoken::load(&path, &tiktoken::Options::new()).unwrap_err();
        assert!(err.to_string().contains(name), "no file name in: {err}");
        match err {
            Error::InFile { error, .. } => *error,
            other => other,
        }
    }

    fn hf_err(name: &str) -> Error {
        let path = fixtures().join("bad").join(name);
        let err = hf::load(&path, &hf::Options::new()).unwrap_err();
        assert!(err.to_string().contains(name), "no file name in: {err}");
        err.innermost().to_string();
        match err {
            Error::InFile { error, .. } => *error,
            other => other,
        }
    }

    #[test]
    fn tiktoken_files() {
        let e = tiktoken_err("duplicate_rank.tiktoken");
        assert!(
            matches!(
                e,
                Error::DuplicateRank {
                    line: 3,
                    rank: 1,
                    first_line: 2
                }
            ),
            "{e}"
        );
        let e = tiktoken_err("rank_gap.tiktoken");
        assert!(
            matches!(
                e,
                Error::RankGap {
                    line: 3,
                    rank: 3,
                    missing: 2
                }
            ),
            "{e}"
        );
        let e = tiktoken_err("bad_base64.tiktoken");
        assert!(
            matches!(&e, Error::Line { line: 2, message } if message.contains("base64")),
            "{e}"
        );
        let e = tiktoken_err("missing_rank.tiktoken");
        assert!(
            matches!(&e, Error::Line { line: 3, message } if message.contains("missing rank")),
            "{e}"
        );
        let e = tiktoken_err("bad_rank.tiktoken");
        assert!(
            matches!(&e, Error::Line { line: 2, message } if message.contains("\"one\"")),
            "{e}"
        );
        let e = tiktoken::parse(b"YQ== 0\n", &tiktoken::Options::new().n_vocab(0)).unwrap_err();
        assert!(matches!(e, Error::BadNVocab { n_vocab: 0, .. }), "{e}");
        let e = tiktoken::parse(b"YQ== 0\n", &tiktoken::Options::new().special("x", 1 << 30))
            .unwrap_err();
        assert!(matches!(e, Error::IdOutOfRange { .. }), "{e}");
    }

    #[test]
    fn tokenizer_json_files() {
        let e = hf_err("truncated.json");
        assert!(matches!(e, Error::Json { line, .. } if line > 1), "{e}");
        let e = hf_err("id_not_number.json");
        assert!(matches!(e, Error::Json { line: 76, .. }), "{e}");
        let e = hf_err("not_byte_level.json");
        assert!(
            matches!(&e, Error::JsonContent { path, message } if path == "model.vocab[\"a b\"]" && message.contains("U+0020")),
            "{e}"
        );
        let e = hf_err("duplicate_id.json");
        assert!(
            matches!(&e, Error::DuplicateId { id: 3, first, second } if first == "model.vocab[\"o\"]" && second == "model.vocab[\"zz\"]"),
            "{e}"
        );
        let e = hf_err("wordpiece.json");
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
        let e = hf_err("missing_vocab.json");
        assert!(e.to_string().contains("missing field `vocab`"), "{e}");
    }

    #[test]
    fn nothing_panics_on_garbage() {
        for data in [
            &b""[..],
            b"\n",
            b"\xff\xfe",
            b"{",
            b"[]",
            b"null",
            b"YQ== 99999999999\n",
        ] {
            let _ = tiktoken::parse(data, &tiktoken::Options::new());
            let _ = hf::parse(data, &hf::Options::new());
            let _ = plain::parse(data, &plain::Options::new());
        }
    }
}

mod trie {
    use super::*;

    fn vocab_of(tokens: &[Vec<u8>]) -> Vocabulary {
        let mut list = String::new();
        for t in tokens {
            list.push_str("hex:");
            for b in t {
                list.push_str(&format!("{b:02x}"));
            }
            list.push('\n');
        }
        plain::parse(list.as_bytes(), &plain::Options::new()).unwrap()
    }

    fn brute_common(a: &[u8], b: &[u8]) -> usize {
        a.iter().zip(b).take_while(|(x, y)| x == y).count()
    }

    /// Checks every documented invariant of the trie against brute force.
    fn check_invariants(vocab: &Vocabulary, trie: &TokenTrie) {
        let n = trie.len();
        let texts = (0..vocab.n_vocab())
            .filter(|&i| vocab.is_text_readable(TokenId::new(i as u32).unwrap()))
            .count();
        let defined = (0..vocab.n_vocab())
            .filter(|&i| vocab.is_defined(TokenId::new(i as u32).unwrap()))
            .count();
        assert_eq!(n, texts + defined);
        for i in 0..n {
            let reading = if i < texts {
                vocab.bytes(trie.token(i)).to_vec()
            } else {
                sieve_ir::token::encode(trie.token(i).index() as u32).to_vec()
            };
            assert_eq!(trie.bytes_at(i), reading, "reading at {i}");
            assert_eq!(trie.is_encoding(i), i >= texts);
            if i > 0 {
                let (a, b) = (trie.bytes_at(i - 1), trie.bytes_at(i));
                assert!((a, trie.token(i - 1)) < (b, trie.token(i)), "sorted at {i}");
                assert_eq!(trie.lcp(i), brute_common(a, b));
            } else {
                assert_eq!(trie.lcp(0), 0);
            }
            let me = trie.bytes_at(i);
            let end = (i + 1..n)
                .find(|&j| !trie.bytes_at(j).starts_with(me))
                .unwrap_or(n);
            assert_eq!(trie.subtree_end(i), end, "subtree_end({i})");
            for k in 0..=me.len() {
                let want = (i + 1..n)
                    .find(|&j| brute_common(trie.bytes_at(j), me) < k)
                    .unwrap_or(n);
                assert_eq!(trie.skip_to(i + 1, k), want, "skip_to({}, {k})", i + 1);
            }
        }
        check_nodes(trie);
    }

    /// The node layout against brute force: one node per distinct prefix, in pre-order, with
    /// subtree ends, position ranges and the tokens equal to each prefix.
    fn check_nodes(trie: &TokenTrie) {
        let n = trie.len();
        let mut prefixes: Vec<Vec<u8>> = (0..n)
            .flat_map(|i| (1..=trie.bytes_at(i).len()).map(move |k| trie.bytes_at(i)[..k].to_vec()))
            .collect();
        prefixes.sort();
        prefixes.dedup();
        let nodes = trie.nodes();
        assert_eq!(nodes.len(), prefixes.len());
        let depth_one = prefixes.iter().filter(|p| p.len() == 1).count();
        assert_eq!(trie.first_bytes().len(), depth_one);
        for (k, prefix) in prefixes.iter().enumerate() {
            let node = nodes[k];
            assert_eq!(node.depth as usize, prefix.len(), "node {k}");
            assert_eq!(node.byte, *prefix.last().unwrap(), "node {k}");
            let end = (k + 1..prefixes.len())
                .find(|&j| !prefixes[j].starts_with(prefix))
                .unwrap_or(prefixes.len());
            assert_eq!(node.end as usize, end, "node {k} end");
            let under: Vec<usize> = (0..n)
                .filter(|&i| trie.bytes_at(i).starts_with(prefix))
                .collect();
            assert_eq!(node.pos as usize, under[0], "node {k} pos");
            assert_eq!(
                trie.node_pos_end(k),
                under.last().unwrap() + 1,
                "node {k} pos end"
            );
            let equal: Vec<usize> = under
                .iter()
                .copied()
                .filter(|&i| trie.bytes_at(i) == &prefix[..])
                .collect();
            assert_eq!(node.has_token(), !equal.is_empty(), "node {k}");
            if let Some(&first) = equal.first() {
                assert_eq!(node.token, trie.token(first).as_u32(), "node {k} token");
            }
            assert_eq!(node.shared, equal.len() > 1, "node {k} shared");
            if node.depth == 1 {
                let first = trie.first_bytes().iter().find(|f| f.node as usize == k);
                let expected = sieve_vocab::FirstByte {
                    byte: node.byte,
                    node: k as u32,
                    end: node.end,
                };
                assert_eq!(first, Some(&expected), "node {k} first byte");
            }
            let below = prefixes[k + 1..end].len();
            assert_eq!(
                node.wide,
                below >= sieve_vocab::WIDE_SUBTREE,
                "node {k} wide"
            );
            let listed: Vec<usize> = trie.tokens_at_node(k).collect();
            assert_eq!(listed, equal, "node {k} tokens");
        }
    }

    #[test]
    fn small_example() {
        let vocab = vocab_of(&[
            b"b".to_vec(),
            b"ab".to_vec(),
            b"a".to_vec(),
            b"abc".to_vec(),
            b"ab".to_vec(),
            b"ac".to_vec(),
        ]);
        let trie = vocab.trie();
        let sorted: Vec<&[u8]> = (0..6).map(|i| trie.bytes_at(i)).collect();
        assert_eq!(sorted, [&b"a"[..], b"ab", b"ab", b"abc", b"ac", b"b"]);
        assert_eq!(trie.tokens()[..6], ids(&[2, 1, 4, 3, 5, 0])[..]);
        let encoded: Vec<u32> = (6..trie.len())
            .map(|i| trie.token(i).index() as u32)
            .collect();
        assert_eq!(encoded, [0, 1, 2, 3, 4, 5]);
        let lcps: Vec<usize> = (0..6).map(|i| trie.lcp(i)).collect();
        assert_eq!(lcps, [0, 1, 2, 2, 1, 0]);
        let ends: Vec<usize> = (0..6).map(|i| trie.subtree_end(i)).collect();
        assert_eq!(ends, [5, 4, 4, 4, 5, 6]);
        assert_eq!(trie.find(b"ab"), Some(t(1)));
        assert_eq!(trie.prefix_range(b"ab"), 1..4);
        assert_eq!(trie.prefix_range(b"zz"), 6..6);
        check_invariants(&vocab, &trie);
    }

    /// A walker that rejects every token containing a "bad" prefix, skipping at the first bad
    /// byte, must accept exactly what brute force accepts, and `common` must be right.
    fn walk_matches_brute_force(trie: &TokenTrie, bad: &[Vec<u8>]) {
        let rejected_at =
            |bytes: &[u8]| (1..=bytes.len()).find(|&k| bad.iter().any(|b| b == &bytes[..k]));
        let mut accepted = Vec::new();
        let mut prev: Option<Vec<u8>> = None;
        trie.walk(|common, bytes, id| {
            if let Some(p) = &prev {
                assert_eq!(common, brute_common(p, bytes));
            } else {
                assert_eq!(common, 0);
            }
            prev = Some(bytes.to_vec());
            match rejected_at(bytes) {
                Some(k) => Step::SkipPrefix(k),
                None => {
                    accepted.push(id);
                    Step::Next
                }
            }
        });
        let mut want: Vec<TokenId> = trie
            .tokens()
            .iter()
            .enumerate()
            .filter(|&(i, _)| rejected_at(trie.bytes_at(i)).is_none())
            .map(|(_, &t)| t)
            .collect();
        want.sort();
        accepted.sort();
        assert_eq!(accepted, want);
    }

    fn token() -> impl Strategy<Value = Vec<u8>> {
        // A small alphabet makes shared prefixes and duplicates common.
        prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c', 0xff]), 1..6)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn invariants_hold_on_random_vocabularies(tokens in prop::collection::vec(token(), 0..40)) {
            let vocab = vocab_of(&tokens);
            check_invariants(&vocab, &vocab.trie());
        }

        #[test]
        fn walk_skips_exactly_the_rejected_prefixes(
            tokens in prop::collection::vec(token(), 0..40),
            bad in prop::collection::vec(token(), 0..4),
        ) {
            let vocab = vocab_of(&tokens);
            walk_matches_brute_force(&vocab.trie(), &bad);
        }
    }

    #[test]
    fn stop_ends_the_walk() {
        let vocab = vocab_of(&[b"a".to_vec(), b"b".to_vec()]);
        let mut seen = 0;
        vocab.trie().walk(|_, _, _| {
            seen += 1;
            Step::Stop
        });
        assert_eq!(seen, 1);
    }
}

/// The real vocabularies: need `$SIEVE_SHARED/tokenizers`, by default `../shared` beside the
/// repository.
mod shared {
    use super::*;

    fn manifest_path() -> PathBuf {
        std::env::var_os("SIEVE_SHARED")
            .map_or_else(
                || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
                PathBuf::from,
            )
            .join("tokenizers/manifest.json")
    }

    fn check(entry: &str, fixture: &str) {
        let vocab = manifest::load_named(&manifest_path(), entry).unwrap();
        check_decode_fixture(&vocab, fixture);
        let trie = vocab.trie();
        let readings = (0..vocab.n_vocab() as u32)
            .filter_map(|id| vocab.token(id))
            .map(|t| usize::from(vocab.is_text_readable(t)) + usize::from(vocab.is_defined(t)))
            .sum::<usize>();
        assert_eq!(trie.len(), readings);
        assert!(
            trie.len() > vocab.n_text_tokens(),
            "every token has its encoding too"
        );
    }

    #[test]
    #[ignore = "needs ../shared/tokenizers; run by cargo xtask corpus"]
    fn o200k_base() {
        check("o200k_base", "o200k_base");
    }

    #[test]
    #[ignore = "needs ../shared/tokenizers; run by cargo xtask corpus"]
    fn cl100k_base() {
        check("cl100k_base", "cl100k_base");
    }

    #[test]
    #[ignore = "needs ../shared/tokenizers; run by cargo xtask corpus"]
    fn r50k_base() {
        check("gpt2", "r50k_base");
    }

    #[test]
    #[ignore = "needs ../shared/tokenizers; run by cargo xtask corpus"]
    fn qwen3() {
        check("qwen3", "qwen3");
        // Without the manifest: the file's own declarations give the same EOS ids.
        let dir = manifest_path()
            .parent()
            .unwrap()
            .join("qwen3/tokenizer.json");
        let v = hf::load(&dir, &hf::Options::new()).unwrap();
        assert_eq!(v.eos_ids(), &ids(&[151645, 151643])[..]);
        assert_eq!(v.n_vocab(), 151669);
        assert_eq!(
            v.bytes(v.trie().find(b"<tool_call>").unwrap()),
            b"<tool_call>"
        );
    }

    #[test]
    #[ignore = "needs ../shared/tokenizers; run by cargo xtask corpus"]
    fn mistral_7b_v0_1() {
        check("mistral-7b-v0.1", "mistral-7b-v0.1");
        let dir = manifest_path()
            .parent()
            .unwrap()
            .join("mistral-7b-v0.1/tokenizer.json");
        let v = hf::load(&dir, &hf::Options::new()).unwrap();
        assert_eq!(v.eos_ids(), &[t(2)]);
    }
}
