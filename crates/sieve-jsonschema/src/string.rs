//! JSON strings: literals (for `const`, `enum` and property names) and string schemas.
//!
//! Invariants: every expression built here is a whole JSON string, quotes included, in
//! RFC 8259 syntax (no raw `"`, `\` or U+0000–U+001F; escapes per [`Escapes`]; under
//! [`Escapes::Any`] a `\uD800`–`\uDBFF` escape is always followed by a `\uDC00`–`\uDFFF` one and
//! a low surrogate never stands alone). Lengths count Unicode scalar values, so a surrogate
//! pair or a multi-byte UTF-8 sequence is one character. Constraints apply to the *decoded*
//! value, so every character the constraints allow is accepted in every spelling `Escapes`
//! allows, and no other.
//!
//! # How a string schema is built
//!
//! 1. `pattern` (ECMA-262, unanchored: `[^]*` added on each side) and `format` (an anchored
//!    pattern from the `format` submodule) become NFAs over code points (`pattern` submodule),
//!    intersected by one subset construction into a minimal DFA over scalar values. Format
//!    DFAs are built once per process.
//! 2. The DFA, in product with a character counter for `minLength`/`maxLength` (the count
//!    saturating at `minLength` when there is no `maxLength`), becomes right-linear rules, one
//!    per live `(state, count)`; a state whose language is `C*` becomes `C{a,b}` inline, or,
//!    when it is entered at many counts (an unanchored pattern under `maxLength`), a chain of
//!    rules one per count that all those transitions share (`Emitter::loop_rule`).
//! 3. Each transition's code-point set is spelled by [`spell`]: raw UTF-8 (regex-syntax's
//!    `Utf8Sequences`), short escapes, and `\uXXXX` with the code-point ranges mapped to
//!    hex-digit ranges (surrogate pairs for the supplementary planes).
//!
//! Property names of `patternProperties` (`regions`): one key language per set of patterns a
//! key matches, the other patterns and the declared names complemented.
//!
//! Shortcuts: no pattern or format is `any_char{min,max}`; `hostname` alone has its own
//! per-length grammar (`format::hostname`); a pattern alone whose automaton is over the limits
//! is translated node by node, counted repetitions kept (`pattern_structurally`).
//! Sizes are bounded: pattern length ([`MAX_PATTERN_LEN`]), NFA and DFA states, product rules
//! (`Limits::max_rules`) and expression size (`Limits::fuel`); past them, an
//! [`ErrorKind::Limit`] naming the keyword.

mod format;
mod pattern;
mod regions;

pub(crate) use regions::key_regions;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::sync::{Arc, Mutex, OnceLock};

use regex_syntax::utf8::Utf8Sequences;
use sieve_ir::{ByteClass, Expr, GrammarBuilder, RuleId};

use crate::{Error, ErrorKind, Escapes, Limits};

use pattern::{Dfa, Nfa, PatternError, PatternErrorKind, Ranges};

/// The constraints of one string schema.
#[derive(Clone, Debug, Default)]
pub(crate) struct StringSpec<'a> {
    /// `minLength`, in characters.
    pub min_length: u64,
    /// `maxLength`, in characters.
    pub max_length: Option<u64>,
    /// `pattern` (ECMA-262 syntax), unanchored as JSON Schema specifies.
    pub pattern: Option<&'a str>,
    /// `format`.
    pub format: Option<&'a str>,
    /// The JSON pointer of the schema object; errors append the keyword.
    pub pointer: &'a str,
}

/// The longest `pattern` accepted, in bytes.
const MAX_PATTERN_LEN: usize = 1 << 16;

/// The most DFA states one string schema may have (before the product with a length counter).
const MAX_DFA_STATES: usize = 4_096;

/// A whole JSON string (quotes included) whose value meets `spec`, within the default
/// [`Limits`].
pub(crate) fn string_schema(
    builder: &mut GrammarBuilder,
    spec: &StringSpec<'_>,
    escapes: Escapes,
) -> Result<Expr, Error> {
    string_schema_limited(builder, spec, escapes, &Limits::default())
}

/// A whole JSON string (quotes included) whose value meets `spec`: its length in characters
/// within `minLength`..=`maxLength`, a match of `pattern` somewhere in it, and all of it in the
/// language of `format`. Helper rules are added to `builder`; their number is bounded by
/// `limits.max_rules` and their size by `limits.fuel`.
pub(crate) fn string_schema_limited(
    builder: &mut GrammarBuilder,
    spec: &StringSpec<'_>,
    escapes: Escapes,
    limits: &Limits,
) -> Result<Expr, Error> {
    let err =
        |kind, keyword: &str, message: String| Error::new(kind, spec.pointer, keyword, message);
    let min = spec.min_length;
    let mut max = spec.max_length;
    if let Some(max) = max {
        if min > max {
            return Err(err(
                ErrorKind::Unsatisfiable,
                "minLength",
                format!("minLength {min} is greater than maxLength {max}"),
            ));
        }
    }
    let bound_limit = u64::from(u32::MAX - 1);
    for (keyword, value) in [("minLength", Some(min)), ("maxLength", max)] {
        if value.is_some_and(|v| v > bound_limit) {
            return Err(err(
                ErrorKind::Limit,
                keyword,
                format!("lengths over {bound_limit} characters are not supported"),
            ));
        }
    }
    // Past this many NFA states a pattern alone is translated structurally instead.
    let state_budget = limits.fuel.clamp(1, 1 << 16);
    let mut nfas = Vec::new();
    let mut format_only = None;
    let mut pattern_node = None;
    if let Some(text) = spec.pattern {
        if text.len() > MAX_PATTERN_LEN {
            return Err(err(
                ErrorKind::Limit,
                "pattern",
                format!(
                    "the pattern is {} bytes long, over the limit of {MAX_PATTERN_LEN}",
                    text.len()
                ),
            ));
        }
        let node = pattern::parse(text).map_err(|e| pattern_error(spec.pointer, "pattern", e))?;
        let alone = spec.format.is_none() && min == 0 && max.is_none();
        match Nfa::new(&node.clone().unanchored(), state_budget) {
            Ok(nfa) => {
                nfas.push(nfa);
                pattern_node = Some(node).filter(|_| alone);
            }
            Err(e) if e.kind == PatternErrorKind::Limit && alone => {
                return pattern_structurally(builder, &node, escapes, limits, spec.pointer)
                    .unwrap_or(Err(pattern_error(spec.pointer, "pattern", e)));
            }
            Err(e) => return Err(pattern_error(spec.pointer, "pattern", e)),
        }
    }
    if let (Some("hostname"), None) = (spec.format, spec.pattern) {
        let quote = || Expr::bytes(*b"\"");
        let mut spell_rule = |builder: &mut GrammarBuilder, ranges: &[(u32, u32)]| {
            let expr = spell(ranges, escapes).expect("not empty");
            if expr.size() <= 8 {
                return Ok(expr);
            }
            let id = builder.fresh("string_chars")?;
            builder.define(id, expr);
            Ok(Expr::rule(id))
        };
        let body = format::hostname(builder, &mut spell_rule, min, max.unwrap_or(253))
            .map_err(|e| err(ErrorKind::Limit, "format", e.to_string()))?
            .ok_or_else(|| {
                err(
                    ErrorKind::Unsatisfiable,
                    "format",
                    format!("no hostname has a length in {min}..={}", max.unwrap_or(253)),
                )
            })?;
        return Ok(Expr::seq([quote(), body, quote()]));
    }
    if let Some(name) = spec.format {
        let Some((text, longest)) = format::format_pattern(name) else {
            return Err(err(
                ErrorKind::Unsupported,
                "format",
                format!("format `{name}` is not supported"),
            ));
        };
        let dfa = format_dfa(name, &text).map_err(|e| pattern_error(spec.pointer, "format", e))?;
        if nfas.is_empty() {
            format_only = Some(dfa);
        } else {
            nfas.push(dfa.to_nfa());
        }
        if let Some(longest) = longest {
            max = Some(max.map_or(longest, |m| m.min(longest)));
        }
    }
    let blame = if spec.pattern.is_some() {
        "pattern"
    } else if spec.format.is_some() {
        "format"
    } else {
        "minLength"
    };
    if max.is_some_and(|max| min > max) {
        return Err(err(
            ErrorKind::Unsatisfiable,
            blame,
            format!("no string of at least {min} characters is valid"),
        ));
    }
    let quote = || Expr::bytes(*b"\"");
    if nfas.is_empty() && format_only.is_none() {
        let body = counted(any_char(escapes), min, max);
        return Ok(Expr::seq([quote(), body, quote()]));
    }
    let dfa = match format_only {
        Some(dfa) => dfa,
        None => Arc::new(
            match Dfa::build(&nfas, MAX_DFA_STATES) {
                Err(e) if e.kind == PatternErrorKind::Limit && pattern_node.is_some() => {
                    let node = pattern_node.as_ref().expect("checked");
                    return pattern_structurally(builder, node, escapes, limits, spec.pointer)
                        .unwrap_or(Err(pattern_error(spec.pointer, blame, e)));
                }
                other => other,
            }
            .map_err(|e| pattern_error(spec.pointer, blame, e))?
            .ok_or_else(|| {
                err(
                    ErrorKind::Unsatisfiable,
                    blame,
                    match (spec.pattern, spec.format) {
                        (Some(_), Some(_)) => "no string matches both the pattern and the format",
                        (Some(_), None) => "no string matches the pattern",
                        _ => "no string matches the format",
                    }
                    .to_owned(),
                )
            })?,
        ),
    };
    let body = Emitter {
        builder,
        escapes,
        limits,
        dfa: &dfa,
        min,
        max,
        spelled: HashMap::new(),
        loop_chains: HashMap::new(),
        fuel: 0,
    }
    .emit()
    .map_err(|e| match e {
        EmitError::Empty => err(
            ErrorKind::Unsatisfiable,
            blame,
            match max {
                Some(max) => format!("no string of {min} to {max} characters matches"),
                None => format!("no string of at least {min} characters matches"),
            },
        ),
        EmitError::Limit(message) => err(ErrorKind::Limit, blame, message),
    })?;
    Ok(Expr::seq([quote(), body, quote()]))
}

/// Whether `value` matches `pattern` (ECMA-262, unanchored, as the `pattern` keyword), for
/// deciding `patternProperties` on known property names. Errors name `keyword` at `pointer`.
pub(crate) fn pattern_matches(
    pattern: &str,
    value: &str,
    pointer: &str,
    keyword: &str,
) -> Result<bool, Error> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(Error::new(
            ErrorKind::Limit,
            pointer,
            keyword,
            format!(
                "the pattern is {} bytes long, over the limit of {MAX_PATTERN_LEN}",
                pattern.len()
            ),
        ));
    }
    let node = pattern::parse(pattern).map_err(|e| pattern_error(pointer, keyword, e))?;
    let nfa =
        Nfa::new(&node.unanchored(), 1 << 18).map_err(|e| pattern_error(pointer, keyword, e))?;
    Ok(nfa.is_match(value))
}

fn limit_error(e: sieve_ir::IrError) -> EmitError {
    EmitError::Limit(e.to_string())
}

/// A pattern alone, translated node by node (the fallback when its automaton is over the
/// limits, as for `(a|b)*a.{20}` or `a{1000}{1000}`): `[^]*` on each side a top-level
/// alternative is not anchored on. `None` when an anchor stands anywhere but at the ends of a
/// top-level alternative (only the automaton handles those).
fn pattern_structurally(
    builder: &mut GrammarBuilder,
    node: &pattern::Node,
    escapes: Escapes,
    limits: &Limits,
    pointer: &str,
) -> Option<Result<Expr, Error>> {
    use pattern::Node;
    let alternatives: &[Node] = match node {
        Node::Alt(alternatives) => alternatives,
        other => std::slice::from_ref(other),
    };
    let mut pieces = Vec::new();
    for alternative in alternatives {
        let mut items: &[Node] = match alternative {
            Node::Concat(items) => items,
            other => std::slice::from_ref(other),
        };
        let mut anchored_start = false;
        while let [Node::Start, rest @ ..] = items {
            anchored_start = true;
            items = rest;
        }
        let mut anchored_end = false;
        while let [rest @ .., Node::End] = items {
            anchored_end = true;
            items = rest;
        }
        if items.iter().any(has_anchor) {
            return None;
        }
        pieces.push((anchored_start, items, anchored_end));
    }
    let mut translator = Translator {
        builder,
        escapes,
        spelled: HashMap::new(),
        size: 0,
        fuel: limits.fuel,
    };
    let result = (|| {
        let mut out = Vec::new();
        for (anchored_start, items, anchored_end) in pieces {
            let mut seq = Vec::new();
            if !anchored_start {
                seq.push(Expr::star(any_char(escapes)));
            }
            let mut empty = false;
            for item in items {
                match translator.translate(item)? {
                    Some(expr) => seq.push(expr),
                    None => empty = true,
                }
            }
            if !anchored_end {
                seq.push(Expr::star(any_char(escapes)));
            }
            if !empty {
                out.push(Expr::seq(seq));
            }
        }
        Ok(Expr::choice(out))
    })();
    Some(match result {
        Ok(Some(body)) => Ok(Expr::seq([Expr::bytes(*b"\""), body, Expr::bytes(*b"\"")])),
        Ok(None) => Err(Error::new(
            ErrorKind::Unsatisfiable,
            pointer,
            "pattern",
            "no string matches the pattern",
        )),
        Err(EmitError::Limit(message)) => {
            Err(Error::new(ErrorKind::Limit, pointer, "pattern", message))
        }
        Err(EmitError::Empty) => Err(Error::new(
            ErrorKind::Unsatisfiable,
            pointer,
            "pattern",
            "no string matches the pattern",
        )),
    })
}

fn has_anchor(node: &pattern::Node) -> bool {
    use pattern::Node;
    // Iterative: patterns nest at most NEST_LIMIT deep, but stay safe regardless.
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        match node {
            Node::Start | Node::End => return true,
            Node::Concat(items) | Node::Alt(items) => stack.extend(items),
            Node::Repeat { item, .. } => stack.push(item),
            Node::Empty | Node::Class(_) => {}
        }
    }
    false
}

/// Node-by-node translation of an anchor-free pattern (see [`pattern_structurally`]).
struct Translator<'a> {
    builder: &'a mut GrammarBuilder,
    escapes: Escapes,
    spelled: HashMap<Ranges, Expr>,
    size: usize,
    fuel: usize,
}

impl Translator<'_> {
    /// The expression of `node`; `None` for the empty language. Recursion is bounded by the
    /// parser's nest limit.
    fn translate(&mut self, node: &pattern::Node) -> Result<Option<Expr>, EmitError> {
        use pattern::Node;
        self.size += 1;
        if self.size > self.fuel {
            return Err(EmitError::Limit(format!(
                "the pattern's grammar is over the fuel limit of {}",
                self.fuel
            )));
        }
        Ok(match node {
            Node::Empty | Node::Start | Node::End => Some(Expr::empty()),
            Node::Class(ranges) => {
                if let Some(expr) = self.spelled.get(ranges) {
                    return Ok(Some(expr.clone()));
                }
                let Some(expr) = spell(ranges, self.escapes) else {
                    return Ok(None);
                };
                self.size += expr.size();
                let expr = if expr.size() > 8 {
                    let id = self.builder.fresh("string_chars").map_err(limit_error)?;
                    self.builder.define(id, expr);
                    Expr::rule(id)
                } else {
                    expr
                };
                self.spelled.insert(ranges.clone(), expr.clone());
                Some(expr)
            }
            Node::Concat(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match self.translate(item)? {
                        Some(expr) => out.push(expr),
                        None => return Ok(None),
                    }
                }
                Some(Expr::seq(out))
            }
            Node::Alt(alternatives) => {
                let mut out = Vec::with_capacity(alternatives.len());
                for alt in alternatives {
                    out.extend(self.translate(alt)?);
                }
                Expr::choice(out)
            }
            Node::Repeat { item, min, max } => match self.translate(item)? {
                Some(expr) => {
                    Some(Expr::repeat(expr, *min, *max).expect("the parser checked the bounds"))
                }
                None if *min == 0 => Some(Expr::empty()),
                None => None,
            },
        })
    }
}

/// The DFA of a format's pattern, built once per process: formats are fixed, and their
/// automata (RFC 3986, RFC 5321 with IPv6 literals) cost tens of milliseconds to build.
fn format_dfa(name: &str, text: &str) -> Result<Arc<Dfa>, PatternError> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Dfa>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(dfa) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(name) {
        return Ok(dfa.clone());
    }
    let node = pattern::parse(text)?;
    let nfa = Nfa::new(&node, 1 << 20)?;
    let dfa = Arc::new(Dfa::build(&[nfa], MAX_DFA_STATES)?.expect("every format has instances"));
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_owned(), dfa.clone());
    Ok(dfa)
}

fn pattern_error(pointer: &str, keyword: &str, e: PatternError) -> Error {
    let kind = match e.kind {
        PatternErrorKind::Invalid => ErrorKind::Invalid,
        PatternErrorKind::Unsupported => ErrorKind::Unsupported,
        PatternErrorKind::Limit => ErrorKind::Limit,
    };
    Error::new(kind, pointer, keyword, e.message)
}

/// `item{min,max}` with bounds that fit (checked by the caller).
fn counted(item: Expr, min: u64, max: Option<u64>) -> Expr {
    let min = u32::try_from(min).unwrap_or(u32::MAX - 1);
    let max = max.map(|m| u32::try_from(m).unwrap_or(u32::MAX - 1));
    Expr::repeat(item, min, max).expect("min <= max")
}

enum EmitError {
    Empty,
    Limit(String),
}

/// How far below `maxLength` a loop state's repetition is written out in place
/// ([`Emitter::loop_target`]); from further away the transitions share one chain of rules.
const LOOP_EXPANDED: u64 = 16;

/// Where a product transition goes: a product state, or a loop state `q` (accepting, its
/// only transition a self-loop on a class `C`, so its language is `C*`) having read `k`
/// characters, inlined as a counted repetition of `C`.
#[derive(Clone, Copy)]
enum Target {
    Node(usize),
    Loop(usize, u64),
}

/// Turns a DFA, in product with a character counter for `minLength`/`maxLength`, into
/// right-linear rules: one per live `(state, count)` pair, the count saturating at `min` when
/// there is no `max`.
struct Emitter<'a> {
    builder: &'a mut GrammarBuilder,
    escapes: Escapes,
    limits: &'a Limits,
    dfa: &'a Dfa,
    min: u64,
    max: Option<u64>,
    /// Spellings of character sets already built, shared through helper rules when large.
    spelled: HashMap<Ranges, Expr>,
    /// Per loop state chosen by [`Emitter::chain_loops`], the rules `N_k` of
    /// [`Emitter::loop_rule`] made so far, by count.
    loop_chains: HashMap<usize, Vec<Option<RuleId>>>,
    fuel: usize,
}

impl Emitter<'_> {
    /// Whether `q` is a loop state (see [`Target::Loop`]).
    fn is_loop(&self, q: usize) -> bool {
        let state = &self.dfa.states[q];
        state.accept && matches!(state.transitions.as_slice(), [(t, _)] if *t == q)
    }

    /// The rest of the string from loop state `q` after `k` characters: `C{min-k, max-k}`.
    fn tail(&mut self, q: usize, k: u64) -> Result<Expr, EmitError> {
        let item = if Some(q) == self.dfa.universal {
            any_char(self.escapes)
        } else {
            let class = self.dfa.states[q].transitions[0].1.clone();
            self.spell_shared(&class)?
        };
        Ok(counted(
            item,
            self.min.saturating_sub(k),
            self.max.map(|m| m - k),
        ))
    }

    /// What follows a transition into loop state `q` that makes the count `k`: `C{min-k,
    /// max-k}`. For a loop state that [`Emitter::chain_loops`] chose, and more than
    /// [`LOOP_EXPANDED`] characters below `max`, that is the rule `N_k` of
    /// [`Emitter::loop_rule`] (optional where the string may end at `k`); otherwise the
    /// counted repetition itself, which normalisation writes out.
    fn loop_target(&mut self, q: usize, k: u64) -> Result<Expr, EmitError> {
        let chained = self.loop_chains.contains_key(&q);
        let Some(max) = self.max.filter(|&max| chained && max - k > LOOP_EXPANDED) else {
            return self.tail(q, k);
        };
        let rule = Expr::rule(self.loop_rule(q, k, max)?);
        Ok(match k >= self.min {
            true => Expr::optional(rule),
            false => rule,
        })
    }

    /// Chooses the loop states whose transitions share a chain of rules: a transition's
    /// counted repetition is written out with up to [`LOOP_EXPANDED`] copies of the
    /// character, so when a loop state is entered at many counts (an unanchored pattern:
    /// every count before the first match enters it) the copies outgrow one rule per count
    /// from the lowest such count to `max`.
    fn chain_loops(&mut self, edges: &[Vec<(usize, Target)>], live: &[bool]) {
        let Some(max) = self.max else { return };
        let mut counts: HashMap<usize, (u64, usize)> = HashMap::new();
        let mut seen: HashSet<(usize, u64)> = HashSet::new();
        for (out, _) in edges.iter().zip(live).filter(|(_, &live)| live) {
            for &(_, target) in out {
                if let Target::Loop(q, k) = target {
                    if seen.insert((q, k)) {
                        let entry = counts.entry(q).or_insert((k, 0));
                        entry.0 = entry.0.min(k);
                        entry.1 += 1;
                    }
                }
            }
        }
        for (q, (lowest, distinct)) in counts {
            if (distinct as u64).saturating_mul(LOOP_EXPANDED) > max - lowest {
                self.loop_chains.insert(q, vec![None; max as usize]);
            }
        }
    }

    /// `N_k` for loop state `q`: one character of its class, then `N_{k+1}` — optional where
    /// the string may end at `k + 1`, left out at `k + 1 = max` — so `N_k` holds the strings
    /// of `r ≥ 1` characters with `min ≤ k + r ≤ max`. Made on first use with every rule it
    /// leads to.
    fn loop_rule(&mut self, q: usize, k: u64, max: u64) -> Result<RuleId, EmitError> {
        let made =
            |emitter: &Self, j: u64| emitter.loop_chains[&q].get(j as usize).copied().flatten();
        if let Some(id) = made(self, k) {
            return Ok(id);
        }
        let item = self.loop_item(q)?;
        let base = self.builder.fresh("string_loop").map_err(limit_error)?;
        let base_name = self.builder.name(base).to_owned();
        // From the top down, so each rule's successor exists when it is defined.
        for j in (k..max).rev() {
            if made(self, j).is_some() {
                continue;
            }
            let id = match j == k {
                true => base,
                false => self.named_rule(&format!("{base_name}_{j}"))?,
            };
            let body = match made(self, j + 1) {
                None => item.clone(),
                Some(next) if j + 1 >= self.min => {
                    Expr::seq([item.clone(), Expr::optional(Expr::rule(next))])
                }
                Some(next) => Expr::seq([item.clone(), Expr::rule(next)]),
            };
            self.charge(body.size())?;
            self.builder.define(id, body);
            self.loop_chains.get_mut(&q).expect("a chained loop state")[j as usize] = Some(id);
        }
        Ok(base)
    }

    /// A new rule named `name`, or a fresh name from it when a rule has that one.
    fn named_rule(&mut self, name: &str) -> Result<RuleId, EmitError> {
        self.builder
            .declare_or_fresh(name.to_owned())
            .map_err(limit_error)
    }

    /// One character of loop state `q`'s class.
    fn loop_item(&mut self, q: usize) -> Result<Expr, EmitError> {
        if Some(q) == self.dfa.universal {
            return Ok(any_char(self.escapes));
        }
        let class = self.dfa.states[q].transitions[0].1.clone();
        self.spell_shared(&class)
    }

    fn next_count(&self, k: u64) -> Option<u64> {
        match self.max {
            Some(max) => (k < max).then_some(k + 1),
            None => Some((k + 1).min(self.min)),
        }
    }

    fn emit(mut self) -> Result<Expr, EmitError> {
        let dfa = self.dfa;
        if self.is_loop(dfa.start) {
            return self.tail(dfa.start, 0);
        }
        let max_nodes = self
            .limits
            .max_rules
            .saturating_sub(self.builder.len())
            .max(1);
        let mut index: HashMap<(usize, u64), usize> = HashMap::new();
        let mut nodes: Vec<(usize, u64)> = vec![(dfa.start, 0)];
        index.insert((dfa.start, 0), 0);
        let mut edges: Vec<Vec<(usize, Target)>> = Vec::new();
        let mut i = 0;
        while i < nodes.len() {
            let (q, k) = nodes[i];
            let mut out = Vec::new();
            if let Some(k2) = self.next_count(k) {
                for (t_index, &(t, _)) in dfa.states[q].transitions.iter().enumerate() {
                    if self.is_loop(t) {
                        out.push((t_index, Target::Loop(t, k2)));
                        continue;
                    }
                    let id = match index.get(&(t, k2)) {
                        Some(&id) => id,
                        None => {
                            if nodes.len() >= max_nodes {
                                return Err(EmitError::Limit(format!(
                                    "the string's automaton times its length bounds is over \
                                     the limit of {max_nodes} rules"
                                )));
                            }
                            index.insert((t, k2), nodes.len());
                            nodes.push((t, k2));
                            nodes.len() - 1
                        }
                    };
                    out.push((t_index, Target::Node(id)));
                }
            }
            edges.push(out);
            i += 1;
        }
        // Live nodes: some accepted continuation fits the length bounds.
        let min = self.min;
        let accepts = |(q, k): (usize, u64)| dfa.states[q].accept && k >= min;
        let mut live: Vec<bool> = nodes
            .iter()
            .zip(&edges)
            .map(|(&node, out)| {
                accepts(node) || out.iter().any(|(_, t)| matches!(t, Target::Loop(..)))
            })
            .collect();
        let mut reverse: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (from, out) in edges.iter().enumerate() {
            for &(_, t) in out {
                if let Target::Node(to) = t {
                    reverse[to].push(from);
                }
            }
        }
        let mut stack: Vec<usize> = (0..nodes.len()).filter(|&n| live[n]).collect();
        while let Some(n) = stack.pop() {
            for &p in &reverse[n] {
                if !live[p] {
                    live[p] = true;
                    stack.push(p);
                }
            }
        }
        if !live[0] {
            return Err(EmitError::Empty);
        }
        self.chain_loops(&edges, &live);
        // One fresh base name, then `{base}_s{n}`: `fresh` never makes such a name, and
        // probing `fresh` per rule would be quadratic.
        let base = self.builder.fresh("string_dfa").map_err(limit_error)?;
        let base_name = self.builder.name(base).to_owned();
        let mut rules = vec![None; nodes.len()];
        rules[0] = Some(base);
        for n in 1..nodes.len() {
            if live[n] {
                rules[n] = Some(self.named_rule(&format!("{base_name}_s{n}"))?);
            }
        }
        for n in 0..nodes.len() {
            let Some(id) = rules[n] else { continue };
            let (q, _) = nodes[n];
            let mut alternatives = Vec::new();
            if accepts(nodes[n]) {
                alternatives.push(Expr::empty());
            }
            for &(t_index, target) in &edges[n] {
                let rest = match target {
                    Target::Node(to) => match rules[to] {
                        Some(rule) => Expr::rule(rule),
                        None => continue,
                    },
                    Target::Loop(t, k) => self.loop_target(t, k)?,
                };
                let chars = self.spell_shared(&dfa.states[q].transitions[t_index].1)?;
                alternatives.push(Expr::seq([chars, rest]));
            }
            let body = Expr::choice(alternatives).expect("a live node has an alternative");
            self.charge(body.size())?;
            self.builder.define(id, body);
        }
        Ok(Expr::rule(rules[0].expect("the start node is live")))
    }

    fn charge(&mut self, size: usize) -> Result<(), EmitError> {
        self.fuel += size;
        if self.fuel > self.limits.fuel {
            return Err(EmitError::Limit(format!(
                "the string's grammar is over the fuel limit of {}",
                self.limits.fuel
            )));
        }
        Ok(())
    }

    /// The spellings of `ranges`, through a helper rule when they are large.
    fn spell_shared(&mut self, ranges: &Ranges) -> Result<Expr, EmitError> {
        if let Some(expr) = self.spelled.get(ranges) {
            return Ok(expr.clone());
        }
        let expr = spell(ranges, self.escapes).expect("DFA transitions are never empty");
        let expr = if expr.size() > 8 {
            self.charge(expr.size())?;
            let id = self.named_rule(&format!("string_chars_{}", self.spelled.len()))?;
            self.builder.define(id, expr);
            Expr::rule(id)
        } else {
            expr
        };
        self.spelled.insert(ranges.clone(), expr.clone());
        Ok(expr)
    }
}

/// The characters that may appear raw in a JSON string.
fn raw_chars() -> Ranges {
    pattern::normalize(vec![(0x20, 0x21), (0x23, 0x5b), (0x5d, 0x10ffff)])
}

/// The most sets [`spell_except`] keeps per process; past it the memo starts afresh (a
/// schema rarely has more than a few dozen distinct sets).
const SPELL_EXCEPT_MEMO: usize = 4096;

/// Every spelling under `escapes` of one character other than `used` (sorted, no
/// duplicates); `None` when nothing is left.
///
/// Memoised per process: every object that admits undeclared keys excludes, node by node of
/// the trie of its declared names, sets such as `{'a'}` or `{'n', 's'}` that recur across
/// objects and schemas, and building one costs tens of thousands of instructions (a clone
/// costs a few hundred).
pub(crate) fn spell_except(used: &[char], escapes: Escapes) -> Option<Expr> {
    type Memo = HashMap<(Vec<char>, Escapes), Option<Expr>>;
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    let memo = MEMO.get_or_init(Mutex::default);
    let key = (used.to_vec(), escapes);
    if let Some(expr) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return expr.clone();
    }
    let expr = build_spell_except(used, escapes);
    let mut memo = memo.lock().unwrap_or_else(|e| e.into_inner());
    if memo.len() >= SPELL_EXCEPT_MEMO {
        memo.clear();
    }
    memo.insert(key, expr.clone());
    expr
}

/// Every spelling under `escapes` of the one character `c` ([`spell`] of `c` alone). ASCII
/// characters' are built once per process, each when first asked for, as property names are
/// mostly made of them.
pub(crate) fn spell_char(c: char, escapes: Escapes) -> Expr {
    static ASCII: [[OnceLock<Expr>; 128]; 2] = [const { [const { OnceLock::new() }; 128] }; 2];
    let build = || spell(&[(c as u32, c as u32)], escapes).expect("one character");
    match u8::try_from(c) {
        Ok(byte) if byte.is_ascii() => {
            let mode = usize::from(escapes == Escapes::Canonical);
            ASCII[mode][usize::from(byte)].get_or_init(build).clone()
        }
        _ => build(),
    }
}

/// [`spell_except`], built.
fn build_spell_except(used: &[char], escapes: Escapes) -> Option<Expr> {
    let used = pattern::normalize(used.iter().map(|&c| (c as u32, c as u32)).collect());
    let scalars = [(0, 0xd7ff), (0xe000, 0x10ffff)];
    spell(
        &pattern::intersect(&pattern::complement(&used), &scalars),
        escapes,
    )
}

/// Every spelling under `escapes` of one character out of `ranges` (normalised, scalar
/// values only); `None` when `ranges` is empty.
pub(crate) fn spell(ranges: &[(u32, u32)], escapes: Escapes) -> Option<Expr> {
    let mut alternatives = Vec::new();
    // Raw: UTF-8 sequences; all one-byte ones merged into one class.
    let mut ascii = ByteClass::default();
    for (lo, hi) in pattern::intersect(ranges, &raw_chars()) {
        let (lo, hi) = (
            char::from_u32(lo).expect("scalar"),
            char::from_u32(hi).expect("scalar"),
        );
        for seq in Utf8Sequences::new(lo, hi) {
            let bytes = seq.as_slice();
            if bytes.len() == 1 {
                ascii.add_range(bytes[0].start, bytes[0].end);
            } else {
                alternatives.push(Expr::seq(bytes.iter().map(|r| {
                    Expr::class(ByteClass::range(r.start, r.end)).expect("not empty")
                })));
            }
        }
    }
    let contains = |c: u32| ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
    let mut shorts: Vec<(u32, u8)> = vec![
        (0x22, b'"'),
        (0x5c, b'\\'),
        (0x08, b'b'),
        (0x0c, b'f'),
        (0x0a, b'n'),
        (0x0d, b'r'),
        (0x09, b't'),
    ];
    if escapes == Escapes::Any {
        shorts.push((0x2f, b'/'));
    }
    let mut short_class = ByteClass::default();
    for (c, letter) in shorts {
        if contains(c) {
            short_class.insert(letter);
        }
    }
    if let Some(class) = Expr::class(short_class) {
        alternatives.push(Expr::seq([Expr::bytes(*b"\\"), class]));
    }
    match escapes {
        Escapes::Canonical => {
            let controls = pattern::normalize(vec![(0, 7), (0x0b, 0x0b), (0x0e, 0x1f)]);
            for (lo, hi) in pattern::intersect(ranges, &controls) {
                for digits in hex_seqs(lo, hi, 4) {
                    alternatives.push(u_escape(&digits, false));
                }
            }
        }
        Escapes::Any => {
            for (lo, hi) in pattern::intersect(ranges, &[(0, 0xffff)]) {
                for digits in hex_seqs(lo, hi, 4) {
                    alternatives.push(u_escape(&digits, true));
                }
            }
            for (lo, hi) in pattern::intersect(ranges, &[(0x10000, 0x10ffff)]) {
                for (high, low) in surrogate_pieces(lo, hi) {
                    let high: Vec<Expr> = hex_seqs(0xd800 + high.0, 0xd800 + high.1, 4)
                        .iter()
                        .map(|d| u_escape(d, true))
                        .collect();
                    let low: Vec<Expr> = hex_seqs(0xdc00 + low.0, 0xdc00 + low.1, 4)
                        .iter()
                        .map(|d| u_escape(d, true))
                        .collect();
                    alternatives.push(Expr::seq([
                        Expr::choice(high).expect("not empty"),
                        Expr::choice(low).expect("not empty"),
                    ]));
                }
            }
        }
    }
    if let Some(class) = Expr::class(ascii) {
        alternatives.insert(0, class);
    }
    Expr::choice(alternatives)
}

/// `\u` followed by four hex digits in the given value ranges.
fn u_escape(digits: &[(u8, u8)], both_cases: bool) -> Expr {
    let mut items = vec![Expr::bytes(*b"\\u")];
    for &(lo, hi) in digits {
        let mut class = ByteClass::default();
        for v in lo..=hi {
            let lower = b"0123456789abcdef"[v as usize];
            class.insert(lower);
            if both_cases {
                class.insert(lower.to_ascii_uppercase());
            }
        }
        items.push(Expr::class(class).expect("not empty"));
    }
    Expr::seq(items)
}

/// `lo..=hi` (below `16^width`) as sequences of `width` hex-digit value ranges.
fn hex_seqs(lo: u32, hi: u32, width: u32) -> Vec<Vec<(u8, u8)>> {
    if width == 1 {
        return vec![vec![(lo as u8, hi as u8)]];
    }
    let base = 16u32.pow(width - 1);
    let (lh, ll, hh, hl) = (lo / base, lo % base, hi / base, hi % base);
    let prefixed = |digit: u32, rest: Vec<Vec<(u8, u8)>>| {
        rest.into_iter().map(move |mut r| {
            r.insert(0, (digit as u8, digit as u8));
            r
        })
    };
    if lh == hh {
        return prefixed(lh, hex_seqs(ll, hl, width - 1)).collect();
    }
    let mut out = Vec::new();
    let (mut first, mut last) = (lh, hh);
    if ll != 0 {
        out.extend(prefixed(lh, hex_seqs(ll, base - 1, width - 1)));
        first += 1;
    }
    let mut tail = Vec::new();
    if hl != base - 1 {
        tail.extend(prefixed(hh, hex_seqs(0, hl, width - 1)));
        last -= 1;
    }
    if first <= last {
        let mut full = vec![(first as u8, last as u8)];
        full.extend(std::iter::repeat_n((0u8, 15u8), width as usize - 1));
        out.push(full);
    }
    out.extend(tail);
    out
}

/// `lo..=hi` (supplementary planes) as pieces `(high range, low range)` of surrogate offsets
/// (`0..=0x3ff` each): every pair in a piece's product, and no other, encodes a character of
/// the range.
fn surrogate_pieces(lo: u32, hi: u32) -> Vec<((u32, u32), (u32, u32))> {
    let (vl, vh) = (lo - 0x10000, hi - 0x10000);
    let (hl, ll, hh, lh) = (vl >> 10, vl & 0x3ff, vh >> 10, vh & 0x3ff);
    if hl == hh {
        return vec![((hl, hl), (ll, lh))];
    }
    let mut out = Vec::new();
    let (mut first, mut last) = (hl, hh);
    if ll != 0 {
        out.push(((hl, hl), (ll, 0x3ff)));
        first += 1;
    }
    let mut tail = None;
    if lh != 0x3ff {
        tail = Some(((hh, hh), (0, lh)));
        last -= 1;
    }
    if first <= last {
        out.push(((first, last), (0, 0x3ff)));
    }
    out.extend(tail);
    out
}

/// Every spelling, under `escapes`, of the JSON string whose value is `value` (quotes
/// included).
pub(crate) fn string_literal(value: &str, escapes: Escapes) -> Expr {
    match escapes {
        // One spelling: the whole literal is one byte string, so the passes and the automata
        // read one node instead of one per character.
        Escapes::Canonical => {
            let mut text = Vec::with_capacity(value.len() + 2);
            text.push(b'"');
            for c in value.chars() {
                push_canonical(c, &mut text);
            }
            text.push(b'"');
            Expr::bytes(text)
        }
        Escapes::Any => {
            let mut items = Vec::with_capacity(value.chars().count() + 2);
            items.push(Expr::bytes(*b"\""));
            items.extend(value.chars().map(spellings));
            items.push(Expr::bytes(*b"\""));
            Expr::seq(items)
        }
    }
}

/// The one spelling of `c` under [`Escapes::Canonical`].
pub(crate) fn canonical(c: char) -> Vec<u8> {
    let mut text = Vec::with_capacity(6);
    push_canonical(c, &mut text);
    text
}

/// Appends the one spelling of `c` under [`Escapes::Canonical`] to `out`.
fn push_canonical(c: char, out: &mut Vec<u8>) {
    let short = match c {
        '"' => b'"',
        '\\' => b'\\',
        '\u{8}' => b'b',
        '\u{c}' => b'f',
        '\n' => b'n',
        '\r' => b'r',
        '\t' => b't',
        c if (c as u32) < 0x20 => {
            out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            return;
        }
        c => {
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

/// Every spelling of `c` under [`Escapes::Any`]: raw (when allowed), its short escape, `\/`
/// for `/`, and `\uXXXX` (a surrogate pair outside the BMP) with hex digits in either case.
/// ASCII characters' spellings are built once per process and cloned (property names are
/// mostly ASCII, and a tool list spells hundreds of them).
fn spellings(c: char) -> Expr {
    static ASCII: std::sync::OnceLock<Vec<Expr>> = std::sync::OnceLock::new();
    match u8::try_from(c) {
        Ok(byte) if byte.is_ascii() => ASCII.get_or_init(|| {
            (0..=127u8)
                .map(|b| build_spellings(char::from(b)))
                .collect()
        })[usize::from(byte)]
        .clone(),
        _ => build_spellings(c),
    }
}

/// [`spellings`], built.
fn build_spellings(c: char) -> Expr {
    let mut alternatives = Vec::new();
    let short = canonical(c);
    if short.first() != Some(&b'\\') || short.get(1) != Some(&b'u') {
        alternatives.push(Expr::bytes(short));
    }
    if c == '/' {
        alternatives.push(Expr::bytes(*b"\\/"));
    }
    let mut units = [0u16; 2];
    let mut escape = Vec::new();
    for unit in c.encode_utf16(&mut units).iter() {
        escape.push(Expr::bytes(*b"\\u"));
        for shift in [12, 8, 4, 0] {
            let digit = (unit >> shift) & 0xf;
            escape.push(hex_digit_any_case(digit as u8));
        }
    }
    alternatives.push(Expr::seq(escape));
    Expr::choice(alternatives).expect("at least the \\u spelling")
}

/// The hex digit `value` (0–15), in either case.
fn hex_digit_any_case(value: u8) -> Expr {
    let lower = b"0123456789abcdef"[value as usize];
    let mut class = ByteClass::byte(lower);
    class.insert(lower.to_ascii_uppercase());
    Expr::class(class).expect("not empty")
}

/// One character of string content, any spelling allowed by `escapes`: built once per
/// process (some forty nodes, asked for by every string), then copied.
pub(crate) fn any_char(escapes: Escapes) -> Expr {
    static BUILT: [std::sync::OnceLock<Expr>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    let slot = match escapes {
        Escapes::Any => &BUILT[0],
        Escapes::Canonical => &BUILT[1],
    };
    slot.get_or_init(|| build_any_char(escapes)).clone()
}

/// [`any_char`] written out.
fn build_any_char(escapes: Escapes) -> Expr {
    let c = |ranges: &[(u8, u8)]| {
        Expr::class(ByteClass::from_ranges(ranges.iter().copied())).expect("not empty")
    };
    let cont = || c(&[(0x80, 0xbf)]);
    let raw = [
        c(&[(0x20, 0x21), (0x23, 0x5b), (0x5d, 0x7f)]),
        Expr::seq([c(&[(0xc2, 0xdf)]), cont()]),
        Expr::seq([c(&[(0xe0, 0xe0)]), c(&[(0xa0, 0xbf)]), cont()]),
        Expr::seq([c(&[(0xe1, 0xec), (0xee, 0xef)]), cont(), cont()]),
        Expr::seq([c(&[(0xed, 0xed)]), c(&[(0x80, 0x9f)]), cont()]),
        Expr::seq([c(&[(0xf0, 0xf0)]), c(&[(0x90, 0xbf)]), cont(), cont()]),
        Expr::seq([c(&[(0xf1, 0xf3)]), cont(), cont(), cont()]),
        Expr::seq([c(&[(0xf4, 0xf4)]), c(&[(0x80, 0x8f)]), cont(), cont()]),
    ];
    let hex = || c(&[(b'0', b'9'), (b'a', b'f'), (b'A', b'F')]);
    let escapes_expr = match escapes {
        Escapes::Canonical => Expr::choice([
            Expr::seq([Expr::bytes(*b"\\"), c(&[(b'"', b'"'), (b'\\', b'\\')])]),
            Expr::seq([
                Expr::bytes(*b"\\"),
                c(&[
                    (b'b', b'b'),
                    (b'f', b'f'),
                    (b'n', b'n'),
                    (b'r', b'r'),
                    (b't', b't'),
                ]),
            ]),
            // The other control characters: \u0000–\u001f less the five with short forms.
            Expr::seq([
                Expr::bytes(*b"\\u00"),
                Expr::choice([
                    Expr::seq([
                        Expr::bytes(*b"0"),
                        c(&[(b'0', b'7'), (b'b', b'b'), (b'e', b'f')]),
                    ]),
                    Expr::seq([Expr::bytes(*b"1"), c(&[(b'0', b'9'), (b'a', b'f')])]),
                ])
                .expect("two alternatives"),
            ]),
        ])
        .expect("three alternatives"),
        Escapes::Any => {
            let u = |first: Expr, second: Expr| {
                Expr::seq([Expr::bytes(*b"\\u"), first, second, hex(), hex()])
            };
            let d = || c(&[(b'd', b'd'), (b'D', b'D')]);
            let not_surrogate = Expr::choice([
                Expr::seq([
                    Expr::bytes(*b"\\u"),
                    c(&[
                        (b'0', b'9'),
                        (b'a', b'c'),
                        (b'A', b'C'),
                        (b'e', b'f'),
                        (b'E', b'F'),
                    ]),
                    hex(),
                    hex(),
                    hex(),
                ]),
                u(d(), c(&[(b'0', b'7')])),
            ])
            .expect("two alternatives");
            let high = u(d(), c(&[(b'8', b'9'), (b'a', b'b'), (b'A', b'B')]));
            let low = u(d(), c(&[(b'c', b'f'), (b'C', b'F')]));
            Expr::choice([
                Expr::seq([
                    Expr::bytes(*b"\\"),
                    c(&[
                        (b'"', b'"'),
                        (b'\\', b'\\'),
                        (b'/', b'/'),
                        (b'b', b'b'),
                        (b'f', b'f'),
                        (b'n', b'n'),
                        (b'r', b'r'),
                        (b't', b't'),
                    ]),
                ]),
                not_surrogate,
                Expr::seq([high, low]),
            ])
            .expect("three alternatives")
        }
    };
    Expr::choice(raw.into_iter().chain([escapes_expr])).expect("alternatives")
}

#[cfg(test)]
mod tests {
    use sieve_ir::reference::Recognizer;

    use super::*;

    /// A tiny seeded generator: tests are reproducible and need no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    fn recognizer(expr: impl FnOnce(&mut GrammarBuilder) -> Result<Expr, Error>) -> Recognizer {
        let mut builder = GrammarBuilder::new();
        let root = builder.declare("root").unwrap();
        let body = expr(&mut builder).unwrap();
        builder.define(root, body);
        Recognizer::new(&builder.build(root).unwrap()).unwrap()
    }

    fn schema(spec: &StringSpec<'_>, escapes: Escapes) -> Recognizer {
        recognizer(|b| string_schema(b, spec, escapes))
    }

    /// A random spelling of `value` under [`Escapes::Any`].
    fn any_spelling(value: &str, rng: &mut Rng) -> String {
        let mut out = String::from("\"");
        for c in value.chars() {
            let canonical = serde_json::to_string(&c.to_string()).unwrap();
            let canonical = &canonical[1..canonical.len() - 1];
            match rng.below(4) {
                0 | 1 => out.push_str(canonical),
                2 if c == '/' => out.push_str("\\/"),
                _ => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units).iter() {
                        let hex = format!("{unit:04x}");
                        let hex: String = hex
                            .chars()
                            .map(|h| {
                                if rng.below(2) == 0 {
                                    h.to_ascii_uppercase()
                                } else {
                                    h
                                }
                            })
                            .collect();
                        out.push_str("\\u");
                        out.push_str(&hex);
                    }
                }
            }
        }
        out.push('"');
        out
    }

    const ALPHABET: &[char] = &[
        'a',
        'b',
        'z',
        'A',
        '0',
        '5',
        '9',
        '-',
        '_',
        '.',
        ' ',
        '"',
        '\\',
        '/',
        '\n',
        '\t',
        '\u{1}',
        '\u{7f}',
        '\u{e9}',
        '\u{a0}',
        '\u{2028}',
        '\u{661}',
        '\u{ffff}',
        '\u{1f600}',
        '\u{10ffff}',
        '@',
        ':',
        'T',
        'Z',
    ];

    fn random_string(rng: &mut Rng, max_len: usize, alphabet: &[char]) -> String {
        let len = rng.below(max_len + 1);
        (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect()
    }

    /// Checks `pattern` (with length bounds) against `oracle` (a `regex` crate pattern meaning
    /// the same on decoded strings): random strings in both spellings, and sentences sampled
    /// from the grammar decoded by serde_json.
    fn check_pattern(pattern: &str, oracle: &str, min: u64, max: Option<u64>, alphabet: &[char]) {
        let oracle = regex::Regex::new(oracle).unwrap();
        let valid = |s: &str| {
            let n = s.chars().count() as u64;
            oracle.is_match(s) && n >= min && max.is_none_or(|m| n <= m)
        };
        let spec = StringSpec {
            min_length: min,
            max_length: max,
            pattern: Some(pattern),
            ..StringSpec::default()
        };
        let any = schema(&spec, Escapes::Any);
        let canonical = schema(&spec, Escapes::Canonical);
        let mut rng = Rng(pattern.len() as u64);
        for _ in 0..300 {
            let s = random_string(&mut rng, 8, alphabet);
            let json = serde_json::to_string(&s).unwrap();
            let expected = valid(&s);
            assert_eq!(
                any.accepts(json.as_bytes()),
                expected,
                "{pattern} on {json}"
            );
            assert_eq!(
                canonical.accepts(json.as_bytes()),
                expected,
                "{pattern} on {json}"
            );
            let spelled = any_spelling(&s, &mut rng);
            assert_eq!(
                any.accepts(spelled.as_bytes()),
                expected,
                "{pattern} on {spelled}"
            );
        }
        for (recognizer, escapes) in [(&any, Escapes::Any), (&canonical, Escapes::Canonical)] {
            for seed in 0..100 {
                let sample = recognizer.sample(seed, 40).unwrap();
                let text = String::from_utf8(sample).unwrap();
                let value: String = serde_json::from_str(&text).unwrap();
                assert!(valid(&value), "{pattern}: sampled {text}");
                if escapes == Escapes::Canonical {
                    assert_eq!(text, serde_json::to_string(&value).unwrap());
                }
            }
        }
    }

    #[test]
    fn lengths_count_characters() {
        let spec = StringSpec {
            min_length: 2,
            max_length: Some(3),
            ..StringSpec::default()
        };
        let r = schema(&spec, Escapes::Any);
        assert!(r.accepts(br#""ab""#));
        assert!(r.accepts("\"\u{e9}\u{1f600}\"".as_bytes()));
        assert!(r.accepts(br#""\ud83d\ude00\u00E9\n""#));
        assert!(!r.accepts(br#""\ud83d\ude00""#));
        assert!(!r.accepts(br#""abcd""#));
        assert!(!r.accepts(br#""\ud83d""#));
        let r = schema(&spec, Escapes::Canonical);
        assert!(r.accepts(br#""\n\u0001""#));
        assert!(!r.accepts(br#""\u00e9a""#));
        assert!(!r.accepts(br#""\u0001\u001F""#));
        let err = string_schema(
            &mut GrammarBuilder::new(),
            &StringSpec {
                min_length: 3,
                max_length: Some(2),
                ..StringSpec::default()
            },
            Escapes::Any,
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unsatisfiable);
    }

    #[test]
    fn patterns_match_the_regex_crate() {
        let alphabet = ALPHABET;
        check_pattern("a", "a", 0, None, alphabet);
        check_pattern("^a", "^a", 0, None, alphabet);
        check_pattern("^[a-z0-9]+$", "^[a-z0-9]+$", 0, None, alphabet);
        check_pattern("^[a-z0-9]+$", "^[a-z0-9]+$", 2, Some(4), alphabet);
        check_pattern("b|^A", "b|^A", 0, Some(5), alphabet);
        check_pattern("[^a]$", "[^a]$", 1, None, alphabet);
        check_pattern(
            "a.b",
            "a[^\n\r\u{2028}\u{2029}]b",
            0,
            None,
            &['a', 'b', '\n', 'x'],
        );
        check_pattern("(ab)*$", "(ab)*$", 3, Some(6), &['a', 'b']);
        check_pattern(
            "^(a|b){2,3}c?$",
            "^(a|b){2,3}c?$",
            0,
            None,
            &['a', 'b', 'c'],
        );
        check_pattern("\\d\\w", "[0-9][0-9A-Za-z_]", 0, None, alphabet);
        check_pattern(
            "^\\s\\S$",
            "^[\t\n\x0b\x0c\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}][^\t\n\x0b\x0c\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]$",
            0,
            None,
            alphabet,
        );
        check_pattern(
            "[\\u00e0-\\u{1F600}\"\\\\/]",
            "[\u{e0}-\u{1f600}\"\\\\/]",
            0,
            None,
            alphabet,
        );
        check_pattern("", "", 0, Some(3), alphabet);
        check_pattern("", "", 5, None, alphabet);
    }

    #[test]
    fn unsatisfiable_and_refused() {
        let err = |pattern: &str, min, max| {
            string_schema(
                &mut GrammarBuilder::new(),
                &StringSpec {
                    pattern: Some(pattern),
                    min_length: min,
                    max_length: max,
                    pointer: "/p",
                    ..StringSpec::default()
                },
                Escapes::Any,
            )
            .unwrap_err()
        };
        assert_eq!(err("^a$", 2, None).kind, ErrorKind::Unsatisfiable);
        assert_eq!(err("a^", 0, None).kind, ErrorKind::Unsatisfiable);
        let e = err("(?=x)", 0, None);
        assert_eq!(
            (e.kind, e.pointer.as_str()),
            (ErrorKind::Unsupported, "/p/pattern")
        );
        assert_eq!(err("[", 0, None).kind, ErrorKind::Invalid);
        assert_eq!(err("(a|b)*a.{12}(x|^)", 0, None).kind, ErrorKind::Limit);
        assert_eq!(err("(a|b)*a.{12}$", 1, None).kind, ErrorKind::Limit);
    }

    #[test]
    fn loops_become_counted_repetitions() {
        let mut builder = GrammarBuilder::new();
        let spec = StringSpec {
            pattern: Some("^[a-z_]+$"),
            max_length: Some(1000),
            ..StringSpec::default()
        };
        string_schema(&mut builder, &spec, Escapes::Any).unwrap();
        assert!(builder.len() <= 3, "{} rules", builder.len());
        check_pattern("^[a-c]*$", "^[a-c]*$", 2, Some(5), &['a', 'b', 'c', 'd']);
        check_pattern("^x[a-c]+$", "^x[a-c]+$", 3, None, &['a', 'b', 'x', 'd']);
    }

    /// An unanchored pattern enters its loop state at every count before the first match:
    /// those transitions share one chain of rules (`string_loop`), whose strings are the
    /// length bounds' exactly — checked on strings around `minLength` and `maxLength`, in
    /// every spelling.
    #[test]
    fn loops_entered_at_many_counts_share_a_chain() {
        let spec = StringSpec {
            pattern: Some("[0-9]"),
            min_length: 25,
            max_length: Some(45),
            ..StringSpec::default()
        };
        let mut builder = GrammarBuilder::new();
        string_schema(&mut builder, &spec, Escapes::Any).unwrap();
        let chained = (0..builder.len())
            .filter(|&i| {
                builder
                    .name(RuleId::new(i).unwrap())
                    .starts_with("string_loop")
            })
            .count();
        assert!(chained > 20, "{chained} chain rules");
        let valid = |s: &str| {
            let n = s.chars().count();
            (25..=45).contains(&n) && s.chars().any(|c| c.is_ascii_digit())
        };
        let any = schema(&spec, Escapes::Any);
        let canonical = schema(&spec, Escapes::Canonical);
        for (len, accepted) in [(24, false), (25, true), (45, true), (46, false)] {
            let at_end = format!("\"{}7\"", "a".repeat(len - 1));
            let at_start = format!("\"7{}\"", "a".repeat(len - 1));
            for text in [at_end, at_start] {
                assert_eq!(canonical.accepts(text.as_bytes()), accepted, "{text}");
            }
        }
        let mut rng = Rng(45);
        for _ in 0..200 {
            let len = rng.below(51);
            let digits = rng.below(3);
            let s: String = (0..len)
                .map(|_| match rng.below(20) {
                    0 if digits > 0 => '7',
                    1 => '\u{e9}',
                    _ => 'a',
                })
                .collect();
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(any.accepts(json.as_bytes()), valid(&s), "{json}");
            assert_eq!(canonical.accepts(json.as_bytes()), valid(&s), "{json}");
            let spelled = any_spelling(&s, &mut rng);
            assert_eq!(any.accepts(spelled.as_bytes()), valid(&s), "{spelled}");
        }
    }

    #[test]
    fn large_automata_fall_back_to_the_pattern_structure() {
        check_pattern("(a|b)*a.{12}$", "(a|b)*a.{12}$", 0, None, &['a', 'b', 'c']);
        check_pattern(
            "^(a|b)*a.{12}|^c$",
            "^(a|b)*a.{12}|^c$",
            0,
            None,
            &['a', 'b', 'c'],
        );
        let spec = StringSpec {
            pattern: Some("^(((a{100}){100}){100})$"),
            ..StringSpec::default()
        };
        assert!(string_schema(&mut GrammarBuilder::new(), &spec, Escapes::Any).is_ok());
    }

    #[test]
    fn spellings_of_every_kind_of_character() {
        let mut rng = Rng(7);
        for c in ALPHABET
            .iter()
            .copied()
            .chain(['\u{d7ff}', '\u{e000}', '\u{10000}'])
        {
            let ranges = pattern::normalize(vec![(c as u32, c as u32)]);
            let r = recognizer(|_| Ok(spell(&ranges, Escapes::Any).unwrap()));
            let canonical = recognizer(|_| Ok(spell(&ranges, Escapes::Canonical).unwrap()));
            let json = serde_json::to_string(&c.to_string()).unwrap();
            let inner = &json[1..json.len() - 1];
            assert!(r.accepts(inner.as_bytes()), "{json}");
            assert!(canonical.accepts(inner.as_bytes()), "{json}");
            for _ in 0..8 {
                let spelled = any_spelling(&c.to_string(), &mut rng);
                let inner = &spelled[1..spelled.len() - 1];
                assert!(r.accepts(inner.as_bytes()), "{spelled}");
                let lit = recognizer(|_| Ok(string_literal(&c.to_string(), Escapes::Any)));
                assert!(lit.accepts(spelled.as_bytes()), "{spelled}");
            }
            for seed in 0..30 {
                let sample = String::from_utf8(r.sample(seed, 10).unwrap()).unwrap();
                let value: String = serde_json::from_str(&format!("\"{sample}\"")).unwrap();
                assert_eq!(value, c.to_string(), "{sample}");
            }
        }
    }

    #[test]
    fn hex_ranges_are_exact() {
        let mut rng = Rng(3);
        for _ in 0..200 {
            let a = rng.below(0x10000) as u32;
            let b = rng.below(0x10000) as u32;
            let (lo, hi) = (a.min(b), a.max(b));
            let seqs = hex_seqs(lo, hi, 4);
            let covered = |v: u32| {
                seqs.iter().any(|s| {
                    s.iter()
                        .enumerate()
                        .all(|(i, &(l, h))| (l..=h).contains(&(((v >> (12 - 4 * i)) & 0xf) as u8)))
                })
            };
            for v in [lo, hi, lo.saturating_sub(1), hi + 1, (lo + hi) / 2] {
                assert_eq!(
                    covered(v),
                    (lo..=hi).contains(&v),
                    "{lo:x}..{hi:x} at {v:x}"
                );
            }
            let a = 0x10000 + rng.below(0x100000) as u32;
            let b = 0x10000 + rng.below(0x100000) as u32;
            let (lo, hi) = (a.min(b), a.max(b));
            let pieces = surrogate_pieces(lo, hi);
            let covered = |v: u32| {
                let (h, l) = ((v - 0x10000) >> 10, (v - 0x10000) & 0x3ff);
                pieces
                    .iter()
                    .any(|&((h1, h2), (l1, l2))| (h1..=h2).contains(&h) && (l1..=l2).contains(&l))
            };
            for v in [
                lo,
                hi,
                lo.max(0x10001) - 1,
                hi.min(0x10fffe) + 1,
                (lo + hi) / 2,
            ] {
                assert_eq!(
                    covered(v),
                    (lo..=hi).contains(&v),
                    "{lo:x}..{hi:x} at {v:x}"
                );
            }
        }
    }

    /// `(format, valid values, invalid values)`, many from the JSON-Schema-Test-Suite.
    const FORMAT_CASES: &[(&str, &[&str], &[&str])] = &[
        (
            "date",
            &[
                "1963-06-19",
                "2020-01-31",
                "2020-02-29",
                "2000-02-29",
                "1600-02-29",
                "2021-04-30",
            ],
            &[
                "2020-01-32",
                "2021-02-29",
                "1900-02-29",
                "2100-02-29",
                "2020-04-31",
                "2020-13-01",
                "2020-00-01",
                "350-01-01",
                "2020-1-01",
                "1998-01-01T",
                "1963-06-1\u{966}",
                "20230328",
                "2023-W01",
                "2020-02-30",
            ],
        ),
        (
            "time",
            &[
                "08:30:06Z",
                "08:30:06z",
                "23:59:60Z",
                "23:59:60+00:00",
                "08:30:06.283185Z",
                "08:30:06+00:20",
                "08:30:06-08:00",
                "23:20:50.52-23:59",
            ],
            &[
                "22:59:60Z",
                "23:58:60Z",
                "24:00:00Z",
                "08:60:06Z",
                "08:30:61Z",
                "08:30:06+24:00",
                "08:30:06+00:60",
                "08:30:06",
                "8:30:06Z",
                "08:30:06 Z",
                "01:02:03,12Z",
                "08:30:06.Z",
                "12:00:00+1:00",
                "23:59:60+01:00",
            ],
        ),
        (
            "date-time",
            &[
                "1963-06-19T08:30:06.283185Z",
                "1963-06-19t08:30:06z",
                "1998-12-31T23:59:60Z",
                "2020-02-29T00:00:00+05:30",
            ],
            &[
                "1998-12-31T23:59:61Z",
                "1963-06-19 08:30:06Z",
                "1963-06-19T08:30:06",
                "2021-02-29T00:00:00Z",
                "06/19/1963 08:30:06 PST",
            ],
        ),
        (
            "duration",
            &[
                "P4DT12H30M5S",
                "P4Y",
                "PT0S",
                "P0D",
                "P1M",
                "PT1M",
                "PT36H",
                "P1Y2M3DT4H5M6S",
                "P2W",
                "P1D",
            ],
            &[
                "PT1D",
                "P",
                "P1YT",
                "PT",
                "P2D1Y",
                "P1D2H",
                "P2S",
                "4DT12H30M5S",
                "P1Y2W",
                "P1.5Y",
                "P\u{661}Y",
                "PT1H2S",
            ],
        ),
        (
            "email",
            &[
                "joe.bloggs@example.com",
                "te~st@example.com",
                "~test@example.com",
                "test~@example.com",
                "\"joe bloggs\"@example.com",
                "\"joe..bloggs\"@example.com",
                "\"joe@bloggs\"@example.com",
                "joe.bloggs@[127.0.0.1]",
                "joe.bloggs@[IPv6:::1]",
                "te.s.t@example.com",
                "a@b",
            ],
            &[
                "2962",
                ".test@example.com",
                "test.@example.com",
                "te..st@example.com",
                "joe.bloggs@invalid=domain.com",
                "joe.bloggs@[127.0.0.300]",
                "a@-b.com",
                "a@b-.com",
                "a b@c.com",
                "@example.com",
                "a@",
            ],
        ),
        (
            "hostname",
            &[
                "www.example.com",
                "hostname",
                "host-name",
                "h0stn4me",
                "1host",
                "a",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com",
                "ab-cd",
            ],
            &[
                "-a-host-name-that-starts-with--",
                "not_a_valid_host_name",
                "a-host-name-ends-",
                ".",
                "-hostname",
                "hostname-",
                "_hostname",
                "hostname_",
                "a..b",
                "a.",
                ".a",
                "",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com",
                "XN--aa---o47jg78q",
                "xn--X",
                "ab--cd",
                "h\u{e9}",
            ],
        ),
        (
            "ipv4",
            &["192.168.0.1", "0.0.0.0", "255.255.255.255", "1.2.3.4"],
            &[
                "127.0.0.0.1",
                "256.256.256.256",
                "127.0",
                "0x7f000001",
                "087.10.0.1",
                "1.2.3.4\n",
                "1.2.3.\u{967}",
                "192.168.1.0/24",
            ],
        ),
        (
            "ipv6",
            &[
                "::1",
                "::abef",
                "::",
                "::42:ff:1",
                "d6::",
                "1:d6::42",
                "1::d6:192.168.0.1",
                "1:2::192.168.0.1",
                "::ffff:192.168.0.1",
                "1:2:3:4:5:6:7:8",
                "1000:1000:1000:1000:1000:1000:255.255.255.255",
                "ABCD:ef01::",
            ],
            &[
                "12345::",
                "::abcef",
                "1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1",
                "::laptop",
                ":2:3:4:5:6:7:8",
                "1:2:3:4:5:6:7:",
                "1::2::3",
                "1::d6::42",
                "1::2:192.168.256.1",
                "fe80::a%eth1",
                "100:100:100:100:100:100:255.255.255.255.255",
                " ::1",
                "::1 ",
                "1:2:3:4:5:6:7:8:9",
            ],
        ),
        (
            "uuid",
            &[
                "2EB8AA08-AA98-11EA-B4AA-73B441D16380",
                "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
                "00000000-0000-0000-0000-000000000000",
                "98d80576-482e-427f-8434-7f86890ab222",
            ],
            &[
                "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
                "2eb8aa08-aa98-11ea-b7aa-73b441d16380F",
                "2eb8aa08-aa98-11ea-b4ga-73b441d16380",
                "2eb8aa08aa9811eab4aa73b441d16380",
                "2eb8-aa08-aa98-11ea-b4aa73b41d16380",
            ],
        ),
        (
            "uri",
            &[
                "http://foo.bar/?baz=qux#quux",
                "http://foo.com/blah_(wiki)#cite-1",
                "http://foo.bar/?q=Test%20URL-encoded%20stuff",
                "http://xn--nw2a.xn--j6w193g/",
                "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com",
                "http://223.255.255.254",
                "ftp://ftp.is.co.za/rfc/rfc1808.txt",
                "mailto:John.Doe@example.com",
                "urn:oasis:names:specification:docbook:dtd:xml:4.1.2",
                "tel:+1-816-555-1212",
                "http://[2001:db8::7]/c=GB?objectClass?one",
                "news:comp.infosystems.www.servers.unix",
            ],
            &[
                "//foo.bar/?baz=qux#quux",
                "/abc",
                "\\\\WINDOWS\\fileshare",
                "abc",
                "http:// shouldfail.com",
                ":// should fail",
                "bar,baz:foo",
                "http://example.com/\u{e9}",
                "http://[::1",
            ],
        ),
        (
            "uri-reference",
            &[
                "http://foo.bar/?baz=qux#quux",
                "//foo.bar/?baz=qux#quux",
                "/abc",
                "abc",
                "#fragment",
                "",
                "?q",
            ],
            &[
                "\\\\WINDOWS\\fileshare",
                "#frag\\ment",
                "http://[::1",
                "a b",
            ],
        ),
    ];

    #[test]
    fn formats_accept_and_reject() {
        for &(format, valid, invalid) in FORMAT_CASES {
            let spec = StringSpec {
                format: Some(format),
                ..StringSpec::default()
            };
            let any = schema(&spec, Escapes::Any);
            let canonical = schema(&spec, Escapes::Canonical);
            let mut rng = Rng(format.len() as u64);
            for (values, expected) in [(valid, true), (invalid, false)] {
                for value in values {
                    let json = serde_json::to_string(value).unwrap();
                    assert_eq!(any.accepts(json.as_bytes()), expected, "{format}: {json}");
                    assert_eq!(
                        canonical.accepts(json.as_bytes()),
                        expected,
                        "{format}: {json}"
                    );
                    let spelled = any_spelling(value, &mut rng);
                    assert_eq!(
                        any.accepts(spelled.as_bytes()),
                        expected,
                        "{format}: {spelled}"
                    );
                }
            }
        }
    }

    #[test]
    /// Hostnames against RFC 1123 written as a predicate: labels of 1–63 letters, digits and
    /// hyphens, no hyphen at either end, no `--` at positions 3–4, at most 253 characters —
    /// on random dotted strings around the bounds, and with length limits of the schema's own.
    fn hostnames_equal_the_rfc_predicate() {
        fn valid(s: &str, min: usize, max: usize) -> bool {
            let label_ok = |l: &str| {
                let b = l.as_bytes();
                (1..=63).contains(&b.len())
                    && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
                    && b[0] != b'-'
                    && b[b.len() - 1] != b'-'
                    && !(b.len() >= 4 && &b[2..4] == b"--")
            };
            (min..=max.min(253)).contains(&s.len()) && s.split('.').all(label_ok)
        }
        let mut rng = Rng(0x05e1_1123);
        let mut texts = Vec::new();
        for _ in 0..150 {
            let labels = 1 + rng.below(6);
            let mut text = String::new();
            for i in 0..labels {
                if i > 0 {
                    text.push(if rng.below(40) == 0 { '-' } else { '.' });
                }
                // Long labels often, so totals reach 253 with few labels.
                let len = match rng.below(3) {
                    0 => 1 + rng.below(4),
                    _ => 58 + rng.below(8),
                };
                for _ in 0..len {
                    text.push(match rng.below(30) {
                        0 => '-',
                        1..=9 => char::from(b'0' + rng.below(10) as u8),
                        _ => char::from(b'a' + rng.below(26) as u8),
                    });
                }
            }
            texts.push(text);
        }
        texts.push(format!("{0}.{0}.{0}.{1}", "a".repeat(63), "b".repeat(61)));
        texts.push(format!("{0}.{0}.{0}.{1}", "a".repeat(63), "b".repeat(62)));
        for (min, max) in [(0, None), (5, Some(130))] {
            let spec = StringSpec {
                format: Some("hostname"),
                min_length: min,
                max_length: max,
                ..StringSpec::default()
            };
            let r = schema(&spec, Escapes::Canonical);
            for text in &texts {
                let expected = valid(text, min as usize, max.unwrap_or(253) as usize);
                let quoted = format!("\"{text}\"");
                assert_eq!(
                    r.accepts(quoted.as_bytes()),
                    expected,
                    "{text} ({min}, {max:?})"
                );
            }
        }
    }

    #[test]
    fn format_with_pattern_and_lengths() {
        let spec = StringSpec {
            format: Some("date"),
            pattern: Some("-02-"),
            ..StringSpec::default()
        };
        let r = schema(&spec, Escapes::Any);
        assert!(r.accepts(br#""2024-02-29""#));
        assert!(!r.accepts(br#""2024-03-29""#));
        assert!(!r.accepts(br#""2023-02-29""#));
        let spec = StringSpec {
            format: Some("hostname"),
            min_length: 3,
            max_length: Some(5),
            ..StringSpec::default()
        };
        let r = schema(&spec, Escapes::Any);
        assert!(r.accepts(br#""a.b""#));
        assert!(r.accepts(br#""ab\u002Ecd""#));
        assert!(!r.accepts(br#""ab""#));
        assert!(!r.accepts(br#""abcdef""#));
        let spec = StringSpec {
            format: Some("hostname"),
            pattern: Some("^[a-c.]*$"),
            max_length: Some(4),
            ..StringSpec::default()
        };
        let r = schema(&spec, Escapes::Any);
        assert!(r.accepts(br#""ab.c""#));
        assert!(!r.accepts(br#""ab.d""#));
        assert!(!r.accepts(br#""ab.""#));
        let err = |format: &'static str, min: u64| {
            string_schema(
                &mut GrammarBuilder::new(),
                &StringSpec {
                    format: Some(format),
                    min_length: min,
                    pointer: "/x",
                    ..StringSpec::default()
                },
                Escapes::Any,
            )
            .unwrap_err()
        };
        let e = err("color", 0);
        assert_eq!(
            (e.kind, e.pointer.as_str()),
            (ErrorKind::Unsupported, "/x/format")
        );
        assert_eq!(err("hostname", 254).kind, ErrorKind::Unsatisfiable);
    }

    #[test]
    fn pattern_matches_by_simulation() {
        let m = |p: &str, v: &str| pattern_matches(p, v, "", "pattern").unwrap();
        assert!(m("^a+$", "aaa"));
        assert!(!m("^a+$", "aab"));
        assert!(m("b", "abc"));
        assert!(!m("a^b", "ab"));
        assert!(m("", ""));
        assert!(m("\\d$", "x1"));
        assert!(!m("\\d$", "x\u{661}"));
        // No determinisation: an exponential DFA is no problem here.
        assert!(m("(a|b)*a.{20}$", &format!("a{}", "b".repeat(20))));
        assert_eq!(
            pattern_matches("(?=a)", "a", "/p", "patternProperties")
                .unwrap_err()
                .pointer,
            "/p/patternProperties"
        );
    }

    #[test]
    fn literals_are_exact() {
        let mut rng = Rng(11);
        for _ in 0..40 {
            let value = random_string(&mut rng, 5, ALPHABET);
            let any = recognizer(|_| Ok(string_literal(&value, Escapes::Any)));
            let canonical = recognizer(|_| Ok(string_literal(&value, Escapes::Canonical)));
            let compact = serde_json::to_string(&value).unwrap();
            // The one spelling is one byte string: serde_json's, which writes each character
            // its shortest way too.
            assert_eq!(
                string_literal(&value, Escapes::Canonical),
                Expr::bytes(compact.as_bytes())
            );
            assert!(any.accepts(compact.as_bytes()), "{compact}");
            assert!(canonical.accepts(compact.as_bytes()), "{compact}");
            let spelled = any_spelling(&value, &mut rng);
            assert!(any.accepts(spelled.as_bytes()), "{spelled}");
            assert_eq!(
                canonical.accepts(spelled.as_bytes()),
                spelled == compact,
                "{spelled}"
            );
            for seed in 0..10 {
                let text = String::from_utf8(any.sample(seed, 20).unwrap()).unwrap();
                assert_eq!(
                    serde_json::from_str::<String>(&text).unwrap(),
                    value,
                    "{text}"
                );
            }
            let other = random_string(&mut rng, 5, ALPHABET);
            if other != value {
                let text = serde_json::to_string(&other).unwrap();
                assert!(!any.accepts(text.as_bytes()), "{text} for {compact}");
            }
        }
    }

    #[test]
    fn any_char_is_every_spelling_of_every_scalar() {
        let all = pattern::normalize(vec![(0, 0x10ffff)]);
        for escapes in [Escapes::Any, Escapes::Canonical] {
            let reference = recognizer(|_| Ok(any_char(escapes)));
            let spelled = recognizer(|_| Ok(spell(&all, escapes).unwrap()));
            let mut rng = Rng(5);
            for seed in 0..300 {
                for (a, b) in [(&reference, &spelled), (&spelled, &reference)] {
                    let text = a.sample(seed, 10).unwrap();
                    assert!(b.accepts(&text), "{:?}", String::from_utf8_lossy(&text));
                    let value: String = serde_json::from_str(&format!(
                        "\"{}\"",
                        std::str::from_utf8(&text).unwrap()
                    ))
                    .unwrap();
                    assert_eq!(value.chars().count(), 1);
                }
                let junk: Vec<u8> = (0..rng.below(7))
                    .map(|_| b"\\u0dD8aF\"/x\xc3\xa9\xed\xa0\x80"[rng.below(16)])
                    .collect();
                assert_eq!(reference.accepts(&junk), spelled.accepts(&junk), "{junk:?}");
            }
        }
    }
}
