//! Text to [`ast::Grammar`]: the driver around the generated LR(1) parser and the helpers its
//! actions call.
//!
//! Invariants:
//!
//! - The input-size limit is checked first, then the lexer checks balance, depth and the rule
//!   count on the flat token list ([`crate::lexer::tokenize`]), and only then does the parser
//!   run, so no tree deeper than [`Limits::max_depth`] groups is ever built.
//! - Value errors that do not derail parsing (bad escapes, reversed ranges, bad repetition
//!   bounds) are pushed to a list by the actions and parsing goes on, so one run reports all of
//!   them. A syntax error stops the parse and is reported alone (with any value errors before
//!   it).
//! - Escapes denote Unicode code points (llama.cpp semantics: `"\xFF"` is U+00FF).

use lalrpop_util::ParseError;
use sieve_diagnostics::Span;

use crate::ast::{self, Class, ClassItem, Expr, ExprKind, Quantifier};
use crate::lexer::{self, Tok};
use crate::{Error, Errors, Limits};

/// Parses `text` under `limits` (see [`crate::parse_with`]).
pub(crate) fn parse_with(text: &str, limits: &Limits) -> Result<ast::Grammar, Errors> {
    if text.len() > limits.max_input_bytes {
        let mut start = limits.max_input_bytes;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        return Err(Errors::new(vec![Error::InputTooLarge {
            span: Span::new(start, text.len()),
            len: text.len(),
            limit: limits.max_input_bytes,
        }]));
    }
    let tokens = lexer::tokenize(text, limits).map_err(Errors::new)?;
    let mut errors = Vec::new();
    let parser = crate::grammar::GrammarParser::new();
    let result = parser.parse(
        &mut errors,
        limits.max_repeat,
        tokens.into_iter().map(Ok::<_, Error>),
    );
    match result {
        Ok(mut grammar) => {
            if !errors.is_empty() {
                return Err(Errors::new(errors));
            }
            let line_starts: Vec<usize> = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            for rule in &mut grammar.rules {
                rule.line = line_starts.partition_point(|&s| s <= rule.name_span.start);
            }
            Ok(grammar)
        }
        Err(e) => {
            errors.push(syntax_error(e, text.len()));
            Err(Errors::new(errors))
        }
    }
}

fn syntax_error(e: ParseError<usize, Tok<'_>, Error>, end: usize) -> Error {
    match e {
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => Error::UnexpectedToken {
            span: Span::new(l, r),
            found: tok.describe(),
            expected: describe_expected(&expected),
        },
        ParseError::ExtraToken { token: (l, tok, r) } => Error::UnexpectedToken {
            span: Span::new(l, r),
            found: tok.describe(),
            expected: "the end of the grammar".into(),
        },
        ParseError::UnrecognizedEof { location, expected } => Error::UnexpectedEnd {
            span: Span::at(location.min(end)),
            expected: describe_expected(&expected),
        },
        ParseError::InvalidToken { location } => Error::UnexpectedEnd {
            span: Span::at(location),
            expected: "a token".into(),
        },
        ParseError::User { error } => error,
    }
}

/// Turns LALRPOP's list of expected terminals into plain words.
fn describe_expected(expected: &[String]) -> String {
    let mut words: Vec<&str> = Vec::new();
    for terminal in expected {
        let word = match terminal.trim_matches('"') {
            "name" | "call" | "string" | "class" | "token" | "." | "(" => "an expression",
            "rule start" => "a new rule (`name ::= …`)",
            "|" => "`|`",
            ")" => "`)`",
            "?" | "*" | "+" | "{" => "a repetition (`?`, `*`, `+` or `{…}`)",
            "(=" => "a lookahead `(= …)`",
            "number" => "a number",
            "," => "`,`",
            "}" => "`}`",
            "::=" => "`::=`",
            _ => "something else",
        };
        if !words.contains(&word) {
            words.push(word);
        }
    }
    // Say the likely thing first: the most common reason for an error after an expression is a
    // missing `)` or a stray token, not a missing repetition.
    words.sort_by_key(|w| match *w {
        "an expression" => 0,
        "`)`" => 1,
        "a number" => 2,
        "`}`" | "`,`" => 3,
        "a new rule (`name ::= …`)" => 5,
        _ => 4,
    });
    match words.as_slice() {
        [] => "nothing more".into(),
        [one] => (*one).into(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Builds a rule from its parts (the parser action for `name ::= body (= look)?`).
pub(crate) fn rule(
    start: usize,
    head: &str,
    body: Expr,
    lookahead: Option<ast::Lookahead>,
    end: usize,
) -> ast::Rule {
    let name = lexer::rule_name(head);
    ast::Rule {
        name: name.to_owned(),
        // The lexer reported a malformed block, so the parse never gets here with one.
        max_tokens: lexer::rule_attributes(head, start).unwrap_or(None),
        name_span: Span::new(start, start + name.len()),
        line: 0,
        body,
        lookahead,
        span: Span::new(start, end),
    }
}

/// A concatenation of `items` (empty: [`ExprKind::Empty`]; one item: that item).
pub(crate) fn concat(mut items: Vec<Expr>, l: usize, r: usize) -> Expr {
    match items.len() {
        0 => Expr {
            kind: ExprKind::Empty,
            span: Span::new(l, r.max(l)),
        },
        1 => items.pop().expect("one item"),
        _ => Expr {
            kind: ExprKind::Concat(items),
            span: Span::new(l, r),
        },
    }
}

/// An alternation of `first` and `rest` (no rest: `first`).
/// A built-in call from its token (`name(`) and arguments; a lone empty argument, as in
/// `quoted_text()`, means no arguments.
pub(crate) fn call(name: &str, first: Expr, rest: Vec<Expr>, l: usize, r: usize) -> Expr {
    let function = crate::ast::Builtin::from_name(name.trim_end_matches('('))
        .expect("the lexer only makes call tokens of built-in names");
    let mut args = Vec::with_capacity(rest.len() + 1);
    args.push(first);
    args.extend(rest);
    if args.len() == 1 && matches!(args[0].kind, ExprKind::Empty) {
        args.clear();
    }
    Expr {
        kind: ExprKind::Call { function, args },
        span: Span::new(l, r),
    }
}

pub(crate) fn alternation(first: Expr, rest: Vec<Expr>, l: usize, r: usize) -> Expr {
    if rest.is_empty() {
        return first;
    }
    let mut alts = Vec::with_capacity(rest.len() + 1);
    alts.push(first);
    alts.extend(rest);
    Expr {
        kind: ExprKind::Alternation(alts),
        span: Span::new(l, r),
    }
}

/// A repetition bound as written: the number's text and span.
pub(crate) type Bound<'a> = Option<(&'a str, Span)>;

/// Checks and builds a braced repetition `{min}`, `{min,}`, `{min,max}` or `{,max}`.
pub(crate) fn braces(
    errors: &mut Vec<Error>,
    max_repeat: u32,
    min: Bound<'_>,
    comma: bool,
    max: Bound<'_>,
    span: Span,
) -> Quantifier {
    // `Err(())`: the number was bad and is already reported.
    let mut number = |bound: Bound<'_>| -> Result<Option<u32>, ()> {
        let Some((text, span)) = bound else {
            return Ok(None);
        };
        match text.parse::<u32>() {
            Ok(n) if n > max_repeat => {
                errors.push(Error::RepeatOverLimit {
                    span,
                    bound: n,
                    limit: max_repeat,
                });
                Err(())
            }
            Ok(n) => Ok(Some(n)),
            Err(_) => {
                errors.push(Error::RepeatOverflow {
                    span,
                    number: text.to_owned(),
                });
                Err(())
            }
        }
    };
    let lo = number(min);
    let hi = number(max);
    let (Ok(lo), Ok(hi)) = (lo, hi) else {
        return Quantifier::ZeroOrMore;
    };
    let lo = lo.unwrap_or(0);
    let max = if comma { hi } else { Some(lo) };
    if let Some(hi) = max {
        if lo > hi {
            errors.push(Error::RepeatMinOverMax {
                span,
                min: lo,
                max: hi,
            });
        }
    }
    Quantifier::Range { min: lo, max }
}

/// Decodes the body of a literal token (quotes included in `raw`, starting at byte `offset`).
/// A token terminal from its text; a malformed one is reported and read as nothing.
pub(crate) fn token(errors: &mut Vec<Error>, raw: &str, span: Span) -> ExprKind {
    match sieve_ir::token::parse_syntax(raw) {
        Ok(set) => ExprKind::Token {
            raw: raw.to_owned(),
            set,
        },
        Err(message) => {
            errors.push(Error::BadToken { span, message });
            ExprKind::Empty
        }
    }
}

pub(crate) fn literal(errors: &mut Vec<Error>, raw: &str, offset: usize) -> ExprKind {
    let body = &raw[1..raw.len() - 1];
    let chars = decode(errors, body, offset + 1);
    ExprKind::Literal(chars.into_iter().map(|(c, _, _)| c).collect())
}

/// Decodes a class token (brackets included in `raw`, starting at byte `offset`).
pub(crate) fn class(errors: &mut Vec<Error>, raw: &str, offset: usize) -> ExprKind {
    let mut body = &raw[1..raw.len() - 1];
    let mut body_offset = offset + 1;
    let negated = body.starts_with('^');
    if negated {
        body = &body[1..];
        body_offset += 1;
    }
    let chars = decode(errors, body, body_offset);
    let mut items = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (lo, lo_span, _) = chars[i];
        let is_range = matches!(chars.get(i + 1), Some(('-', _, false))) && i + 2 < chars.len();
        if is_range {
            let (hi, hi_span, _) = chars[i + 2];
            let span = lo_span.to(hi_span);
            if lo > hi {
                errors.push(Error::ReversedRange { span, lo, hi });
            }
            items.push(ClassItem { lo, hi, span });
            i += 3;
        } else {
            items.push(ClassItem {
                lo,
                hi: lo,
                span: lo_span,
            });
            i += 1;
        }
    }
    ExprKind::Class(Class { negated, items })
}

/// Decodes the characters of a literal or class body: `(char, span, was_escaped)`.
///
/// Bad escapes are reported to `errors` and decode to U+FFFD so parsing can go on.
fn decode(errors: &mut Vec<Error>, body: &str, offset: usize) -> Vec<(char, Span, bool)> {
    let mut out = Vec::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push((c, Span::new(offset + i, offset + i + c.len_utf8()), false));
            continue;
        }
        let Some((_, e)) = chars.next() else {
            // The lexer never ends a body on a lone backslash; be safe anyway.
            errors.push(Error::BadEscape {
                span: Span::new(offset + i, offset + i + 1),
                escape: "\\".into(),
                reason: "a backslash must be followed by an escape character".into(),
            });
            break;
        };
        let simple = match e {
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            '0' => Some('\0'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            'e' => Some('\u{1b}'),
            '\\' | '"' | '\'' | '?' | '[' | ']' | '-' | '^' => Some(e),
            _ => None,
        };
        if let Some(value) = simple {
            let end = offset + i + 1 + e.len_utf8();
            out.push((value, Span::new(offset + i, end), true));
            continue;
        }
        let digits = match e {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            _ => {
                let end = offset + i + 1 + e.len_utf8();
                errors.push(Error::BadEscape {
                    span: Span::new(offset + i, end),
                    escape: format!("\\{e}"),
                    reason: "accepted escapes are \\n \\r \\t \\0 \\a \\b \\e \\f \\v \\\\ \\\" \\' \\? \\[ \\] \\- \\^, \\xHH, \\uHHHH and \\UHHHHHHHH".into(),
                });
                out.push(('\u{fffd}', Span::new(offset + i, end), true));
                continue;
            }
        };
        let mut value: u32 = 0;
        let mut taken = 0;
        let mut end = i + 2;
        while taken < digits {
            match chars.peek() {
                Some(&(j, d)) if d.is_ascii_hexdigit() => {
                    value = value * 16 + d.to_digit(16).expect("hex digit");
                    taken += 1;
                    end = j + 1;
                    chars.next();
                }
                _ => break,
            }
        }
        let span = Span::new(offset + i, offset + end);
        let escape = body[i..end].to_owned();
        if taken < digits {
            errors.push(Error::BadEscape {
                span,
                escape,
                reason: format!("`\\{e}` must be followed by exactly {digits} hex digits"),
            });
            out.push(('\u{fffd}', span, true));
            continue;
        }
        match char::from_u32(value) {
            Some(c) => out.push((c, span, true)),
            None => {
                errors.push(Error::InvalidCodePoint { span, escape });
                out.push(('\u{fffd}', span, true));
            }
        }
    }
    out
}
