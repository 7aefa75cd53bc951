//! ECMA-262 regular expressions over *decoded* strings, and the character automata built from
//! them.
//!
//! Pipeline: pattern text → [`Node`] (this module's parser: ECMA-262 syntax read with the `u`
//! flag — code points, `\u{…}`, `\p{…}` — and no other flag) → Thompson NFA over code-point
//! classes → subset construction over letters (groups of the intervals every class agrees on,
//! grouped by the classes holding them) → Moore minimisation → trimmed [`Dfa`].
//!
//! Invariants:
//! - the alphabet is the Unicode scalar values (U+0000–U+10FFFF less the surrogates): a JSON
//!   string's decoded value never holds a lone surrogate, so every class here excludes them;
//! - translation is exact or refused: `\d`, `\w`, `\s` and `.` are the ECMA sets (ASCII digits,
//!   ASCII word characters, ECMA white space and line terminators, everything but a line
//!   terminator); look-around, back-references, word boundaries and legacy octal escapes are
//!   refused with [`PatternErrorKind::Unsupported`], malformed patterns with
//!   [`PatternErrorKind::Invalid`]. Two pieces of Annex B syntax whose meaning is not in doubt
//!   are read as the character itself: identity escapes of punctuation (`\-`, `\@`, `\_`), a
//!   lone `{`, `}` or `]`, and a `-` next to a class escape in a class (`[\w-.]`);
//! - `\p{…}` uses regex-syntax's Unicode tables (General_Category, Script, Script_Extensions,
//!   binary properties), whose Unicode version may differ from a given ECMA engine's;
//! - `^` and `$` are input assertions (no `m` flag); [`Dfa::build`] treats them exactly, wherever
//!   they stand (`a^b` matches nothing);
//! - nothing recurses deeper than [`NEST_LIMIT`] groups and classes, and the NFA and DFA sizes
//!   are bounded by the caller's budgets ([`PatternErrorKind::Limit`] past them);
//! - every state of a built [`Dfa`] is reachable and can reach acceptance; transitions are
//!   grouped per target with merged code-point ranges.

use foldhash::{HashMap, HashMapExt};

/// A set of Unicode scalar values: sorted, disjoint, non-adjacent inclusive ranges.
pub(crate) type Ranges = Vec<(u32, u32)>;

/// The deepest nesting of groups the parser follows.
pub(crate) const NEST_LIMIT: u32 = 64;

/// The largest bound of a counted repetition.
pub(crate) const MAX_REPEAT: u32 = 10_000;

/// Every Unicode scalar value (no surrogates).
pub(crate) const SCALARS: [(u32, u32); 2] = [(0, 0xd7ff), (0xe000, 0x10ffff)];

/// Why a pattern was not compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PatternError {
    pub kind: PatternErrorKind,
    pub message: String,
}

/// The kinds of [`PatternError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatternErrorKind {
    /// Not an ECMA-262 regular expression.
    Invalid,
    /// Valid, but not translatable exactly (look-around, back-references, …).
    Unsupported,
    /// Over a size budget.
    Limit,
}

fn invalid(message: impl Into<String>) -> PatternError {
    PatternError {
        kind: PatternErrorKind::Invalid,
        message: message.into(),
    }
}

fn unsupported(message: impl Into<String>) -> PatternError {
    PatternError {
        kind: PatternErrorKind::Unsupported,
        message: message.into(),
    }
}

fn limit(message: impl Into<String>) -> PatternError {
    PatternError {
        kind: PatternErrorKind::Limit,
        message: message.into(),
    }
}

/// A parsed pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    /// The empty string.
    Empty,
    /// One character out of a set (possibly empty: matches nothing).
    Class(Ranges),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        item: Box<Node>,
        min: u32,
        max: Option<u32>,
    },
    /// `^`: the start of the input.
    Start,
    /// `$`: the end of the input.
    End,
}

impl Node {
    /// Any character (`[^]`).
    pub(crate) fn any() -> Node {
        Node::Class(SCALARS.to_vec())
    }

    /// `pattern` searched anywhere: `[^]* pattern [^]*`.
    pub(crate) fn unanchored(self) -> Node {
        let any_star = || Node::Repeat {
            item: Box::new(Node::any()),
            min: 0,
            max: None,
        };
        Node::Concat(vec![any_star(), self, any_star()])
    }
}

// ---------------------------------------------------------------------------------------------
// Ranges

/// Sorts and merges `ranges`, removing surrogates.
pub(crate) fn normalize(mut ranges: Vec<(u32, u32)>) -> Ranges {
    ranges.sort_unstable();
    let mut out: Ranges = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        for (slo, shi) in SCALARS {
            let (lo, hi) = (lo.max(slo), hi.min(shi));
            if lo > hi {
                continue;
            }
            match out.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
    }
    // Pieces split at the surrogate gap may now be out of order.
    out.sort_unstable();
    let mut merged: Ranges = Vec::with_capacity(out.len());
    for (lo, hi) in out {
        match merged.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

/// The scalar values not in `ranges` (which must be normalised).
pub(crate) fn complement(ranges: &[(u32, u32)]) -> Ranges {
    let mut out = Vec::new();
    let mut next = 0u32;
    for &(lo, hi) in ranges {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = hi + 1;
    }
    if next <= 0x10ffff {
        out.push((next, 0x10ffff));
    }
    normalize(out)
}

/// `a ∩ b` for normalised sets.
pub(crate) fn intersect(a: &[(u32, u32)], b: &[(u32, u32)]) -> Ranges {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if lo <= hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

fn single(c: u32) -> Ranges {
    normalize(vec![(c, c)])
}

fn digit_class() -> Vec<(u32, u32)> {
    vec![(0x30, 0x39)]
}

fn word_class() -> Vec<(u32, u32)> {
    vec![(0x30, 0x39), (0x41, 0x5a), (0x5f, 0x5f), (0x61, 0x7a)]
}

/// ECMA-262 `WhiteSpace` and `LineTerminator`: the set of `\s`.
fn space_class() -> Vec<(u32, u32)> {
    vec![
        (0x09, 0x0d),
        (0x20, 0x20),
        (0xa0, 0xa0),
        (0x1680, 0x1680),
        (0x2000, 0x200a),
        (0x2028, 0x2029),
        (0x202f, 0x202f),
        (0x205f, 0x205f),
        (0x3000, 0x3000),
        (0xfeff, 0xfeff),
    ]
}

/// `.`: everything but a line terminator.
fn dot_class() -> Ranges {
    complement(&normalize(vec![
        (0x0a, 0x0a),
        (0x0d, 0x0d),
        (0x2028, 0x2029),
    ]))
}

// ---------------------------------------------------------------------------------------------
// Parser

/// Parses an ECMA-262 pattern (no flags; `u`-mode strictness).
pub(crate) fn parse(pattern: &str) -> Result<Node, PatternError> {
    let mut parser = Parser {
        chars: pattern.chars().collect(),
        pos: 0,
        depth: 0,
    };
    let node = parser.alternation()?;
    if parser.pos < parser.chars.len() {
        return Err(invalid("unmatched `)`"));
    }
    Ok(node)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: u32,
}

/// One class item: a character or a set (`\d`, `\p{…}`).
enum ClassAtom {
    Char(u32),
    Set(Vec<(u32, u32)>),
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self) -> Result<Node, PatternError> {
        let mut alternatives = vec![self.concatenation()?];
        while self.eat('|') {
            alternatives.push(self.concatenation()?);
        }
        Ok(if alternatives.len() == 1 {
            alternatives.pop().expect("one")
        } else {
            Node::Alt(alternatives)
        })
    }

    fn concatenation(&mut self) -> Result<Node, PatternError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let (atom, quantifiable) = self.atom()?;
            items.push(self.quantifiers(atom, quantifiable)?);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().expect("one"),
            _ => Node::Concat(items),
        })
    }

    /// A `{n}`, `{n,}` or `{n,m}` at the cursor, without consuming it.
    fn braces(&self) -> Option<(usize, &[char])> {
        if self.peek() != Some('{') {
            return None;
        }
        let rest = &self.chars[self.pos + 1..];
        let close = rest.iter().position(|&c| c == '}')?;
        let inner = &rest[..close];
        let digits = |s: &[char]| !s.is_empty() && s.iter().all(char::is_ascii_digit);
        let ok = match inner.iter().position(|&c| c == ',') {
            None => digits(inner),
            Some(comma) => {
                digits(&inner[..comma]) && (comma + 1 == inner.len() || digits(&inner[comma + 1..]))
            }
        };
        ok.then_some((close + 2, inner))
    }

    fn quantifiers(&mut self, atom: Node, quantifiable: bool) -> Result<Node, PatternError> {
        let (min, max) = match self.peek() {
            Some('*') => {
                self.pos += 1;
                (0, None)
            }
            Some('+') => {
                self.pos += 1;
                (1, None)
            }
            Some('?') => {
                self.pos += 1;
                (0, Some(1))
            }
            Some('{') => match self.braces() {
                Some((len, inner)) => {
                    let text: String = inner.iter().collect();
                    self.pos += len;
                    let number = |s: &str| -> Result<u32, PatternError> {
                        match s.parse::<u32>() {
                            Ok(n) if n <= MAX_REPEAT => Ok(n),
                            _ => Err(limit(format!(
                                "repetition bound {s} is over the limit of {MAX_REPEAT}"
                            ))),
                        }
                    };
                    match text.split_once(',') {
                        None => {
                            let n = number(&text)?;
                            (n, Some(n))
                        }
                        Some((lo, "")) => (number(lo)?, None),
                        Some((lo, hi)) => {
                            let (lo, hi) = (number(lo)?, number(hi)?);
                            if lo > hi {
                                return Err(invalid(format!(
                                    "numbers out of order in {{{lo},{hi}}} quantifier"
                                )));
                            }
                            (lo, Some(hi))
                        }
                    }
                }
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        if !quantifiable {
            return Err(invalid(
                "nothing to repeat: an assertion cannot be quantified",
            ));
        }
        // Laziness does not change the language.
        self.eat('?');
        if matches!(self.peek(), Some('*' | '+' | '?')) || self.braces().is_some() {
            return Err(invalid(
                "nothing to repeat: a quantifier follows a quantifier",
            ));
        }
        Ok(Node::Repeat {
            item: Box::new(atom),
            min,
            max,
        })
    }

    /// One atom, and whether a quantifier may follow it.
    fn atom(&mut self) -> Result<(Node, bool), PatternError> {
        let c = self.bump().expect("caller checked");
        Ok(match c {
            '^' => (Node::Start, false),
            '$' => (Node::End, false),
            '.' => (Node::Class(dot_class()), true),
            '(' => (self.group()?, true),
            '[' => (Node::Class(self.class()?), true),
            '\\' => self.escape_atom()?,
            '*' | '+' | '?' => return Err(invalid(format!("nothing to repeat before `{c}`"))),
            // A `{` that starts a quantifier has nothing to repeat; any other lone `{`, `}`
            // or `]` is the character itself (Annex B, as most validators read patterns).
            '{' if {
                self.pos -= 1;
                let quantifier = self.braces().is_some();
                self.pos += 1;
                quantifier
            } =>
            {
                return Err(invalid("nothing to repeat before `{`"))
            }
            c => (Node::Class(single(c as u32)), true),
        })
    }

    fn group(&mut self) -> Result<Node, PatternError> {
        if self.depth >= NEST_LIMIT {
            return Err(limit(format!(
                "groups nest deeper than the limit of {NEST_LIMIT}"
            )));
        }
        if self.eat('?') {
            match self.bump() {
                Some(':') => {}
                Some('=') | Some('!') => {
                    return Err(unsupported("look-ahead assertions are not supported"))
                }
                Some('<') if matches!(self.peek(), Some('=' | '!')) => {
                    return Err(unsupported("look-behind assertions are not supported"))
                }
                Some('<') => {
                    let mut name = false;
                    loop {
                        match self.bump() {
                            Some('>') if name => break,
                            Some(c) if c == '$' || c == '_' || c.is_alphanumeric() => name = true,
                            _ => return Err(invalid("malformed group name")),
                        }
                    }
                }
                _ => return Err(invalid("unknown group syntax `(?`")),
            }
        }
        self.depth += 1;
        let node = self.alternation()?;
        self.depth -= 1;
        if !self.eat(')') {
            return Err(invalid("unclosed group"));
        }
        Ok(node)
    }

    fn hex(&mut self, digits: usize) -> Option<u32> {
        let mut value = 0u32;
        for i in 0..digits {
            value = value * 16 + self.peek_at(i)?.to_digit(16)?;
        }
        self.pos += digits;
        Some(value)
    }

    /// After `\u`: one code point (a surrogate pair combined); lone surrogates are refused.
    fn unicode_escape(&mut self) -> Result<u32, PatternError> {
        if self.eat('{') {
            let mut value = 0u32;
            let mut any = false;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                self.pos += 1;
                value = value.saturating_mul(16).saturating_add(d);
                any = true;
            }
            if !any || !self.eat('}') || value > 0x10ffff {
                return Err(invalid("malformed `\\u{…}` escape"));
            }
            return check_scalar(value);
        }
        let unit = self
            .hex(4)
            .ok_or_else(|| invalid("`\\u` needs four hex digits"))?;
        if (0xd800..0xdc00).contains(&unit)
            && self.peek() == Some('\\')
            && self.peek_at(1) == Some('u')
        {
            let save = self.pos;
            self.pos += 2;
            match self.hex(4) {
                Some(low) if (0xdc00..0xe000).contains(&low) => {
                    return Ok(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00));
                }
                _ => self.pos = save,
            }
        }
        check_scalar(unit)
    }

    /// `\p{…}` / `\P{…}` after the `p` or `P`.
    fn property(&mut self, negated: bool) -> Result<Vec<(u32, u32)>, PatternError> {
        if !self.eat('{') {
            return Err(invalid("`\\p` needs `{…}`"));
        }
        let mut name = String::new();
        loop {
            match self.bump() {
                Some('}') => break,
                Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '=' => name.push(c),
                _ => return Err(invalid("malformed `\\p{…}`")),
            }
        }
        let ranges = unicode_property(&name)?;
        Ok(if negated { complement(&ranges) } else { ranges })
    }

    /// After a `\` outside a class.
    fn escape_atom(&mut self) -> Result<(Node, bool), PatternError> {
        match self.peek() {
            Some('b') => Err(unsupported(
                "word-boundary assertions (`\\b`) are not supported",
            )),
            Some('B') => Err(unsupported(
                "word-boundary assertions (`\\B`) are not supported",
            )),
            Some('1'..='9') => Err(unsupported("back-references are not supported")),
            Some('k') => Err(unsupported("named back-references are not supported")),
            _ => match self.class_escape(false)? {
                ClassAtom::Char(c) => Ok((Node::Class(single(c)), true)),
                ClassAtom::Set(set) => Ok((Node::Class(normalize(set)), true)),
            },
        }
    }

    /// After a `\` (the escape letter is at the cursor).
    fn class_escape(&mut self, in_class: bool) -> Result<ClassAtom, PatternError> {
        let c = self
            .bump()
            .ok_or_else(|| invalid("`\\` at the end of the pattern"))?;
        Ok(match c {
            'd' => ClassAtom::Set(digit_class()),
            'D' => ClassAtom::Set(complement(&normalize(digit_class()))),
            'w' => ClassAtom::Set(word_class()),
            'W' => ClassAtom::Set(complement(&normalize(word_class()))),
            's' => ClassAtom::Set(space_class()),
            'S' => ClassAtom::Set(complement(&normalize(space_class()))),
            'p' => ClassAtom::Set(self.property(false)?),
            'P' => ClassAtom::Set(self.property(true)?),
            't' => ClassAtom::Char(0x09),
            'n' => ClassAtom::Char(0x0a),
            'v' => ClassAtom::Char(0x0b),
            'f' => ClassAtom::Char(0x0c),
            'r' => ClassAtom::Char(0x0d),
            'b' if in_class => ClassAtom::Char(0x08),
            '-' if in_class => ClassAtom::Char('-' as u32),
            '0' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => ClassAtom::Char(0),
            'c' => match self.bump() {
                Some(l) if l.is_ascii_alphabetic() => ClassAtom::Char(l as u32 % 32),
                _ => return Err(invalid("`\\c` needs an ASCII letter")),
            },
            'x' => ClassAtom::Char(
                self.hex(2)
                    .ok_or_else(|| invalid("`\\x` needs two hex digits"))?,
            ),
            'u' => ClassAtom::Char(self.unicode_escape()?),
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
            | '/' => ClassAtom::Char(c as u32),
            '0'..='9' => {
                return Err(unsupported(
                    "back-references and legacy octal escapes are not supported",
                ))
            }
            // Annex B identity escapes of punctuation (`\-`, `\:`, `\@`, …) mean the
            // character: unambiguous, and common in schemas written for non-`u` engines.
            c if !c.is_alphanumeric() => ClassAtom::Char(c as u32),
            c => return Err(invalid(format!("`\\{c}` is not an ECMA-262 escape"))),
        })
    }

    /// After `[`: the class's set.
    fn class(&mut self) -> Result<Ranges, PatternError> {
        let negated = self.eat('^');
        let mut set = Vec::new();
        loop {
            let first = match self.bump() {
                None => return Err(invalid("unclosed character class")),
                Some(']') => break,
                Some('\\') => self.class_escape(true)?,
                Some(c) => ClassAtom::Char(c as u32),
            };
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                let second = match self.bump() {
                    Some('\\') => self.class_escape(true)?,
                    Some(c) => ClassAtom::Char(c as u32),
                    None => return Err(invalid("unclosed character class")),
                };
                match (first, second) {
                    (ClassAtom::Char(lo), ClassAtom::Char(hi)) if lo <= hi => set.push((lo, hi)),
                    (ClassAtom::Char(_), ClassAtom::Char(_)) => {
                        return Err(invalid("range out of order in character class"))
                    }
                    // Annex B: a class escape next to `-` makes the `-` a character.
                    (first, second) => {
                        for atom in [first, ClassAtom::Char('-' as u32), second] {
                            match atom {
                                ClassAtom::Char(c) => set.push((c, c)),
                                ClassAtom::Set(s) => set.extend(s),
                            }
                        }
                    }
                }
            } else {
                match first {
                    ClassAtom::Char(c) => set.push((c, c)),
                    ClassAtom::Set(s) => set.extend(s),
                }
            }
        }
        let set = normalize(set);
        Ok(if negated { complement(&set) } else { set })
    }
}

fn check_scalar(value: u32) -> Result<u32, PatternError> {
    if (0xd800..0xe000).contains(&value) {
        Err(unsupported(
            "a lone surrogate can never occur in a JSON string's value",
        ))
    } else {
        Ok(value)
    }
}

/// The set of a `\p{…}` name, through regex-syntax's Unicode tables: `General_Category`
/// values (`L`, `Letter`, `gc=Lu`), `Script=`/`sc=`, `Script_Extensions=`/`scx=`, and binary
/// properties.
fn unicode_property(name: &str) -> Result<Ranges, PatternError> {
    use regex_syntax::hir::{Class, HirKind};
    let (key, value) = match name.split_once('=') {
        Some((key, value)) => (Some(key), value),
        None => (None, name),
    };
    let query = match key {
        None => value.to_owned(),
        Some("General_Category" | "gc") => format!("gc={value}"),
        Some("Script" | "sc") => format!("sc={value}"),
        Some("Script_Extensions" | "scx") => format!("scx={value}"),
        Some(key) => return Err(invalid(format!("unknown Unicode property `{key}`"))),
    };
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(&format!("\\p{{{query}}}"))
        .map_err(|_| invalid(format!("unknown Unicode property `\\p{{{name}}}`")))?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => Ok(normalize(
            class
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
        )),
        _ => Err(unsupported(format!("`\\p{{{name}}}` is not a set"))),
    }
}

// ---------------------------------------------------------------------------------------------
// NFA

#[derive(Clone, Debug)]
enum NState {
    Char(usize, usize),
    Eps(Vec<usize>),
    Start(usize),
    End(usize),
    Match,
}

/// A Thompson NFA over code-point classes.
#[derive(Clone, Debug)]
pub(crate) struct Nfa {
    states: Vec<NState>,
    classes: Vec<Ranges>,
    start: usize,
}

impl Nfa {
    /// Builds the NFA of `node`, with at most `budget` states.
    pub(crate) fn new(node: &Node, budget: usize) -> Result<Nfa, PatternError> {
        let mut nfa = Nfa {
            states: vec![NState::Match],
            classes: Vec::new(),
            start: 0,
        };
        let mut class_ids = HashMap::new();
        nfa.start = nfa.compile(node, 0, budget, &mut class_ids)?;
        Ok(nfa)
    }

    fn push(&mut self, state: NState, budget: usize) -> Result<usize, PatternError> {
        if self.states.len() >= budget {
            return Err(limit(format!(
                "the pattern's automaton is over the limit of {budget} states"
            )));
        }
        self.states.push(state);
        Ok(self.states.len() - 1)
    }

    fn compile(
        &mut self,
        node: &Node,
        next: usize,
        budget: usize,
        class_ids: &mut HashMap<Ranges, usize>,
    ) -> Result<usize, PatternError> {
        Ok(match node {
            Node::Empty => next,
            Node::Class(ranges) => {
                let id = match class_ids.get(ranges) {
                    Some(&id) => id,
                    None => {
                        self.classes.push(ranges.clone());
                        class_ids.insert(ranges.clone(), self.classes.len() - 1);
                        self.classes.len() - 1
                    }
                };
                self.push(NState::Char(id, next), budget)?
            }
            Node::Concat(items) => {
                let mut cur = next;
                for item in items.iter().rev() {
                    cur = self.compile(item, cur, budget, class_ids)?;
                }
                cur
            }
            Node::Alt(alternatives) => {
                let mut entries = Vec::with_capacity(alternatives.len());
                for alt in alternatives {
                    entries.push(self.compile(alt, next, budget, class_ids)?);
                }
                self.push(NState::Eps(entries), budget)?
            }
            Node::Start => self.push(NState::Start(next), budget)?,
            Node::End => self.push(NState::End(next), budget)?,
            Node::Repeat { item, min, max } => {
                let mut cur = match max {
                    None => {
                        let lp = self.push(NState::Eps(Vec::new()), budget)?;
                        let entry = self.compile(item, lp, budget, class_ids)?;
                        self.states[lp] = NState::Eps(vec![entry, next]);
                        lp
                    }
                    Some(max) => {
                        let mut cur = next;
                        for _ in *min..*max {
                            let entry = self.compile(item, cur, budget, class_ids)?;
                            cur = self.push(NState::Eps(vec![entry, next]), budget)?;
                        }
                        cur
                    }
                };
                for _ in 0..*min {
                    cur = self.compile(item, cur, budget, class_ids)?;
                }
                cur
            }
        })
    }

    /// Whether the NFA accepts `value`, by simulation (no determinisation, so no blow-up).
    pub(crate) fn is_match(&self, value: &str) -> bool {
        let chars: Vec<u32> = value.chars().map(u32::from).collect();
        let mut core = vec![self.start];
        let mut seen = Vec::new();
        for i in 0..=chars.len() {
            let closure = self.closure(&core, i == 0, i == chars.len(), &mut seen);
            let Some(&c) = chars.get(i) else {
                return closure
                    .iter()
                    .any(|&s| matches!(self.states[s], NState::Match));
            };
            core = closure
                .iter()
                .filter_map(|&s| match self.states[s] {
                    NState::Char(class, next) => {
                        let ranges = &self.classes[class];
                        let at = ranges.partition_point(|&(_, hi)| hi < c);
                        (at < ranges.len() && ranges[at].0 <= c).then_some(next)
                    }
                    _ => None,
                })
                .collect();
            core.sort_unstable();
            core.dedup();
            if core.is_empty() {
                return false;
            }
        }
        unreachable!("the loop returns at the end of the input")
    }

    /// The ε-closure of `core` (sorted state list), following `^` only `at_start` and `$`
    /// only `at_end`.
    /// `seen` is scratch space, all `false` (or empty) on entry and on exit.
    fn closure(
        &self,
        core: &[usize],
        at_start: bool,
        at_end: bool,
        seen: &mut Vec<bool>,
    ) -> Vec<usize> {
        seen.resize(self.states.len(), false);
        let mut stack: Vec<usize> = core.to_vec();
        let mut out = Vec::new();
        while let Some(s) = stack.pop() {
            if std::mem::replace(&mut seen[s], true) {
                continue;
            }
            out.push(s);
            match &self.states[s] {
                NState::Eps(targets) => stack.extend(targets.iter().copied()),
                NState::Start(next) if at_start => stack.push(*next),
                NState::End(next) if at_end => stack.push(*next),
                _ => {}
            }
        }
        for &s in &out {
            seen[s] = false;
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// DFA

/// One state of a [`Dfa`].
#[derive(Clone, Debug)]
pub(crate) struct DState {
    pub accept: bool,
    /// `(target, characters)`, each target once, characters normalised.
    pub transitions: Vec<(usize, Ranges)>,
}

/// A trimmed minimal DFA over scalar values: the intersection of the languages of its NFAs.
#[derive(Clone, Debug)]
pub(crate) struct Dfa {
    pub states: Vec<DState>,
    pub start: usize,
    /// The state, if any, that accepts every continuation (its language is `[^]*`).
    pub universal: Option<usize>,
}

impl Dfa {
    /// The DFA of the strings every one of `nfas` accepts; `Ok(None)` when there are none.
    /// At most `max_states` states are explored.
    pub(crate) fn build(nfas: &[Nfa], max_states: usize) -> Result<Option<Dfa>, PatternError> {
        // The alphabet: intervals on which every class agrees.
        let mut bounds = vec![0u32, 0xd800, 0xe000, 0x110000];
        for nfa in nfas {
            for class in &nfa.classes {
                for &(lo, hi) in class {
                    bounds.push(lo);
                    bounds.push(hi + 1);
                }
            }
        }
        bounds.sort_unstable();
        bounds.dedup();
        let intervals: Vec<(u32, u32)> = bounds
            .windows(2)
            .map(|w| (w[0], w[1] - 1))
            .filter(|&(lo, _)| lo != 0xd800)
            .collect();
        // Letters: intervals grouped by the classes that contain them (every class treats the
        // intervals of a letter alike), so a large class costs one letter, not hundreds.
        let mut letter_of: HashMap<Vec<bool>, usize> = HashMap::new();
        let mut letters: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut memberships: Vec<Vec<bool>> = Vec::new();
        {
            let all_classes: Vec<&Ranges> = nfas.iter().flat_map(|n| &n.classes).collect();
            let mut inside: Vec<Vec<bool>> =
                vec![Vec::with_capacity(all_classes.len()); intervals.len()];
            for class in &all_classes {
                let mut member = vec![false; intervals.len()];
                for &(lo, hi) in *class {
                    let first = intervals.partition_point(|&(_, h)| h < lo);
                    for (i, &(ilo, _)) in intervals.iter().enumerate().skip(first) {
                        if ilo > hi {
                            break;
                        }
                        member[i] = true;
                    }
                }
                for (i, m) in member.into_iter().enumerate() {
                    inside[i].push(m);
                }
            }
            for (i, membership) in inside.into_iter().enumerate() {
                match letter_of.get(&membership) {
                    Some(&l) => letters[l].push(intervals[i]),
                    None => {
                        letter_of.insert(membership.clone(), letters.len());
                        letters.push(vec![intervals[i]]);
                        memberships.push(membership);
                    }
                }
            }
        }
        let n_intervals = letters.len();
        // contains[nfa][class][letter]: whether the class holds the letter.
        let mut offset = 0;
        let contains: Vec<Vec<Vec<bool>>> = nfas
            .iter()
            .map(|nfa| {
                let out = (0..nfa.classes.len())
                    .map(|c| memberships.iter().map(|m| m[offset + c]).collect())
                    .collect();
                offset += nfa.classes.len();
                out
            })
            .collect();

        type Key = (bool, Vec<Vec<usize>>);
        let mut ids: HashMap<Key, usize> = HashMap::new();
        let mut keys: Vec<Key> = Vec::new();
        let mut accept = Vec::new();
        let mut table: Vec<Vec<u32>> = Vec::new();
        let start_key: Key = (true, nfas.iter().map(|n| vec![n.start]).collect());
        ids.insert(start_key.clone(), 0);
        keys.push(start_key);
        let mut next_state = 0;
        let mut scratch: Vec<Vec<bool>> = vec![Vec::new(); nfas.len()];
        while next_state < keys.len() {
            let (at_start, cores) = keys[next_state].clone();
            let is_accept = nfas
                .iter()
                .zip(&cores)
                .zip(&mut scratch)
                .all(|((nfa, core), seen)| {
                    nfa.closure(core, at_start, true, seen)
                        .iter()
                        .any(|&s| matches!(nfa.states[s], NState::Match))
                });
            let closures: Vec<Vec<usize>> = nfas
                .iter()
                .zip(&cores)
                .zip(&mut scratch)
                .map(|((nfa, core), seen)| nfa.closure(core, at_start, false, seen))
                .collect();
            let mut row = vec![u32::MAX; n_intervals];
            // Neighbouring intervals mostly lead to the same subset: compare with the previous
            // interval's before hashing.
            let mut target: Vec<Vec<usize>> = vec![Vec::new(); nfas.len()];
            let mut previous: Option<(Vec<Vec<usize>>, u32)> = None;
            for (i, slot) in row.iter_mut().enumerate() {
                let mut complete = true;
                for (((nfa, closure), inside), set) in
                    nfas.iter().zip(&closures).zip(&contains).zip(&mut target)
                {
                    set.clear();
                    set.extend(closure.iter().filter_map(|&s| match nfa.states[s] {
                        NState::Char(class, next) if inside[class][i] => Some(next),
                        _ => None,
                    }));
                    if set.is_empty() {
                        complete = false;
                        break;
                    }
                    set.sort_unstable();
                    set.dedup();
                }
                if !complete {
                    continue;
                }
                if let Some((sets, id)) = &previous {
                    if *sets == target {
                        *slot = *id;
                        continue;
                    }
                }
                let key: Key = (false, target.clone());
                let id = match ids.get(&key) {
                    Some(&id) => id,
                    None => {
                        if keys.len() >= max_states {
                            return Err(limit(format!(
                                "the pattern's automaton is over the limit of {max_states} states"
                            )));
                        }
                        ids.insert(key.clone(), keys.len());
                        keys.push(key);
                        keys.len() - 1
                    }
                };
                *slot = id as u32;
                previous = Some((target.clone(), id as u32));
            }
            accept.push(is_accept);
            table.push(row);
            next_state += 1;
        }
        Ok(finish(&letters, accept, table))
    }
}

impl Dfa {
    /// The same language as an NFA, to intersect with others in [`Dfa::build`]: its subsets
    /// stay singletons, so a cached DFA costs little there.
    pub(crate) fn to_nfa(&self) -> Nfa {
        let mut nfa = Nfa {
            states: vec![NState::Match],
            classes: Vec::new(),
            start: 0,
        };
        let mut class_ids: HashMap<&Ranges, usize> = HashMap::new();
        // Entry of DFA state q: NFA state 1 + q.
        let n = self.states.len();
        nfa.states.extend((0..n).map(|_| NState::Eps(Vec::new())));
        for (q, state) in self.states.iter().enumerate() {
            let mut targets = Vec::with_capacity(state.transitions.len() + 1);
            if state.accept {
                targets.push(0);
            }
            for (t, ranges) in &state.transitions {
                let class = *class_ids.entry(ranges).or_insert_with(|| {
                    nfa.classes.push(ranges.clone());
                    nfa.classes.len() - 1
                });
                nfa.states.push(NState::Char(class, 1 + t));
                targets.push(nfa.states.len() - 1);
            }
            nfa.states[1 + q] = NState::Eps(targets);
        }
        nfa.start = 1 + self.start;
        nfa
    }
}

/// Trims, minimises (Moore) and groups the transitions of a subset-construction table.
fn finish(intervals: &[Vec<(u32, u32)>], accept: Vec<bool>, table: Vec<Vec<u32>>) -> Option<Dfa> {
    let n = accept.len();
    // Co-reachability: states that can reach acceptance.
    let mut reverse: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (s, row) in table.iter().enumerate() {
        for &t in row {
            if t != u32::MAX {
                reverse[t as usize].push(s);
            }
        }
    }
    let mut live = accept.clone();
    let mut stack: Vec<usize> = (0..n).filter(|&s| accept[s]).collect();
    while let Some(s) = stack.pop() {
        for &p in &reverse[s] {
            if !live[p] {
                live[p] = true;
                stack.push(p);
            }
        }
    }
    if !live[0] {
        return None;
    }
    let dead = u32::MAX;
    let table: Vec<Vec<u32>> = table
        .into_iter()
        .map(|row| {
            row.into_iter()
                .map(|t| {
                    if t != dead && live[t as usize] {
                        t
                    } else {
                        dead
                    }
                })
                .collect()
        })
        .collect();
    // Moore refinement over live states.
    // Intervals every state treats alike are one letter for the refinement: a large class
    // (`\p{L}`, hundreds of ranges) then costs one column, not hundreds.
    let mut column_ids: HashMap<Vec<u32>, usize> = HashMap::new();
    let mut representatives: Vec<usize> = Vec::new();
    for i in 0..intervals.len() {
        let column: Vec<u32> = table.iter().map(|row| row[i]).collect();
        column_ids.entry(column).or_insert_with(|| {
            representatives.push(i);
            representatives.len() - 1
        });
    }
    let compressed: Vec<Vec<u32>> = table
        .iter()
        .map(|row| representatives.iter().map(|&i| row[i]).collect())
        .collect();
    // Rows as runs of equal targets: signatures cost the runs, not the letters.
    let runs: Vec<Vec<(u32, u32)>> = compressed
        .iter()
        .map(|row| {
            let mut out: Vec<(u32, u32)> = Vec::new();
            for (i, &t) in row.iter().enumerate() {
                if out.last().is_none_or(|&(_, last)| last != t) {
                    out.push((i as u32, t));
                }
            }
            out
        })
        .collect();
    let mut class: Vec<u32> = (0..n).map(|s| u32::from(accept[s])).collect();
    let mut count = 0;
    loop {
        let mut ids: HashMap<(u32, Vec<(u32, u32)>), u32> = HashMap::new();
        let mut next = vec![0u32; n];
        for s in 0..n {
            if !live[s] {
                continue;
            }
            // Canonical: adjacent runs whose targets share a class are merged.
            let mut signature: Vec<(u32, u32)> = Vec::with_capacity(runs[s].len());
            for &(start, t) in &runs[s] {
                let c = if t == dead { dead } else { class[t as usize] };
                if signature.last().is_none_or(|&(_, last)| last != c) {
                    signature.push((start, c));
                }
            }
            let len = ids.len() as u32;
            next[s] = *ids.entry((class[s], signature)).or_insert(len);
        }
        let new_count = ids.len();
        class = next;
        if new_count == count {
            break;
        }
        count = new_count;
    }
    // Renumber classes in BFS order from the start state.
    let mut number: Vec<Option<usize>> = vec![None; count];
    let mut order = vec![0usize];
    number[class[0] as usize] = Some(0);
    let mut i = 0;
    while i < order.len() {
        let s = order[i];
        for &t in &table[s] {
            if t != dead {
                let c = class[t as usize] as usize;
                if number[c].is_none() {
                    number[c] = Some(order.len());
                    order.push(t as usize);
                }
            }
        }
        i += 1;
    }
    let mut states = Vec::with_capacity(order.len());
    for &s in &order {
        let mut by_target: Vec<(usize, Ranges)> = Vec::new();
        for (k, &t) in table[s].iter().enumerate() {
            if t == dead {
                continue;
            }
            let target = number[class[t as usize] as usize].expect("reached");
            match by_target.iter_mut().find(|(x, _)| *x == target) {
                Some((_, ranges)) => ranges.extend(&intervals[k]),
                None => by_target.push((target, intervals[k].clone())),
            }
        }
        let transitions = by_target
            .into_iter()
            .map(|(t, ranges)| (t, normalize(ranges)))
            .collect();
        states.push(DState {
            accept: accept[s],
            transitions,
        });
    }
    let all = normalize(SCALARS.to_vec());
    let universal = states
        .iter()
        .position(|st| st.accept && st.transitions.len() == 1 && st.transitions[0].1 == all);
    let universal = universal.filter(|&u| states[u].transitions[0].0 == u);
    Some(Dfa {
        states,
        start: 0,
        universal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dfa(pattern: &str) -> Option<Dfa> {
        let node = parse(pattern).unwrap().unanchored();
        Dfa::build(&[Nfa::new(&node, 100_000).unwrap()], 10_000).unwrap()
    }

    fn run(dfa: &Dfa, s: &str) -> bool {
        let mut state = dfa.start;
        for c in s.chars() {
            let c = c as u32;
            match dfa.states[state]
                .transitions
                .iter()
                .find(|(_, r)| r.iter().any(|&(lo, hi)| lo <= c && c <= hi))
            {
                Some(&(t, _)) => state = t,
                None => return false,
            }
        }
        dfa.states[state].accept
    }

    #[test]
    fn anchors_are_input_assertions() {
        let d = dfa("^ab$").unwrap();
        assert!(run(&d, "ab"));
        assert!(!run(&d, "xab"));
        assert!(!run(&d, "abx"));
        let d = dfa("b").unwrap();
        assert!(run(&d, "abc"));
        assert!(!run(&d, "ac"));
        assert!(dfa("a^b").is_none());
        let d = dfa("(^a|b)c").unwrap();
        assert!(run(&d, "acz"));
        assert!(!run(&d, "zac"));
        assert!(run(&d, "zbc"));
    }

    #[test]
    fn refusals() {
        for (p, kind) in [
            ("(?=a)", PatternErrorKind::Unsupported),
            ("(?<!a)", PatternErrorKind::Unsupported),
            ("(a)\\1", PatternErrorKind::Unsupported),
            ("\\bfoo", PatternErrorKind::Unsupported),
            ("\\a", PatternErrorKind::Invalid),
            ("(", PatternErrorKind::Invalid),
            ("a)", PatternErrorKind::Invalid),
            ("a**", PatternErrorKind::Invalid),
            ("{2}", PatternErrorKind::Invalid),
            ("\\q", PatternErrorKind::Invalid),
            ("^*", PatternErrorKind::Invalid),
            ("[b-a]", PatternErrorKind::Invalid),
            ("a{99999}", PatternErrorKind::Limit),
            ("\\ud800", PatternErrorKind::Unsupported),
        ] {
            assert_eq!(parse(p).map(|_| ()).unwrap_err().kind, kind, "{p}");
        }
    }

    #[test]
    fn ecma_classes() {
        let d = dfa("^\\d\\w\\s.$").unwrap();
        assert!(run(&d, "1a\u{a0}x"));
        assert!(!run(&d, "\u{661}a x"));
        assert!(!run(&d, "1\u{e9} x"));
        assert!(!run(&d, "1a \n"));
        assert!(run(&d, "1_\u{feff}\u{10000}"));
        let d = dfa("^[\\w-.]$").unwrap();
        assert!(run(&d, "-") && run(&d, ".") && run(&d, "_") && !run(&d, ","));
        let d = dfa("^[\\b\\d-]$").unwrap();
        assert!(run(&d, "\u{8}"));
        assert!(run(&d, "-"));
        assert!(!run(&d, "b"));
        let d = dfa("^\\p{Letter}+$").unwrap();
        assert!(run(&d, "\u{e9}cole"));
        assert!(!run(&d, "a1"));
        let d = dfa("^\\uD83D\\uDE00$").unwrap();
        assert!(run(&d, "\u{1f600}"));
        let d = dfa("^x{2,3}}?\\-\\:{,1}]$").unwrap();
        assert!(run(&d, "xx}-:{,1}]"));
        assert!(run(&d, "xxx-:{,1}]"));
        assert!(!run(&d, "x}-:{,1}]"));
        assert!(run(&dfa("^x{2,3}$").unwrap(), "xxx"));
    }
}
