//! Lark text to tokens.
//!
//! Comments (`//` and `#` to the end of the line) and spaces are skipped. Newlines are tokens
//! only outside brackets, since a definition ends at the end of its line unless the next line
//! starts with `|`. `%json`, `%regex` and `%llguidance` are followed by a JSON object that is
//! taken whole, as one token, by matching braces outside JSON strings.
//!
//! Invariants: every token's span lies inside the text on character boundaries; the lexer
//! never loops without consuming input; bracket depth only gates newlines, so unbalanced
//! brackets are reported by the parser, not here.

use sieve_diagnostics::Span;

use crate::error::{Error, ErrorKind};

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// A name: letters, digits, `_` and inner `-`, not starting with a digit.
    Name(String),
    /// A string literal, decoded, with the `i` flag.
    Str { value: String, insensitive: bool },
    /// `/pattern/flags`; the pattern starts one byte after the token.
    Regex { pattern: String, flags: String },
    /// An integer or decimal number, possibly negative.
    Number(String),
    /// `%name`.
    Directive(String),
    /// The JSON object after `%json`, `%regex` or `%llguidance`.
    Json(String),
    /// `<…>`: a special token.
    Special(String),
    /// Punctuation.
    Punct(&'static str),
    /// End of a line outside brackets.
    Newline,
}

/// A token and its span.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
}

const PUNCTS: &[&str] = &[
    "->", "..", ":", "|", "(", ")", "[", "]", "{", "}", ",", ".", "?", "*", "+", "~", "&", "!", "=",
];

/// Splits `text` into tokens.
pub(crate) fn lex(text: &str) -> Result<Vec<Token>, Error> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    let mut depth: usize = 0;
    let mut json_next = false;
    while pos < bytes.len() {
        let c = bytes[pos];
        let start = pos;
        match c {
            b' ' | b'\t' | b'\r' | 0x0c => pos += 1,
            b'\n' => {
                pos += 1;
                if depth == 0 && !json_next {
                    tokens.push(Token {
                        tok: Tok::Newline,
                        span: Span::new(start, pos),
                    });
                }
            }
            b'#' => pos = line_end(bytes, pos),
            b'/' if bytes.get(pos + 1) == Some(&b'/') => pos = line_end(bytes, pos),
            b'{' if json_next => {
                let end = json_end(bytes, pos)?;
                tokens.push(Token {
                    tok: Tok::Json(text[pos..end].to_owned()),
                    span: Span::new(pos, end),
                });
                pos = end;
                json_next = false;
            }
            _ if json_next => {
                return Err(Error::new(
                    ErrorKind::Syntax,
                    char_span(text, pos),
                    "expected a JSON object `{…}` after the directive",
                ));
            }
            b'"' => {
                let (value, end) = string(text, pos)?;
                let insensitive = bytes.get(end) == Some(&b'i')
                    && !bytes
                        .get(end + 1)
                        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
                pos = end + usize::from(insensitive);
                tokens.push(Token {
                    tok: Tok::Str { value, insensitive },
                    span: Span::new(start, pos),
                });
            }
            b'/' => {
                let (pattern, end) = regex(text, pos)?;
                let mut flags_end = end;
                while bytes.get(flags_end).is_some_and(u8::is_ascii_alphabetic) {
                    flags_end += 1;
                }
                tokens.push(Token {
                    tok: Tok::Regex {
                        pattern,
                        flags: text[end..flags_end].to_owned(),
                    },
                    span: Span::new(start, flags_end),
                });
                pos = flags_end;
            }
            b'<' => {
                let end = text[pos..]
                    .find('>')
                    .map(|i| pos + i + 1)
                    .filter(|&e| !text[pos..e].contains('\n'));
                let Some(end) = end else {
                    return Err(Error::new(
                        ErrorKind::Syntax,
                        Span::new(pos, pos + 1),
                        "unterminated special token: `>` is missing before the end of the line",
                    ));
                };
                tokens.push(Token {
                    tok: Tok::Special(text[pos..end].to_owned()),
                    span: Span::new(pos, end),
                });
                pos = end;
            }
            b'%' => {
                pos += 1;
                while bytes
                    .get(pos)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                {
                    pos += 1;
                }
                let name = &text[start..pos];
                json_next = matches!(name, "%json" | "%regex" | "%llguidance");
                tokens.push(Token {
                    tok: Tok::Directive(name.to_owned()),
                    span: Span::new(start, pos),
                });
            }
            b'0'..=b'9' => {
                pos = number_end(bytes, pos);
                tokens.push(Token {
                    tok: Tok::Number(text[start..pos].to_owned()),
                    span: Span::new(start, pos),
                });
            }
            b'-' if bytes.get(pos + 1).is_some_and(u8::is_ascii_digit) => {
                pos = number_end(bytes, pos + 1);
                tokens.push(Token {
                    tok: Tok::Number(text[start..pos].to_owned()),
                    span: Span::new(start, pos),
                });
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                pos += 1;
                loop {
                    match bytes.get(pos) {
                        Some(b) if b.is_ascii_alphanumeric() || *b == b'_' => pos += 1,
                        // `-` inside a name (llguidance), but not the `->` of an alias.
                        Some(b'-')
                            if bytes
                                .get(pos + 1)
                                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') =>
                        {
                            pos += 1
                        }
                        _ => break,
                    }
                }
                tokens.push(Token {
                    tok: Tok::Name(text[start..pos].to_owned()),
                    span: Span::new(start, pos),
                });
            }
            _ => {
                let Some(p) = PUNCTS.iter().find(|p| text[pos..].starts_with(**p)) else {
                    let span = char_span(text, pos);
                    return Err(Error::new(
                        ErrorKind::Syntax,
                        span,
                        format!("unexpected character `{}`", &text[span.start..span.end]),
                    ));
                };
                match *p {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                pos += p.len();
                tokens.push(Token {
                    tok: Tok::Punct(p),
                    span: Span::new(start, pos),
                });
            }
        }
    }
    if json_next {
        return Err(Error::new(
            ErrorKind::Syntax,
            Span::at(text.len()),
            "expected a JSON object `{…}` after the directive",
        ));
    }
    Ok(tokens)
}

fn line_end(bytes: &[u8], pos: usize) -> usize {
    bytes[pos..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| pos + i)
}

fn number_end(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    if bytes.get(pos) == Some(&b'.') && bytes.get(pos + 1).is_some_and(u8::is_ascii_digit) {
        pos += 1;
        while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
    }
    pos
}

/// The span of the character at `pos`.
pub(crate) fn char_span(text: &str, pos: usize) -> Span {
    let len = text[pos..].chars().next().map_or(0, char::len_utf8);
    Span::new(pos, pos + len)
}

/// Where the JSON object starting at `pos` (a `{`) ends.
fn json_end(bytes: &[u8], pos: usize) -> Result<usize, Error> {
    let mut depth = 0usize;
    let mut i = pos;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(i + 1);
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    Err(Error::new(
        ErrorKind::Syntax,
        Span::new(pos, pos + 1),
        "unterminated JSON object: its closing `}` is missing",
    ))
}

/// Decodes the string literal starting at `pos` (a `"`); returns its value and the offset
/// after the closing quote. Escapes: `\n \r \t \f \v \a \b \0 \\ \" \' \xHH \uHHHH
/// \UHHHHHHHH`; any other escaped character stands for itself with its backslash, as in
/// Python.
fn string(text: &str, pos: usize) -> Result<(String, usize), Error> {
    let mut value = String::new();
    let mut chars = text[pos + 1..].char_indices();
    let unterminated = || {
        Error::new(
            ErrorKind::Syntax,
            Span::new(pos, pos + 1),
            "unterminated string literal: the closing quote is missing before the end of the line",
        )
    };
    while let Some((i, c)) = chars.next() {
        let at = pos + 1 + i;
        match c {
            '"' => return Ok((value, at + 1)),
            '\n' => return Err(unterminated()),
            '\\' => {
                let Some((_, e)) = chars.next() else {
                    return Err(unterminated());
                };
                let hex = |n: usize, chars: &mut std::str::CharIndices<'_>| {
                    let digits: String = chars.by_ref().take(n).map(|(_, c)| c).collect();
                    u32::from_str_radix(&digits, 16)
                        .ok()
                        .filter(|_| digits.len() == n)
                        .and_then(char::from_u32)
                        .ok_or_else(|| {
                            Error::new(
                                ErrorKind::Syntax,
                                Span::new(at, (at + 2 + n).min(text.len())),
                                format!("invalid escape: `\\{e}` needs {n} hex digits naming a character"),
                            )
                        })
                };
                match e {
                    'n' => value.push('\n'),
                    'r' => value.push('\r'),
                    't' => value.push('\t'),
                    'f' => value.push('\x0c'),
                    'v' => value.push('\x0b'),
                    'a' => value.push('\x07'),
                    'b' => value.push('\x08'),
                    '0' => value.push('\0'),
                    '\\' | '"' | '\'' => value.push(e),
                    'x' => value.push(hex(2, &mut chars)?),
                    'u' => value.push(hex(4, &mut chars)?),
                    'U' => value.push(hex(8, &mut chars)?),
                    '\n' => return Err(unterminated()),
                    _ => {
                        value.push('\\');
                        value.push(e);
                    }
                }
            }
            _ => value.push(c),
        }
    }
    Err(unterminated())
}

/// The regex starting at `pos` (a `/`): its pattern as written and the offset after the
/// closing `/`. `\/` stays in the pattern (the regex dialect accepts it as `/`).
fn regex(text: &str, pos: usize) -> Result<(String, usize), Error> {
    let bytes = text.as_bytes();
    let mut i = pos + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if i + 1 < bytes.len() && bytes[i + 1] != b'\n' => i += 2,
            b'/' => return Ok((text[pos + 1..i].to_owned(), i + 1)),
            b'\n' => break,
            _ => i += 1,
        }
    }
    Err(Error::new(
        ErrorKind::Syntax,
        Span::new(pos, pos + 1),
        "unterminated regex: the closing `/` is missing before the end of the line",
    ))
}
