//! The token-DFA backend against brute force and against exhaustive searches.
//!
//! - Masks through `sieve_tokencache::TokenCache` and from the token automaton equal feeding
//!   every text token of GPT-2's vocabulary byte by byte, at every step of sampled walks, over
//!   every non-recursive shipped grammar, several regexes and non-recursive JSON Schemas; the
//!   token automaton's transitions equal feeding each token.
//! - The completion bound equals an exhaustive breadth-first search over token transitions
//!   on small cases, and the caps bound it.
//! - A recursive grammar is refused naming its cycle; the state limit and the token
//!   automaton's memory bound give their errors.

use std::collections::VecDeque;
use std::sync::Arc;

use sieve_backend::{Backend, Recognizer};
use sieve_tokencache::{SharedStore, TokenCache};
use sieve_tokendfa::{Config, TokenDfa, TokenDfaError};
use sieve_vocab::{TokenTrie, Vocabulary};

fn dfa_with(grammar: &sieve_ir::Grammar, config: Config) -> Result<Arc<TokenDfa>, TokenDfaError> {
    let normalized = sieve_normalize::normalize(grammar, &sieve_normalize::Config::default())
        .expect("the test grammars normalise");
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build_normalized(&normalized)
        .expect("the test grammars have automata");
    TokenDfa::new(&fsms, config).map(Arc::new)
}

fn dfa(grammar: &sieve_ir::Grammar) -> Result<Arc<TokenDfa>, TokenDfaError> {
    dfa_with(grammar, Config::new())
}

/// The DFA counting the tokens of `trie` for rules with token limits.
fn dfa_counting(
    grammar: &sieve_ir::Grammar,
    trie: &TokenTrie,
) -> Result<Arc<TokenDfa>, TokenDfaError> {
    let normalized = sieve_normalize::normalize(grammar, &sieve_normalize::Config::default())
        .expect("the test grammars normalise");
    let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
        .build_normalized(&normalized)
        .expect("the test grammars have automata");
    TokenDfa::with_token_limits(&fsms, Config::new(), trie).map(Arc::new)
}

fn gbnf(text: &str) -> sieve_ir::Grammar {
    sieve_gbnf::compile(text, &Default::default()).expect("valid GBNF")
}

fn regex(pattern: &str) -> sieve_ir::Grammar {
    sieve_regex::compile(pattern, &Default::default()).expect("valid regex")
}

fn schema(text: &str) -> sieve_ir::Grammar {
    let value: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
    sieve_jsonschema::compile(&value, &Default::default())
        .expect("valid schema")
        .grammar
}

/// Every text token fed on its own: the mask (bytes accepted and the token can end), and
/// each accepted token's state after its end.
fn brute_force(
    recognizer: &mut sieve_tokendfa::TokenDfaRecognizer,
    trie: &TokenTrie,
) -> (Vec<u32>, Vec<(u32, u32)>) {
    let mut mask = vec![0u32; trie.n_vocab().div_ceil(32)];
    let mut next = Vec::new();
    for i in 0..trie.len() {
        let bytes = trie.bytes_at(i);
        let mut pushed = 0;
        while pushed < bytes.len() && recognizer.push_byte(bytes[pushed]).unwrap() {
            pushed += 1;
        }
        if pushed == bytes.len() && recognizer.end_token() {
            let id = trie.token(i).index();
            mask[id / 32] |= 1 << (id % 32);
            next.push((id as u32, recognizer.state()));
        }
        // Popping the token's bytes undoes its end too.
        recognizer.pop_bytes(pushed);
    }
    next.sort_unstable();
    (mask, next)
}

const REGEXES: &[&str] = &[
    r"[0-9]{3}-[0-9]{4}",
    r"(true|false|null)",
    r#""([^"\\]|\\["\\/bfnrt])*""#,
    r"[a-z]+(, [a-z]+){0,3}\.",
    r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    r"(?s:.{0,40})END",
    r"[^\n]*\n[A-Z][a-z ]{2,30}",
];

const SCHEMAS: &[&str] = &[
    r#"{"type": "object", "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3}}, "required": ["id"], "additionalProperties": false}"#,
    r#"{"type": "object", "properties": {"name": {"type": "string"}, "ok": {"type": "boolean"}, "score": {"type": "number"}}, "required": ["name", "ok"], "additionalProperties": false}"#,
    r#"{"enum": ["red", "green", "blue", 7, null]}"#,
    r#"{"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{2}(-[0-9a-f]{2,4})+$"}, "note": {"type": "string", "pattern": "^(ab|c)*d$", "maxLength": 12}}, "required": ["code"], "additionalProperties": false}"#,
];

/// Grammars whose recursion is only in tail position: regular, so built.
const TAIL_RECURSIVE: &[&str] = &[
    "root ::= \"a\" root | \"b\"",
    "root ::= \"(\" inner\ninner ::= [a-z] inner | \")\" more\nmore ::= \";\" root | \".\"",
    // A tail-recursive pair entered from outside, in the middle of the root.
    "root ::= \"<\" item \">\" item\nitem ::= [a-z] rest | \".\"\nrest ::= \",\" item | \";\"",
];

/// Every constraint of the mask suite with a name; recursive ones are dropped by the caller.
fn corpus() -> Vec<(String, sieve_ir::Grammar)> {
    let mut all: Vec<(String, sieve_ir::Grammar)> = sieve_testkit::grammar_files()
        .into_iter()
        .map(|path| {
            (
                path.display().to_string(),
                sieve_testkit::compile_file(&path),
            )
        })
        .collect();
    let lark = sieve_testkit::grammars_dir().join("lark");
    let mut lark_files: Vec<_> = std::fs::read_dir(&lark)
        .expect("grammars/lark")
        .map(|entry| entry.expect("readable").path())
        .filter(|path| path.extension().is_some_and(|e| e == "lark"))
        .collect();
    lark_files.sort();
    for path in lark_files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let grammar = sieve_lark::compile(&text, &Default::default())
            .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        all.push((path.display().to_string(), grammar));
    }
    let person = sieve_testkit::grammars_dir().join("json-schema/person.json");
    all.push((
        person.display().to_string(),
        schema(&std::fs::read_to_string(&person).expect("person.json")),
    ));
    all.extend(REGEXES.iter().map(|p| (format!("regex {p}"), regex(p))));
    all.extend(SCHEMAS.iter().map(|s| (format!("schema {s}"), schema(s))));
    all.extend(
        TAIL_RECURSIVE
            .iter()
            .map(|g| (format!("gbnf {g}"), gbnf(g))),
    );
    all
}

#[test]
fn masks_equal_brute_force_through_the_cache_and_the_token_automaton() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    let mut steps = 0;
    let mut built = 0;
    let mut refused = Vec::new();
    let mut limited_walks = 0;
    for (name, grammar) in corpus() {
        let limited = grammar.rules().iter().any(|r| r.max_tokens().is_some());
        let g = match dfa_counting(&grammar, &trie) {
            Ok(g) => g,
            Err(TokenDfaError::Recursive { cycle }) => {
                refused.push((name, cycle));
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        };
        built += 1;
        let reference = sieve_ir::reference::Recognizer::new(&grammar).expect("bounded repeats");
        let cache = TokenCache::new(Backend::state_count(&*g), usize::MAX);
        let automaton = g.token_automaton(&trie).expect("within the default bound");
        for seed in 0..3 {
            let Some(sentence) = reference.sample(seed, 6) else {
                continue;
            };
            let mut recognizer = g.recognizer();
            let mut at = 0;
            let mut out_of_tokens = false;
            loop {
                let (expected, transitions) = brute_force(&mut recognizer, &trie);
                let mut mask = vec![0u32; expected.len()];
                cache
                    .fill_text_tokens(&*g, &mut recognizer, &trie, &mut mask)
                    .unwrap();
                assert!(mask == expected, "{name}: seed {seed}, byte {at}: cache");
                let state = recognizer.state();
                let mut table = vec![0u32; expected.len()];
                automaton.fill_mask(state, &mut table);
                assert!(
                    table == expected,
                    "{name}: seed {seed}, byte {at}: automaton"
                );
                let mut listed: Vec<(u32, u32)> = (0..trie.n_vocab() as u32)
                    .filter_map(|t| Some((t, automaton.next(state, t)?)))
                    .collect();
                listed.sort_unstable();
                assert_eq!(listed, transitions, "{name}: seed {seed}, byte {at}");
                steps += 1;
                let Some(token) = sieve_testkit::next_token(&trie, &sentence[at..]) else {
                    break;
                };
                for &b in token {
                    assert!(recognizer.push_byte(b).unwrap(), "{name}: sampled sentence");
                }
                at += token.len();
                if steps % 7 == 0 {
                    recognizer.pop_bytes(token.len());
                    for &b in token {
                        assert!(recognizer.push_byte(b).unwrap());
                    }
                }
                if !recognizer.end_token() {
                    // The sample (drawn without limits) spends a limited rule's tokens.
                    assert!(limited, "{name}: seed {seed}: a token end refused");
                    out_of_tokens = true;
                    break;
                }
            }
            if limited {
                limited_walks += 1;
            }
            if !out_of_tokens {
                assert_eq!(at, sentence.len(), "{name}: seed {seed}: walk ended early");
                assert!(recognizer.can_finish(), "{name}: seed {seed}");
            }
        }
    }
    assert!(
        built >= 25,
        "only {built} constraints built; refused: {refused:?}"
    );
    assert!(steps > 300, "only {steps} steps");
    assert!(
        limited_walks >= 3,
        "only {limited_walks} walks with token limits"
    );
    for name in TAIL_RECURSIVE.iter().chain(SCHEMAS) {
        assert!(
            refused.iter().all(|(refused, _)| !refused.ends_with(name)),
            "{name} refused: {refused:?}"
        );
    }
    for regular in [
        "substring.lark",
        "terminals.lark",
        "operators.lark",
        "tool_call.lark",
    ] {
        assert!(
            refused.iter().all(|(name, _)| !name.ends_with(regular)),
            "{regular} refused: {refused:?}"
        );
    }
    // The shipped JSON and arithmetic grammars are recursive.
    assert!(
        refused.iter().any(|(name, _)| name.contains("json.gbnf")),
        "{refused:?}"
    );
}

/// The same language as the Earley backend: along random walks over every corpus constraint
/// the token DFA builds, both allow the same bytes and agree on whether the input can end.
#[test]
fn agrees_with_the_earley_backend_byte_by_byte() {
    let mut compared = 0;
    for (name, grammar) in corpus() {
        let normalized =
            sieve_normalize::normalize(&grammar, &sieve_normalize::Config::default()).unwrap();
        let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
            .build_normalized(&normalized)
            .unwrap();
        let Ok(g) = TokenDfa::new(&fsms, Config::new()).map(Arc::new) else {
            continue;
        };
        let root_nullable = fsms
            .automaton(fsms.root())
            .fsm()
            .is_some_and(|fsm| fsm.is_accepting(fsm.start()));
        let earley = Arc::new(sieve_earley::EarleyGrammar::new(
            &fsms,
            root_nullable,
            sieve_earley::Config::default(),
        ));
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for walk in 0..20 {
            let (mut dfa_r, mut earley_r) = (g.recognizer(), earley.recognizer());
            for step in 0..80 {
                let allowed = dfa_r.allowed_bytes();
                assert_eq!(
                    allowed,
                    earley_r.allowed_bytes(),
                    "{name}: walk {walk}, {step}"
                );
                assert_eq!(
                    dfa_r.can_finish(),
                    earley_r.can_finish(),
                    "{name}: walk {walk}, {step}"
                );
                let bytes: Vec<u8> = allowed.iter().collect();
                if bytes.is_empty() {
                    break;
                }
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let byte = bytes[(seed % bytes.len() as u64) as usize];
                assert!(dfa_r.push_byte(byte).unwrap());
                assert!(earley_r.push_byte(byte).unwrap());
                compared += 1;
            }
        }
    }
    assert!(compared > 10_000, "only {compared} bytes compared");
}

#[test]
fn fingerprints_share_classifications_across_grammars() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    // The same number language after different prefixes: the states after the prefix agree.
    let a = dfa(&regex(r"x: [0-9]+(\.[0-9]+)?")).unwrap();
    let b = dfa(&regex(r"yy = [0-9]+(\.[0-9]+)?")).unwrap();
    let at = |g: &Arc<TokenDfa>, text: &[u8]| {
        let mut r = g.recognizer();
        for &byte in text {
            assert!(r.push_byte(byte).unwrap());
        }
        r.state()
    };
    let (sa, sb) = (at(&a, b"x: "), at(&b, b"yy = "));
    assert_eq!(a.fingerprint(sa), b.fingerprint(sb));
    assert!(a.fingerprint(sa).is_some());
    assert_ne!(a.fingerprint(0), b.fingerprint(0));
    assert_ne!(a.fingerprint(sa), a.fingerprint(at(&a, b"x: 1.")));
    // Past FINGERPRINT_STATES reachable states, no fingerprint (never shared); near the end
    // of the same automaton, one.
    let long = dfa(&regex("[a-z]{300}")).unwrap();
    assert!(long.fingerprint(0).is_none());
    assert!(long.fingerprint(at(&long, &[b'q'; 290])).is_some());
    // Through a shared store, the second grammar's masks come from the first's entries
    // and stay exact.
    let store = Arc::new(SharedStore::new(usize::MAX));
    for (g, text) in [(&a, &b"x: 12.5"[..]), (&b, &b"yy = 12.5"[..])] {
        let cache = TokenCache::new(Backend::state_count(&**g), usize::MAX).sharing(store.clone());
        let mut r = g.recognizer();
        for &byte in text {
            let (expected, _) = brute_force(&mut r, &trie);
            let mut mask = vec![0u32; expected.len()];
            cache
                .fill_text_tokens(&**g, &mut r, &trie, &mut mask)
                .unwrap();
            assert!(mask == expected);
            assert!(r.push_byte(byte).unwrap());
        }
    }
    assert!(store.stats().hits > 0, "{:?}", store.stats());
}

#[test]
fn the_whole_dfa_is_minimal_and_canonical() {
    // One state per position: minimal.
    assert_eq!(
        dfa(&regex("[0-9]{3}-[0-9]{4}")).unwrap().dfa_state_count(),
        9
    );
    // Equal languages written differently: equal automata, so equal fingerprints.
    let pairs = [
        ("(a|b)*c", "(a*b*)*c"),
        ("x(yz|yw)", "xy(z|w)"),
        ("[0-9]+", "[0-9][0-9]*"),
    ];
    for (left, right) in pairs {
        let (l, r) = (dfa(&regex(left)).unwrap(), dfa(&regex(right)).unwrap());
        assert_eq!(l.dfa_state_count(), r.dfa_state_count(), "{left} / {right}");
        assert_eq!(l.fingerprint(0), r.fingerprint(0), "{left} / {right}");
    }
    // A grammar whose rules reference each other gives the same automaton as one regex.
    let g = dfa(&gbnf("root ::= num (\",\" num)*\nnum ::= [0-9]+")).unwrap();
    let r = dfa(&regex("[0-9]+(,[0-9]+)*")).unwrap();
    assert_eq!(g.fingerprint(0), r.fingerprint(0));
}

/// A small vocabulary: single bytes and a few longer tokens.
fn small_vocabulary(tokens: &[&str]) -> Vocabulary {
    let mut list = String::new();
    for token in tokens {
        let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
        list.push_str(&format!("hex:{hex}\n"));
    }
    list.push_str("special:\"</s>\"\n");
    sieve_vocab::plain::parse(list.as_bytes(), &Default::default()).expect("list")
}

/// The fewest tokens to an accepting state from every state reachable by tokens, by a
/// breadth-first search over token transitions (feeding bytes) and a backward relaxation.
fn exhaustive_bounds(g: &Arc<TokenDfa>, trie: &TokenTrie) -> Vec<(u32, Option<u32>)> {
    let n = g.dfa_state_count();
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut seen = vec![false; n];
    let mut queue = VecDeque::from([0u32]);
    seen[0] = true;
    while let Some(s) = queue.pop_front() {
        for i in 0..trie.len() {
            let mut state = Some(s);
            for &b in trie.bytes_at(i) {
                state = state.and_then(|q| g.next_state(q, b));
            }
            if let Some(t) = state {
                succ[s as usize].push(t);
                if !seen[t as usize] {
                    seen[t as usize] = true;
                    queue.push_back(t);
                }
            }
        }
    }
    // Bellman-Ford over the (small) state set.
    let mut dist: Vec<Option<u32>> = (0..n as u32)
        .map(|s| g.is_accepting(s).then_some(0))
        .collect();
    loop {
        let mut changed = false;
        for s in 0..n {
            for &t in &succ[s] {
                if let Some(d) = dist[t as usize] {
                    if dist[s].is_none_or(|cur| d + 1 < cur) {
                        dist[s] = Some(d + 1);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    (0..n as u32)
        .filter(|&s| seen[s as usize])
        .map(|s| (s, dist[s as usize]))
        .collect()
}

/// Drives a recogniser to `state` along the shortest byte path (a breadth-first search).
fn reach(g: &Arc<TokenDfa>, state: u32) -> sieve_tokendfa::TokenDfaRecognizer {
    let n = g.dfa_state_count();
    let mut from: Vec<Option<(u32, u8)>> = vec![None; n];
    let mut queue = VecDeque::from([0u32]);
    let mut seen = vec![false; n];
    seen[0] = true;
    while let Some(s) = queue.pop_front() {
        for b in 0..=255u8 {
            if let Some(t) = g.next_state(s, b) {
                if !seen[t as usize] {
                    seen[t as usize] = true;
                    from[t as usize] = Some((s, b));
                    queue.push_back(t);
                }
            }
        }
    }
    let mut bytes = Vec::new();
    let mut at = state;
    while let Some((s, b)) = from[at as usize] {
        bytes.push(b);
        at = s;
    }
    let mut r = g.recognizer();
    for &b in bytes.iter().rev() {
        assert!(r.push_byte(b).unwrap());
    }
    assert_eq!(r.state(), state);
    r
}

#[test]
fn completion_bounds_equal_an_exhaustive_search() {
    let cases: &[(&str, &[&str])] = &[
        (
            "[0-9]{2,5}(\\.[0-9]{1,2})?",
            &["0", "1", "2", "9", "12", "345", ".", ".5"],
        ),
        ("(ab|c)+d", &["a", "b", "c", "d", "ab", "abab", "cd", "abc"]),
        ("a{3}b*c", &["a", "aa", "b", "bb", "bbc", "c"]),
        // The start loops on 255 bytes: the walks take the class region.
        (
            "[^.]*\\.[a-z]{0,2}",
            &["a", "b", ".", "ab.", "x", "xy", ".x"],
        ),
        // `z` is never spelled: its states have no bound.
        ("x(y|z)w", &["x", "y", "w", "xy"]),
    ];
    let mut checked = 0;
    for &(pattern, tokens) in cases {
        let g = dfa(&regex(pattern)).unwrap();
        let vocab = small_vocabulary(tokens);
        let trie = TokenTrie::new(&vocab);
        let table = g.completion_table(&trie);
        let automaton = g.token_automaton(&trie).unwrap();
        assert_eq!(g.completion_table_from(&automaton), table, "{pattern}");
        for (state, expected) in exhaustive_bounds(&g, &trie) {
            let r = reach(&g, state);
            assert_eq!(
                r.completion_bound(&table),
                expected,
                "{pattern}: state {state}"
            );
            assert_eq!(
                r.completion_bound_from(&table, &r.completion_memo(&table)),
                expected
            );
            // Every token is decided, and as feeding it says.
            for limit in 0..4 {
                let words = trie.n_vocab().div_ceil(32);
                let (mut fits, mut exceeds) = (vec![0u32; words], vec![0u32; words]);
                r.completion_decide(&table, &(), &trie, limit, &mut fits, &mut exceeds);
                for i in 0..trie.len() {
                    let id = trie.token(i).index();
                    let mut fed = r.clone();
                    if !trie.bytes_at(i).iter().all(|&b| fed.push_byte(b).unwrap()) {
                        continue;
                    }
                    let after = fed.completion_bound(&table).unwrap_or(u32::MAX);
                    let (want, other) = if after <= limit {
                        (&fits, &exceeds)
                    } else {
                        (&exceeds, &fits)
                    };
                    assert!(want[id / 32] & (1 << (id % 32)) != 0, "{pattern}: {state}");
                    assert!(other[id / 32] & (1 << (id % 32)) == 0, "{pattern}: {state}");
                }
            }
            // `far` is the most distance over the states reachable by bytes.
            let mut reachable = vec![state];
            let mut i = 0;
            while i < reachable.len() {
                for b in 0..=255u8 {
                    if let Some(t) = g.next_state(reachable[i], b) {
                        if !reachable.contains(&t) {
                            reachable.push(t);
                        }
                    }
                }
                i += 1;
            }
            let most = reachable.iter().map(|&q| table.distance(q)).max();
            assert_eq!(Some(table.far(state)), most, "{pattern}: state {state}");
            // The caps bound the bound after any string of at most `d` bytes.
            let mut caps = [0u32; 6];
            r.completion_caps(&table, &mut caps);
            let mut level = vec![state];
            for (d, &cap) in caps.iter().enumerate() {
                for &q in &level {
                    let bound = reach(&g, q).completion_bound(&table).unwrap_or(u32::MAX);
                    assert!(bound <= cap, "{pattern}: state {state}, depth {d}");
                }
                let g = &g;
                level = level
                    .iter()
                    .flat_map(|&q| (0..=255u8).filter_map(move |b| g.next_state(q, b)))
                    .collect();
                level.sort_unstable();
                level.dedup();
            }
            checked += 1;
        }
    }
    assert!(checked > 15, "only {checked} states checked");
}

/// Tokens with equal bytes (SentencePiece's `<0x61>` beside `a`) share a trie node: every one
/// of them is in the masks and has its transition.
#[test]
fn tokens_with_equal_bytes_are_all_decided() {
    let vocab = small_vocabulary(&["a", "b", "a", "ab", "ab", "c", "ba", "a", "x"]);
    let trie = TokenTrie::new(&vocab);
    assert!(trie.nodes().iter().any(|n| n.shared));
    for pattern in ["(ab|a)*c", "(?s:.*)c"] {
        let g = dfa(&regex(pattern)).unwrap();
        let automaton = g.token_automaton(&trie).unwrap();
        let cache = TokenCache::new(Backend::state_count(&*g), usize::MAX);
        for text in [&b""[..], b"a", b"ab", b"aba"] {
            let mut r = g.recognizer();
            for &byte in text {
                assert!(r.push_byte(byte).unwrap());
            }
            let (expected, transitions) = brute_force(&mut r, &trie);
            assert!(expected.iter().map(|w| w.count_ones()).sum::<u32>() >= 3);
            let mut mask = vec![0u32; expected.len()];
            cache
                .fill_text_tokens(&*g, &mut r, &trie, &mut mask)
                .unwrap();
            assert_eq!(mask, expected, "{pattern}: {text:?}");
            let mut table = vec![0u32; expected.len()];
            automaton.fill_mask(r.state(), &mut table);
            assert_eq!(table, expected, "{pattern}: {text:?}");
            let listed: Vec<(u32, u32)> = (0..trie.n_vocab() as u32)
                .filter_map(|t| Some((t, automaton.next(r.state(), t)?)))
                .collect();
            assert_eq!(listed, transitions, "{pattern}: {text:?}");
        }
    }
}

#[test]
fn a_recursive_grammar_is_refused_naming_its_cycle() {
    let error = dfa(&gbnf(
        "root ::= \"[\" list? \"]\"\nlist ::= item (\",\" item)*\nitem ::= [0-9]+ | \"[\" list? \"]\"",
    ))
    .unwrap_err();
    let TokenDfaError::Recursive { cycle } = &error else {
        panic!("{error}");
    };
    assert!(cycle.len() >= 2, "{cycle:?}");
    assert_eq!(cycle.first(), cycle.last(), "{cycle:?}");
    assert!(error.to_string().contains("recursive"), "{error}");
    assert!(error.to_string().contains(&cycle[0]), "{error}");
}

#[test]
fn the_state_limit_is_an_error() {
    // The classic: the 13th byte from the end is an `a` needs 2^13 DFA states.
    let grammar = regex("[ab]*a[ab]{12}");
    let error = dfa_with(&grammar, Config::new().state_limit(1000)).unwrap_err();
    assert!(
        matches!(error, TokenDfaError::StateLimit { limit: 1000, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("1000"), "{error}");
    let g = dfa_with(&grammar, Config::new().state_limit(10_000)).unwrap();
    assert_eq!(g.dfa_state_count(), 1 << 13);
    // A counted repetition past the limit fails before it expands.
    let error = dfa_with(&regex("(abc){5000}"), Config::new().state_limit(1000)).unwrap_err();
    assert!(matches!(error, TokenDfaError::StateLimit { .. }), "{error}");
}

#[test]
fn the_token_automaton_memory_bound_is_an_error() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    let grammar = regex("[a-z ]{1,20}\\.");
    let g = dfa_with(&grammar, Config::new().token_automaton_bytes(4096)).unwrap();
    let error = g.token_automaton(&trie).unwrap_err();
    assert!(
        matches!(
            error,
            TokenDfaError::TokenAutomatonTooLarge { limit: 4096, .. }
        ),
        "{error}"
    );
    // Masks still come from the backend's classification.
    let cache = TokenCache::new(Backend::state_count(&*g), usize::MAX);
    let mut r = g.recognizer();
    let (expected, _) = brute_force(&mut r, &trie);
    let mut mask = vec![0u32; expected.len()];
    cache
        .fill_text_tokens(&*g, &mut r, &trie, &mut mask)
        .unwrap();
    assert!(mask == expected);
}

#[test]
fn a_wildcard_state_keeps_its_class_region() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    let g = dfa(&regex("(?s:.*)END")).unwrap();
    let automaton = g.token_automaton(&trie).unwrap();
    let loops = automaton
        .loop_tokens(0)
        .expect("the start loops on 253 bytes");
    let inside: u32 = loops.iter().map(|w| w.count_ones()).sum();
    assert!(inside > 40_000, "{inside} tokens in the loop region");
    assert!(
        automaton.edges(0).count() < 10_000,
        "{}",
        automaton.edges(0).count()
    );
}

/// JSON Schemas whose strings are text states: unbounded, bounded (a chain that dies), with a
/// minimum (a chain that loops after its first counts), and longer than the chain's depth (a
/// chain left open).
const TEXT_SCHEMAS: &[(&str, &[usize])] = &[
    (
        r#"{"type": "object", "properties": {"name": {"type": "string"}, "note": {"type": "string", "maxLength": 5}}, "required": ["name", "note"], "additionalProperties": false}"#,
        &[1, 5],
    ),
    (
        r#"{"type": "array", "items": {"type": "string", "minLength": 3}, "maxItems": 2}"#,
        &[3],
    ),
    (
        r#"{"type": "string", "minLength": 2, "maxLength": 40}"#,
        &[sieve_vocab::CHAIN_DEPTH],
    ),
];

/// Free text in which `<t` is always followed by `x`: after a `<`, the loop of the free text
/// is entered with an odd first byte (`t` leads elsewhere there).
const ODD_FIRST_BYTES: &str = "root ::= ([^<] | \"<\"+ [^<t] | \"<\"+ \"tx\")* \"<\"*";

/// Every state of `TEXT_SCHEMAS` and `ODD_FIRST_BYTES` that takes the text path classifies
/// and composes exactly as brute force does, and the chains named in the table are found
/// (from the string's opening quote, by their character counts).
fn text_states_equal_brute_force(trie: &TokenTrie) {
    let grammars = TEXT_SCHEMAS
        .iter()
        .map(|&(text, chains)| (text, schema(text), chains))
        .chain([(ODD_FIRST_BYTES, gbnf(ODD_FIRST_BYTES), &[1][..])]);
    for (text, grammar, chains) in grammars {
        let g = dfa(&grammar).unwrap();
        let found = text_states_of(text, &g, trie, usize::MAX);
        for count in chains {
            assert!(found.contains(count), "{text}: chains {found:?}");
        }
    }
}

/// Checks at most `most` of `g`'s text states (spread over the states) against brute force:
/// the classification, the token automaton's mask and its transitions. Returns the
/// character counts of the text states checked.
fn text_states_of(label: &str, g: &Arc<TokenDfa>, trie: &TokenTrie, most: usize) -> Vec<usize> {
    let automaton = g.token_automaton(trie).unwrap();
    let text: Vec<(u32, usize)> = (0..g.dfa_state_count() as u32)
        .filter_map(|state| Some((state, g.reads_text(state)?)))
        .collect();
    let step = text.len().div_ceil(most.max(1)).max(1);
    let mut found = Vec::new();
    for &(state, counts) in text.iter().step_by(step) {
        found.push(counts);
        let (expected, next) = brute_force(&mut reach(g, state), trie);
        let mut mask = vec![0u32; expected.len()];
        g.classify(sieve_backend::Key::bare(state), trie)
            .accepted
            .or_into(&mut mask);
        assert!(mask == expected, "{label}: state {state} ({counts} counts)");
        let mut from_automaton = vec![0u32; expected.len()];
        automaton.fill_mask(state, &mut from_automaton);
        assert!(from_automaton == expected, "{label}: automaton at {state}");
        for (token, to) in next {
            assert_eq!(
                automaton.next(state, token),
                Some(to),
                "{label}: {state} {token}"
            );
        }
    }
    found
}

#[test]
fn json_string_states_take_the_text_path_and_equal_brute_force() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    text_states_equal_brute_force(&TokenTrie::new(&vocab));
}

/// The shared corpus folder: `$SIEVE_SHARED`, else `../shared` beside the repository.
fn shared_dir() -> std::path::PathBuf {
    std::env::var_os("SIEVE_SHARED").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        std::path::PathBuf::from,
    )
}

/// The text states of the tables above, and the text and class-chain states of every harness
/// workload the backend builds (its schema, Lark or GBNF grammar, or regex; at most 64 states
/// of each kind), equal brute force over o200k_base, whose many multi-byte tokens make the
/// regions' exits matter.
#[test]
#[ignore = "needs ../shared/tokenizers and ../shared/bench (or $SIEVE_SHARED)"]
fn json_string_states_take_the_text_path_and_equal_brute_force_with_o200k_base() {
    let manifest = shared_dir().join("tokenizers/manifest.json");
    let vocab = Arc::new(
        sieve_vocab::manifest::load_named(&manifest, "o200k_base")
            .unwrap_or_else(|e| panic!("{}: {e}", manifest.display())),
    );
    let trie = TokenTrie::new(&vocab);
    text_states_equal_brute_force(&trie);
    let workloads = shared_dir().join("bench/workloads");
    let mut dirs: Vec<_> = std::fs::read_dir(&workloads)
        .unwrap_or_else(|e| panic!("{}: {e}", workloads.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    dirs.sort();
    let mut built = 0;
    for dir in dirs {
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        let grammar = if let Some(text) = read("schema.json") {
            schema(&text)
        } else if let Some(text) = read("grammar.lark") {
            sieve_lark::compile(&text, &Default::default()).expect("valid Lark")
        } else if let Some(text) = read("grammar.gbnf") {
            gbnf(&text)
        } else if let Some(text) = read("regex.txt") {
            regex(text.trim_end_matches('\n'))
        } else {
            continue;
        };
        let Ok(g) = dfa(&grammar) else {
            continue;
        };
        built += 1;
        text_states_of(&dir.display().to_string(), &g, &trie, 64);
        chain_states_of(&dir.display().to_string(), &g, &trie, 64);
    }
    assert!(built >= 10, "{built} workloads built");
}

/// Regexes whose states step along class chains: a loop entered by its first byte, a
/// bounded run that dies, one left open past the chain's depth, and a run with a minimum;
/// with the chain lengths that must be found.
const CHAIN_REGEXES: &[(&str, &[usize])] = &[
    (
        r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,24}",
        &[0, 1, 16],
    ),
    (r"([a-zA-Z0-9]{0,5}x)?[0-9]", &[5]),
    (r"[A-Za-z ]{3,}\.", &[3]),
];

/// Checks at most `most` of `g`'s class-chain states (spread over the states) against brute
/// force; returns the chain lengths checked.
fn chain_states_of(label: &str, g: &Arc<TokenDfa>, trie: &TokenTrie, most: usize) -> Vec<usize> {
    let chains: Vec<(u32, usize)> = (0..g.dfa_state_count() as u32)
        .filter_map(|state| Some((state, g.reads_class_chain(state)?)))
        .collect();
    let step = chains.len().div_ceil(most.max(1)).max(1);
    let mut found = Vec::new();
    for &(state, length) in chains.iter().step_by(step) {
        found.push(length);
        let (expected, _) = brute_force(&mut reach(g, state), trie);
        let mut mask = vec![0u32; expected.len()];
        g.classify(sieve_backend::Key::bare(state), trie)
            .accepted
            .or_into(&mut mask);
        assert!(
            mask == expected,
            "{label}: state {state} (chain of {length})"
        );
    }
    found
}

/// Every state that takes a class chain classifies as brute force does, over GPT-2.
#[test]
fn class_chain_states_equal_brute_force() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    for &(pattern, lengths) in CHAIN_REGEXES {
        let g = dfa(&regex(pattern)).unwrap();
        let found = chain_states_of(pattern, &g, &trie, usize::MAX);
        for length in lengths {
            assert!(found.contains(length), "{pattern}: chains {found:?}");
        }
    }
}

#[test]
fn a_json_string_state_loops_on_its_text_region() {
    let vocab = Arc::new(Vocabulary::embedded_default().clone());
    let trie = TokenTrie::new(&vocab);
    let g = dfa(&schema(r#"{"type": "string"}"#)).unwrap();
    let automaton = g.token_automaton(&trie).unwrap();
    let inside = g.next_state(0, b'"').expect("a string opens with a quote");
    assert_eq!(g.reads_text(inside), Some(1));
    let loops = automaton.loop_tokens(inside).expect("a text loop");
    let looping: u32 = loops.iter().map(|w| w.count_ones()).sum();
    assert!(looping > 40_000, "{looping} tokens in the loop");
    assert!(
        automaton.edges(inside).count() < 5_000,
        "{}",
        automaton.edges(inside).count()
    );
}
