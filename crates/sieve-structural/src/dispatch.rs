//! Free text as a regular structure: TagDispatch (XGrammar 2 §3.1) and `any_text`.
//!
//! Free text is any valid UTF-8 text that contains none of the *excluded* strings; it runs
//! until the first occurrence of a *trigger*, which hands over to that trigger's rule (the rest
//! of the tag: begin past the trigger, content, end); after it, free text starts afresh
//! (`looping`) or the structure ends. Free text may end anywhere on a character boundary,
//! also in the middle of a partial trigger.
//!
//! The language is regular in the free-text part, so it is built as an automaton and emitted
//! as right-linear rules, one per automaton state (`S ::= [class] T | … | ε`), never as `.*`
//! with look-ahead:
//!
//! 1. An Aho–Corasick automaton over bytes for the triggers and excluded strings: a trie, BFS
//!    failure links, the complete 256-way transition table, and per state the *hit* — which
//!    pattern ends there, looking through the failure chain (an excluded string wins over a
//!    trigger; among triggers, the longest, which is the state's own).
//! 2. Its product with the UTF-8 decoder (the 8-state DFA of the Unicode standard's table of
//!    well-formed byte sequences), and, for `any_text` with `max_chars`, with a character
//!    counter.
//! 3. Only states that can still reach the end of free text are kept (states whose every
//!    continuation is an excluded string are dropped with their edges).
//!
//! **Invariants:** the emitted rules accept exactly the texts described above (tested against
//! a direct brute-force definition on all short strings over a small alphabet); the entry
//! state always accepts the empty text, so the structure is never the empty language; the
//! number of product states is bounded by [`crate::Limits::max_free_text_states`].

use std::collections::VecDeque;

use foldhash::HashMap;
use sieve_ir::{ByteClass, Expr, GrammarBuilder, RuleId};

use crate::error::{Error, ErrorKind};

/// What free text must watch for.
pub(crate) struct FreeText<'a> {
    /// Trigger strings and the rule each one hands over to (`None`: the trigger has no rule,
    /// so its occurrence is forbidden, as an excluded string's is).
    pub triggers: &'a [(String, Option<RuleId>)],
    /// Strings the free text must not contain.
    pub excludes: &'a [String],
    /// Whether free text starts again after a dispatched rule.
    pub looping: bool,
    /// The most characters (code points) of free text, for `any_text`.
    pub max_chars: Option<u32>,
}

/// What ends at an automaton state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hit {
    None,
    /// An excluded string (or a trigger without a rule): the byte reaching here is refused.
    Dead,
    /// Trigger `i`.
    Trigger(usize),
}

/// The Aho–Corasick automaton: a complete transition table and the hit of every state.
struct AhoCorasick {
    next: Vec<[u32; 256]>,
    hit: Vec<Hit>,
}

impl AhoCorasick {
    /// Builds it for `patterns`, each with its own hit (`Dead` or `Trigger`).
    fn new(patterns: &[(&[u8], Hit)]) -> AhoCorasick {
        const NONE: u32 = u32::MAX;
        let mut next: Vec<[u32; 256]> = vec![[NONE; 256]];
        let mut own: Vec<Hit> = vec![Hit::None];
        for &(bytes, hit) in patterns {
            let mut s = 0usize;
            for &b in bytes {
                if next[s][b as usize] == NONE {
                    next[s][b as usize] = next.len() as u32;
                    next.push([NONE; 256]);
                    own.push(Hit::None);
                }
                s = next[s][b as usize] as usize;
            }
            // An excluded string beats a trigger spelt the same; the first trigger wins among
            // equal triggers (callers reject duplicates where they matter).
            own[s] = match (own[s], hit) {
                (Hit::Dead, _) | (_, Hit::Dead) => Hit::Dead,
                (Hit::Trigger(i), _) => Hit::Trigger(i),
                (Hit::None, h) => h,
            };
        }
        let n = next.len();
        let mut fail = vec![0u32; n];
        let mut hit = own.clone();
        let mut queue = VecDeque::from([0u32]);
        while let Some(u) = queue.pop_front() {
            let u = u as usize;
            if u != 0 {
                // Through the failure chain: an excluded string ending here makes the state
                // dead; else the state's own trigger (the longest) or the chain's.
                let f = fail[u] as usize;
                hit[u] = match (own[u], hit[f]) {
                    (Hit::Dead, _) | (_, Hit::Dead) => Hit::Dead,
                    (Hit::Trigger(i), _) => Hit::Trigger(i),
                    (Hit::None, h) => h,
                };
            }
            // The failure state is shallower, so its row is already complete.
            let fail_row = (u != 0).then(|| next[fail[u] as usize]);
            for (b, slot) in next[u].iter_mut().enumerate() {
                let fallback = fail_row.map_or(0, |row| row[b]);
                if *slot == NONE {
                    *slot = fallback;
                } else {
                    fail[*slot as usize] = fallback;
                    queue.push_back(*slot);
                }
            }
        }
        AhoCorasick { next, hit }
    }
}

/// The UTF-8 decoder: state 0 is a character boundary.
const UTF8_BOUNDARY: u8 = 0;

/// The decoder's next state, or `None` when `b` cannot follow.
fn utf8_step(state: u8, b: u8) -> Option<u8> {
    match (state, b) {
        (0, 0x00..=0x7F) => Some(0),
        (0, 0xC2..=0xDF) => Some(1),
        (0, 0xE0) => Some(4),
        (0, 0xE1..=0xEC | 0xEE..=0xEF) => Some(2),
        (0, 0xED) => Some(5),
        (0, 0xF0) => Some(6),
        (0, 0xF1..=0xF3) => Some(3),
        (0, 0xF4) => Some(7),
        (1, 0x80..=0xBF) => Some(0),
        (2, 0x80..=0xBF) => Some(1),
        (3, 0x80..=0xBF) => Some(2),
        (4, 0xA0..=0xBF) => Some(1),
        (5, 0x80..=0x9F) => Some(1),
        (6, 0x90..=0xBF) => Some(2),
        (7, 0x80..=0x8F) => Some(2),
        _ => None,
    }
}

/// One valid UTF-8 character, as an expression.
pub(crate) fn utf8_char() -> Expr {
    let c = |lo: u8, hi: u8| Expr::class(ByteClass::range(lo, hi)).expect("non-empty range");
    let cont = || c(0x80, 0xBF);
    Expr::choice([
        c(0x00, 0x7F),
        Expr::seq([c(0xC2, 0xDF), cont()]),
        Expr::seq([Expr::bytes([0xE0]), c(0xA0, 0xBF), cont()]),
        Expr::seq([
            Expr::class(ByteClass::from_ranges([(0xE1, 0xEC), (0xEE, 0xEF)])).expect("non-empty"),
            cont(),
            cont(),
        ]),
        Expr::seq([Expr::bytes([0xED]), c(0x80, 0x9F), cont()]),
        Expr::seq([Expr::bytes([0xF0]), c(0x90, 0xBF), cont(), cont()]),
        Expr::seq([c(0xF1, 0xF3), cont(), cont(), cont()]),
        Expr::seq([Expr::bytes([0xF4]), c(0x80, 0x8F), cont(), cont()]),
    ])
    .expect("non-empty choice")
}

/// A product state: automaton state, decoder state, characters so far.
type State = (u32, u8, u32);

/// An edge of the product automaton.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    /// To another free-text state.
    State(usize),
    /// Trigger `i` completed: its rule, then free text again or the end.
    Trigger(usize),
}

/// Builds the free text (with its dispatches) as rules named after `base`; returns the entry
/// rule.
pub(crate) fn build(
    builder: &mut GrammarBuilder,
    base: &str,
    text: &FreeText<'_>,
    max_states: usize,
    pointer: &str,
) -> Result<RuleId, Error> {
    let mut patterns: Vec<(&[u8], Hit)> = Vec::new();
    for (i, (trigger, rule)) in text.triggers.iter().enumerate() {
        let hit = if rule.is_some() {
            Hit::Trigger(i)
        } else {
            Hit::Dead
        };
        patterns.push((trigger.as_bytes(), hit));
    }
    for exclude in text.excludes {
        patterns.push((exclude.as_bytes(), Hit::Dead));
    }
    let ac = AhoCorasick::new(&patterns);

    // Forward: every reachable product state and its edges.
    let mut index: HashMap<State, usize> = HashMap::default();
    let mut states: Vec<State> = vec![(0, UTF8_BOUNDARY, 0)];
    index.insert(states[0], 0);
    // Edges as byte ranges `(lo, hi, target)`: a state has a few dozen, not 256.
    let mut edges: Vec<Vec<(u8, u8, Target)>> = Vec::new();
    let mut k = 0;
    while k < states.len() {
        let (a, u, count) = states[k];
        let mut out = Vec::new();
        for b in 0..=255u8 {
            let Some(u2) = utf8_step(u, b) else { continue };
            let a2 = ac.next[a as usize][b as usize];
            let count2 = count + u32::from(u2 == UTF8_BOUNDARY);
            if text.max_chars.is_some_and(|max| count2 > max) {
                continue;
            }
            match ac.hit[a2 as usize] {
                Hit::Dead => {}
                Hit::Trigger(i) => push_edge(&mut out, b, Target::Trigger(i)),
                Hit::None => {
                    // Without a character limit the counter stays 0, so states do not
                    // multiply.
                    let key = (a2, u2, if text.max_chars.is_some() { count2 } else { 0 });
                    let next = match index.get(&key) {
                        Some(&n) => n,
                        None => {
                            if states.len() >= max_states {
                                return Err(Error::new(
                                    ErrorKind::Limit,
                                    pointer,
                                    format!("free text needs more than {max_states} automaton states (Limits::max_free_text_states)"),
                                ));
                            }
                            states.push(key);
                            index.insert(key, states.len() - 1);
                            states.len() - 1
                        }
                    };
                    push_edge(&mut out, b, Target::State(next));
                }
            }
        }
        out.shrink_to_fit();
        edges.push(out);
        k += 1;
    }

    // Backward: the states from which free text can still end (every boundary state can).
    let n = states.len();
    let mut live: Vec<bool> = states.iter().map(|s| s.1 == UTF8_BOUNDARY).collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (s, out) in edges.iter().enumerate() {
        for &(_, _, t) in out {
            if let Target::State(t) = t {
                preds[t].push(s);
            }
        }
    }
    let mut stack: Vec<usize> = (0..n).filter(|&s| live[s]).collect();
    while let Some(t) = stack.pop() {
        for &p in &preds[t] {
            if !live[p] {
                live[p] = true;
                stack.push(p);
            }
        }
    }

    // Emit one rule per live state on a character boundary. States inside a character are
    // inlined into the paths that cross them (they are acyclic: each byte advances the
    // decoder), so a state's paths back to itself become a loop inside its own rule — plain
    // text is then a repetition in one automaton, not one rule call per byte.
    let mut ids: Vec<Option<RuleId>> = vec![None; n];
    for s in (0..n).filter(|&s| live[s] && states[s].1 == UTF8_BOUNDARY) {
        let id = builder
            .fresh(base)
            .map_err(|e| Error::new(ErrorKind::Limit, pointer, e.to_string()))?;
        ids[s] = Some(id);
    }
    let entry = ids[0].expect("the entry state accepts the empty text");
    let mut memo: HashMap<usize, Vec<(Target, Expr)>> = HashMap::default();
    for s in (0..n).filter(|&s| ids[s].is_some()) {
        let mut loops = Vec::new();
        let mut alternatives = Vec::new();
        for (t, path) in paths(s, &edges, &live, &states, &mut memo) {
            match t {
                Target::State(t) if t == s => loops.push(path),
                Target::State(t) => {
                    alternatives.push(Expr::seq([path, Expr::rule(ids[t].expect("live"))]))
                }
                Target::Trigger(i) => {
                    let rule = text.triggers[i].1.expect("triggers with a rule hit");
                    let mut items = vec![path, Expr::rule(rule)];
                    if text.looping {
                        items.push(Expr::rule(entry));
                    }
                    alternatives.push(Expr::seq(items));
                }
            }
        }
        alternatives.push(Expr::empty());
        let rest = Expr::choice(alternatives).expect("ε at least");
        let body = match Expr::choice(loops) {
            Some(looped) => Expr::seq([Expr::star(looped), rest]),
            None => rest,
        };
        builder.define(ids[s].expect("live"), body);
    }
    Ok(entry)
}

/// Appends the edge `b → t`, extending the last range when it ends at `b - 1` with `t`.
fn push_edge(out: &mut Vec<(u8, u8, Target)>, b: u8, t: Target) {
    match out.last_mut() {
        Some((_, hi, last)) if *last == t && u16::from(*hi) + 1 == u16::from(b) => *hi = b,
        _ => out.push((b, b, t)),
    }
}

/// The paths from state `s` to the next boundary states and triggers, one expression per
/// destination: byte classes, through the states inside a character.
fn paths(
    s: usize,
    edges: &[Vec<(u8, u8, Target)>],
    live: &[bool],
    states: &[State],
    memo: &mut HashMap<usize, Vec<(Target, Expr)>>,
) -> Vec<(Target, Expr)> {
    if let Some(known) = memo.get(&s) {
        return known.clone();
    }
    let mut classes: Vec<(Target, ByteClass)> = Vec::new();
    for &(lo, hi, t) in &edges[s] {
        if let Target::State(t) = t {
            if !live[t] {
                continue;
            }
        }
        match classes.iter_mut().find(|(target, _)| *target == t) {
            Some((_, class)) => class.add_range(lo, hi),
            None => classes.push((t, ByteClass::range(lo, hi))),
        }
    }
    let mut out: Vec<(Target, Vec<Expr>)> = Vec::new();
    let mut add = |t: Target, e: Expr| match out.iter_mut().find(|(target, _)| *target == t) {
        Some((_, list)) => list.push(e),
        None => out.push((t, vec![e])),
    };
    for (t, class) in classes {
        let first = Expr::class(class).expect("non-empty class");
        match t {
            Target::State(m) if states[m].1 != UTF8_BOUNDARY => {
                for (final_target, rest) in paths(m, edges, live, states, memo) {
                    add(final_target, Expr::seq([first.clone(), rest]));
                }
            }
            t => add(t, first),
        }
    }
    let result: Vec<(Target, Expr)> = out
        .into_iter()
        .map(|(t, list)| (t, Expr::choice(list).expect("one path at least")))
        .collect();
    memo.insert(s, result.clone());
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use sieve_ir::reference::Recognizer;

    /// The definition, directly: `text` is valid UTF-8 free text (up to `max_chars`
    /// characters) then, if a trigger occurs, the first occurrence dispatches to its rule,
    /// which here is the single byte `!`.
    fn brute(text: &[u8], triggers: &[&str], excludes: &[&str], looping: bool) -> bool {
        let mut start = 0;
        let mut i = 0;
        loop {
            // Find the earliest end of any pattern at or after position i.
            let mut end = None;
            for j in i..=text.len() {
                let window = &text[start..j];
                let dead = excludes.iter().any(|e| window.ends_with(e.as_bytes()));
                if dead {
                    return false;
                }
                if triggers.iter().any(|t| window.ends_with(t.as_bytes())) {
                    end = Some(j);
                    break;
                }
            }
            match end {
                None => return std::str::from_utf8(&text[start..]).is_ok(),
                Some(j) => {
                    if std::str::from_utf8(&text[start..j]).is_err() {
                        return false;
                    }
                    // The dispatched rule: one `!`.
                    if text.get(j) != Some(&b'!') {
                        return false;
                    }
                    if !looping {
                        return j + 1 == text.len();
                    }
                    start = j + 1;
                    i = start;
                }
            }
        }
    }

    fn grammar(triggers: &[&str], excludes: &[&str], looping: bool) -> sieve_ir::Grammar {
        let mut b = GrammarBuilder::new();
        let bang = b.declare("bang").unwrap();
        b.define(bang, Expr::bytes(*b"!"));
        let triggers: Vec<(String, Option<RuleId>)> = triggers
            .iter()
            .map(|t| (t.to_string(), Some(bang)))
            .collect();
        let excludes: Vec<String> = excludes.iter().map(|s| s.to_string()).collect();
        let text = FreeText {
            triggers: &triggers,
            excludes: &excludes,
            looping,
            max_chars: None,
        };
        let entry = build(&mut b, "text", &text, 10_000, "").unwrap();
        b.build(entry).unwrap()
    }

    /// Every string up to `len` bytes over `alphabet`.
    fn all_strings(alphabet: &[u8], len: usize) -> Vec<Vec<u8>> {
        let mut out = vec![Vec::new()];
        let mut frontier = vec![Vec::new()];
        for _ in 0..len {
            let mut next = Vec::new();
            for s in &frontier {
                for &c in alphabet {
                    let mut t: Vec<u8> = s.clone();
                    t.push(c);
                    next.push(t);
                }
            }
            out.extend(next.iter().cloned());
            frontier = next;
        }
        out
    }

    #[test]
    fn free_text_equals_its_definition() {
        let cases: &[(&[&str], &[&str], bool)] = &[
            (&["ab"], &[], true),
            (&["ab"], &[], false),
            (&["abc", "b"], &[], true),
            (&["ab", "b"], &["ba"], true),
            (&["aa"], &["aba"], false),
            (&["a"], &["b"], true),
            (&[], &["ab", "b!"], true),
            (&["é"], &["\u{80}"], true),
        ];
        // Bytes of `é` (C3 A9) and of U+0080 (C2 80), plus a lone continuation byte.
        let alphabet = [b'a', b'b', b'!', 0xC3, 0xA9, 0xC2, 0x80];
        for &(triggers, excludes, looping) in cases {
            let g = grammar(triggers, excludes, looping);
            let r = Recognizer::new(&g).unwrap();
            for s in all_strings(&alphabet, 5) {
                assert_eq!(
                    r.accepts(&s),
                    brute(&s, triggers, excludes, looping),
                    "{triggers:?} {excludes:?} looping={looping} on {s:?}"
                );
            }
        }
    }

    #[test]
    fn character_limit_counts_code_points() {
        let mut b = GrammarBuilder::new();
        let excludes = vec!["ab".to_owned()];
        let text = FreeText {
            triggers: &[],
            excludes: &excludes,
            looping: true,
            max_chars: Some(2),
        };
        let entry = build(&mut b, "text", &text, 10_000, "").unwrap();
        let g = b.build(entry).unwrap();
        let r = Recognizer::new(&g).unwrap();
        for s in all_strings(&[b'a', b'b', 0xC3, 0xA9], 6) {
            let expected =
                std::str::from_utf8(&s).is_ok_and(|t| t.chars().count() <= 2 && !t.contains("ab"));
            assert_eq!(r.accepts(&s), expected, "{s:?}");
        }
    }

    #[test]
    fn too_many_states_is_a_limit_error() {
        let mut b = GrammarBuilder::new();
        let text = FreeText {
            triggers: &[],
            excludes: &["abcdefgh".to_owned()],
            looping: true,
            max_chars: Some(1000),
        };
        let e = build(&mut b, "text", &text, 100, "/format").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Limit);
        assert_eq!(e.pointer, "/format");
    }
}
