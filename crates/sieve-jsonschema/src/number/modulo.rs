//! `multipleOf`: spellings of non-negative multiples of `m × 10^k` or `m × 10^-s` in an
//! interval, as a deterministic automaton emitted as right-linear rules.
//!
//! A value `v` spelled `I.F` is a multiple of `m × 10^-s` iff the digits of `F` past the
//! `s`-th are all zero and the integer `N = I F[..s]` (padded with zeros to `s` fraction
//! digits) is `≡ 0 (mod m)`; it is a multiple of `m × 10^k` iff `F` is all zeros and `I` is
//! `P` followed by `k` zeros with `P ≡ 0 (mod m)`. Reading a spelling left to right, the
//! automaton's state is the product of the interval comparison (integer digits read so far
//! and their lexicographic standing against each bound's integer part, then the fraction's
//! standing against each bound's fraction) and the residue ([`Res`]: `P mod m` and up to `k`
//! trailing zeros set aside — so `1000` or `1e300` cost `k + 1` residues, not `10^k`). Only
//! reachable, productive states are kept; the automaton is then minimised (Hopcroft). Each
//! state becomes one rule `S ::= [digits] T | … | ε`.
//!
//! Invariants: a spelling is accepted iff it is in `(0|[1-9][0-9]*)(\.[0-9]+)?` (no fraction
//! when `fraction` is off), its value lies in the interval, and it is a multiple. At most
//! [`MAX_STATES`] states are explored; past it the build stops with [`Outcome::TooLarge`].

use foldhash::{HashMap, HashMapExt};
use std::cmp::Ordering;

use sieve_ir::{ByteClass, Expr, GrammarBuilder, RuleId};

use super::Bound;

/// The most automaton states explored for one side (positive or negative) of one schema.
///
/// Each state left after minimisation becomes a rule, and a grammar's later stages grow
/// faster than linearly in rules, so this stays well under [`crate::Limits::max_rules`].
pub(crate) const MAX_STATES: usize = 10_000;

/// Symbols: the ten digits, then `.`.
const SYMBOLS: usize = 11;
const DOT: usize = 10;

/// The lexicographic standing of a prefix against a bound's prefix of the same length.
fn cmp_digit(d: u8, b: u8) -> Ordering {
    d.cmp(&b)
}

/// A fraction's standing against a bound's fraction, once the integer parts are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum FracCmp {
    /// The bound holds whatever follows.
    Done,
    /// The fraction so far equals the bound's first `j` fraction digits.
    Pending(u32),
}

/// The residue of the digits read: the value `N` read so far is `P × 10^t` with `t` (at
/// most `k`) trailing zeros set aside, and `r = P mod m`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Res {
    r: u32,
    t: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    Start,
    Int {
        /// Integer digits read, capped once no bound depends on it.
        len: u32,
        /// The integer part is `0`: no further digit.
        zero: bool,
        lo: Ordering,
        hi: Ordering,
        r: Res,
    },
    Frac {
        /// Fraction digits read, capped at `max(s, 1)`.
        pos: u32,
        lo: FracCmp,
        hi: FracCmp,
        r: Res,
    },
}

/// The problem: the interval of magnitudes, the divisor `m × 10^(k-s)` (`k` and `s` not both
/// positive), fractions allowed.
pub(crate) struct Multiples<'a> {
    pub lo: &'a Bound,
    pub hi: Option<&'a Bound>,
    pub m: u32,
    pub k: u32,
    pub s: u32,
    pub fraction: bool,
}

impl Multiples<'_> {
    fn lo_digit(&self, j: usize) -> u8 {
        self.lo.int[j]
    }

    /// How the integer part `I` of `len` digits standing `st` against the bound's prefix
    /// compares to the bound's integer part of `blen` digits.
    fn int_vs(len: u32, st: Ordering, blen: usize) -> Ordering {
        (len as usize).cmp(&blen).then(st)
    }

    fn step(&self, state: State, sym: usize) -> Option<State> {
        match state {
            State::Start => {
                if sym == DOT {
                    return None;
                }
                self.int_digit(
                    1,
                    Ordering::Equal,
                    Ordering::Equal,
                    Res { r: 0, t: 0 },
                    sym as u8,
                )
            }
            State::Int {
                len,
                zero,
                lo,
                hi,
                r,
            } => {
                if sym == DOT {
                    if !self.fraction {
                        return None;
                    }
                    let lo = match Self::int_vs(len, lo, self.lo.int.len()) {
                        Ordering::Less => return None,
                        Ordering::Equal => FracCmp::Pending(0),
                        Ordering::Greater => FracCmp::Done,
                    };
                    let hi = match self.hi {
                        None => FracCmp::Done,
                        Some(b) => match Self::int_vs(len, hi, b.int.len()) {
                            Ordering::Greater => return None,
                            Ordering::Equal => FracCmp::Pending(0),
                            Ordering::Less => FracCmp::Done,
                        },
                    };
                    return Some(State::Frac { pos: 0, lo, hi, r });
                }
                if zero {
                    return None;
                }
                self.int_digit(len + 1, lo, hi, r, sym as u8)
            }
            State::Frac { pos, lo, hi, r } => {
                if sym == DOT {
                    return None;
                }
                let d = b'0' + sym as u8;
                let (pos2, r2) = if pos < self.s {
                    (pos + 1, self.push(r, sym as u8))
                } else if d == b'0' {
                    ((pos + 1).min(self.s.max(1)), r)
                } else {
                    return None;
                };
                let lo = match lo {
                    FracCmp::Done => FracCmp::Done,
                    FracCmp::Pending(j) => {
                        let b = self.lo.frac.get(j as usize).copied().unwrap_or(b'0');
                        match d.cmp(&b) {
                            Ordering::Less => return None,
                            Ordering::Greater => FracCmp::Done,
                            Ordering::Equal => {
                                FracCmp::Pending((j + 1).min(self.lo.frac.len() as u32))
                            }
                        }
                    }
                };
                let hi = match hi {
                    FracCmp::Done => FracCmp::Done,
                    FracCmp::Pending(j) => {
                        let frac = &self.hi.expect("pending on a bound").frac;
                        let b = frac.get(j as usize).copied().unwrap_or(b'0');
                        match d.cmp(&b) {
                            Ordering::Greater => return None,
                            Ordering::Less => FracCmp::Done,
                            Ordering::Equal => FracCmp::Pending((j + 1).min(frac.len() as u32)),
                        }
                    }
                };
                Some(State::Frac {
                    pos: pos2,
                    lo,
                    hi,
                    r: r2,
                })
            }
        }
    }

    /// The state after reading integer digit `sym` as the `len`-th, standings `lo`/`hi`
    /// before it.
    fn int_digit(&self, len: u32, lo: Ordering, hi: Ordering, r: Res, sym: u8) -> Option<State> {
        let d = b'0' + sym;
        let zero = len == 1 && d == b'0';
        let la = self.lo.int.len();
        let lo = if len as usize > la {
            Ordering::Greater
        } else if lo == Ordering::Equal {
            cmp_digit(d, self.lo_digit(len as usize - 1))
        } else {
            lo
        };
        let hi = match self.hi {
            None => Ordering::Equal,
            Some(b) => {
                if len as usize > b.int.len() {
                    return None;
                }
                if hi == Ordering::Equal {
                    cmp_digit(d, b.int[len as usize - 1])
                } else {
                    hi
                }
            }
        };
        let len = match self.hi {
            None => len.min(la as u32 + 1),
            Some(_) => len,
        };
        // An integer part `0` is zero whatever follows: a multiple of everything.
        let r = if zero {
            Res { r: 0, t: self.k }
        } else {
            self.push(r, sym)
        };
        Some(State::Int {
            len,
            zero,
            lo,
            hi,
            r,
        })
    }

    /// The residue after one more digit `d` (0–9).
    fn push(&self, res: Res, d: u8) -> Res {
        let m = u64::from(self.m);
        if d == 0 {
            if res.t < self.k {
                return Res {
                    r: res.r,
                    t: res.t + 1,
                };
            }
            return Res {
                r: (u64::from(res.r) * 10 % m) as u32,
                t: res.t,
            };
        }
        let mut x = u64::from(res.r);
        for _ in 0..=res.t {
            x = x * 10 % m;
        }
        Res {
            r: ((x + u64::from(d)) % m) as u32,
            t: 0,
        }
    }

    /// Whether the value read, followed by `z` more zeros, is `≡ 0 (mod m × 10^k)`.
    fn vanishes(&self, res: Res, z: u32) -> bool {
        let Some(extra) = (res.t + z).checked_sub(self.k) else {
            return false;
        };
        // m × 10^extra divides by m after at most log2(m) < 64 factors of ten, or never.
        let m = u64::from(self.m);
        let mut x = u64::from(res.r) % m;
        for _ in 0..extra.min(64) {
            if x == 0 {
                break;
            }
            x = x * 10 % m;
        }
        x == 0
    }

    fn accepts(&self, state: State) -> bool {
        match state {
            State::Start => false,
            State::Int { len, lo, hi, r, .. } => {
                let lo_ok = match Self::int_vs(len, lo, self.lo.int.len()) {
                    Ordering::Less => false,
                    Ordering::Equal => self.lo.frac.is_empty() && !self.lo.strict,
                    Ordering::Greater => true,
                };
                let hi_ok = match self.hi {
                    None => true,
                    Some(b) => match Self::int_vs(len, hi, b.int.len()) {
                        Ordering::Greater => false,
                        Ordering::Equal => !b.frac.is_empty() || !b.strict,
                        Ordering::Less => true,
                    },
                };
                lo_ok && hi_ok && self.vanishes(r, self.s)
            }
            State::Frac { pos, lo, hi, r } => {
                let lo_ok = match lo {
                    FracCmp::Done => true,
                    FracCmp::Pending(j) => j as usize >= self.lo.frac.len() && !self.lo.strict,
                };
                let hi_ok = match hi {
                    FracCmp::Done => true,
                    FracCmp::Pending(j) => {
                        let b = self.hi.expect("pending on a bound");
                        (j as usize) < b.frac.len() || !b.strict
                    }
                };
                pos >= 1 && lo_ok && hi_ok && self.vanishes(r, self.s.saturating_sub(pos))
            }
        }
    }
}

/// A partial DFA: `next[q][sym]`, `accept[q]`, start state 0.
struct Dfa {
    next: Vec<[Option<u32>; SYMBOLS]>,
    accept: Vec<bool>,
}

/// Explores the reachable states; `None` past [`MAX_STATES`].
fn explore(p: &Multiples<'_>) -> Option<Dfa> {
    let mut ids: HashMap<State, u32> = HashMap::new();
    let mut states = vec![State::Start];
    ids.insert(State::Start, 0);
    let mut next = Vec::new();
    let mut i = 0;
    while i < states.len() {
        let q = states[i];
        let mut row = [None; SYMBOLS];
        for (sym, slot) in row.iter_mut().enumerate() {
            if let Some(t) = p.step(q, sym) {
                let id = *ids.entry(t).or_insert_with(|| {
                    states.push(t);
                    (states.len() - 1) as u32
                });
                *slot = Some(id);
            }
        }
        if states.len() > MAX_STATES {
            return None;
        }
        next.push(row);
        i += 1;
    }
    let accept = states.iter().map(|&q| p.accepts(q)).collect();
    Some(Dfa { next, accept })
}

impl Dfa {
    /// Drops the states from which no accepting state is reachable; `None` when that is the
    /// start state.
    fn trim(self) -> Option<Dfa> {
        let n = self.next.len();
        let mut rev: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (q, row) in self.next.iter().enumerate() {
            for t in row.iter().flatten() {
                rev[*t as usize].push(q as u32);
            }
        }
        let mut live = self.accept.clone();
        let mut stack: Vec<u32> = (0..n as u32).filter(|&q| live[q as usize]).collect();
        while let Some(q) = stack.pop() {
            for &p in &rev[q as usize] {
                if !live[p as usize] {
                    live[p as usize] = true;
                    stack.push(p);
                }
            }
        }
        if !live[0] {
            return None;
        }
        let mut map = vec![u32::MAX; n];
        let mut k = 0;
        for q in 0..n {
            if live[q] {
                map[q] = k;
                k += 1;
            }
        }
        let mut next = Vec::with_capacity(k as usize);
        let mut accept = Vec::with_capacity(k as usize);
        for q in 0..n {
            if !live[q] {
                continue;
            }
            let mut row = self.next[q];
            for slot in &mut row {
                *slot = slot.filter(|t| live[*t as usize]).map(|t| map[t as usize]);
            }
            next.push(row);
            accept.push(self.accept[q]);
        }
        Some(Dfa { next, accept })
    }

    /// Hopcroft's partition refinement over the DFA completed by a dead state; the start
    /// state stays 0. `O(n log n)` for the alphabet of [`SYMBOLS`].
    fn minimise(self) -> Dfa {
        let n = self.next.len();
        let total = n + 1; // state n is the dead state
        let delta = |q: usize, a: usize| -> usize {
            if q == n {
                n
            } else {
                self.next[q][a].map_or(n, |t| t as usize)
            }
        };
        // Predecessors per symbol, as compressed rows: inv[a][inv_start[a][t]..inv_start[a][t + 1]].
        let mut inv_start = vec![vec![0usize; total + 1]; SYMBOLS];
        let mut inv = vec![vec![0usize; total]; SYMBOLS];
        for a in 0..SYMBOLS {
            let starts = &mut inv_start[a];
            for q in 0..total {
                starts[delta(q, a) + 1] += 1;
            }
            for t in 0..total {
                starts[t + 1] += starts[t];
            }
            let mut fill = starts.clone();
            for q in 0..total {
                let t = delta(q, a);
                inv[a][fill[t]] = q;
                fill[t] += 1;
            }
        }
        // The partition: blocks are ranges of `elems`; marked states move to the front.
        let accepting = |q: usize| q < n && self.accept[q];
        let mut elems: Vec<usize> = (0..total).filter(|&q| accepting(q)).collect();
        let n_accept = elems.len();
        elems.extend((0..total).filter(|&q| !accepting(q)));
        let mut loc = vec![0usize; total];
        for (i, &q) in elems.iter().enumerate() {
            loc[q] = i;
        }
        let mut start = Vec::new();
        let mut end = Vec::new();
        let mut block_of = vec![0usize; total];
        for (lo, hi) in [(0, n_accept), (n_accept, total)] {
            if lo < hi {
                for &q in &elems[lo..hi] {
                    block_of[q] = start.len();
                }
                start.push(lo);
                end.push(hi);
            }
        }
        let mut in_work: Vec<[bool; SYMBOLS]> = vec![[true; SYMBOLS]; start.len()];
        let mut work: Vec<(usize, usize)> = (0..start.len())
            .flat_map(|b| (0..SYMBOLS).map(move |a| (b, a)))
            .collect();
        let mut marked = vec![0usize; start.len()];
        let mut touched = Vec::new();
        let mut members = Vec::new();
        while let Some((b, a)) = work.pop() {
            in_work[b][a] = false;
            members.clear();
            members.extend_from_slice(&elems[start[b]..end[b]]);
            touched.clear();
            for &t in &members {
                for &p in &inv[a][inv_start[a][t]..inv_start[a][t + 1]] {
                    let y = block_of[p];
                    let front = start[y] + marked[y];
                    if loc[p] >= front {
                        let other = elems[front];
                        elems.swap(loc[p], front);
                        loc[other] = loc[p];
                        loc[p] = front;
                        if marked[y] == 0 {
                            touched.push(y);
                        }
                        marked[y] += 1;
                    }
                }
            }
            for &y in &touched {
                let m = std::mem::take(&mut marked[y]);
                if m == end[y] - start[y] {
                    continue;
                }
                let z = start.len();
                start.push(start[y]);
                end.push(start[y] + m);
                start[y] += m;
                marked.push(0);
                in_work.push([false; SYMBOLS]);
                for &q in &elems[start[z]..end[z]] {
                    block_of[q] = z;
                }
                let z_smaller = end[z] - start[z] <= end[y] - start[y];
                let y_work = in_work[y];
                for (c, y_in) in y_work.into_iter().enumerate() {
                    let pick = if y_in || z_smaller { z } else { y };
                    if !in_work[pick][c] {
                        in_work[pick][c] = true;
                        work.push((pick, c));
                    }
                }
            }
        }
        // Live states never share a block with the dead state (every one reaches acceptance).
        let mut class = vec![0u32; n];
        let mut ids = vec![u32::MAX; start.len()];
        let mut count = 0usize;
        for q in 0..n {
            let b = block_of[q];
            if ids[b] == u32::MAX {
                ids[b] = count as u32;
                count += 1;
            }
            class[q] = ids[b];
        }
        // Renumber so the start state's class is 0.
        let mut order = vec![u32::MAX; count];
        let mut k = 0;
        for &c in &class {
            let c = c as usize;
            if order[c] == u32::MAX {
                order[c] = k;
                k += 1;
            }
        }
        let mut next = vec![[None; SYMBOLS]; count];
        let mut accept = vec![false; count];
        for q in 0..n {
            let c = order[class[q] as usize] as usize;
            for (s, t) in self.next[q].iter().enumerate() {
                next[c][s] = t.map(|t| order[class[t as usize] as usize]);
            }
            accept[c] = self.accept[q];
        }
        Dfa { next, accept }
    }
}

/// What [`multiples`] can end with.
pub(crate) enum Outcome {
    /// A reference to the start rule.
    Expr(Expr),
    /// No spelling at all.
    Empty,
    /// Over [`MAX_STATES`].
    TooLarge,
}

/// Spellings of the non-negative multiples described by `p`, as rules added to `builder`.
pub(crate) fn multiples(builder: &mut GrammarBuilder, p: &Multiples<'_>) -> Outcome {
    let Some(dfa) = explore(p) else {
        return Outcome::TooLarge;
    };
    let Some(dfa) = dfa.trim() else {
        return Outcome::Empty;
    };
    let dfa = dfa.minimise();
    let Ok(first) = builder.fresh("number_multiple") else {
        return Outcome::TooLarge;
    };
    let base = builder.name(first).to_owned();
    let mut ids: Vec<RuleId> = vec![first];
    for q in 1..dfa.next.len() {
        let Ok(id) = builder.declare_or_fresh(format!("{base}_{q}")) else {
            return Outcome::TooLarge;
        };
        ids.push(id);
    }
    for (q, row) in dfa.next.iter().enumerate() {
        let mut targets: Vec<(u32, ByteClass)> = Vec::new();
        for (s, t) in row.iter().enumerate() {
            let Some(t) = *t else { continue };
            let byte = if s == DOT { b'.' } else { b'0' + s as u8 };
            match targets.iter_mut().find(|(u, _)| *u == t) {
                Some((_, c)) => c.insert(byte),
                None => targets.push((t, ByteClass::byte(byte))),
            }
        }
        let mut alts: Vec<Expr> = targets
            .into_iter()
            .map(|(t, c)| {
                Expr::seq([
                    Expr::class(c).expect("not empty"),
                    Expr::rule(ids[t as usize]),
                ])
            })
            .collect();
        if dfa.accept[q] {
            alts.push(Expr::empty());
        }
        let body = Expr::choice(alts).expect("a trimmed state has a way out");
        builder.define(ids[q], body);
    }
    Outcome::Expr(Expr::rule(first))
}
