//! Checks on the AST, where spans still exist: anchors, word boundaries, repetition bounds.
//!
//! The HIR that the grammar is built from has no spans, so everything that must be reported
//! with a location and can be decided syntactically is decided here, before translation.
//!
//! # Anchor rule
//!
//! sieve matches the whole output, so an anchor is accepted only where it is always true and
//! can be dropped:
//!
//! - a start anchor (`^`, `\A`, and `^` under `m`) in *leading position*;
//! - an end anchor (`$`, `\z`, and `$` under `m`) in *trailing position*.
//!
//! The whole pattern is in leading and trailing position. Each alternative of an alternation in
//! leading (trailing) position is too, and so is the body of a group. In a concatenation in
//! leading position, every item up to and including the first one that is not zero-width
//! (an empty item, a flag setting or an assertion) is in leading position; symmetrically from
//! the end for trailing position. The body of a repetition is in neither (a later iteration
//! starts elsewhere). Such an anchor is only ever tested at offset 0 (or at the end) of the
//! output, where it holds. Anywhere else it could constrain or empty the language, and is an
//! error. Word-boundary assertions are always an error.
//!
//! # Invariant
//!
//! After [`check`] succeeds, every assertion left in the pattern is an anchor in a position
//! where it always holds, and every repetition bound is at most the configured limit. The walk
//! recurses, but only as deep as the AST, which the parser's nest limit bounds.

use regex_syntax::ast::{
    Assertion, AssertionKind, Ast, Flag, Flags, FlagsItemKind, GroupKind, RepetitionKind,
    RepetitionRange,
};

use crate::error::{span, Error};
use crate::ext;

/// The position facts of one AST node.
#[derive(Clone, Copy)]
struct Position {
    leading: bool,
    trailing: bool,
}

/// The flags in force at a point of the pattern (only those the checks or the empty-class
/// search need).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FlagState {
    pub(crate) case_insensitive: bool,
    pub(crate) multi_line: bool,
    pub(crate) unicode: bool,
    pub(crate) ignore_whitespace: bool,
    pub(crate) dot_matches_new_line: bool,
    pub(crate) crlf: bool,
}

impl Default for FlagState {
    fn default() -> FlagState {
        FlagState {
            case_insensitive: false,
            multi_line: false,
            unicode: true,
            ignore_whitespace: false,
            dot_matches_new_line: false,
            crlf: false,
        }
    }
}

impl FlagState {
    fn apply(&mut self, flags: &Flags) {
        let mut on = true;
        for item in &flags.items {
            match item.kind {
                FlagsItemKind::Negation => on = false,
                FlagsItemKind::Flag(Flag::CaseInsensitive) => self.case_insensitive = on,
                FlagsItemKind::Flag(Flag::MultiLine) => self.multi_line = on,
                FlagsItemKind::Flag(Flag::Unicode) => self.unicode = on,
                FlagsItemKind::Flag(Flag::IgnoreWhitespace) => self.ignore_whitespace = on,
                FlagsItemKind::Flag(Flag::DotMatchesNewLine) => self.dot_matches_new_line = on,
                FlagsItemKind::Flag(Flag::CRLF) => self.crlf = on,
                FlagsItemKind::Flag(_) => {}
            }
        }
    }

    /// The flags as an inline flag group's contents, e.g. `iu-mx` (no dangling `-`).
    pub(crate) fn to_syntax(self) -> String {
        let mut on = String::new();
        let mut off = String::new();
        for (flag, set) in [
            ('i', self.case_insensitive),
            ('m', self.multi_line),
            ('u', self.unicode),
            ('x', self.ignore_whitespace),
            ('s', self.dot_matches_new_line),
            ('R', self.crlf),
        ] {
            if set { &mut on } else { &mut off }.push(flag);
        }
        if off.is_empty() {
            on
        } else {
            format!("{on}-{off}")
        }
    }
}

/// A class-like leaf of the pattern and the flags in force there: the candidates for an empty
/// class when the language turns out to be empty.
pub(crate) struct ClassSite {
    pub(crate) span: sieve_diagnostics::Span,
    pub(crate) flags: FlagState,
}

/// What the check found: the class sites and the extension groups.
pub(crate) struct Found {
    pub(crate) classes: Vec<ClassSite>,
    pub(crate) extensions: Vec<ext::Site>,
}

/// Checks `ast` against the anchor rule and the repetition limit, and the shape of extension
/// groups; returns the class sites and the extension groups.
pub(crate) fn check(
    pattern: &str,
    ast: &Ast,
    max_repeat: u32,
    extensions: bool,
) -> Result<Found, Error> {
    let mut checker = Checker {
        pattern,
        max_repeat,
        with_extensions: extensions,
        flags: FlagState::default(),
        classes: Vec::new(),
        extensions: Vec::new(),
    };
    checker.walk(
        ast,
        Position {
            leading: true,
            trailing: true,
        },
    )?;
    Ok(Found {
        classes: checker.classes,
        extensions: checker.extensions,
    })
}

struct Checker<'a> {
    pattern: &'a str,
    max_repeat: u32,
    /// Whether extension groups have their meaning (else every capture is ordinary).
    with_extensions: bool,
    /// The flags in force at the node being visited; nodes are visited in pattern order, as
    /// regex-syntax's translator applies them.
    flags: FlagState,
    classes: Vec<ClassSite>,
    extensions: Vec<ext::Site>,
}

/// Inside an extension: neither leading nor trailing.
const INSIDE: Position = Position {
    leading: false,
    trailing: false,
};

fn is_zero_width(ast: &Ast) -> bool {
    matches!(ast, Ast::Empty(_) | Ast::Flags(_) | Ast::Assertion(_))
}

impl Checker<'_> {
    fn walk(&mut self, ast: &Ast, pos: Position) -> Result<(), Error> {
        match ast {
            Ast::Empty(_) | Ast::Literal(_) => {}
            Ast::Flags(set) => self.flags.apply(&set.flags),
            Ast::Dot(s) => self.class_site(s),
            Ast::ClassUnicode(c) => self.class_site(&c.span),
            Ast::ClassPerl(c) => self.class_site(&c.span),
            Ast::ClassBracketed(c) => self.class_site(&c.span),
            Ast::Assertion(a) => self.assertion(a, pos)?,
            Ast::Repetition(rep) => {
                let bound = match rep.op.kind {
                    RepetitionKind::Range(RepetitionRange::Exactly(n))
                    | RepetitionKind::Range(RepetitionRange::AtLeast(n)) => n,
                    RepetitionKind::Range(RepetitionRange::Bounded(m, n)) => m.max(n),
                    _ => 0,
                };
                if bound > self.max_repeat {
                    return Err(Error::RepeatTooLarge {
                        span: span(&rep.op.span),
                        bound,
                        limit: self.max_repeat,
                    });
                }
                let inner = Position {
                    leading: false,
                    trailing: false,
                };
                self.walk(&rep.ast, inner)?;
            }
            Ast::Group(group) => {
                let saved = self.flags;
                match &group.kind {
                    GroupKind::NonCapturing(flags) => self.flags.apply(flags),
                    GroupKind::CaptureName { name, .. } if self.with_extensions => {
                        match ext::classify(&name.name, span(&name.span))? {
                            ext::Name::Plain => {}
                            ext::Name::Extension(kind) => {
                                self.extension(kind, name.index, group)?;
                                self.flags = saved;
                                return Ok(());
                            }
                            ext::Name::Delimiter => {
                                return Err(Error::MisplacedDelimiter {
                                    span: span(&group.span),
                                })
                            }
                        }
                    }
                    GroupKind::CaptureName { .. } | GroupKind::CaptureIndex(_) => {}
                }
                self.walk(&group.ast, pos)?;
                self.flags = saved;
            }
            Ast::Alternation(alt) => {
                for item in &alt.asts {
                    self.walk(item, pos)?;
                }
            }
            Ast::Concat(concat) => {
                let items = &concat.asts;
                // The first and last items that consume input bound the leading and trailing
                // runs; with none, every item is in both.
                let first = items.iter().position(|a| !is_zero_width(a));
                let last = items.iter().rposition(|a| !is_zero_width(a));
                for (i, item) in items.iter().enumerate() {
                    let item_pos = Position {
                        leading: pos.leading && first.is_none_or(|f| i <= f),
                        trailing: pos.trailing && last.is_none_or(|l| i >= l),
                    };
                    self.walk(item, item_pos)?;
                }
            }
        }
        Ok(())
    }

    /// Checks an extension group, walks its pieces in pattern order (each recorded with the
    /// flags in force where it starts) and records the group.
    fn extension(
        &mut self,
        kind: ext::Kind,
        index: u32,
        group: &regex_syntax::ast::Group,
    ) -> Result<(), Error> {
        let split = ext::split(kind, &group.ast, span(&group.span))?;
        let before = self.flags;
        if let Some(wrapper) = split.wrapper {
            if let GroupKind::NonCapturing(flags) = &wrapper.kind {
                self.flags.apply(flags);
            }
        }
        let mut pieces = Vec::with_capacity(split.pieces.len());
        for ast in split.pieces {
            let flags = self.flags;
            self.walk(&ast, INSIDE)?;
            pieces.push(ext::Piece { ast, flags });
        }
        if split.wrapper.is_some() {
            self.flags = before;
        }
        let delimiter = match split.delimiter {
            Some(ast) => {
                let flags = self.flags;
                self.walk(&ast, INSIDE)?;
                Some(ext::Piece { ast, flags })
            }
            None => None,
        };
        self.extensions.push(ext::Site {
            kind,
            index,
            span: span(&group.span),
            pieces,
            delimiter,
        });
        Ok(())
    }

    fn class_site(&mut self, s: &regex_syntax::ast::Span) {
        self.classes.push(ClassSite {
            span: span(s),
            flags: self.flags,
        });
    }

    fn assertion(&self, a: &Assertion, pos: Position) -> Result<(), Error> {
        let at = span(&a.span);
        let text = self.pattern[at.start..at.end].to_owned();
        let (at_start, multi_line) = match a.kind {
            AssertionKind::StartLine => (true, self.flags.multi_line),
            AssertionKind::StartText => (true, false),
            AssertionKind::EndLine => (false, self.flags.multi_line),
            AssertionKind::EndText => (false, false),
            _ => return Err(Error::WordBoundary { span: at, text }),
        };
        let allowed = if at_start { pos.leading } else { pos.trailing };
        if allowed {
            Ok(())
        } else {
            Err(Error::MisplacedAnchor {
                span: at,
                text,
                at_start,
                multi_line,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pattern: &str) -> Result<usize, Error> {
        let ast = regex_syntax::ast::parse::Parser::new()
            .parse(pattern)
            .expect("valid syntax");
        check(pattern, &ast, 100, true).map(|found| found.classes.len())
    }

    #[test]
    fn anchors_at_the_ends_pass() {
        for ok in [
            "^a$", r"\Aa\z", "^a|^b", "a$|b$", "(^a|b)c", "a(b$|c)", "(?i)^a", "a(?i)$", "^^a",
            "a$$", "^$", "$^", "(?:(^a))", "",
        ] {
            assert!(run(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn anchors_elsewhere_fail() {
        for bad in ["a^", "$a", "(^a)?", "a|b^c", "x(a|^b)", "x(^)", "(?m)a$b"] {
            assert!(
                matches!(run(bad), Err(Error::MisplacedAnchor { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn flags_are_tracked_in_pattern_order() {
        let multi = |pattern: &str| match run(pattern) {
            Err(Error::MisplacedAnchor { multi_line, .. }) => multi_line,
            other => panic!("{pattern}: {other:?}"),
        };
        assert!(multi("(?m)a^b"));
        assert!(!multi("(?m:a)^b"));
        assert!(multi("(?m)x|a^b"));
        assert!(!multi("(?m)(?-m)a^b"));
    }

    #[test]
    fn repetition_bounds_are_checked() {
        assert!(run("a{100}").is_ok());
        assert!(matches!(
            run("a{3,101}"),
            Err(Error::RepeatTooLarge { bound: 101, .. })
        ));
        assert_eq!(run(r"[a]\w.\pL").unwrap(), 4);
    }

    #[test]
    fn flag_state_prints_as_inline_flags() {
        let state = FlagState {
            case_insensitive: true,
            ..FlagState::default()
        };
        assert_eq!(state.to_syntax(), "iu-mxsR");
        let all = FlagState {
            case_insensitive: true,
            multi_line: true,
            unicode: true,
            ignore_whitespace: true,
            dot_matches_new_line: true,
            crlf: true,
        };
        assert_eq!(all.to_syntax(), "imuxsR");
    }
}
