//! sieve's regex front-end: a regex becomes a [`Grammar`] whose language is exactly the set of
//! byte strings the regex **fully** matches (as XGrammar's and llguidance's regex constraints
//! do: the regex constrains the whole output).
//!
//! The dialect is the `regex` crate's, parsed by regex-syntax: Unicode by default (classes
//! such as `\w`, `\p{Greek}` and `.` match Unicode scalar values, encoded as UTF-8), with the
//! inline flags `i` (case-insensitive, simple case folding), `s` (`.` matches `\n`), `m`, `x`,
//! `U` and `u` (`(?-u)` switches to bytes, so `(?-u)[\x80-\xfe]` matches bytes that are not
//! UTF-8; the byte `0xFF` never matches: it is the token marker of `sieve_ir::token`, in no
//! text). Greediness and capture groups do not change a language and are ignored.
//!
//! # Extensions
//!
//! Specially named capture groups stand for languages that are awkward or large as plain
//! regexes (Koo et al., "Automata-based constraints for language model decoding", §2.5),
//! built by [`sieve_ir::sugar`]: `(?P<TEXT_UNTIL>stop|…)`, `(?P<SUBSTRING_OF>text)`,
//! `(?P<QUOTED_TEXT>)`, `(?P<UNQUOTED_TEXT>)`, `(?P<DELIMITED_LIST>item)` and
//! `(?P<DELIMITED_SUBSEQUENCE_OF>a|b|…)`, the last two with an optional trailing
//! `(?P<DELIMITER>…)` (default `, `). The syntax and exact languages are in
//! `docs/regex-extensions.md`; the token-level labels `TEXT_TOKEN`, `PARAGRAPH_TOKEN` and
//! `IMAGE` are refused, and so are all-capitals names close to an extension's. Any other
//! name is an ordinary capture group. [`Options::extensions`] turns all of this off.
//!
//! ```
//! use sieve_ir::reference::Recognizer;
//!
//! let grammar = sieve_regex::compile(r"<think>(?P<TEXT_UNTIL></think>)", &Default::default()).unwrap();
//! let recognizer = Recognizer::new(&grammar).unwrap();
//! assert!(recognizer.accepts(b"<think>a < b</think>"));
//! assert!(!recognizer.accepts(b"<think>a</think></think>"));
//! ```
//!
//! # Pipeline
//!
//! pattern → AST (regex-syntax, with spans) → `check` (anchors, word
//! boundaries, repetition limits, extension groups, all located) → `ext` (extension pieces
//! translated and checked) → HIR (regex-syntax's translator) →
//! `lower` (HIR → [`sieve_ir::Expr`]) → [`Grammar`].
//!
//! # What is rejected, and where the error points
//!
//! - syntax errors and unknown Unicode classes: regex-syntax's message and span;
//! - look-around groups `(?=`, `(?!`, `(?<=`, `(?<!`: named, on the group's opening;
//! - back-references `\1`, `\k<name>`, `(?P=name)`;
//! - word-boundary assertions `\b`, `\B`, `\<`, `\>`, `\b{start}`, … anywhere;
//! - anchors where they are not always true. `^` and `\A` are allowed only at the very start
//!   of the pattern or of a top-level alternative (groups around them are fine, repetitions
//!   are not: `(^a|b)c` is accepted, `(^a)*` is not); `$` and `\z` only at the very end, or the
//!   end of a top-level alternative. Under `(?m)` the line anchors follow the same rule.
//!   Allowed anchors are dropped: at the ends of a full match they always hold;
//! - a regex that matches nothing, such as `[^\x00-\x{10FFFF}]` (the IR has no empty
//!   language): the error points at the first class that is empty, if one is;
//! - extension groups with the wrong content, token-level labels, likely typos of extension
//!   names, misplaced `DELIMITER` groups (see [`Error`]);
//! - patterns over the [`Limits`]: length, nesting depth, repetition bound, grammar size,
//!   extension text length.
//!
//! # Example
//!
//! ```
//! use sieve_ir::reference::Recognizer;
//!
//! let grammar = sieve_regex::compile(r"[a-z]+@(?i:example)\.com", &Default::default()).unwrap();
//! let recognizer = Recognizer::new(&grammar).unwrap();
//! assert!(recognizer.accepts(b"bob@EXAMPLE.com"));
//! assert!(!recognizer.accepts(b"bob@example.com."));
//!
//! let err = sieve_regex::compile(r"a\bb", &Default::default()).unwrap_err();
//! assert_eq!(err.to_string(), r"word-boundary assertions (`\b`) are not supported");
//! ```

mod check;
mod error;
mod ext;
mod lower;

pub use error::{Error, LookAround};

use regex_syntax::ast::parse::ParserBuilder;
use regex_syntax::hir::translate::TranslatorBuilder;
use regex_syntax::hir::{Hir, HirKind};
use sieve_diagnostics::Span;
use sieve_ir::{Grammar, GrammarBuilder};

/// How to compile a regex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The name of the grammar's root rule. Default: `root`. Rules the front-end adds for
    /// shared Unicode classes are named after it (`root_class`, `root_class_1`, …).
    pub rule_name: String,
    /// Size limits; see [`Limits`].
    pub limits: Limits,
    /// Whether extension groups (`(?P<TEXT_UNTIL>…)` and the others, see the crate docs) have
    /// their meaning. When false, every capture group is an ordinary group whatever its name,
    /// as in the `regex` crate. Default: true.
    pub extensions: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            rule_name: "root".to_owned(),
            limits: Limits::default(),
            extensions: true,
        }
    }
}

/// Bounds on the work and memory a pattern may cost. Each default is generous for real
/// constraints (JSON Schema `pattern`s, tool-call formats) and small enough that any pattern
/// compiles in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest pattern, in bytes. Default: 65,536.
    pub max_pattern_len: usize,
    /// The deepest nesting of groups, classes and repetitions (regex-syntax's nest limit; it
    /// also bounds the recursion of this crate). Default: 128.
    pub nest_limit: u32,
    /// The largest bound of a counted repetition `{m}`, `{m,}` or `{m,n}`. Repetitions stay
    /// unexpanded in the IR, but later stages may expand small ones and have to deal with large
    /// ones. Default: 10,000.
    pub max_repeat: u32,
    /// The most expression nodes the grammar may have (Unicode classes cost one node per
    /// UTF-8 sequence and byte range). Default: 1,000,000.
    pub max_grammar_size: usize,
    /// The longest text of a `SUBSTRING_OF` group, and the longest total length of a
    /// `TEXT_UNTIL` group's stop phrases, in bytes. Each byte costs up to two rules.
    /// Default: 16,384.
    pub max_extension_text: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_pattern_len: 1 << 16,
            nest_limit: 128,
            max_repeat: 10_000,
            max_grammar_size: 1_000_000,
            max_extension_text: 1 << 14,
        }
    }
}

/// Compiles `pattern` to a grammar with root rule [`Options::rule_name`] whose language is
/// exactly the byte strings the regex fully matches.
///
/// # Errors
///
/// Every [`Error`] carries the span of the offending part of `pattern`; see the crate docs for
/// what is rejected.
pub fn compile(pattern: &str, options: &Options) -> Result<Grammar, Error> {
    let limits = &options.limits;
    if options.rule_name.is_empty() {
        return Err(Error::EmptyRuleName { span: Span::at(0) });
    }
    if pattern.len() > limits.max_pattern_len {
        let mut start = limits.max_pattern_len;
        while !pattern.is_char_boundary(start) {
            start -= 1;
        }
        return Err(Error::PatternTooLong {
            span: Span::new(start, pattern.len()),
            len: pattern.len(),
            limit: limits.max_pattern_len,
        });
    }
    let ast = ParserBuilder::new()
        .nest_limit(limits.nest_limit)
        .build()
        .parse(pattern)
        .map_err(|e| error::from_parse(pattern, &e))?;
    let found = check::check(pattern, &ast, limits.max_repeat, options.extensions)?;
    let hir = translate(pattern, &ast)?;
    let extensions = ext::prepare(pattern, found.extensions, limits.max_extension_text)?;
    let classes = found.classes;

    let mut builder = GrammarBuilder::new();
    let root = builder
        .declare(&options.rule_name)
        .expect("the first rule's name is free");
    let whole = Span::new(0, pattern.len());
    let mut lowerer = lower::Lowerer::new(
        &mut builder,
        &options.rule_name,
        &extensions,
        limits.max_grammar_size,
    );
    lowerer.count(&hir);
    let body = match lowerer.lower(&hir) {
        Ok(Some(body)) => body,
        Ok(None) => return Err(matches_nothing(pattern, &classes)),
        Err(lower::LowerError::TooLarge) => {
            return Err(Error::GrammarTooLarge {
                span: whole,
                limit: limits.max_grammar_size,
            })
        }
        Err(lower::LowerError::Assertion) => {
            return Err(Error::WordBoundary {
                span: whole,
                text: pattern.to_owned(),
            })
        }
    };
    builder.define(root, body);
    Ok(builder
        .build(root)
        .expect("lowering builds only valid expressions and defines every rule"))
}

fn translate(pattern: &str, ast: &regex_syntax::ast::Ast) -> Result<Hir, Error> {
    TranslatorBuilder::new()
        // The IR is over bytes: `(?-u)` classes may match bytes that are not UTF-8.
        .utf8(false)
        .build()
        .translate(pattern, ast)
        .map_err(|e| error::from_translate(&e))
}

/// The error for a regex whose language is empty, pointing at the first class that is empty
/// on its own (translated with the flags in force where it stands), else at the whole pattern.
fn matches_nothing(pattern: &str, classes: &[check::ClassSite]) -> Error {
    for site in classes {
        let sub = format!(
            "(?{}:{})",
            site.flags.to_syntax(),
            &pattern[site.span.start..site.span.end]
        );
        let empty = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(&sub)
            .is_ok_and(|hir| match hir.kind() {
                HirKind::Class(class) => class.is_empty(),
                _ => false,
            });
        if empty {
            return Error::MatchesNothing {
                span: site.span,
                whole: false,
            };
        }
    }
    Error::MatchesNothing {
        span: Span::new(0, pattern.len()),
        whole: true,
    }
}
