//! Pass `remove-useless`: drop rules that can contribute nothing, and unreachable rules.
//!
//! A grammar here describes finite sentences and, as in KBNF, also *infinite* outputs: a rule
//! such as `B ::= "a" B` never finishes, yet constrains an unbounded output (generation then
//! ends at the token limit), so it is kept. A rule is *live* when it is
//!
//! - *productive*: it derives a finite string; or
//! - *pumping*: it has an infinite leftmost derivation that scans infinitely many bytes. In the
//!   graph with an edge `A → B` for each reference to `B` in an alternative of `A` whose
//!   preceding atoms are all productive (weighted 1 when one of them can scan a byte), these
//!   are the rules that reach a strongly connected component with an internal weight-1 edge.
//!   `S ::= S` and `S ::= S "a"` pump nothing and go.
//!
//! An alternative that needs a dead rule goes; atoms after the first non-productive atom of an
//! alternative can never be reached and go too. If that leaves a pumping rule without
//! alternatives (its infinite derivation needed a dead suffix), it is dead as well and the
//! analysis runs again. Then rules the root cannot reach are removed.
//!
//! Preserved: the finite language exactly, and the prefixes of infinite derivations except
//! those that pass through a dead suffix. After it: every rule is live and reachable, and flat
//! form is kept. Fails with [`NormalizeError::EmptyLanguage`] when the root is dead.

use sieve_ir::{Expr, ExprKind, Grammar, RuleId};

use crate::{analysis, components::Graph, flat, rebuild::Draft, NormalizeError};

/// Runs the pass.
pub fn remove_useless(grammar: Grammar) -> Result<Grammar, NormalizeError> {
    let productive = analysis::productive(&grammar);
    if !productive.contains(&false) {
        // Every rule is live and every atom productive: only unreachable rules go.
        return Draft::from_grammar(grammar).finish();
    }
    let nonempty = analysis::nonempty_finite(&grammar, &productive);
    let mut forced_dead = vec![false; grammar.rules().len()];
    loop {
        let pumping = pumping(&grammar, &productive, &nonempty, &forced_dead);
        let live: Vec<bool> = (0..productive.len())
            .map(|i| productive[i] || (pumping[i] && !forced_dead[i]))
            .collect();
        if !live[grammar.root().index()] {
            return Err(NormalizeError::EmptyLanguage {
                root: grammar.rule(grammar.root()).name().to_owned(),
            });
        }
        let mut bodies = Vec::with_capacity(grammar.rules().len());
        let mut lost_everything = false;
        for id in grammar.rule_ids() {
            if !live[id.index()] {
                bodies.push(None);
                continue;
            }
            let alternatives = flat::alternatives(grammar.rule(id).body())
                .iter()
                .filter_map(|atoms| keep_alternative(atoms, &live, &productive))
                .collect();
            let body = flat::from_alternatives(alternatives);
            if body.is_none() {
                forced_dead[id.index()] = true;
                lost_everything = true;
            }
            bodies.push(body);
        }
        if !lost_everything {
            let mut draft = Draft::from_grammar(grammar);
            draft.bodies = bodies;
            return draft.finish();
        }
    }
}

/// The alternative without its unreachable tail, or `None` when it needs a dead rule.
fn keep_alternative(atoms: &[Expr], live: &[bool], productive: &[bool]) -> Option<Vec<Expr>> {
    let mut kept = Vec::with_capacity(atoms.len());
    for atom in atoms {
        let (rule, min) = atom_rule(atom);
        match rule {
            Some(r) if !live[r.index()] && min == 0 => continue,
            Some(r) if !live[r.index()] => return None,
            _ => {}
        }
        kept.push(atom.clone());
        if !analysis::is_productive(atom, productive) {
            break;
        }
    }
    Some(kept)
}

/// The rule an atom references, and the least number of times it must match.
fn atom_rule(atom: &Expr) -> (Option<RuleId>, u32) {
    match atom.kind() {
        ExprKind::Ref(id) => (Some(*id), 1),
        ExprKind::Repeat { item, min, .. } => match item.kind() {
            ExprKind::Ref(id) => (Some(*id), *min),
            _ => (None, *min),
        },
        _ => (None, 1),
    }
}

/// Which rules have an infinite leftmost derivation that scans infinitely many bytes.
fn pumping(grammar: &Grammar, productive: &[bool], nonempty: &[bool], dead: &[bool]) -> Vec<bool> {
    let count = grammar.rules().len();
    // Every reference `(from, to, weight)`, the weight saying whether the derivation has
    // scanned a byte before it (or may, through earlier copies of a repeated rule).
    let mut edges: Vec<(usize, usize, bool)> = Vec::new();
    let mut graph = Graph::with_capacity(count);
    for id in grammar.rule_ids() {
        let first = edges.len();
        for atoms in flat::alternatives(grammar.rule(id).body()) {
            let mut scanned = false;
            for atom in &atoms {
                let (rule, _) = atom_rule(atom);
                if let Some(target) = rule.filter(|r| !dead[r.index()]) {
                    // Earlier copies of a repeated rule may scan before the infinite one.
                    let repeats =
                        matches!(atom.kind(), ExprKind::Repeat { max, .. } if *max != Some(1));
                    let weight = scanned || (repeats && nonempty[target.index()]);
                    edges.push((id.index(), target.index(), weight));
                }
                if !analysis::is_productive(atom, productive) {
                    break;
                }
                scanned |= analysis::expr_nonempty_finite(atom, nonempty, productive);
            }
        }
        graph.push_vertex(edges[first..].iter().map(|&(_, to, _)| to));
    }
    let component = graph.components().component_of_each();
    let mut pumps = vec![false; count];
    for &(from, to, weight) in &edges {
        if weight && component[from] == component[to] {
            pumps[from] = true;
        }
    }
    // Rules that reach a pumping component: propagate backwards to a fixpoint.
    let mut changed = true;
    while changed {
        changed = false;
        for &(from, to, _) in &edges {
            if pumps[to] && !pumps[from] {
                pumps[from] = true;
                changed = true;
            }
        }
    }
    pumps
}
