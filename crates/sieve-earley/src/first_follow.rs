//! FIRST and FOLLOW of every rule, over first bytes: the bytes a string of the rule can start
//! with, and the bytes that can come right after one anywhere in the grammar.
//!
//! Both are least fixpoints; they over-approximate every context, which is what makes "the
//! next byte is not in FOLLOW" a proof that completing the rule there is dead (the static
//! walk of `within` and the token-limit tables rely on it).
//!
//! # Cost
//!
//! Each fixpoint is a worklist: a value is recomputed only when something it reads changed,
//! and a byte set can only grow (at most 256 times), so the work is linear in the grammar's
//! edges times the changes, whatever the nesting depth. (Round-robin sweeps needed one sweep
//! per level of rule nesting: seconds on JSON Schemas with thousands of nested rules.)

use sieve_ir::ByteClass;

use crate::grammar::{EarleyGrammar, StateInfo, NOT_COUNTED, NO_CLASS};

/// `(first, follow)`, each indexed by rule.
pub(crate) fn first_and_follow(g: &EarleyGrammar) -> (Vec<ByteClass>, Vec<ByteClass>) {
    let dynamic = dynamic_states(g);
    let state_first = state_first(g, &dynamic);
    let rule_first: Vec<ByteClass> = g.start.iter().map(|&s| state_first[s as usize]).collect();
    let follow = follow(g, &dynamic, &state_first, &rule_first);
    (rule_first, follow)
}

/// The states whose FIRST reads other values: counted states, and states with rule or ε
/// edges. Every other state's FIRST is its byte class, fixed; only these contribute to
/// FOLLOW.
fn dynamic_states(g: &EarleyGrammar) -> Vec<u32> {
    (0..g.states.len() as u32)
        .filter(|&q| {
            let info = &g.states[q as usize];
            info.counted != NOT_COUNTED || info.rules.0 != info.rules.1 || info.eps.0 != info.eps.1
        })
        .collect()
}

/// `state_first[q]`: the first bytes of the non-empty strings from `q` to the end of its
/// rule, continued through rule edges (so a rule's FIRST is its start state's).
fn state_first(g: &EarleyGrammar, dynamic: &[u32]) -> Vec<ByteClass> {
    let mut first: Vec<ByteClass> = g
        .states
        .iter()
        .map(|info| match info.class {
            NO_CLASS => ByteClass::EMPTY,
            class => g.classes[class as usize],
        })
        .collect();
    // readers.of(d): the dynamic states whose FIRST reads state d's.
    let readers = Lists::build(g.states.len(), |emit| {
        for &q in dynamic {
            for_each_first_source(g, &g.states[q as usize], |d| emit(d, q));
        }
    });
    // Last to first: edges mostly point forward, so most states are final when first popped.
    let mut queued = vec![false; g.states.len()];
    let mut work: Vec<u32> = dynamic.to_vec();
    for &q in dynamic {
        queued[q as usize] = true;
    }
    while let Some(q) = work.pop() {
        queued[q as usize] = false;
        let mut value = first[q as usize];
        for_each_first_source(g, &g.states[q as usize], |d| {
            value = value.union(&first[d as usize]);
        });
        if value != first[q as usize] {
            first[q as usize] = value;
            for &reader in readers.of(q) {
                if !queued[reader as usize] {
                    queued[reader as usize] = true;
                    work.push(reader);
                }
            }
        }
    }
    first
}

/// Calls `f` with every state whose FIRST the FIRST of a state `info` reads: the start of a
/// counted item, the start of each rule it refers to, the target of an edge over a nullable
/// rule, and each ε target.
fn for_each_first_source(g: &EarleyGrammar, info: &StateInfo, mut f: impl FnMut(u32)) {
    if info.counted != NOT_COUNTED {
        f(g.start[g.counted[info.counted as usize].item as usize]);
    }
    for edge in g.rule_edges(info) {
        f(g.start[edge.rule as usize]);
        if g.nullable[edge.rule as usize] {
            f(edge.target);
        }
    }
    for &target in g.eps_edges(info) {
        f(target);
    }
}

/// `follow[r]`: the bytes that can come right after a string of rule `r`. What a state of
/// rule `p` adds to its callees' FOLLOW reads only FOLLOW of `p`, so the worklist holds
/// rules, and a rule whose FOLLOW grew has its dynamic states visited again.
fn follow(
    g: &EarleyGrammar,
    dynamic: &[u32],
    state_first: &[ByteClass],
    rule_first: &[ByteClass],
) -> Vec<ByteClass> {
    let rules = g.start.len();
    let states_of = Lists::build(rules, |emit| {
        for &q in dynamic {
            emit(g.states[q as usize].rule, q);
        }
    });
    let mut follow = vec![ByteClass::EMPTY; rules];
    let mut queued = vec![false; rules];
    let mut work: Vec<u32> = Vec::new();
    for rule in (0..rules).rev() {
        if !states_of.of(rule as u32).is_empty() {
            queued[rule] = true;
            work.push(rule as u32);
        }
    }
    while let Some(parent) = work.pop() {
        queued[parent as usize] = false;
        let outer = follow[parent as usize];
        for &q in states_of.of(parent) {
            let info = &g.states[q as usize];
            let mut add = |rule: usize, bytes: ByteClass, follow: &mut [ByteClass]| {
                let merged = follow[rule].union(&bytes);
                if merged != follow[rule] {
                    follow[rule] = merged;
                    if !queued[rule] && !states_of.of(rule as u32).is_empty() {
                        queued[rule] = true;
                        work.push(rule as u32);
                    }
                }
            };
            if info.counted != NOT_COUNTED {
                let item = g.counted[info.counted as usize].item as usize;
                add(item, rule_first[item].union(&outer), &mut follow);
            }
            for edge in g.rule_edges(info) {
                let mut next = state_first[edge.target as usize];
                if may_end(g, edge.target) {
                    next = next.union(&outer);
                }
                add(edge.rule as usize, next, &mut follow);
            }
        }
    }
    follow
}

/// A list of `u32` per index, stored in one vector: list `i` is
/// `items[offsets[i]..offsets[i + 1]]`, in the order its items were emitted. (A vector per
/// index cost an allocation per non-empty list: a fifth of building a grammar's tables.)
struct Lists {
    offsets: Vec<u32>,
    items: Vec<u32>,
}

impl Lists {
    /// The lists of `len` indices holding what `pairs` emits as `(index, item)`; `pairs` is
    /// called twice (to count, then to fill) and must emit the same pairs both times.
    fn build(len: usize, pairs: impl Fn(&mut dyn FnMut(u32, u32))) -> Lists {
        let mut offsets = vec![0u32; len + 1];
        pairs(&mut |index, _| offsets[index as usize + 1] += 1);
        for i in 0..len {
            offsets[i + 1] += offsets[i];
        }
        let mut next = offsets.clone();
        let mut items = vec![0u32; offsets[len] as usize];
        pairs(&mut |index, item| {
            let at = &mut next[index as usize];
            items[*at as usize] = item;
            *at += 1;
        });
        Lists { offsets, items }
    }

    fn of(&self, index: u32) -> &[u32] {
        let index = index as usize;
        &self.items[self.offsets[index] as usize..self.offsets[index + 1] as usize]
    }
}

/// Whether the rule of `state` may end there, conservatively: it accepts, or more than bytes
/// may follow without consuming any (ε edges, nullable rules).
fn may_end(g: &EarleyGrammar, state: u32) -> bool {
    let target = &g.states[state as usize];
    target.accepting
        || target.eps.0 != target.eps.1
        || g.rule_edges(target)
            .iter()
            .any(|e| g.nullable[e.rule as usize])
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// The plain fixpoint over every state and edge, swept until nothing changes: the
    /// definition the worklists must match.
    fn first_and_follow_by_definition(g: &EarleyGrammar) -> (Vec<ByteClass>, Vec<ByteClass>) {
        let rules = g.start.len();
        // state_first[q]: first bytes of the non-empty strings from q to the end of its rule,
        // continued through rule edges; rule_first[r] = state_first[start[r]].
        let mut state_first = vec![ByteClass::EMPTY; g.states.len()];
        let mut rule_first = vec![ByteClass::EMPTY; rules];
        loop {
            let mut changed = false;
            for (q, info) in g.states.iter().enumerate() {
                let mut first = state_first[q];
                if info.counted != NOT_COUNTED {
                    first =
                        first.union(&rule_first[g.counted[info.counted as usize].item as usize]);
                }
                for edge in g.byte_edges(info) {
                    first = first.union(&ByteClass::range(edge.lo, edge.hi));
                }
                for edge in g.rule_edges(info) {
                    first = first.union(&rule_first[edge.rule as usize]);
                    if g.nullable[edge.rule as usize] {
                        first = first.union(&state_first[edge.target as usize]);
                    }
                }
                for &target in g.eps_edges(info) {
                    first = first.union(&state_first[target as usize]);
                }
                if first != state_first[q] {
                    state_first[q] = first;
                    changed = true;
                }
            }
            for rule in 0..rules {
                let first = state_first[g.start[rule] as usize];
                if first != rule_first[rule] {
                    rule_first[rule] = first;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // follow[r]: bytes that can come right after a string of rule r.
        let mut follow = vec![ByteClass::EMPTY; rules];
        loop {
            let mut changed = false;
            for info in &g.states {
                let parent = info.rule as usize;
                let mut updates: Vec<(usize, ByteClass)> = Vec::new();
                if info.counted != NOT_COUNTED {
                    let item = g.counted[info.counted as usize].item as usize;
                    updates.push((item, rule_first[item].union(&follow[parent])));
                }
                for edge in g.rule_edges(info) {
                    let mut next = state_first[edge.target as usize];
                    if may_end(g, edge.target) {
                        next = next.union(&follow[parent]);
                    }
                    updates.push((edge.rule as usize, next));
                }
                for (rule, bytes) in updates {
                    let merged = follow[rule].union(&bytes);
                    if merged != follow[rule] {
                        follow[rule] = merged;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        (rule_first, follow)
    }

    /// The Earley tables of `grammar` after normalisation, or `None` when normalisation
    /// refuses it.
    fn tables(grammar: &sieve_ir::Grammar) -> Option<Arc<EarleyGrammar>> {
        let normalized =
            sieve_normalize::normalize(grammar, &sieve_normalize::Config::default()).ok()?;
        let fsms = sieve_fsm::Builder::new(sieve_fsm::Config::new())
            .build_normalized(&normalized)
            .unwrap();
        Some(Arc::new(EarleyGrammar::new(
            &fsms,
            false,
            crate::Config::default(),
        )))
    }

    #[test]
    fn first_and_follow_match_their_definition_on_every_shipped_grammar() {
        let mut checked = 0;
        for path in sieve_testkit::grammar_files() {
            let Some(g) = tables(&sieve_testkit::compile_file(&path)) else {
                continue;
            };
            assert_eq!(
                first_and_follow(&g),
                first_and_follow_by_definition(&g),
                "{}",
                path.display()
            );
            checked += 1;
        }
        assert!(checked > 10);
    }

    /// Deep nesting is where a worklist and sweeps differ most in order of work: objects
    /// nested 40 levels, each level with an optional property, so FOLLOW of the innermost
    /// rules is only known after it has been carried down through every level.
    #[test]
    fn first_and_follow_match_their_definition_on_deeply_nested_schemas() {
        let mut schema = serde_json::json!({"type": "integer"});
        for level in 0..40 {
            schema = serde_json::json!({
                "type": "object",
                "properties": {"inner": schema, format!("p{level}"): {"type": "string"}},
                "required": ["inner"],
            });
        }
        let grammar = sieve_jsonschema::compile(&schema, &sieve_jsonschema::Options::default())
            .unwrap()
            .grammar;
        let g = tables(&grammar).expect("the schema normalises");
        assert!(g.start.len() > 40, "one rule per level at least");
        assert_eq!(first_and_follow(&g), first_and_follow_by_definition(&g));
    }

    proptest::proptest! {
        #[test]
        fn first_and_follow_match_their_definition_on_random_grammars(
            grammar in sieve_testkit::random::arb_grammar()
        ) {
            if let Some(g) = tables(&grammar) {
                proptest::prop_assert_eq!(first_and_follow(&g), first_and_follow_by_definition(&g));
            }
        }
    }
}
