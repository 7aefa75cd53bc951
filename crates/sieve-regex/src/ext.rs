//! The regex extensions of Koo et al. (§2.5): specially named capture groups that stand for
//! languages built by [`sieve_ir::sugar`].
//!
//! | group | language |
//! |---|---|
//! | `(?P<TEXT_UNTIL>stop₁\|stop₂…)` | valid UTF-8 text up to and including the first stop phrase |
//! | `(?P<SUBSTRING_OF>text)` | a non-empty substring of `text`, on character boundaries |
//! | `(?P<QUOTED_TEXT>)` | a JSON string literal, quotes included |
//! | `(?P<UNQUOTED_TEXT>)` | a YAML 1.2 one-line plain scalar |
//! | `(?P<DELIMITED_LIST>item)` | one or more `item`s separated by `, ` |
//! | `(?P<DELIMITED_SUBSEQUENCE_OF>a\|b\|c)` | a non-empty subsequence of `a`, `b`, `c`, in order, separated by `, ` |
//!
//! The two delimited forms take another delimiter as a `(?P<DELIMITER>regex)` group at the
//! very end of their content: `(?P<DELIMITED_LIST>\d+(?P<DELIMITER>;\s*))`,
//! `(?P<DELIMITED_SUBSEQUENCE_OF>(?:a|b|c)(?P<DELIMITER> and ))`. Stop phrases and the text of
//! `SUBSTRING_OF` are literals (escapes allowed; under `i` they are no longer literals and
//! are refused). `TEXT_TOKEN`, `PARAGRAPH_TOKEN` and `IMAGE` are token-level labels in the
//! paper (a mask over the model's vocabulary), which a byte-level grammar cannot express: they
//! are refused, as is any other all-capitals name close to an extension's (a likely typo).
//!
//! # How it fits the pipeline
//!
//! [`crate::check`] finds the extension groups on the AST (where spans exist), checks their
//! shape and splits their content into *pieces* (stop phrases, the item, the subsequence's
//! alternatives, the delimiter), each with the flags in force where it starts. [`prepare`]
//! translates each piece to HIR on its own (so regex-syntax cannot merge alternatives into a
//! class or factor out common prefixes) and checks what must be a literal. The lowering then
//! replaces the capture with the same index by the sugar's expression.
//!
//! **Invariant:** every extension group reaching the lowering has pieces of the right shape
//! and texts within [`crate::Limits::max_extension_text`]; every refusal is located.

use std::collections::HashMap;

use regex_syntax::ast::Ast;
use regex_syntax::hir::{Hir, HirKind};
use sieve_diagnostics::Span;

use crate::check::FlagState;
use crate::error::Error;

/// The extensions sieve implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    TextUntil,
    SubstringOf,
    QuotedText,
    UnquotedText,
    DelimitedList,
    DelimitedSubsequenceOf,
}

/// Every implemented extension by its group name.
const KINDS: [(&str, Kind); 6] = [
    ("TEXT_UNTIL", Kind::TextUntil),
    ("SUBSTRING_OF", Kind::SubstringOf),
    ("QUOTED_TEXT", Kind::QuotedText),
    ("UNQUOTED_TEXT", Kind::UnquotedText),
    ("DELIMITED_LIST", Kind::DelimitedList),
    ("DELIMITED_SUBSEQUENCE_OF", Kind::DelimitedSubsequenceOf),
];

/// The paper's token-level labels.
const TOKEN_LEVEL: [&str; 3] = ["TEXT_TOKEN", "PARAGRAPH_TOKEN", "IMAGE"];

/// The name of the group giving a delimited form its delimiter.
pub(crate) const DELIMITER: &str = "DELIMITER";

/// The delimiter of the delimited forms when none is given.
pub(crate) const DEFAULT_DELIMITER: &str = ", ";

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        KINDS
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(n, _)| *n)
            .expect("every kind is listed")
    }

    fn takes_delimiter(self) -> bool {
        matches!(self, Kind::DelimitedList | Kind::DelimitedSubsequenceOf)
    }
}

/// What a capture group's name means.
pub(crate) enum Name {
    /// An ordinary capture group.
    Plain,
    /// An extension.
    Extension(Kind),
    /// The delimiter of a delimited form.
    Delimiter,
}

/// Classifies a capture name; refuses token-level labels and likely typos of extensions.
pub(crate) fn classify(name: &str, span: Span) -> Result<Name, Error> {
    if let Some(&(_, kind)) = KINDS.iter().find(|(n, _)| *n == name) {
        return Ok(Name::Extension(kind));
    }
    if name == DELIMITER {
        return Ok(Name::Delimiter);
    }
    if TOKEN_LEVEL.contains(&name) {
        return Err(Error::TokenLevelExtension {
            span,
            name: name.to_owned(),
        });
    }
    let all_caps = name.len() >= 4
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if all_caps {
        let known = KINDS.iter().map(|(n, _)| *n).chain([DELIMITER]);
        let nearest = known
            .map(|n| (distance(name, n), n))
            .min()
            .expect("names are listed");
        let prefix = ["TEXT_", "DELIMITED_", "SUBSTRING", "QUOTED", "UNQUOTED"]
            .iter()
            .any(|p| name.starts_with(p));
        if nearest.0 <= 2 || prefix {
            return Err(Error::UnknownExtension {
                span,
                name: name.to_owned(),
                suggestion: nearest.1.to_owned(),
            });
        }
    }
    Ok(Name::Plain)
}

/// The edit distance between two ASCII names.
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let next = (diagonal + usize::from(x != y))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// A sub-pattern of an extension's content and the flags in force where it starts.
pub(crate) struct Piece {
    pub(crate) ast: Ast,
    pub(crate) flags: FlagState,
}

impl Piece {
    fn span(&self) -> Span {
        crate::error::span(self.ast.span())
    }
}

/// An extension group found by the check.
pub(crate) struct Site {
    pub(crate) kind: Kind,
    /// The capture group's index (shared by the AST and the HIR).
    pub(crate) index: u32,
    /// The whole group.
    pub(crate) span: Span,
    /// The group's content: stop phrases, the substring text, the list's item, the
    /// subsequence's items; empty for the text forms.
    pub(crate) pieces: Vec<Piece>,
    /// The `DELIMITER` group's content, if given.
    pub(crate) delimiter: Option<Piece>,
}

/// An extension's content split for the check: the pieces (walked and recorded in pattern
/// order) and the delimiter, after validating the shape.
pub(crate) struct Split<'a> {
    /// The pieces, in order.
    pub(crate) pieces: Vec<Ast>,
    /// The non-capturing group the pieces were taken out of, if any: its flags apply to them
    /// and its scope ends after them.
    pub(crate) wrapper: Option<&'a regex_syntax::ast::Group>,
    /// The `DELIMITER` group's content.
    pub(crate) delimiter: Option<Ast>,
}

/// Splits the content of an extension group of `kind` (span `group` for errors).
pub(crate) fn split(kind: Kind, content: &Ast, group: Span) -> Result<Split<'_>, Error> {
    use regex_syntax::ast::GroupKind;
    let is_delimiter = |a: &Ast| matches!(a, Ast::Group(g) if matches!(&g.kind, GroupKind::CaptureName { name, .. } if name.name == DELIMITER));
    // The delimiter: the content itself or the last item of a concatenation.
    let (body, delimiter): (Vec<&Ast>, Option<&Ast>) = match content {
        Ast::Concat(c) if c.asts.last().is_some_and(is_delimiter) => {
            let (last, rest) = c.asts.split_last().expect("non-empty");
            (rest.iter().collect(), Some(last))
        }
        a if is_delimiter(a) => (Vec::new(), Some(a)),
        a => (vec![a], None),
    };
    let delimiter = match delimiter {
        Some(Ast::Group(g)) if kind.takes_delimiter() => Some((*g.ast).clone()),
        Some(d) => {
            return Err(Error::MisplacedDelimiter {
                span: crate::error::span(d.span()),
            })
        }
        None => None,
    };
    let content_span = crate::error::span(content.span());
    let body_empty = body
        .iter()
        .all(|a| matches!(a, Ast::Empty(_) | Ast::Flags(_)));
    match kind {
        Kind::QuotedText | Kind::UnquotedText => {
            if !body_empty {
                return Err(Error::ExtensionContent {
                    span: content_span,
                    name: kind.name(),
                    expected: "nothing: the group is written empty",
                });
            }
            return Ok(Split {
                pieces: Vec::new(),
                wrapper: None,
                delimiter: None,
            });
        }
        _ if body_empty => {
            return Err(Error::ExtensionContent {
                span: if content_span.start == content_span.end {
                    group
                } else {
                    content_span
                },
                name: kind.name(),
                expected: match kind {
                    Kind::TextUntil => "one or more stop phrases separated by `|`",
                    Kind::SubstringOf => "the text whose substrings it matches",
                    Kind::DelimitedList => "the pattern of one item",
                    _ => "the items, separated by `|`",
                },
            });
        }
        _ => {}
    }
    let one = match body.as_slice() {
        [one] => (*one).clone(),
        [first, .., last] => Ast::concat(regex_syntax::ast::Concat {
            span: regex_syntax::ast::Span::new(first.span().start, last.span().end),
            asts: body.iter().map(|a| (*a).clone()).collect(),
        }),
        [] => unreachable!("an empty body was refused"),
    };
    let (pieces, wrapper) = match kind {
        Kind::TextUntil | Kind::DelimitedSubsequenceOf => alternatives(one, body.as_slice()),
        _ => (vec![one], None),
    };
    Ok(Split {
        pieces,
        wrapper,
        delimiter,
    })
}

/// The alternatives of a body (given whole as `one` and as its items): an alternation's, or
/// those of one non-capturing group around an alternation, else the body itself.
fn alternatives<'a>(
    one: Ast,
    body: &[&'a Ast],
) -> (Vec<Ast>, Option<&'a regex_syntax::ast::Group>) {
    use regex_syntax::ast::GroupKind;
    match body {
        [Ast::Alternation(alt)] => (alt.asts.clone(), None),
        [Ast::Group(g)] => match (&g.kind, &*g.ast) {
            (GroupKind::NonCapturing(_), Ast::Alternation(alt)) => (alt.asts.clone(), Some(&**g)),
            _ => (vec![one], None),
        },
        _ => (vec![one], None),
    }
}

/// An extension ready to lower.
pub(crate) enum Ext {
    TextUntil(Vec<String>),
    SubstringOf(String),
    QuotedText,
    UnquotedText,
    List {
        item: Hir,
        delimiter: Option<Hir>,
    },
    Subsequence {
        items: Vec<Hir>,
        delimiter: Option<Hir>,
    },
}

/// Translates the pieces of every site and checks literals and sizes; the result maps capture
/// indices to extensions.
pub(crate) fn prepare(
    pattern: &str,
    sites: Vec<Site>,
    max_text: usize,
) -> Result<HashMap<u32, Ext>, Error> {
    let mut out = HashMap::new();
    for site in sites {
        let name = site.kind.name();
        let literal = |piece: &Piece| -> Result<String, Error> {
            let hir = translate(pattern, piece)?;
            let bytes: Vec<u8> =
                match hir.kind() {
                    HirKind::Literal(lit) => lit.0.to_vec(),
                    HirKind::Empty => Vec::new(),
                    _ => return Err(Error::ExtensionContent {
                        span: piece.span(),
                        name,
                        expected:
                            "a literal text (no classes, repetitions or case-insensitive letters)",
                    }),
                };
            if bytes.is_empty() {
                return Err(Error::ExtensionContent {
                    span: piece.span(),
                    name,
                    expected: "a non-empty literal text",
                });
            }
            String::from_utf8(bytes).map_err(|_| Error::ExtensionContent {
                span: piece.span(),
                name,
                expected: "valid UTF-8 text",
            })
        };
        let ext = match site.kind {
            Kind::QuotedText => Ext::QuotedText,
            Kind::UnquotedText => Ext::UnquotedText,
            Kind::TextUntil | Kind::SubstringOf => {
                let texts = site
                    .pieces
                    .iter()
                    .map(literal)
                    .collect::<Result<Vec<_>, _>>()?;
                let len = texts.iter().map(String::len).sum::<usize>();
                if len > max_text {
                    return Err(Error::ExtensionTooLarge {
                        span: site.span,
                        name,
                        len,
                        limit: max_text,
                    });
                }
                match site.kind {
                    Kind::TextUntil => Ext::TextUntil(texts),
                    _ => Ext::SubstringOf(texts.concat()),
                }
            }
            Kind::DelimitedList | Kind::DelimitedSubsequenceOf => {
                let delimiter = site
                    .delimiter
                    .as_ref()
                    .map(|d| translate(pattern, d))
                    .transpose()?;
                let mut items = site
                    .pieces
                    .iter()
                    .map(|p| translate(pattern, p))
                    .collect::<Result<Vec<_>, _>>()?;
                if site.kind == Kind::DelimitedList {
                    Ext::List {
                        item: items.pop().expect("a list has one item piece"),
                        delimiter,
                    }
                } else {
                    Ext::Subsequence { items, delimiter }
                }
            }
        };
        out.insert(site.index, ext);
    }
    Ok(out)
}

/// Translates one piece with the flags in force where it starts.
fn translate(pattern: &str, piece: &Piece) -> Result<Hir, Error> {
    let f = piece.flags;
    regex_syntax::hir::translate::TranslatorBuilder::new()
        .utf8(false)
        .case_insensitive(f.case_insensitive)
        .multi_line(f.multi_line)
        .dot_matches_new_line(f.dot_matches_new_line)
        .crlf(f.crlf)
        .unicode(f.unicode)
        .build()
        .translate(pattern, &piece.ast)
        .map_err(|e| crate::error::from_translate(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_caught_and_ordinary_names_pass() {
        let at = Span::new(0, 1);
        for typo in [
            "TEXT_UNTILL",
            "SUBSTRINGOF",
            "QUOTED",
            "DELIMITED_SET",
            "DELIMITR",
        ] {
            assert!(
                matches!(classify(typo, at), Err(Error::UnknownExtension { .. })),
                "{typo}"
            );
        }
        for plain in ["ID", "URL", "YEAR", "name", "Text_Until", "TEXT"] {
            assert!(matches!(classify(plain, at), Ok(Name::Plain)), "{plain}");
        }
        assert!(matches!(
            classify("PARAGRAPH_TOKEN", at),
            Err(Error::TokenLevelExtension { .. })
        ));
        assert_eq!(distance("TEXT_UNTILL", "TEXT_UNTIL"), 1);
    }
}
