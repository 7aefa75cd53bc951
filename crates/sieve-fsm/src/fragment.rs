//! Large alternations determinised once per build and spliced, as small DFAs, into the NFAs of
//! the rules that contain them.
//!
//! One character of a JSON string is an alternation of a dozen UTF-8 and escape forms, about
//! forty expression nodes. Every string-valued member repeats it, and a counted string writes
//! it out once per character (`maxLength: 60` holds sixty copies). Its Thompson fragment has
//! about a hundred states, and subset construction closes over all of them at each character;
//! its minimal DFA has about ten. [`Fragments`] keeps the minimal DFA of each reference-free
//! alternation of [`MIN_SIZE`] to [`MAX_SIZE`] nodes that some rule body holds more than once,
//! and [`crate::nfa::thompson`] copies it in, entered at its start state and left by epsilon
//! edges from its accepting states, in place of the alternation's Thompson fragment, in that
//! rule and in every rule built after it. An alternation a rule holds once is not worth
//! determinising on its own: its first sighting in a rule only records its hash.
//!
//! # Invariants
//!
//! - A fragment accepts exactly its alternation's language, so an NFA with fragments spliced
//!   in accepts what the plain one does, and its minimal DFA is the same automaton.
//! - A fragment spliced in (its states, one exit state, its edges and one epsilon edge per
//!   accepting state) is no larger than the Thompson fragment it replaces, and the NFA records
//!   the size the plain construction would have had ([`Nfa::thompson_len`]), which the state
//!   limit and the DFA cap are read from: splicing never changes which rules fit or are
//!   determinised.
//! - A fragment is built from a plain Thompson NFA, never from other fragments, so building one
//!   does not recurse; deciding whether an alternation qualifies reads its recorded size and
//!   reference count, in constant time.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use foldhash::fast::FixedState;
use foldhash::{HashMap, HashSet};
use sieve_ir::{Expr, ExprKind};

use crate::canonical::canonicalize_dfa;
use crate::dfa::{determinize, minimize};
use crate::fsm::Fsm;
use crate::nfa::{thompson, Nfa};

/// The smallest alternation, in expression nodes, worth a fragment.
const MIN_SIZE: usize = 16;

/// The largest alternation, in expression nodes, made a fragment.
const MAX_SIZE: usize = 1024;

/// The most DFA states a fragment may have; an alternation past it, or whose DFA is not
/// smaller than its Thompson fragment, keeps the Thompson fragment.
const MAX_STATES: usize = 256;

/// A minimal DFA standing for an alternation, and the size of the alternation's Thompson
/// fragment.
pub(crate) struct Fragment {
    pub(crate) fsm: Fsm,
    pub(crate) thompson_len: usize,
}

/// The fragments of one build. Shared by the threads of a parallel build.
#[derive(Default)]
pub(crate) struct Fragments {
    built: Mutex<Built>,
    hasher: FixedState,
}

/// Per hash, the alternations one build has made fragments of (`None` for one past
/// [`MAX_STATES`] or not smaller). Equal hashes are told apart by comparing the alternations.
type Built = HashMap<u64, Vec<(Expr, Option<Arc<Fragment>>)>>;

/// The hashes of the qualifying alternations one rule body has shown so far.
pub(crate) type Sightings = HashSet<u64>;

impl Fragments {
    /// The fragment for `choice`, an alternation of a rule body that has shown the alternations
    /// in `sightings`, if it qualifies and was made a fragment before or is shown again (see
    /// the module docs).
    pub(crate) fn get(&self, choice: &Expr, sightings: &mut Sightings) -> Option<Arc<Fragment>> {
        debug_assert!(matches!(choice.kind(), ExprKind::Choice(_)));
        if !qualifies(choice) {
            return None;
        }
        let hash = self.hasher.hash_one(choice);
        if let Some(found) = self
            .lock()
            .get(&hash)
            .and_then(|bucket| bucket.iter().find(|(expr, _)| expr == choice))
        {
            return found.1.clone();
        }
        if sightings.insert(hash) {
            return None;
        }
        let fragment = build(choice).map(Arc::new);
        self.lock()
            .entry(hash)
            .or_default()
            .push((choice.clone(), fragment.clone()));
        fragment
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Built> {
        // A panic while holding the lock leaves a map that is still consistent.
        self.built
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whether `expr` has [`MIN_SIZE`] to [`MAX_SIZE`] nodes and no reference.
fn qualifies(expr: &Expr) -> bool {
    expr.ref_count() == 0 && (MIN_SIZE..=MAX_SIZE).contains(&expr.size())
}

/// The minimal DFA of `choice`, unless it has more than [`MAX_STATES`] states or, spliced
/// in, would have more states or edges than the Thompson fragment.
fn build(choice: &Expr) -> Option<Fragment> {
    let nfa: Nfa = thompson(choice, "", None).ok()?;
    let dfa = determinize(&nfa, MAX_STATES)?;
    let fsm = canonicalize_dfa(&minimize(&dfa));
    let accepting = fsm.states().filter(|&s| fsm.is_accepting(s)).count();
    let smaller = fsm.state_count() < nfa.len() && fsm.edge_count() + accepting <= nfa.edge_count();
    smaller.then(|| Fragment {
        fsm,
        thompson_len: nfa.len(),
    })
}
