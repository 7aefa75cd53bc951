//! `SUBSTRING_OF`: the non-empty substrings of a text, cut at character boundaries.
//!
//! Built as the suffix automaton of the text's *characters* (Blumer et al.; the online
//! construction with suffix links and clones): at most `2n − 1` states and `3n − 4` edges for
//! `n` characters, so the grammar is linear in the text where the obvious regex (every
//! substring spelled out) is quadratic. Every state but the start accepts; each edge is one
//! character, written as its UTF-8 bytes, so no substring splits a character.

use crate::sugar::automaton::Automaton;
use crate::sugar::utf8::CharSet;

struct State {
    len: usize,
    link: Option<usize>,
    next: Vec<(char, usize)>,
}

fn edge(state: &State, c: char) -> Option<usize> {
    state.next.iter().find(|&&(d, _)| d == c).map(|&(_, t)| t)
}

fn set_edge(state: &mut State, c: char, to: usize) {
    match state.next.iter_mut().find(|(d, _)| *d == c) {
        Some(slot) => slot.1 = to,
        None => state.next.push((c, to)),
    }
}

/// The suffix automaton of `text` as an [`Automaton`] whose start state is 0.
pub(crate) fn automaton(text: &str) -> Automaton {
    let mut states = vec![State {
        len: 0,
        link: None,
        next: Vec::new(),
    }];
    let mut last = 0;
    for c in text.chars() {
        let cur = states.len();
        states.push(State {
            len: states[last].len + 1,
            link: None,
            next: Vec::new(),
        });
        let mut p = Some(last);
        while let Some(q) = p {
            if edge(&states[q], c).is_some() {
                break;
            }
            set_edge(&mut states[q], c, cur);
            p = states[q].link;
        }
        match p {
            None => states[cur].link = Some(0),
            Some(p) => {
                let q = edge(&states[p], c).expect("the loop stopped on an edge");
                if states[p].len + 1 == states[q].len {
                    states[cur].link = Some(q);
                } else {
                    let clone = states.len();
                    states.push(State {
                        len: states[p].len + 1,
                        link: states[q].link,
                        next: states[q].next.clone(),
                    });
                    let mut r = Some(p);
                    while let Some(s) = r {
                        if edge(&states[s], c) != Some(q) {
                            break;
                        }
                        set_edge(&mut states[s], c, clone);
                        r = states[s].link;
                    }
                    states[q].link = Some(clone);
                    states[cur].link = Some(clone);
                }
            }
        }
        last = cur;
    }
    let mut automaton = Automaton::default();
    for s in 0..states.len() {
        automaton.add_state(s != 0);
    }
    for (s, state) in states.iter().enumerate() {
        // Characters leading to the same state share one label.
        let mut targets: Vec<(usize, Vec<char>)> = Vec::new();
        for &(c, t) in &state.next {
            match targets.iter_mut().find(|(u, _)| *u == t) {
                Some((_, chars)) => chars.push(c),
                None => targets.push((t, vec![c])),
            }
        }
        for (t, chars) in targets {
            let label = CharSet::from_ranges(chars.into_iter().map(|c| (c, c)))
                .to_expr()
                .expect("at least one character");
            automaton.add_edge(s, label, t);
        }
    }
    automaton
}
