//! The parsed Lark file: items in source order, every node with its span.
//!
//! `Display` prints an AST back as Lark text that parses to the same AST, spans aside
//! (tested on every fixture grammar).
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

/// Prints a file back as Lark text that parses to the same items (tree-shaping marks and
/// template arguments, which the AST does not keep, are left out).
impl std::fmt::Display for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for item in &self.items {
            match item {
                Item::Def(def) => writeln!(f, "{def}")?,
                Item::Ignore(expr) => writeln!(f, "%ignore {expr}")?,
                Item::Import(import) => {
                    let module = import.module.join(".");
                    if let [(name, alias)] = import.names.as_slice() {
                        write!(f, "%import {module}.{}", name.text)?;
                        if alias.text != name.text {
                            write!(f, " -> {}", alias.text)?;
                        }
                        writeln!(f)?;
                    } else {
                        let names: Vec<&str> =
                            import.names.iter().map(|(n, _)| n.text.as_str()).collect();
                        writeln!(f, "%import {module} ({})", names.join(", "))?;
                    }
                }
                Item::Options { json, .. } => writeln!(f, "%llguidance {json}")?,
                Item::Unsupported { directive, .. } => writeln!(f, "{directive}")?,
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Def {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name.text)?;
        if !self.params.is_empty() {
            let params: Vec<&str> = self.params.iter().map(|p| p.text.as_str()).collect();
            write!(f, "{{{}}}", params.join(", "))?;
        }
        if let Some((priority, _)) = self.priority {
            write!(f, ".{priority}")?;
        }
        if !self.attrs.is_empty() {
            let attrs: Vec<String> = self
                .attrs
                .iter()
                .map(|a| match &a.value {
                    Some(v) => format!("{}={v}", a.name.text),
                    None => a.name.text.clone(),
                })
                .collect();
            write!(f, "[{}]", attrs.join(", "))?;
        }
        write!(f, ": {}", self.body)
    }
}

/// How tightly an expression binds, to decide where parentheses go.
fn level(kind: &ExprKind) -> u8 {
    match kind {
        ExprKind::Choice(_) => 0,
        ExprKind::And(_) => 1,
        ExprKind::Seq(items) if items.len() != 1 => 2,
        ExprKind::Repeat { .. } | ExprKind::Not(_) => 3,
        _ => 4,
    }
}

fn write_at(f: &mut std::fmt::Formatter<'_>, e: &Expr, min: u8) -> std::fmt::Result {
    if level(&e.kind) < min {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

fn write_string(f: &mut std::fmt::Formatter<'_>, s: &str) -> std::fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 || c == '\u{7f}' => write!(f, "\\x{:02x}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |f: &mut std::fmt::Formatter<'_>, xs: &[Expr], sep: &str, min: u8| {
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                write_at(f, x, min)?;
            }
            Ok(())
        };
        match &self.kind {
            ExprKind::Choice(xs) => join(f, xs, " | ", 1),
            ExprKind::And(xs) => join(f, xs, " & ", 2),
            ExprKind::Seq(xs) if xs.is_empty() => f.write_str("\"\""),
            ExprKind::Seq(xs) => join(f, xs, " ", 3),
            ExprKind::Not(x) => {
                f.write_str("~")?;
                write_at(f, x, 4)
            }
            ExprKind::Repeat { item, min, max } => {
                write_at(f, item, 4)?;
                match (min, max) {
                    (0, Some(1)) => f.write_str("?"),
                    (0, None) => f.write_str("*"),
                    (1, None) => f.write_str("+"),
                    (m, None) => write!(f, "{{{m},}}"),
                    (m, Some(n)) if m == n => write!(f, "{{{m}}}"),
                    (m, Some(n)) => write!(f, "{{{m},{n}}}"),
                }
            }
            ExprKind::Name(n) => f.write_str(n),
            ExprKind::Template(n) => write!(f, "{n}{{}}"),
            ExprKind::Literal { value, insensitive } => {
                write_string(f, value)?;
                if *insensitive {
                    f.write_str("i")?;
                }
                Ok(())
            }
            ExprKind::Regex { pattern, flags, .. } => write!(f, "/{pattern}/{flags}"),
            ExprKind::Range(a, b) => {
                write_string(f, &a.to_string())?;
                f.write_str("..")?;
                write_string(f, &b.to_string())
            }
            ExprKind::Json(json) => write!(f, "%json {json}"),
            ExprKind::StructuredRegex(json) => write!(f, "%regex {json}"),
            ExprKind::SpecialToken(token) => f.write_str(token),
        }
    }
}
