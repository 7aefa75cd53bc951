//! Pass `merge-identical`: rules with the same language by construction become one.
//!
//! Rules are partitioned by bisimulation: two rules are in one class when their bodies are
//! equal once every reference is replaced by the class of the rule it names. This is the
//! coarsest such partition, so rules left in one class derive the same strings
//! (`A ::= "a" A | "b"` and `B ::= "a" B | "b"` included, which plain body equality misses).
//! Each class keeps one rule, the root if the class has it, otherwise the first; references
//! are redirected to it. After it: no two rules have bodies equal up to that renaming.
//!
//! The partition is computed per strongly connected component of the reference graph, callees
//! first, so the work is linear in the grammar for the acyclic part:
//! - a rule outside any cycle is hash-consed: its *signature* (body with references replaced
//!   by final classes) either names an existing class or starts a new one;
//! - a cycle is refined on its own (all members start in one block and split by signature,
//!   references leaving the cycle already final), and its quotient is then matched against
//!   the existing classes: if one block's signature unifies with a class's, following the
//!   references pairs every block with a class and the cycle merges into them; otherwise each
//!   block becomes a new class.
//!
//! Both steps only ever merge rules whose signatures are equal under the merge, so every
//! class is a bisimulation class, and a class is only ever created when no existing one is
//! bisimilar, so the partition is the coarsest.

use std::hash::{BuildHasher, Hasher};

use foldhash::fast::FixedState;
use foldhash::HashMap;

use sieve_ir::{Expr, Grammar, RuleId};

use crate::{components::Components, rebuild::Draft, NormalizeError};

/// Runs the pass. A grammar in which no two rules are bisimilar is returned as it is.
pub fn merge_identical(grammar: Grammar) -> Result<Grammar, NormalizeError> {
    let class_of = bisimulation_classes(&grammar);
    // Each class's rule: the root for the root's class, otherwise its first rule.
    let mut representative: Vec<Option<RuleId>> = vec![None; grammar.rules().len()];
    representative[class_of[grammar.root().index()]] = Some(grammar.root());
    for id in grammar.rule_ids() {
        representative[class_of[id.index()]].get_or_insert(id);
    }
    let target: Vec<RuleId> = class_of
        .iter()
        .map(|&class| representative[class].expect("every class has a rule"))
        .collect();
    if target
        .iter()
        .enumerate()
        .all(|(index, id)| id.index() == index)
    {
        return Ok(grammar);
    }
    let mut draft = Draft::from_grammar(grammar);
    for body in draft.bodies.iter_mut().flatten() {
        body.rename_refs(&mut |r| target[r.index()]);
    }
    draft.finish()
}

/// The final classes found so far. A class's *signature* is the body of its first rule with
/// every reference read as the class of the rule it names (`class_of`); it is never written
/// out, but hashed and compared in place through [`Expr::hash_renamed`] and [`Expr::eq_renamed`].
///
/// Classes are indexed by the hash of their signature, and the classes made from a cycle
/// also by their *cycle hash*: the signature with every reference to a cyclic class read as
/// one placeholder. Only those can take in a later cycle (its blocks reach each other, so
/// the classes they pair with do too, and a class made outside a cycle reaches only older
/// classes), and a block pairs only with a class of equal cycle hash (blocks pair with
/// cyclic classes, and every other reference names the same class on both sides). Lookups
/// compare the candidates' signatures (or unify them), so a hash collision costs a
/// comparison, never a wrong merge.
#[derive(Default)]
struct Classes {
    /// Per class, the rule whose body, read through `class_of`, is its signature.
    rules: Vec<usize>,
    /// Per class, whether it was made from a cycle.
    cyclic: Vec<bool>,
    by_signature: HashMap<u64, Vec<usize>>,
    /// The classes made from cycles, by cycle hash, oldest first.
    by_cycle_hash: HashMap<u64, Vec<usize>>,
}

/// What a reference to a cyclic class, or to a block, reads as in a cycle hash.
const CYCLIC: usize = usize::MAX;

impl Classes {
    /// The class of `rule`, outside any cycle, whose callees all have their class: an
    /// existing class with the same signature, or a new one.
    fn intern(&mut self, grammar: &Grammar, rule: usize, class_of: &[usize]) -> usize {
        let body = grammar.rules()[rule].body();
        let name = |r: RuleId| class_of[r.index()];
        let hash = hash_renamed(body, &name);
        if let Some(candidates) = self.by_signature.get(&hash) {
            if let Some(&class) = candidates.iter().find(|&&class| {
                body.eq_renamed(grammar.rules()[self.rules[class]].body(), &name, &name)
            }) {
                return class;
            }
        }
        let class = self.rules.len();
        self.by_signature.entry(hash).or_default().push(class);
        self.rules.push(rule);
        self.cyclic.push(false);
        class
    }

    /// Adds one class per rule of `rules`, the blocks of one cycle, whose signatures are
    /// their bodies read through `class_of` (which names every rule they reference, the
    /// blocks' included).
    fn push_cycle(&mut self, grammar: &Grammar, rules: &[usize], class_of: &[usize]) {
        let first = self.rules.len();
        self.rules.extend_from_slice(rules);
        self.cyclic.resize(self.rules.len(), true);
        for (class, &rule) in (first..).zip(rules) {
            let body = grammar.rules()[rule].body();
            let hash = hash_renamed(body, &|r: RuleId| class_of[r.index()]);
            self.by_signature.entry(hash).or_default().push(class);
            let cycle_hash = hash_renamed(body, &|r: RuleId| self.cycle_name(class_of[r.index()]));
            self.by_cycle_hash
                .entry(cycle_hash)
                .or_default()
                .push(class);
        }
    }

    /// How a reference to `class` reads in a cycle hash.
    fn cycle_name(&self, class: usize) -> usize {
        if self.cyclic[class] {
            CYCLIC
        } else {
            class
        }
    }
}

/// `body`'s hash with every reference `r` read as `name(r)` (a fixed seed: runs repeat).
fn hash_renamed(body: &Expr, name: &impl Fn(RuleId) -> usize) -> u64 {
    let mut state = FixedState::default().build_hasher();
    body.hash_renamed(&mut state, name);
    state.finish()
}

/// The rule id standing for class or block `index` inside a block signature.
fn placeholder(index: usize) -> RuleId {
    RuleId::new(index).expect("class and block numbers are below the rule count")
}

/// The class of every rule, indexed by rule.
fn bisimulation_classes(grammar: &Grammar) -> Vec<usize> {
    let mut classes = Classes::default();
    let mut class_of = vec![usize::MAX; grammar.rules().len()];
    for (members, cyclic) in Components::of(grammar).iter() {
        if cyclic {
            classify_cycle(grammar, members, &mut classes, &mut class_of);
        } else {
            let only = members[0];
            class_of[only] = classes.intern(grammar, only, &class_of);
        }
    }
    class_of
}

/// Classifies the members of one strongly connected component whose callees outside it are
/// classified already.
fn classify_cycle(
    grammar: &Grammar,
    members: &[usize],
    classes: &mut Classes,
    class_of: &mut [usize],
) {
    let (block_of, representatives, block_signatures) = refine_cycle(grammar, members, class_of);
    // Inside block signatures, block `b` is written `placeholder(offset + b)`, above every
    // final class, so the two never collide.
    let offset = grammar.rules().len();
    let found = match_existing(grammar, &block_signatures, offset, classes, class_of);
    let fresh = found.is_none();
    let block_class = found.unwrap_or_else(|| {
        let first_new = classes.rules.len();
        (first_new..first_new + block_signatures.len()).collect()
    });
    for (&member, &block) in members.iter().zip(&block_of) {
        class_of[member] = block_class[block];
    }
    if fresh {
        // Every block's first member stands for its class, read through the classes just set.
        let rules: Vec<usize> = representatives.iter().map(|&r| members[r]).collect();
        classes.push_cycle(grammar, &rules, class_of);
    }
}

/// The coarsest partition of a cycle's members into blocks, given the final classes of every
/// rule outside it: the block of each member (in `members` order), each block's first member
/// (its position in `members`), and each block's signature, with block `b` written
/// `placeholder(rule count + b)`.
///
/// Each round splits the blocks by the members' bodies read under the current naming (a
/// reference to a member as its block, to any other rule as its class). The bodies are hashed
/// and compared under that naming in place; signatures are written out once, when the
/// partition is stable.
fn refine_cycle(
    grammar: &Grammar,
    members: &[usize],
    class_of: &[usize],
) -> (Vec<usize>, Vec<usize>, Vec<Expr>) {
    let offset = grammar.rules().len();
    let position: HashMap<usize, usize> = members
        .iter()
        .enumerate()
        .map(|(position, &member)| (member, position))
        .collect();
    let body = |index: usize| grammar.rules()[members[index]].body();
    let mut block_of = vec![0usize; members.len()];
    let mut block_count = 1;
    // The first member of each block, in block order.
    let mut representatives = vec![0usize];
    loop {
        let name = |r: RuleId| match position.get(&r.index()) {
            Some(&p) => offset + block_of[p],
            None => class_of[r.index()],
        };
        // Per (old block, hash of the renamed body): the new blocks seen, by representative.
        let mut buckets: HashMap<(usize, u64), Vec<(usize, usize)>> = HashMap::default();
        let mut next_representatives = Vec::new();
        let mut next = Vec::with_capacity(members.len());
        for (index, &old_block) in block_of.iter().enumerate() {
            let bucket = buckets
                .entry((old_block, hash_renamed(body(index), &name)))
                .or_default();
            let found = bucket
                .iter()
                .find(|&&(representative, _)| {
                    body(representative).eq_renamed(body(index), &name, &name)
                })
                .map(|&(_, block)| block);
            let block = found.unwrap_or_else(|| {
                let block = next_representatives.len();
                next_representatives.push(index);
                bucket.push((index, block));
                block
            });
            next.push(block);
        }
        if next_representatives.len() == block_count {
            // Stable: the same partition, numbered the same way (by first member).
            let signatures = representatives
                .iter()
                .map(|&index| {
                    body(index)
                        .map_refs(&mut |r| Some(Expr::rule(placeholder(name(r)))))
                        .expect("renaming keeps every alternative")
                })
                .collect();
            return (block_of, representatives, signatures);
        }
        block_of = next;
        block_count = next_representatives.len();
        representatives = next_representatives;
    }
}

/// The existing class of every block, if the cycle's quotient is bisimilar to existing
/// classes. All blocks are reachable from block 0, so either every block has a match or none
/// has; candidates for block 0 are the cyclic classes of the same cycle hash (see
/// [`Classes`]), tried oldest first.
fn match_existing(
    grammar: &Grammar,
    block_signatures: &[Expr],
    offset: usize,
    classes: &Classes,
    class_of: &[usize],
) -> Option<Vec<usize>> {
    let class_name = |r: RuleId| class_of[r.index()];
    let cycle_name = |r: RuleId| match r.index() {
        block if block >= offset => CYCLIC,
        class => classes.cycle_name(class),
    };
    let candidates = classes
        .by_cycle_hash
        .get(&hash_renamed(&block_signatures[0], &cycle_name))?;
    'candidates: for &candidate in candidates {
        let mut pairing: Vec<Option<usize>> = vec![None; block_signatures.len()];
        pairing[0] = Some(candidate);
        let mut pending = vec![0usize];
        while let Some(block) = pending.pop() {
            let class = pairing[block].expect("paired before it is pending");
            let unified = unify(
                &block_signatures[block],
                grammar.rules()[classes.rules[class]].body(),
                &class_name,
                offset,
                &mut pairing,
                &mut pending,
            );
            if !unified {
                continue 'candidates;
            }
        }
        return pairing.into_iter().collect();
    }
    None
}

/// Whether a block signature equals a class signature (`class`, a class's rule body, with
/// every reference `r` read as `class_name(r)`) once each block is read as the class it is
/// paired with; pairs blocks met for the first time and queues them for checking.
fn unify(
    block: &Expr,
    class: &Expr,
    class_name: &impl Fn(RuleId) -> usize,
    offset: usize,
    pairing: &mut [Option<usize>],
    pending: &mut Vec<usize>,
) -> bool {
    block.eq_by_refs(class, &mut |b, c| {
        let c = class_name(c);
        let Some(block) = b.index().checked_sub(offset) else {
            return b.index() == c;
        };
        match &mut pairing[block] {
            Some(paired) => *paired == c,
            slot @ None => {
                *slot = Some(c);
                pending.push(block);
                true
            }
        }
    })
}
