//! Finite automata with expression-labelled edges, emitted as right-linear rules.
//!
//! The sugar constructors build their languages as automata (a suffix automaton, an
//! Aho–Corasick automaton crossed with the UTF-8 decoder, a small scanner) because the IR has
//! no complement and no intersection; [`Automaton::emit`] then writes one rule per state:
//!
//! ```text
//! S ::= (loop₁ | loop₂ …)* (label₁ T₁ | label₂ T₂ | … | ε if S accepts)
//! ```
//!
//! where the loops are the labels of `S`'s edges back to itself. A state that accepts and has
//! no edges is not given a rule: edges into it end with their label.
//!
//! **Invariants:** the emitted start expression matches exactly the concatenations of labels
//! along paths from the start to an accepting state; states that cannot reach an accepting
//! state are dropped first (with the edges into them), and `None` is returned when the start
//! is one of them (the empty language). The number of rules is at most the number of states.

use crate::{Expr, GrammarBuilder, IrError, RuleId};

/// An automaton whose edges are labelled by expressions.
#[derive(Clone, Debug, Default)]
pub(crate) struct Automaton {
    /// Per state: whether it accepts.
    pub(crate) accepting: Vec<bool>,
    /// Per state: its edges, `(label, target)`.
    pub(crate) edges: Vec<Vec<(Expr, usize)>>,
}

impl Automaton {
    /// Adds a state; returns its number.
    pub(crate) fn add_state(&mut self, accepting: bool) -> usize {
        self.accepting.push(accepting);
        self.edges.push(Vec::new());
        self.accepting.len() - 1
    }

    /// Adds the edge `from --label--> to`.
    pub(crate) fn add_edge(&mut self, from: usize, label: Expr, to: usize) {
        self.edges[from].push((label, to));
    }

    /// Which states can reach an accepting state.
    fn live(&self) -> Vec<bool> {
        let n = self.accepting.len();
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (s, out) in self.edges.iter().enumerate() {
            for &(_, t) in out {
                preds[t].push(s);
            }
        }
        let mut live = self.accepting.clone();
        let mut stack: Vec<usize> = (0..n).filter(|&s| live[s]).collect();
        while let Some(t) = stack.pop() {
            for &p in &preds[t] {
                if !live[p] {
                    live[p] = true;
                    stack.push(p);
                }
            }
        }
        live
    }

    /// Writes the automaton as rules named after `base`, starting at `start`; returns the
    /// expression for the start state (its body when no edge returns to it, else a reference
    /// to its rule), or `None` when no accepting state is reachable.
    pub(crate) fn emit(
        &self,
        builder: &mut GrammarBuilder,
        base: &str,
        start: usize,
    ) -> Result<Option<Expr>, IrError> {
        let live = self.live();
        if !live[start] {
            return Ok(None);
        }
        let n = self.accepting.len();
        // Reachable live states, in discovery order, so rule numbers follow the text.
        let mut order = vec![start];
        let mut seen = vec![false; n];
        seen[start] = true;
        let mut k = 0;
        while k < order.len() {
            for &(_, t) in &self.edges[order[k]] {
                if live[t] && !seen[t] {
                    seen[t] = true;
                    order.push(t);
                }
            }
            k += 1;
        }
        let leaf = |s: usize| self.accepting[s] && self.edges[s].iter().all(|&(_, t)| !live[t]);
        let entered = order
            .iter()
            .any(|&s| self.edges[s].iter().any(|&(_, t)| t == start));
        let mut ids: Vec<Option<RuleId>> = vec![None; n];
        for &s in &order {
            if !leaf(s) && (s != start || entered) {
                ids[s] = Some(builder.fresh(base)?);
            }
        }
        let mut start_body = None;
        for &s in &order {
            if leaf(s) && s != start {
                continue;
            }
            let mut loops = Vec::new();
            let mut alternatives = Vec::new();
            for (label, t) in &self.edges[s] {
                let t = *t;
                if !live[t] {
                    continue;
                }
                if t == s {
                    loops.push(label.clone());
                } else if leaf(t) {
                    alternatives.push(label.clone());
                } else {
                    let id = ids[t].expect("non-leaf states have rules");
                    alternatives.push(Expr::seq([label.clone(), Expr::rule(id)]));
                }
            }
            if self.accepting[s] {
                alternatives.push(Expr::empty());
            }
            let rest = Expr::choice(alternatives);
            let body = match (Expr::choice(loops), rest) {
                (Some(looped), Some(rest)) => Expr::seq([Expr::star(looped), rest]),
                (None, Some(rest)) => rest,
                (Some(_), None) | (None, None) => {
                    unreachable!("a live state accepts or has a live edge out")
                }
            };
            match ids[s] {
                Some(id) => builder.define(id, body),
                None => start_body = Some(body),
            }
        }
        Ok(Some(match ids[start] {
            Some(id) => Expr::rule(id),
            None => start_body.expect("the start has a body"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::Recognizer;

    #[test]
    fn loops_dead_states_and_leaves() {
        // (ab)*c, plus a dead branch.
        let mut a = Automaton::default();
        let s0 = a.add_state(false);
        let s1 = a.add_state(false);
        let fin = a.add_state(true);
        let dead = a.add_state(false);
        a.add_edge(s0, Expr::bytes("a"), s1);
        a.add_edge(s1, Expr::bytes("b"), s0);
        a.add_edge(s0, Expr::bytes("c"), fin);
        a.add_edge(s0, Expr::bytes("d"), dead);
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let expr = a.emit(&mut b, "s", s0).unwrap().unwrap();
        b.define(root, expr);
        let g = b.build(root).unwrap();
        assert_eq!(g.rules().len(), 3, "{g}");
        let r = Recognizer::new(&g).unwrap();
        for (text, ok) in [
            ("c", true),
            ("abc", true),
            ("ababc", true),
            ("ab", false),
            ("d", false),
        ] {
            assert_eq!(r.accepts(text.as_bytes()), ok, "{text}");
        }
        let mut only_dead = Automaton::default();
        let s = only_dead.add_state(false);
        assert_eq!(only_dead.emit(&mut GrammarBuilder::new(), "s", s), Ok(None));
    }
}
