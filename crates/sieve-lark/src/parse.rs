//! Tokens to the [`ast`](crate::ast): a recursive-descent parser.
//!
//! ```text
//! file        = { [item] NEWLINE } [item]
//! item        = def | "%ignore" expansions | "%import" path ["->" NAME | "(" NAME {"," NAME} ")"]
//!             | "%llguidance" JSON | "%declare" … | "%override" …
//! def         = {"?" | "!"} NAME ["{" NAME {"," NAME} "}"] ["." NUMBER] ["[" attr {"," attr} "]"] ":" expansions
//! expansions  = alias { [NEWLINE…] "|" alias }
//! alias       = conj ["->" NAME]
//! conj        = expansion { "&" expansion }
//! expansion   = { postfix }
//! postfix     = atom [ "?" | "*" | "+" | "~" NUMBER [".." NUMBER] | "{" [NUMBER] ["," [NUMBER]] "}" ]
//! atom        = "(" expansions ")" | "[" expansions "]" | "~" postfix-less atom
//!             | STRING ".." STRING | STRING | REGEX | NAME ["{" value {"," value} "}"]
//!             | "%json" JSON | "%regex" JSON | SPECIAL
//! ```
//!
//! `~` binds tighter than the postfix operators (`~A+` is `(~A)+`), `&` tighter than `|`, as
//! in llguidance. Invariants: nesting is bounded by [`crate::Limits::max_nesting`] (checked
//! before descending, so no input recurses without bound); the first syntax error stops the
//! parse.

use sieve_diagnostics::Span;

use crate::ast::{Attr, Def, Expr, ExprKind, File, Import, Item, Name};
use crate::error::{Error, ErrorKind};
use crate::lexer::{Tok, Token};

pub(crate) struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    depth: usize,
    max_depth: usize,
    text_len: usize,
}

type PResult<T> = Result<T, Error>;

impl<'a> Parser<'a> {
    pub(crate) fn new(tokens: &'a [Token], text_len: usize, max_depth: usize) -> Parser<'a> {
        Parser {
            tokens,
            pos: 0,
            depth: 0,
            max_depth,
            text_len,
        }
    }

    fn peek(&self) -> Option<&'a Tok> {
        self.tokens.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, n: usize) -> Option<&'a Tok> {
        self.tokens.get(self.pos + n).map(|t| &t.tok)
    }

    fn span(&self) -> Span {
        self.tokens
            .get(self.pos)
            .map_or(Span::at(self.text_len), |t| t.span)
    }

    fn prev_end(&self) -> usize {
        self.pos
            .checked_sub(1)
            .map_or(0, |p| self.tokens[p].span.end)
    }

    fn bump(&mut self) -> &'a Token {
        let t = &self.tokens[self.pos];
        self.pos += 1;
        t
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let yes = self.is_punct(p);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn expected(&self, what: &str) -> Error {
        let found = match self.peek() {
            None => "the end of the file".to_owned(),
            Some(Tok::Newline) => "the end of the line".to_owned(),
            Some(Tok::Name(n)) => format!("`{n}`"),
            Some(Tok::Punct(p)) => format!("`{p}`"),
            Some(Tok::Number(n)) => format!("`{n}`"),
            Some(Tok::Directive(d)) => format!("`{d}`"),
            Some(Tok::Str { .. }) => "a string".to_owned(),
            Some(Tok::Regex { .. }) => "a regex".to_owned(),
            Some(Tok::Json(_)) => "a JSON object".to_owned(),
            Some(Tok::Special(s)) => format!("`{s}`"),
        };
        Error::new(
            ErrorKind::Syntax,
            self.span(),
            format!("expected {what}, found {found}"),
        )
    }

    fn expect_punct(&mut self, p: &'static str) -> PResult<Span> {
        if self.is_punct(p) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }

    fn name(&mut self) -> PResult<Name> {
        match self.peek() {
            Some(Tok::Name(n)) => {
                let span = self.bump().span;
                Ok(Name {
                    text: n.clone(),
                    span,
                })
            }
            _ => Err(self.expected("a name")),
        }
    }

    fn number(&mut self) -> PResult<(i64, Span)> {
        match self.peek() {
            Some(Tok::Number(n)) => {
                let span = self.bump().span;
                n.parse::<i64>().map(|v| (v, span)).map_err(|_| {
                    Error::new(
                        ErrorKind::Syntax,
                        span,
                        format!("expected a whole number, found `{n}`"),
                    )
                })
            }
            _ => Err(self.expected("a number")),
        }
    }

    fn count(&mut self) -> PResult<u32> {
        let (v, span) = self.number()?;
        u32::try_from(v).map_err(|_| {
            Error::new(
                ErrorKind::Syntax,
                span,
                format!("a repetition count must be between 0 and {}", u32::MAX),
            )
        })
    }

    pub(crate) fn file(&mut self) -> PResult<File> {
        let mut items = Vec::new();
        loop {
            while matches!(self.peek(), Some(Tok::Newline)) {
                self.pos += 1;
            }
            if self.peek().is_none() {
                break;
            }
            items.push(self.item()?);
            match self.peek() {
                None | Some(Tok::Newline) => {}
                _ => return Err(self.expected("the end of the line")),
            }
        }
        Ok(File { items })
    }

    fn item(&mut self) -> PResult<Item> {
        if let Some(Tok::Directive(d)) = self.peek() {
            let span = self.bump().span;
            return match d.as_str() {
                "%ignore" => Ok(Item::Ignore(self.expansions()?)),
                "%import" => self.import(span).map(Item::Import),
                "%llguidance" => match self.peek() {
                    Some(Tok::Json(json)) => {
                        let span = self.bump().span;
                        Ok(Item::Options {
                            json: json.clone(),
                            span,
                        })
                    }
                    _ => Err(self.expected("a JSON object")),
                },
                "%declare" | "%override" | "%extend" => {
                    while !matches!(self.peek(), None | Some(Tok::Newline)) {
                        self.pos += 1;
                    }
                    Ok(Item::Unsupported {
                        directive: d.clone(),
                        span,
                    })
                }
                _ => Err(Error::new(
                    ErrorKind::Syntax,
                    span,
                    format!(
                        "unknown directive `{d}`: expected `%ignore`, `%import` or `%llguidance`"
                    ),
                )),
            };
        }
        self.def().map(Item::Def)
    }

    fn import(&mut self, start: Span) -> PResult<Import> {
        let mut parts = Vec::new();
        if self.eat_punct(".") {
            parts.push(String::new());
        }
        let mut last = self.name()?;
        while self.eat_punct(".") {
            parts.push(last.text);
            last = self.name()?;
        }
        let names = if self.eat_punct("(") {
            // `%import module (A, B)`: `last` was the module's last part.
            parts.push(last.text);
            let mut names = Vec::new();
            loop {
                let n = self.name()?;
                names.push((n.clone(), n));
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct(")")?;
            names
        } else if self.eat_punct("->") {
            let alias = self.name()?;
            vec![(last, alias)]
        } else {
            vec![(last.clone(), last)]
        };
        Ok(Import {
            module: parts,
            names,
            span: start.to(Span::at(self.prev_end())),
        })
    }

    fn def(&mut self) -> PResult<Def> {
        while self.eat_punct("?") || self.eat_punct("!") {}
        let name = self.name()?;
        let mut params = Vec::new();
        if self.eat_punct("{") {
            loop {
                params.push(self.name()?);
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct("}")?;
        }
        let priority = if self.eat_punct(".") {
            Some(self.number()?)
        } else {
            None
        };
        let mut attrs = Vec::new();
        if self.eat_punct("[") {
            loop {
                let name = self.name()?;
                let value = if self.eat_punct("=") {
                    Some(self.attr_value()?)
                } else {
                    None
                };
                attrs.push(Attr { name, value });
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct("]")?;
        }
        if !self.is_punct(":") {
            return Err(self.expected("`:` after the name being defined"));
        }
        self.pos += 1;
        let body = self.expansions()?;
        Ok(Def {
            name,
            params,
            priority,
            attrs,
            body,
        })
    }

    fn attr_value(&mut self) -> PResult<Expr> {
        if let Some(Tok::Number(n)) = self.peek() {
            let span = self.bump().span;
            return Ok(Expr {
                kind: ExprKind::Name(n.clone()),
                span,
            });
        }
        self.atom()
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(Error::new(
                ErrorKind::Limit,
                self.span(),
                format!("expressions nest more than {} levels deep", self.max_depth),
            ));
        }
        Ok(())
    }

    fn expansions(&mut self) -> PResult<Expr> {
        self.enter()?;
        let start = self.span().start;
        let mut alts = vec![self.alias()?];
        loop {
            // A `|` may start the next line.
            let mut look = 0;
            while matches!(self.peek_at(look), Some(Tok::Newline)) {
                look += 1;
            }
            if matches!(self.peek_at(look), Some(Tok::Punct("|"))) {
                self.pos += look + 1;
                alts.push(self.alias()?);
            } else {
                break;
            }
        }
        self.depth -= 1;
        Ok(if alts.len() == 1 {
            alts.pop().expect("one alternative")
        } else {
            Expr {
                kind: ExprKind::Choice(alts),
                span: Span::new(start, self.prev_end().max(start)),
            }
        })
    }

    fn alias(&mut self) -> PResult<Expr> {
        let e = self.conj()?;
        if self.eat_punct("->") {
            self.name()?;
        }
        Ok(e)
    }

    fn conj(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let mut items = vec![self.expansion()?];
        while self.eat_punct("&") {
            items.push(self.expansion()?);
        }
        Ok(if items.len() == 1 {
            items.pop().expect("one item")
        } else {
            Expr {
                kind: ExprKind::And(items),
                span: Span::new(start, self.prev_end()),
            }
        })
    }

    fn starts_atom(&self) -> bool {
        match self.peek() {
            Some(Tok::Name(_) | Tok::Str { .. } | Tok::Regex { .. } | Tok::Special(_)) => true,
            Some(Tok::Directive(d)) => d == "%json" || d == "%regex",
            Some(Tok::Punct(p)) => matches!(*p, "(" | "[" | "~"),
            _ => false,
        }
    }

    fn expansion(&mut self) -> PResult<Expr> {
        let start = self.span().start;
        let mut items = Vec::new();
        while self.starts_atom() {
            items.push(self.postfix()?);
        }
        Ok(if items.len() == 1 {
            items.pop().expect("one item")
        } else {
            let end = self.prev_end().max(start);
            Expr {
                kind: ExprKind::Seq(items),
                span: Span::new(start, end),
            }
        })
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let item = self.atom()?;
        let start = item.span.start;
        let (min, max) = match self.peek() {
            Some(Tok::Punct("?")) => (0, Some(1)),
            Some(Tok::Punct("*")) => (0, None),
            Some(Tok::Punct("+")) => (1, None),
            Some(Tok::Punct("~")) if matches!(self.peek_at(1), Some(Tok::Number(_))) => {
                self.pos += 1;
                let min = self.count()?;
                let max = if self.eat_punct("..") {
                    self.count()?
                } else {
                    min
                };
                return self.repeat(item, start, min, Some(max));
            }
            Some(Tok::Punct("{")) => {
                self.pos += 1;
                let min = if matches!(self.peek(), Some(Tok::Number(_))) {
                    self.count()?
                } else {
                    0
                };
                let max = if self.eat_punct(",") {
                    if matches!(self.peek(), Some(Tok::Number(_))) {
                        Some(self.count()?)
                    } else {
                        None
                    }
                } else {
                    Some(min)
                };
                self.expect_punct("}")?;
                return self.repeat(item, start, min, max);
            }
            _ => return Ok(item),
        };
        self.pos += 1;
        self.repeat(item, start, min, max)
    }

    fn repeat(&mut self, item: Expr, start: usize, min: u32, max: Option<u32>) -> PResult<Expr> {
        let span = Span::new(start, self.prev_end());
        if max.is_some_and(|max| max < min) {
            return Err(Error::new(
                ErrorKind::Syntax,
                span,
                "the repetition's upper bound is below its lower bound",
            ));
        }
        Ok(Expr {
            kind: ExprKind::Repeat {
                item: Box::new(item),
                min,
                max,
            },
            span,
        })
    }

    fn atom(&mut self) -> PResult<Expr> {
        let start = self.span();
        let Some(tok) = self.peek() else {
            return Err(self.expected("an expression"));
        };
        let kind = match tok {
            Tok::Punct("(") => {
                self.pos += 1;
                let inner = if self.is_punct(")") {
                    Expr {
                        kind: ExprKind::Seq(Vec::new()),
                        span: self.span(),
                    }
                } else {
                    self.expansions()?
                };
                self.expect_punct(")")?;
                let mut inner = inner;
                inner.span = start.to(Span::at(self.prev_end()));
                return Ok(inner);
            }
            Tok::Punct("[") => {
                self.pos += 1;
                let inner = self.expansions()?;
                self.expect_punct("]")?;
                ExprKind::Repeat {
                    item: Box::new(inner),
                    min: 0,
                    max: Some(1),
                }
            }
            Tok::Punct("~") => {
                self.pos += 1;
                self.enter()?;
                let inner = self.atom()?;
                self.depth -= 1;
                ExprKind::Not(Box::new(inner))
            }
            Tok::Str { value, insensitive } => {
                self.pos += 1;
                if self.eat_punct("..") {
                    let (hi, hi_span) = match self.peek() {
                        Some(Tok::Str { value, .. }) => (value, self.bump().span),
                        _ => return Err(self.expected("a string after `..`")),
                    };
                    let one = |s: &str| {
                        let mut cs = s.chars();
                        cs.next().filter(|_| cs.next().is_none())
                    };
                    let (Some(a), Some(b)) = (one(value), one(hi)) else {
                        return Err(Error::new(
                            ErrorKind::Syntax,
                            start.to(hi_span),
                            "a range `\"a\"..\"z\"` needs one character on each side",
                        ));
                    };
                    if a > b {
                        return Err(Error::new(
                            ErrorKind::Syntax,
                            start.to(hi_span),
                            "the range is empty: its first character comes after its last",
                        ));
                    }
                    ExprKind::Range(a, b)
                } else {
                    ExprKind::Literal {
                        value: value.clone(),
                        insensitive: *insensitive,
                    }
                }
            }
            Tok::Regex { pattern, flags } => {
                self.pos += 1;
                ExprKind::Regex {
                    pattern: pattern.clone(),
                    pattern_start: start.start + 1,
                    flags: flags.clone(),
                }
            }
            Tok::Name(n) => {
                self.pos += 1;
                // `name{a, b}` uses a template; `name{2,3}` is a repetition (see `postfix`).
                if self.is_punct("{")
                    && !matches!(self.peek_at(1), Some(Tok::Number(_) | Tok::Punct(",")))
                {
                    self.pos += 1;
                    let mut depth = 1;
                    while depth > 0 {
                        match self.peek() {
                            None => return Err(self.expected("`}`")),
                            Some(Tok::Punct("{")) => depth += 1,
                            Some(Tok::Punct("}")) => depth -= 1,
                            _ => {}
                        }
                        self.pos += 1;
                    }
                    ExprKind::Template(n.clone())
                } else {
                    ExprKind::Name(n.clone())
                }
            }
            Tok::Directive(d) if d == "%json" || d == "%regex" => {
                self.pos += 1;
                let json = match self.peek() {
                    Some(Tok::Json(j)) => j.clone(),
                    _ => return Err(self.expected("a JSON object")),
                };
                self.pos += 1;
                if d == "%json" {
                    ExprKind::Json(json)
                } else {
                    ExprKind::StructuredRegex(json)
                }
            }
            Tok::Special(s) => {
                self.pos += 1;
                ExprKind::SpecialToken(s.clone())
            }
            _ => return Err(self.expected("an expression")),
        };
        Ok(Expr {
            kind,
            span: start.to(Span::at(self.prev_end())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    fn body(text: &str) -> ExprKind {
        let tokens = lex(text).unwrap();
        let file = Parser::new(&tokens, text.len(), 64).file().unwrap();
        match &file.items[0] {
            Item::Def(def) => def.body.kind.clone(),
            other => panic!("not a definition: {other:?}"),
        }
    }

    fn shape(kind: &ExprKind) -> String {
        match kind {
            ExprKind::Choice(xs) => format!(
                "({})",
                xs.iter()
                    .map(|x| shape(&x.kind))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
            ExprKind::Seq(xs) => format!(
                "[{}]",
                xs.iter()
                    .map(|x| shape(&x.kind))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            ExprKind::And(xs) => format!(
                "({})",
                xs.iter()
                    .map(|x| shape(&x.kind))
                    .collect::<Vec<_>>()
                    .join(" & ")
            ),
            ExprKind::Not(x) => format!("~{}", shape(&x.kind)),
            ExprKind::Repeat { item, min, max } => {
                format!("{}{{{min},{max:?}}}", shape(&item.kind))
            }
            ExprKind::Name(n) | ExprKind::Template(n) => n.clone(),
            ExprKind::Literal { value, insensitive } => {
                format!("{value:?}{}", if *insensitive { "i" } else { "" })
            }
            ExprKind::Regex { pattern, flags, .. } => format!("/{pattern}/{flags}"),
            ExprKind::Range(a, b) => format!("{a}..{b}"),
            ExprKind::Json(_) => "%json".to_owned(),
            ExprKind::StructuredRegex(_) => "%regex".to_owned(),
            ExprKind::SpecialToken(s) => s.clone(),
        }
    }

    #[test]
    fn operator_precedence() {
        // `&` binds tighter than `|`, looser than juxtaposition; `~` tighter than postfix.
        assert_eq!(shape(&body("A: B C & D | E")), "(([B C] & D) | E)");
        assert_eq!(shape(&body("A: ~B+")), "~B{1,None}");
        assert_eq!(shape(&body("A: B~2..3 C~4")), "[B{2,Some(3)} C{4,Some(4)}]");
        assert_eq!(
            shape(&body("A: B{2,} C{,3} D{5}")),
            "[B{2,None} C{0,Some(3)} D{5,Some(5)}]"
        );
        assert_eq!(shape(&body("a: sep{x, y}")), "sep");
        assert_eq!(
            shape(&body("a: [x] \"k\"i \"a\"..\"z\"")),
            "[x{0,Some(1)} \"k\"i a..z]"
        );
    }

    #[test]
    fn alternatives_continue_on_lines_starting_with_a_bar() {
        assert_eq!(
            shape(&body("a: x\n  | y // comment\n\n  | z -> alias\nb: w")),
            "(x | y | z)"
        );
    }

    #[test]
    fn strings_regexes_and_json_blocks() {
        assert_eq!(shape(&body(r#"a: "\x41\u00e9\n\q""#)), "\"Aé\\n\\\\q\"");
        assert_eq!(shape(&body(r"a: /a\/b/is")), r"/a\/b/is");
        let text = "a: %json {\"a\": \"}\",\n \"b\": [1]}\nb: %regex {\"substring_chars\": \"ab\"}";
        let tokens = lex(text).unwrap();
        let file = Parser::new(&tokens, text.len(), 64).file().unwrap();
        assert_eq!(file.items.len(), 2);
    }

    #[test]
    fn directives_and_definition_heads() {
        let text = "%import common.INT -> N\n%import common (WS, CNAME)\n%ignore WS\n?!_r.2[lazy, stop=\"x\"]: N\n%llguidance {}";
        let tokens = lex(text).unwrap();
        let file = Parser::new(&tokens, text.len(), 64).file().unwrap();
        let Item::Import(one) = &file.items[0] else {
            panic!()
        };
        assert_eq!(
            (one.names[0].0.text.as_str(), one.names[0].1.text.as_str()),
            ("INT", "N")
        );
        let Item::Import(two) = &file.items[1] else {
            panic!()
        };
        assert_eq!(two.module, ["common"]);
        assert_eq!(two.names.len(), 2);
        let Item::Def(def) = &file.items[3] else {
            panic!()
        };
        assert_eq!(def.name.text, "_r");
        assert_eq!(def.priority.map(|p| p.0), Some(2));
        assert_eq!(def.attrs.len(), 2);
        assert!(matches!(file.items[4], Item::Options { .. }));
    }
}
