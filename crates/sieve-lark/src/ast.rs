//! The parsed Lark file: items in source order, every node with its span.
//!
//! Names keep their spelling (`_NL`, `value`); whether a name is a terminal is decided by its
//! case (upper-case after an optional `_` is a terminal, as in Lark). Tree-shaping marks
//! (`?rule`, `!rule`, `-> alias`) are kept only as far as errors need them: they never change
//! the language.

use sieve_diagnostics::Span;

/// A whole Lark file.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    /// Definitions and directives, in source order.
    pub items: Vec<Item>,
}

/// One top-level item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `name: …` or `NAME: …`.
    Def(Def),
    /// `%ignore expansions`.
    Ignore(Expr),
    /// `%import a.b.C [-> D]` or `%import a.b (C, D)`.
    Import(Import),
    /// `%llguidance { … }`: the JSON text of the options.
    Options {
        /// The JSON object's text.
        json: String,
        /// The JSON text's span.
        span: Span,
    },
    /// A directive sieve refuses (`%declare`, `%override`), by name.
    Unsupported {
        /// The directive, e.g. `%declare`.
        directive: String,
        /// The directive keyword.
        span: Span,
    },
}

/// `%import`.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// The dotted path before the imported names: `common` in `%import common.INT`, with a
    /// leading empty part for relative paths (`.grammars.ab`).
    pub module: Vec<String>,
    /// Each imported name and the name it is bound to (`-> alias`, or itself).
    pub names: Vec<(Name, Name)>,
    /// The whole directive.
    pub span: Span,
}

/// A name as written, with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    /// The spelling.
    pub text: String,
    /// Where it is.
    pub span: Span,
}

impl Name {
    /// Whether this names a terminal (upper-case, after optional leading underscores).
    pub fn is_terminal(&self) -> bool {
        is_terminal_name(&self.text)
    }
}

/// Whether a name denotes a terminal in Lark: its first letter is upper-case.
pub fn is_terminal_name(name: &str) -> bool {
    name.trim_start_matches('_')
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// A rule or terminal definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Def {
    /// The defined name.
    pub name: Name,
    /// Template parameters `{a, b}` (refused when lowering).
    pub params: Vec<Name>,
    /// `.N` priority and its span.
    pub priority: Option<(i64, Span)>,
    /// `[lazy, capture, …]` attributes.
    pub attrs: Vec<Attr>,
    /// The body.
    pub body: Expr,
}

/// One rule attribute, `name` or `name=value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    /// The attribute's name.
    pub name: Name,
    /// Its value, if any.
    pub value: Option<Expr>,
}

/// An expression with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
}

/// The expression forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// Alternatives `a | b` (two or more).
    Choice(Vec<Expr>),
    /// Concatenation; empty for the empty string.
    Seq(Vec<Expr>),
    /// `a & b` (terminals only; two or more).
    And(Vec<Expr>),
    /// `~a` (terminals only).
    Not(Box<Expr>),
    /// `a?`, `[a]`, `a*`, `a+`, `a~n`, `a~m..n`, `a{m,n}`.
    Repeat {
        /// The repeated expression.
        item: Box<Expr>,
        /// Fewest repetitions.
        min: u32,
        /// Most repetitions, `None` for unbounded.
        max: Option<u32>,
    },
    /// A rule or terminal name.
    Name(String),
    /// A template use `name{a, b}` (refused when lowering).
    Template(String),
    /// A string literal: its characters, and the `i` flag.
    Literal {
        /// The decoded characters.
        value: String,
        /// Whether `"…"i` (case-insensitive).
        insensitive: bool,
    },
    /// A `/…/flags` regex.
    Regex {
        /// The pattern between the slashes, as written.
        pattern: String,
        /// Where the pattern starts in the file (after the opening `/`).
        pattern_start: usize,
        /// The flags after the closing `/`.
        flags: String,
    },
    /// `"a".."z"`: one character from a range.
    Range(char, char),
    /// `%json { … }`: the schema's text.
    Json(String),
    /// `%regex { … }`: the structured regex's text.
    StructuredRegex(String),
    /// A special token `<…>` as written.
    SpecialToken(String),
}
