//! The abstract syntax tree of GBNF/EBNF text, with a span on every node.
//!
//! Invariants:
//!
//! - The tree mirrors the text: groups `( … )` are [`ExprKind::Group`] nodes, and
//!   [`ExprKind::Alternation`] / [`ExprKind::Concat`] appear only where the text has `|` or
//!   juxtaposition. The parser produces *canonical* shapes: an alternation has at least two
//!   branches, none of them an alternation; a concatenation has at least two items, each a
//!   primary or a repetition; a repetition's item is a primary (a rule reference, literal,
//!   class, `.` or group).
//! - Escapes are decoded: literals hold `String`s and classes hold `char`s, so surrogates and
//!   values above U+10FFFF cannot be represented.
//! - [`Grammar`]'s `Display` prints canonical text that parses back to a tree equal to this one
//!   up to spans ([`Grammar::strip_spans`]), for every tree of canonical shape.
//! - Trees from [`crate::parse`] are at most [`crate::Limits::max_depth`] groups deep, which
//!   bounds the recursion of printing, comparison and dropping.

use std::fmt::{self, Write};

use sieve_diagnostics::Span;

/// A grammar: rules in text order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grammar {
    /// The rules, in the order they are defined.
    pub rules: Vec<Rule>,
    /// The whole text.
    pub span: Span,
}

/// A rule definition `name ::= body`, with an optional XGrammar lookahead `(= …)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The rule's name.
    pub name: String,
    /// The name in the text.
    pub name_span: Span,
    /// The 1-based line of the name (0 when the tree was not parsed from text).
    pub line: usize,
    /// The right-hand side.
    pub body: Expr,
    /// The rule's token limit, `name[max_tokens=N] ::=` (XGrammar's attribute): every text
    /// the rule matches must be spelled within that many tokens.
    pub max_tokens: Option<u32>,
    /// The lookahead assertion after the body, if any.
    pub lookahead: Option<Lookahead>,
    /// The whole definition.
    pub span: Span,
}

/// An XGrammar lookahead assertion `(= expr)` at the end of a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookahead {
    /// What must follow the rule.
    pub expr: Expr,
    /// The assertion, parentheses included.
    pub span: Span,
}

/// An expression with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// Where it is in the text.
    pub span: Span,
}

/// The kinds of expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    /// Nothing: an empty alternative or an empty rule body.
    Empty,
    /// A string literal, escapes decoded (possibly empty: `""`).
    Literal(String),
    /// A character class.
    Class(Class),
    /// `.`: any Unicode scalar value.
    Dot,
    /// A token terminal: one token by id or name, or any token but some
    /// (`sieve_ir::token`).
    Token {
        /// The text as written, e.g. `<|im_end|>` or `!<[7]>`.
        raw: String,
        /// What it denotes.
        set: sieve_ir::token::TokenSet,
    },
    /// A reference to a rule by name.
    RuleRef(String),
    /// A parenthesised expression.
    Group(Box<Expr>),
    /// An expression followed by a repetition operator.
    Repeat {
        /// The repeated expression.
        item: Box<Expr>,
        /// The operator.
        quantifier: Quantifier,
    },
    /// Juxtaposition of at least two items.
    Concat(Vec<Expr>),
    /// At least two branches separated by `|`.
    Alternation(Vec<Expr>),
    /// A built-in call `name(arg, …)` (no space before `(`), sieve's sugar; no arguments is
    /// an empty list, never one empty argument.
    Call {
        /// Which built-in.
        function: Builtin,
        /// The arguments, in order.
        args: Vec<Expr>,
    },
}

/// The built-in functions: sieve's syntactic sugar, lowered by [`sieve_ir::sugar`]
/// (`docs/regex-extensions.md` has their exact languages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Builtin {
    /// `text_until("stop", …)`: UTF-8 text up to and including the first stop phrase.
    TextUntil,
    /// `substring_of("text")`: a non-empty substring of the text.
    SubstringOf,
    /// `quoted_text()`: a JSON string literal.
    QuotedText,
    /// `unquoted_text()`: a YAML one-line plain scalar.
    UnquotedText,
    /// `delimited_list(item)` or `delimited_list(item, delimiter)`: one or more items.
    DelimitedList,
    /// `delimited_subsequence_of(a | b | …)`, optionally with `, delimiter`: a non-empty
    /// subsequence of the alternatives, in order.
    DelimitedSubsequenceOf,
}

impl Builtin {
    /// Every built-in, in documentation order.
    pub const ALL: [Builtin; 6] = [
        Builtin::TextUntil,
        Builtin::SubstringOf,
        Builtin::QuotedText,
        Builtin::UnquotedText,
        Builtin::DelimitedList,
        Builtin::DelimitedSubsequenceOf,
    ];

    /// The name as written before `(`.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::TextUntil => "text_until",
            Builtin::SubstringOf => "substring_of",
            Builtin::QuotedText => "quoted_text",
            Builtin::UnquotedText => "unquoted_text",
            Builtin::DelimitedList => "delimited_list",
            Builtin::DelimitedSubsequenceOf => "delimited_subsequence_of",
        }
    }

    /// The built-in with this name.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// A repetition operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    /// `?`
    Optional,
    /// `*`
    ZeroOrMore,
    /// `+`
    OneOrMore,
    /// `{m}`, `{m,}`, `{m,n}` or `{,n}`: between `min` and `max` (unbounded when `None`).
    Range {
        /// The least number of repetitions.
        min: u32,
        /// The most, `None` for unbounded.
        max: Option<u32>,
    },
}

impl Quantifier {
    /// The bounds as `(min, max)`, `max` `None` for unbounded.
    pub fn bounds(self) -> (u32, Option<u32>) {
        match self {
            Quantifier::Optional => (0, Some(1)),
            Quantifier::ZeroOrMore => (0, None),
            Quantifier::OneOrMore => (1, None),
            Quantifier::Range { min, max } => (min, max),
        }
    }
}

/// A character class `[…]` or `[^…]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    /// Whether it starts with `^`: the class is the complement of its items.
    pub negated: bool,
    /// The items, in text order.
    pub items: Vec<ClassItem>,
}

/// One item of a class: a character (`lo == hi`) or a range `lo-hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassItem {
    /// The first character.
    pub lo: char,
    /// The last character (inclusive).
    pub hi: char,
    /// Where the item is in the text.
    pub span: Span,
}

impl Grammar {
    /// Sets every span (and rule line) to its default, so that trees parsed from different
    /// texts compare equal when they mean the same.
    pub fn strip_spans(&mut self) {
        self.span = Span::default();
        for rule in &mut self.rules {
            rule.name_span = Span::default();
            rule.line = 0;
            rule.span = Span::default();
            rule.body.strip_spans();
            if let Some(look) = &mut rule.lookahead {
                look.span = Span::default();
                look.expr.strip_spans();
            }
        }
    }

    /// A copy with every span stripped ([`Grammar::strip_spans`]).
    pub fn without_spans(&self) -> Grammar {
        let mut copy = self.clone();
        copy.strip_spans();
        copy
    }

    /// The deepest expression nesting in any rule (a leaf has depth 1), computed without
    /// recursion so it is safe on any tree.
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut stack: Vec<(&Expr, usize)> = Vec::new();
        for rule in &self.rules {
            stack.push((&rule.body, 1));
            if let Some(look) = &rule.lookahead {
                stack.push((&look.expr, 1));
            }
        }
        while let Some((expr, depth)) = stack.pop() {
            max = max.max(depth);
            for child in expr.children() {
                stack.push((child, depth + 1));
            }
        }
        max
    }
}

impl Expr {
    /// The direct sub-expressions, in order.
    pub fn children(&self) -> &[Expr] {
        match &self.kind {
            ExprKind::Group(inner) | ExprKind::Repeat { item: inner, .. } => {
                std::slice::from_ref(&**inner)
            }
            ExprKind::Concat(items)
            | ExprKind::Alternation(items)
            | ExprKind::Call { args: items, .. } => items,
            _ => &[],
        }
    }

    /// Sets every span in this expression to its default.
    pub fn strip_spans(&mut self) {
        self.span = Span::default();
        match &mut self.kind {
            ExprKind::Group(inner) | ExprKind::Repeat { item: inner, .. } => inner.strip_spans(),
            ExprKind::Concat(items)
            | ExprKind::Alternation(items)
            | ExprKind::Call { args: items, .. } => items.iter_mut().for_each(Expr::strip_spans),
            ExprKind::Class(class) => {
                for item in &mut class.items {
                    item.span = Span::default();
                }
            }
            ExprKind::Empty
            | ExprKind::Literal(_)
            | ExprKind::Dot
            | ExprKind::Token { .. }
            | ExprKind::RuleRef(_) => {}
        }
    }
}

impl fmt::Display for Grammar {
    /// One rule a line: `name ::= body` (`name[max_tokens=N] ::=` for a limited rule), then ` (= lookahead)` when present.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rule in &self.rules {
            write!(f, "{}", rule.name)?;
            if let Some(k) = rule.max_tokens {
                write!(f, "[max_tokens={k}]")?;
            }
            f.write_str(" ::=")?;
            if !matches!(rule.body.kind, ExprKind::Empty) {
                write!(f, " {}", rule.body)?;
            }
            if let Some(look) = &rule.lookahead {
                write!(f, " (= {})", look.expr)?;
            }
            f.write_char('\n')?;
        }
        Ok(())
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Empty => Ok(()),
            ExprKind::Literal(s) => write_literal(f, s),
            ExprKind::Class(class) => write!(f, "{class}"),
            ExprKind::Dot => f.write_char('.'),
            ExprKind::Token { raw, .. } => f.write_str(raw),
            ExprKind::RuleRef(name) => f.write_str(name),
            ExprKind::Group(inner) => write!(f, "({inner})"),
            ExprKind::Repeat { item, quantifier } => write!(f, "{item}{quantifier}"),
            ExprKind::Concat(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_char(' ')?;
                    }
                    write!(f, "{item}")?;
                }
                Ok(())
            }
            ExprKind::Call { function, args } => {
                write!(f, "{}(", function.name())?;
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{arg}")?;
                }
                f.write_char(')')
            }
            ExprKind::Alternation(alts) => {
                for (i, alt) in alts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" |")?;
                    }
                    if !matches!(alt.kind, ExprKind::Empty) {
                        if i > 0 {
                            f.write_char(' ')?;
                        }
                        write!(f, "{alt}")?;
                    }
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Quantifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Quantifier::Optional => f.write_char('?'),
            Quantifier::ZeroOrMore => f.write_char('*'),
            Quantifier::OneOrMore => f.write_char('+'),
            Quantifier::Range { min, max: None } => write!(f, "{{{min},}}"),
            Quantifier::Range {
                min,
                max: Some(max),
            } if min == max => write!(f, "{{{min}}}"),
            Quantifier::Range {
                min,
                max: Some(max),
            } => write!(f, "{{{min},{max}}}"),
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        if self.negated {
            f.write_char('^')?;
        }
        for item in &self.items {
            write_char(f, item.lo, true)?;
            if item.hi != item.lo {
                f.write_char('-')?;
                write_char(f, item.hi, true)?;
            }
        }
        f.write_char(']')
    }
}

fn write_literal(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        write_char(f, c, false)?;
    }
    f.write_char('"')
}

/// Writes one character of a literal or class, escaped where needed so it reads back the same.
fn write_char(f: &mut fmt::Formatter<'_>, c: char, in_class: bool) -> fmt::Result {
    match c {
        '\n' => f.write_str("\\n"),
        '\r' => f.write_str("\\r"),
        '\t' => f.write_str("\\t"),
        '\\' => f.write_str("\\\\"),
        '"' if !in_class => f.write_str("\\\""),
        ']' | '-' | '^' | '[' if in_class => write!(f, "\\{c}"),
        c if c.is_control() || (c.is_whitespace() && c != ' ') => {
            let v = u32::from(c);
            if v <= 0xff {
                write!(f, "\\x{v:02X}")
            } else if v <= 0xffff {
                write!(f, "\\u{v:04X}")
            } else {
                write!(f, "\\U{v:08X}")
            }
        }
        c => f.write_char(c),
    }
}
