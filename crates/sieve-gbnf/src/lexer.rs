//! The lexer: grammar text to tokens, with the checks that need no parse tree.
//!
//! Invariants:
//!
//! - Tokens carry their source slice; string and class tokens are the raw text with quotes or
//!   brackets, and escapes are decoded later (by the parser actions, which locate each bad
//!   escape precisely).
//! - A rule start (`name ::=`, any whitespace between) is one token, so a rule body needs no
//!   terminator and the grammar stays LR(1) with newlines as plain whitespace.
//! - [`tokenize`] lexes the whole input before parsing and checks parenthesis balance and
//!   nesting depth on the flat token list, without recursion. So the parser never builds a tree
//!   deeper than [`crate::Limits::max_depth`] groups, and every later recursive pass (printing,
//!   lowering, dropping) has bounded depth.
//! - A built-in call's name and its `(` are one token ([`Tok::Call`]), and count as an opening
//!   parenthesis for balance and depth.
//! - Lexing never fails on the first problem: every lexical error of the input is collected.

use logos::Logos;
use sieve_diagnostics::Span;

use crate::{Error, Limits};

/// A token of GBNF/EBNF text.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
// A comment runs to the end of its line by design.
#[logos(skip(r"#[^\n]*", allow_greedy = true))]
pub enum Tok<'a> {
    /// `name ::=` or `name[attributes] ::=`: the start of a rule; the slice is the whole
    /// match, see [`rule_name`] and [`rule_attributes`].
    #[regex(r"[a-zA-Z_][a-zA-Z0-9_\-]*(\[[^\]\n]*\])?[ \t\r\n\f]*::=", |lex| lex.slice())]
    RuleStart(&'a str),
    /// A rule name in a body.
    #[regex(r"[a-zA-Z_][a-zA-Z0-9_\-]*", |lex| lex.slice())]
    Name(&'a str),
    /// A built-in function's name and the `(` right after it, no space between (see
    /// [`crate::ast::Builtin`]); the slice is the whole match.
    #[regex(
        r"(text_until|substring_of|quoted_text|unquoted_text|delimited_list|delimited_subsequence_of)\(",
        |lex| lex.slice()
    )]
    Call(&'a str),
    /// A string literal, quotes included (double or single).
    #[regex(r#""([^"\\\n]|\\[^\n])*""#, |lex| lex.slice())]
    #[regex(r#"'([^'\\\n]|\\[^\n])*'"#, |lex| lex.slice())]
    Str(&'a str),
    /// A string literal missing its closing quote before the end of the line.
    #[regex(r#""([^"\\\n]|\\[^\n])*\\?"#)]
    #[regex(r#"'([^'\\\n]|\\[^\n])*\\?"#)]
    UnterminatedStr,
    /// A character class, brackets included.
    #[regex(r"\[([^\]\\\n]|\\[^\n])*\]", |lex| lex.slice())]
    Class(&'a str),
    /// A character class missing its `]` before the end of the line.
    #[regex(r"\[([^\]\\\n]|\\[^\n])*\\?")]
    UnterminatedClass,
    /// A token terminal, `!` and angle brackets included: `<[12]>`, `<[^1,5-9]>`, `<|im_end|>`,
    /// `!<think>` (see `sieve_ir::token::parse_syntax`).
    #[regex(r"!?<(\[[^\]\n]*\]|[^\s<>\[\]]+)>", |lex| lex.slice())]
    Token(&'a str),
    /// A decimal number (only meaningful inside `{…}`).
    #[regex(r"[0-9]+", |lex| lex.slice())]
    Number(&'a str),
    /// `::=` without a rule name before it.
    #[token("::=")]
    Assign,
    /// `|`
    #[token("|")]
    Pipe,
    /// `(`
    #[token("(")]
    LParen,
    /// `(=`: the start of an XGrammar lookahead assertion.
    #[regex(r"\([ \t\r\n\f]*=")]
    LookOpen,
    /// `)`
    #[token(")")]
    RParen,
    /// `?`
    #[token("?")]
    Question,
    /// `*`
    #[token("*")]
    Star,
    /// `+`
    #[token("+")]
    Plus,
    /// `.`
    #[token(".")]
    Dot,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `,`
    #[token(",")]
    Comma,
}

/// The rule name at the start of a [`Tok::RuleStart`] slice.
pub fn rule_name(slice: &str) -> &str {
    let end = slice
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(slice.len());
    &slice[..end]
}

/// The most tokens a `max_tokens` attribute may name (larger budgets are not limits).
pub const MAX_TOKEN_LIMIT: u32 = 1 << 20;

/// The attributes of a rule start, XGrammar's `name[max_tokens=N] ::=`: the token limit, or
/// the error (with its span, `start` being the slice's offset in the text). Items are
/// comma-separated `key=value` pairs with spaces allowed around them; `max_tokens` is the only
/// key sieve enforces, and XGrammar's other keys (`max_chars`, `capture`, `lazy`, …) are
/// refused by name rather than ignored.
pub fn rule_attributes(slice: &str, start: usize) -> Result<Option<u32>, Error> {
    let name = rule_name(slice);
    let rest = &slice[name.len()..];
    let Some(inner) = rest.strip_prefix('[') else {
        return Ok(None);
    };
    let close = inner
        .find(']')
        .expect("the lexer's pattern closes the block");
    let mut offset = start + name.len() + 1;
    let mut max_tokens = None;
    for item in inner[..close].split(',') {
        let span_of = |text: &str| {
            let lead = item.len() - item.trim_start().len();
            Span::new(offset + lead, offset + lead + text.trim().len().max(1))
        };
        let (key, value) = match item.split_once('=') {
            Some((key, value)) => (key.trim(), Some(value.trim())),
            None => (item.trim(), None),
        };
        let span = span_of(item);
        match (key, value) {
            ("max_tokens", Some(value)) => {
                if max_tokens.is_some() {
                    return Err(Error::BadRuleAttribute {
                        span,
                        message: "`max_tokens` is given twice".into(),
                    });
                }
                match value.parse::<u32>() {
                    Ok(k) if (1..=MAX_TOKEN_LIMIT).contains(&k) => max_tokens = Some(k),
                    _ => {
                        return Err(Error::BadRuleAttribute {
                            span,
                            message: format!(
                                "`max_tokens` takes a whole number from 1 to {MAX_TOKEN_LIMIT}, not `{value}`"
                            ),
                        })
                    }
                }
            }
            ("max_tokens", None) => {
                return Err(Error::BadRuleAttribute {
                    span,
                    message: "`max_tokens` takes a value, as in `name[max_tokens=8] ::=`".into(),
                })
            }
            ("", None) => {
                return Err(Error::BadRuleAttribute {
                    span,
                    message: "an empty attribute; write `name[max_tokens=8] ::=`".into(),
                })
            }
            (key, _) => {
                return Err(Error::BadRuleAttribute {
                    span,
                    message: format!(
                        "the rule attribute `{key}` is not supported (sieve enforces `max_tokens` only)"
                    ),
                })
            }
        }
        offset += item.len() + 1;
    }
    Ok(max_tokens)
}

impl Tok<'_> {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::RuleStart(s) => format!("the start of rule `{}`", rule_name(s)),
            Tok::Name(s) => format!("rule name `{s}`"),
            Tok::Call(s) => format!("`{s}`"),
            Tok::Str(_) | Tok::UnterminatedStr => "a string literal".into(),
            Tok::Class(_) | Tok::UnterminatedClass => "a character class".into(),
            Tok::Number(s) => format!("number `{s}`"),
            Tok::Token(s) => format!("token `{s}`"),
            Tok::Assign => "`::=`".into(),
            Tok::Pipe => "`|`".into(),
            Tok::LParen => "`(`".into(),
            Tok::LookOpen => "`(=`".into(),
            Tok::RParen => "`)`".into(),
            Tok::Question => "`?`".into(),
            Tok::Star => "`*`".into(),
            Tok::Plus => "`+`".into(),
            Tok::Dot => "`.`".into(),
            Tok::LBrace => "`{`".into(),
            Tok::RBrace => "`}`".into(),
            Tok::Comma => "`,`".into(),
        }
    }
}

/// A token with its byte span, as the parser consumes it.
pub type Spanned<'a> = (usize, Tok<'a>, usize);

/// Lexes all of `text`, checking parenthesis balance, group depth and the rule count.
///
/// Returns every error found; the token list is only returned when there are none.
pub fn tokenize<'a>(text: &'a str, limits: &Limits) -> Result<Vec<Spanned<'a>>, Vec<Error>> {
    let mut tokens = Vec::new();
    let mut errors = Vec::new();
    let mut open: Vec<Span> = Vec::new();
    let mut too_deep_reported = false;
    let mut rules = 0usize;
    let mut lexer = Tok::lexer(text);
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let span = Span::new(range.start, range.end);
        let first_char = |span: Span| {
            let len = text[span.start..].chars().next().map_or(0, char::len_utf8);
            Span::new(span.start, span.start + len)
        };
        let tok = match result {
            Ok(tok) => tok,
            Err(()) => {
                let ch = text[span.start..].chars().next().unwrap_or('\u{fffd}');
                errors.push(Error::UnexpectedChar {
                    span: first_char(span),
                    ch,
                });
                continue;
            }
        };
        match tok {
            Tok::UnterminatedStr => errors.push(Error::UnterminatedString {
                span: first_char(span),
            }),
            Tok::UnterminatedClass => errors.push(Error::UnterminatedClass {
                span: first_char(span),
            }),
            Tok::LParen | Tok::LookOpen | Tok::Call(_) => {
                open.push(match tok {
                    Tok::Call(_) => span,
                    _ => first_char(span),
                });
                if open.len() > limits.max_depth && !too_deep_reported {
                    too_deep_reported = true;
                    errors.push(Error::TooDeep {
                        span: first_char(span),
                        limit: limits.max_depth,
                    });
                }
            }
            Tok::RParen => {
                let closed = open.pop();
                if closed.is_none() {
                    errors.push(Error::UnmatchedParen { span });
                }
            }
            Tok::RuleStart(slice) => {
                if let Err(error) = rule_attributes(slice, span.start) {
                    errors.push(error);
                }
                // A group cannot span rules: whatever is open belongs to the previous rule.
                errors.extend(open.drain(..).map(|span| Error::UnclosedParen { span }));
                rules += 1;
                if rules == limits.max_rules + 1 {
                    errors.push(Error::TooManyRules {
                        span: Span::new(span.start, span.start + rule_name_len(tok)),
                        limit: limits.max_rules,
                    });
                }
            }
            _ => {}
        }
        tokens.push((span.start, tok, span.end));
    }
    errors.extend(open.drain(..).map(|span| Error::UnclosedParen { span }));
    if errors.is_empty() {
        Ok(tokens)
    } else {
        errors.sort_by_key(|e| sieve_diagnostics::Located::span(e).start);
        Err(errors)
    }
}

fn rule_name_len(tok: Tok<'_>) -> usize {
    match tok {
        Tok::RuleStart(s) => rule_name(s).len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Tok<'_>> {
        tokenize(text, &Limits::default())
            .unwrap()
            .into_iter()
            .map(|(_, t, _)| t)
            .collect()
    }

    #[test]
    fn rule_start_is_one_token_across_lines() {
        assert_eq!(
            kinds("a ::= b\nc\n  ::= d"),
            vec![
                Tok::RuleStart("a ::="),
                Tok::Name("b"),
                Tok::RuleStart("c\n  ::="),
                Tok::Name("d")
            ]
        );
    }

    #[test]
    fn strings_classes_and_comments() {
        assert_eq!(
            kinds(r##"x ::= "a\"#" [#\]] # c"##),
            vec![
                Tok::RuleStart("x ::="),
                Tok::Str(r##""a\"#""##),
                Tok::Class(r"[#\]]"),
            ]
        );
    }

    #[test]
    fn unterminated_tokens_point_at_the_opening() {
        let errors = tokenize("x ::= \"ab\ny ::= [a", &Limits::default()).unwrap_err();
        assert_eq!(errors.len(), 2);
        assert_eq!(
            sieve_diagnostics::Located::span(&errors[0]),
            Span::new(6, 7)
        );
        assert_eq!(
            sieve_diagnostics::Located::span(&errors[1]),
            Span::new(16, 17)
        );
    }

    #[test]
    fn calls_need_their_parenthesis_right_after_the_name() {
        assert_eq!(
            kinds("x ::= text_until(\"a\") text_until (b)"),
            vec![
                Tok::RuleStart("x ::="),
                Tok::Call("text_until("),
                Tok::Str("\"a\""),
                Tok::RParen,
                Tok::Name("text_until"),
                Tok::LParen,
                Tok::Name("b"),
                Tok::RParen
            ]
        );
    }

    #[test]
    fn lookahead_open_is_one_token() {
        assert_eq!(
            kinds("x ::= a ( = b)"),
            vec![
                Tok::RuleStart("x ::="),
                Tok::Name("a"),
                Tok::LookOpen,
                Tok::Name("b"),
                Tok::RParen
            ]
        );
    }
}
