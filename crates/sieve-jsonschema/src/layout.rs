//! The JSON text layout: whitespace gaps, separators, literal values (`const`, `enum`) and
//! object keys that avoid a finite set of names.
//!
//! Layout rules (the same everywhere in a grammar):
//!
//! - a *gap* is the whitespace allowed between two tokens: nothing under
//!   [`Whitespace::Compact`], up to [`Options::max_whitespace`] bytes of `' '`, `\t`, `\n`,
//!   `\r` under [`Whitespace::Flexible`], written as an optional reference to one shared rule
//!   (one automaton for every gap of the grammar);
//! - the whole text is `gap value gap` (`value` when [`Options::outer_whitespace`] is off);
//!   an object is `{ gap }` or `{ gap member (gap sep gap member)* gap }` with
//!   `member = key gap key-sep gap value`; an array is `[ gap ]` or
//!   `[ gap item (gap sep gap item)* gap ]` — so every gap between two tokens holds exactly
//!   one gap expression, never two in a row;
//! - literal values are printed in that layout, object members in the value's own order and
//!   numbers as `serde_json` prints them (`1.5`, `1e100`), integral values below 2^53 also
//!   as `2` and `2.0`: an instance spelling the same number otherwise (`1e0`, `2.00`, an
//!   object's members in another order) is rejected — a rejected-valid gap, never an
//!   accepted-invalid one.
//!
//! Invariant of [`string_except`]: its language is JSON strings whose *decoded* value is not
//! in the excluded set; every spelling [`Escapes`] allows is accepted.

use foldhash::HashMap;
use serde_json::Value;
use sieve_ir::{ByteClass, Expr, ExprKind, GrammarBuilder, IrError, RuleId};

use crate::string::{any_char, spell_char, spell_except, string_literal};
use crate::{Error, ErrorKind, Escapes, Options, Whitespace};

/// The gap and separator expressions of one compilation.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// One gap.
    pub gap: Expr,
    /// `gap item-separator gap`.
    pub item_sep: Expr,
    /// `gap key-separator gap`.
    pub key_sep: Expr,
    /// How string characters may be written.
    pub escapes: Escapes,
    /// How the characters of property names may be written.
    pub key_escapes: Escapes,
    /// How the strings and keys of `const` and `enum` values may be written.
    pub literal_escapes: Escapes,
}

/// A shared rule of one to `max` whitespace bytes (`' '`, `\t`, `\n`, `\r`), `max` ≥ 1, that
/// every gap refers to: bounded whitespace is a chain of `max` automaton states, and written
/// into each gap it would be copied into every rule around a gap (three per object member).
fn whitespace_rule(max: u32, builder: &mut GrammarBuilder) -> Result<RuleId, IrError> {
    let id = builder.fresh("ws")?;
    let byte =
        ByteClass::from_ranges([(b' ', b' '), (b'\t', b'\t'), (b'\n', b'\n'), (b'\r', b'\r')]);
    let body =
        Expr::repeat(Expr::class(byte).expect("four bytes"), 1, Some(max)).expect("1 <= max");
    builder.define(id, body);
    builder.share(id);
    Ok(id)
}

impl Layout {
    /// The layout of `options`. Under [`Whitespace::Flexible`] the whitespace itself is one
    /// shared rule declared in `builder` (see [`whitespace_rule`]).
    pub(crate) fn new(options: &Options, builder: &mut GrammarBuilder) -> Result<Layout, IrError> {
        let gap = match options.whitespace {
            Whitespace::Flexible if options.max_whitespace > 0 => Expr::optional(Expr::rule(
                whitespace_rule(options.max_whitespace, builder)?,
            )),
            Whitespace::Compact | Whitespace::Flexible => Expr::empty(),
        };
        Ok(Layout {
            item_sep: Expr::seq([
                gap.clone(),
                Expr::bytes(options.item_separator.as_bytes()),
                gap.clone(),
            ]),
            key_sep: Expr::seq([
                gap.clone(),
                Expr::bytes(options.key_separator.as_bytes()),
                gap.clone(),
            ]),
            gap,
            escapes: options.escapes,
            key_escapes: options.key_escapes.unwrap_or(options.escapes),
            literal_escapes: options.literal_escapes.unwrap_or(options.escapes),
        })
    }

    /// `open gap close` when `items` is empty, else
    /// `open gap item (sep item)* gap close`.
    pub(crate) fn bracket(&self, open: u8, items: Vec<Expr>, close: u8) -> Expr {
        let mut out = vec![Expr::bytes([open]), self.gap.clone()];
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                out.push(self.item_sep.clone());
            }
            out.push(item);
        }
        if out.len() > 2 {
            out.push(self.gap.clone());
        }
        out.push(Expr::bytes([close]));
        Expr::seq(out)
    }

    /// `key key-sep value`.
    pub(crate) fn member(&self, key: Expr, value: Expr) -> Expr {
        Expr::seq([key, self.key_sep.clone(), value])
    }

    /// The JSON value `value` printed in this layout (see the module docs). `depth` bounds the
    /// nesting followed; `pointer` locates the keyword for errors.
    pub(crate) fn literal(
        &self,
        value: &Value,
        max_depth: usize,
        pointer: &str,
        keyword: &str,
    ) -> Result<Expr, Error> {
        self.literal_at(value, max_depth, pointer, keyword)
    }

    fn literal_at(
        &self,
        value: &Value,
        depth: usize,
        pointer: &str,
        keyword: &str,
    ) -> Result<Expr, Error> {
        if depth == 0 {
            return Err(Error::new(
                ErrorKind::Limit,
                pointer,
                keyword,
                "the value nests deeper than the depth limit",
            ));
        }
        Ok(match value {
            Value::Null => Expr::bytes(*b"null"),
            Value::Bool(true) => Expr::bytes(*b"true"),
            Value::Bool(false) => Expr::bytes(*b"false"),
            Value::Number(n) => number_literal(n),
            Value::String(s) => string_literal(s, self.literal_escapes),
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.literal_at(item, depth - 1, pointer, keyword)?);
                }
                self.bracket(b'[', out, b']')
            }
            Value::Object(map) => {
                let mut out = Vec::with_capacity(map.len());
                for (key, item) in map {
                    let item = self.literal_at(item, depth - 1, pointer, keyword)?;
                    out.push(self.member(string_literal(key, self.literal_escapes), item));
                }
                self.bracket(b'{', out, b'}')
            }
        })
    }
}

/// The spellings of the number `n`: as `serde_json` prints it and, for an integral value
/// below 2^53, both `2` and `2.0` (equal numbers, so both are instances of a `const: 2`).
fn number_literal(n: &serde_json::Number) -> Expr {
    let printed = n.to_string();
    let integral = match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => Some(i.to_string()),
        (_, Some(u), _) => Some(u.to_string()),
        (_, _, Some(f)) if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 => {
            Some(format!("{}", f as i64))
        }
        _ => None,
    };
    match integral {
        Some(int) => {
            let mut spellings = vec![int.clone(), format!("{int}.0")];
            if !spellings.contains(&printed) {
                spellings.push(printed);
            }
            Expr::choice(spellings.into_iter().map(|s| Expr::bytes(s.into_bytes())))
                .expect("two spellings")
        }
        None => Expr::bytes(printed.into_bytes()),
    }
}

/// What kind of rule [`string_except`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sharing {
    /// An ordinary rule, which normalisation may inline again where it is small.
    Rule,
    /// A shared rule ([`sieve_ir::Rule::is_shared`]): one automaton for every reference.
    Tail,
}

/// A whole JSON string (quotes included) whose decoded value is none of `names`.
///
/// A trie of the names is walked character by character, each character in every spelling
/// `escapes` allows; a character that leaves the trie leads to any further characters, and
/// the closing quote is allowed except at the end of a name.
/// `share` turns an expression used in many places into a reference to one rule, of the kind
/// [`Sharing`] says. The string tail after the first character that leaves the trie is a
/// [`Sharing::Tail`], so every node reaches the same automaton.
pub(crate) fn string_except(
    names: &[&str],
    escapes: Escapes,
    share: &mut dyn FnMut(Expr, Sharing) -> Result<Expr, Error>,
) -> Result<Expr, Error> {
    // The trie: children (char, node) per node, and which nodes end a name.
    let mut children: Vec<Vec<(char, usize)>> = vec![Vec::new()];
    let mut terminal = vec![false];
    for name in names {
        let mut node = 0;
        for c in name.chars() {
            node = match children[node].iter().find(|(k, _)| *k == c) {
                Some(&(_, next)) => next,
                None => {
                    children.push(Vec::new());
                    terminal.push(false);
                    let next = children.len() - 1;
                    children[node].push((c, next));
                    next
                }
            };
        }
        terminal[node] = true;
    }
    if children[0].is_empty() {
        // No name, or only the empty one: a plain string, one automaton wherever it is used
        // (a map's keys), with nothing to share.
        let chars = match terminal[0] {
            true => Expr::plus(any_char(escapes)),
            false => Expr::star(any_char(escapes)),
        };
        return Ok(Expr::seq([Expr::bytes(*b"\""), chars, Expr::bytes(*b"\"")]));
    }
    let rest = Expr::seq([Expr::star(any_char(escapes)), Expr::bytes(*b"\"")]);
    let free = share(rest.clone(), Sharing::Tail)?;
    let mut others: HashMap<Vec<char>, Option<Expr>> = HashMap::default();
    let mut not_raw_ascii = HashMap::default();
    // Children are created after their parents, so a reverse sweep sees children first.
    let mut exprs: Vec<Option<Expr>> = vec![None; children.len()];
    for node in (0..children.len()).rev() {
        let mut alternatives = Vec::new();
        if !terminal[node] {
            alternatives.push(Expr::bytes(*b"\""));
        }
        let mut used: Vec<char> = children[node].iter().map(|(c, _)| *c).collect();
        used.sort_unstable();
        for &(c, next) in &children[node] {
            let rest = exprs[next].take().expect("children come later");
            let spelled = spell_char(c, escapes);
            alternatives.push(Expr::seq([spelled, rest]));
        }
        let other = match others.get(&used) {
            Some(other) => other.clone(),
            None => {
                let other = match escapes {
                    Escapes::Canonical => {
                        leave_canonically(&used, (&free, &rest), &mut not_raw_ascii, share)?
                    }
                    Escapes::Any => match spell_except(&used, escapes) {
                        Some(chars) => {
                            Some(share(Expr::seq([chars, free.clone()]), Sharing::Rule)?)
                        }
                        None => None,
                    },
                };
                others.insert(used, other.clone());
                other
            }
        };
        alternatives.extend(other);
        let mut expr = Expr::choice(alternatives);
        // A node with a choice is a rule of its own, as normalisation would make it (a choice
        // inside a sequence is lifted into a rule): written so here, equal subtries of
        // different objects are one rule from the start, and no expression nests deeper
        // than one node.
        if let Some(e) = expr.take_if(|e| matches!(e.kind(), ExprKind::Choice(_))) {
            expr = Some(share(e, Sharing::Rule)?);
        }
        exprs[node] = expr;
    }
    Ok(Expr::seq([
        Expr::bytes(*b"\""),
        exprs[0]
            .take()
            .expect("the root always has other characters"),
    ]))
}

/// The keys, under [`Escapes::Canonical`], that leave a trie node whose children start with
/// `used`: a character not in `used`, then the rest of the string (`rest`, and `free`, the
/// shared rule of it).
///
/// Written as `[ASCII spelled raw, less used] free | not_raw_ascii`, where `not_raw_ascii`
/// (a non-ASCII character or an escape, not in `used`, then the rest, written out so the
/// shared rule refers to no other) depends only on the characters of `used` that are not
/// spelled as one raw ASCII byte — none, for most names — so one rule serves every node of
/// the trie. Only the byte class differs from node to node.
fn leave_canonically(
    used: &[char],
    (free, rest): (&Expr, &Expr),
    not_raw_ascii: &mut HashMap<Vec<char>, Option<Expr>>,
    share: &mut dyn FnMut(Expr, Sharing) -> Result<Expr, Error>,
) -> Result<Option<Expr>, Error> {
    // The ASCII characters written as their own byte: printable ones but `"` and `\`, and DEL.
    let spelled_raw = |c: char| matches!(c, ' '..='\u{7f}') && c != '"' && c != '\\';
    let mut raw = ByteClass::default();
    for c in (' '..='\u{7f}').filter(|&c| spelled_raw(c) && !used.contains(&c)) {
        raw.insert(c as u8);
    }
    let others: Vec<char> = used.iter().copied().filter(|&c| !spelled_raw(c)).collect();
    let leaving = match not_raw_ascii.get(&others) {
        Some(leaving) => leaving.clone(),
        None => {
            let mut excluded: Vec<char> = (' '..='\u{7f}').filter(|&c| spelled_raw(c)).collect();
            excluded.extend(&others);
            excluded.sort_unstable();
            let leaving = match spell_except(&excluded, Escapes::Canonical) {
                Some(chars) => Some(share(Expr::seq([chars, rest.clone()]), Sharing::Tail)?),
                None => None,
            };
            not_raw_ascii.insert(others, leaving.clone());
            leaving
        }
    };
    let raw = Expr::class(raw).map(|raw| Expr::seq([raw, free.clone()]));
    match Expr::choice(raw.into_iter().chain(leaving)) {
        Some(other) => Ok(Some(share(other, Sharing::Rule)?)),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use sieve_ir::reference::Recognizer;
    use sieve_ir::GrammarBuilder;

    use super::*;

    /// Every spelling of `c`: raw, short escape, `\/`, `\u` in lower, upper and mixed case
    /// (surrogate pairs outside the BMP), whether or not JSON allows it raw.
    fn all_spellings(c: char) -> Vec<String> {
        let mut out = vec![c.to_string()];
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        out.extend(short.map(str::to_owned));
        let mut units = [0u16; 2];
        let units = c.encode_utf16(&mut units);
        let lower: String = units.iter().map(|u| format!("\\u{u:04x}")).collect();
        let upper: String = units.iter().map(|u| format!("\\u{u:04X}")).collect();
        let mixed: String = lower
            .chars()
            .enumerate()
            .map(|(i, ch)| {
                if i % 2 == 0 {
                    ch.to_ascii_uppercase()
                } else {
                    ch
                }
            })
            .collect::<String>()
            .replace("\\U", "\\u");
        out.extend([lower, upper, mixed]);
        out.sort();
        out.dedup();
        out
    }

    /// Whether `text` is a JSON string that `escapes` allows and that decodes to none of
    /// `names`; the oracle is `serde_json` (which also refuses unpaired surrogates).
    fn expected(text: &str, names: &[&str], escapes: Escapes) -> bool {
        let Ok(value) = serde_json::from_str::<String>(text) else {
            return false;
        };
        let canonical: Vec<u8> = std::iter::once(b'"')
            .chain(value.chars().flat_map(crate::string::canonical))
            .chain(std::iter::once(b'"'))
            .collect();
        let spelled_right = escapes == Escapes::Any || canonical == text.as_bytes();
        spelled_right && !names.contains(&value.as_str())
    }

    /// The language of `string_except(names)` is the JSON strings whose decoded value is not
    /// a name, each character in exactly the spellings `escapes` allows: checked on every
    /// spelling of one and two characters drawn from the names and their neighbours.
    #[test]
    fn string_except_decides_by_decoded_value() {
        let names: [&[&str]; 3] = [&["a/\"", "\u{1F600}x", "ab", "\u{1}", "é\\"], &[], &[""]];
        let chars: Vec<char> = [
            'a',
            'b',
            'c',
            '`',
            '/',
            '.',
            '"',
            '\\',
            'x',
            'é',
            'è',
            '\u{1}',
            '\u{0}',
            '\u{2}',
            '\n',
            '\u{7f}',
            '€',
            '\u{1F600}',
            '\u{1F601}',
            '\u{10FFFF}',
            '\u{FFFF}',
        ]
        .into();
        for (names, escapes) in names
            .into_iter()
            .flat_map(|names| [Escapes::Any, Escapes::Canonical].map(|e| (names, e)))
        {
            let builder = RefCell::new(GrammarBuilder::new());
            let mut share = |body: Expr, sharing: Sharing| -> Result<Expr, Error> {
                let mut b = builder.borrow_mut();
                let id = b.fresh("shared").unwrap();
                b.define(id, body);
                if sharing == Sharing::Tail {
                    b.share(id);
                }
                Ok(Expr::rule(id))
            };
            let body = string_except(names, escapes, &mut share).unwrap();
            let mut builder = builder.into_inner();
            let root = builder.fresh("root").unwrap();
            builder.define(root, body);
            let grammar = builder.build(root).unwrap();
            let recognizer = Recognizer::new(&grammar).unwrap();
            let mut values: Vec<Vec<char>> = vec![vec![]];
            values.extend(chars.iter().map(|&c| vec![c]));
            for &c in &chars {
                for &d in &chars {
                    values.push(vec![c, d]);
                }
            }
            for name in names.iter() {
                values.push(name.chars().collect());
            }
            for value in values {
                // Every combination of spellings of the value's characters.
                let mut texts = vec![String::from("\"")];
                for &c in &value {
                    texts = texts
                        .into_iter()
                        .flat_map(|text| {
                            all_spellings(c).into_iter().map(move |s| text.clone() + &s)
                        })
                        .collect();
                }
                for text in texts {
                    let text = format!("{text}\"");
                    assert_eq!(
                        recognizer.accepts(text.as_bytes()),
                        expected(&text, names, escapes),
                        "{escapes:?}: {text}"
                    );
                }
            }
        }
    }
}
