//! Lowering regex-syntax's HIR to sieve IR expressions.
//!
//! # Mapping
//!
//! - literal → `Expr::bytes` (UTF-8 in Unicode mode, raw bytes under `(?-u)`);
//! - Unicode class → a choice of UTF-8 byte sequences from [`Utf8Sequences`], each a sequence of
//!   byte classes; all one-byte sequences are merged into a single byte class, and neighbouring
//!   sequences that differ only in their last byte into one;
//! - byte class (under `(?-u)`) → one byte class;
//! - repetition → `Expr::repeat` with the same bounds, never expanded;
//! - alternation → `Expr::choice`, concatenation → `Expr::seq`, capture → its body,
//!   empty → `Expr::empty`;
//! - anchors → `Expr::empty`: [`crate::check`] has already rejected every anchor that is not
//!   always true, and every other assertion.
//!
//! A multi-byte Unicode class that occurs more than once becomes a rule of its own, referenced
//! from each occurrence, so repeated `\w` or `\p{L}` cost their UTF-8 expansion once.
//!
//! # Invariants
//!
//! The language of the lowered expression is exactly the set of byte strings the HIR matches
//! in full. `None` stands for the empty language, which the IR cannot express: it propagates
//! through sequences and required repetitions, and drops out of alternations. The total number
//! of nodes built is counted against a limit, so a pattern cannot make the grammar grow without
//! bound. Recursion follows the HIR's depth, which the parser's nest limit bounds.

use std::collections::HashMap;

use regex_syntax::hir::{Class, Hir, HirKind, Look};
use regex_syntax::utf8::Utf8Sequences;
use sieve_ir::token::TOKEN_MARKER;
use sieve_ir::{sugar, ByteClass, Expr, GrammarBuilder, RuleId};

use crate::ext::{Ext, DEFAULT_DELIMITER};

/// Why lowering stopped.
pub(crate) enum LowerError {
    /// The node limit was reached.
    TooLarge,
    /// An assertion other than an anchor reached the HIR (the AST check should have stopped it).
    Assertion,
}

/// Lowers HIR to expressions, sharing repeated Unicode classes as rules of `builder`.
pub(crate) struct Lowerer<'b> {
    builder: &'b mut GrammarBuilder,
    /// The base of names of class rules.
    rule_base: String,
    /// The base of names of extension rules (the root rule's name).
    root_name: String,
    /// The extension groups, by capture index.
    extensions: &'b HashMap<u32, Ext>,
    /// How often each multi-byte Unicode class occurs in the HIR (from [`Lowerer::count`]).
    uses: HashMap<Vec<(char, char)>, usize>,
    /// Classes already made into rules.
    shared: HashMap<Vec<(char, char)>, RuleId>,
    nodes: usize,
    max_nodes: usize,
}

impl<'b> Lowerer<'b> {
    /// A lowerer adding class rules named after `rule_base` to `builder`, building at most
    /// `max_nodes` expression nodes.
    pub(crate) fn new(
        builder: &'b mut GrammarBuilder,
        rule_base: &str,
        extensions: &'b HashMap<u32, Ext>,
        max_nodes: usize,
    ) -> Self {
        Lowerer {
            builder,
            rule_base: format!("{rule_base}_class"),
            root_name: rule_base.to_owned(),
            extensions,
            uses: HashMap::new(),
            shared: HashMap::new(),
            nodes: 0,
            max_nodes,
        }
    }

    /// Counts the Unicode classes of `hir` (call once, before [`Lowerer::lower`]).
    pub(crate) fn count(&mut self, hir: &Hir) {
        match hir.kind() {
            HirKind::Class(Class::Unicode(class)) if !class.is_ascii() => {
                *self.uses.entry(key(class)).or_default() += 1;
            }
            HirKind::Repetition(rep) => self.count(&rep.sub),
            HirKind::Capture(cap) => self.count(&cap.sub),
            HirKind::Concat(items) | HirKind::Alternation(items) => {
                items.iter().for_each(|h| self.count(h));
            }
            _ => {}
        }
    }

    fn charge(&mut self, nodes: usize) -> Result<(), LowerError> {
        self.nodes = self.nodes.saturating_add(nodes);
        if self.nodes > self.max_nodes {
            Err(LowerError::TooLarge)
        } else {
            Ok(())
        }
    }

    /// The expression matching exactly what `hir` fully matches; `None` for the empty language.
    pub(crate) fn lower(&mut self, hir: &Hir) -> Result<Option<Expr>, LowerError> {
        self.charge(1)?;
        Ok(match hir.kind() {
            HirKind::Empty => Some(Expr::empty()),
            // No text holds the token marker (`sieve_ir::token`): a byte-mode literal with
            // it matches nothing, and byte classes leave it out.
            HirKind::Literal(lit) if lit.0.contains(&TOKEN_MARKER) => None,
            HirKind::Literal(lit) => Some(Expr::bytes(lit.0.to_vec())),
            HirKind::Class(Class::Bytes(class)) => {
                let mut bytes =
                    ByteClass::from_ranges(class.ranges().iter().map(|r| (r.start(), r.end())));
                bytes.remove(TOKEN_MARKER);
                Expr::class(bytes)
            }
            HirKind::Class(Class::Unicode(class)) => self.unicode_class(class)?,
            HirKind::Look(look) => match look {
                Look::Start
                | Look::End
                | Look::StartLF
                | Look::EndLF
                | Look::StartCRLF
                | Look::EndCRLF => Some(Expr::empty()),
                _ => return Err(LowerError::Assertion),
            },
            HirKind::Repetition(rep) => match self.lower(&rep.sub)? {
                Some(item) => Some(
                    Expr::repeat(item, rep.min, rep.max)
                        .expect("regex-syntax checks that min <= max"),
                ),
                None if rep.min == 0 => Some(Expr::empty()),
                None => None,
            },
            HirKind::Capture(cap) => match self.extensions.get(&cap.index) {
                Some(ext) => self.extension(ext)?,
                None => self.lower(&cap.sub)?,
            },
            HirKind::Concat(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match self.lower(item)? {
                        Some(expr) => out.push(expr),
                        None => return Ok(None),
                    }
                }
                Some(Expr::seq(out))
            }
            HirKind::Alternation(alts) => {
                let mut out = Vec::with_capacity(alts.len());
                for alt in alts {
                    out.extend(self.lower(alt)?);
                }
                Expr::choice(out)
            }
        })
    }

    /// The expression of an extension group (its rules added to the builder and charged).
    fn extension(&mut self, ext: &Ext) -> Result<Option<Expr>, LowerError> {
        let rules_before = self.builder.len();
        let root = self.root_name.clone();
        let base = |suffix: &str| format!("{root}_{suffix}");
        let expr = match ext {
            Ext::TextUntil(stops) => {
                let stops: Vec<&str> = stops.iter().map(String::as_str).collect();
                let limits = sugar::Limits {
                    max_text_len: usize::MAX,
                };
                Some(
                    sugar::text_until(self.builder, &base("until"), &stops, &limits)
                        .map_err(sugar_error)?,
                )
            }
            Ext::SubstringOf(text) => {
                let limits = sugar::Limits {
                    max_text_len: usize::MAX,
                };
                Some(
                    sugar::substring_of(self.builder, &base("substring"), text, &limits)
                        .map_err(sugar_error)?,
                )
            }
            Ext::QuotedText => Some(sugar::quoted_text()),
            Ext::UnquotedText => {
                Some(sugar::unquoted_text(self.builder, &base("plain")).map_err(sugar_error)?)
            }
            Ext::List { item, delimiter } => {
                let (Some(item), Some(delimiter)) =
                    (self.lower(item)?, self.delimiter(delimiter.as_ref())?)
                else {
                    return Ok(None);
                };
                Some(
                    sugar::delimited_list(self.builder, &base("item"), item, delimiter)
                        .map_err(sugar_error)?,
                )
            }
            Ext::Subsequence { items, delimiter } => {
                let Some(delimiter) = self.delimiter(delimiter.as_ref())? else {
                    // With no delimiter possible, only subsequences of one item remain.
                    let mut alternatives = Vec::new();
                    for item in items {
                        alternatives.extend(self.lower(item)?);
                    }
                    return Ok(Expr::choice(alternatives));
                };
                let mut lowered = Vec::with_capacity(items.len());
                for item in items {
                    // An item matching nothing can never be chosen.
                    lowered.extend(self.lower(item)?);
                }
                if lowered.is_empty() {
                    return Ok(None);
                }
                Some(
                    sugar::delimited_subsequence(
                        self.builder,
                        &base("subsequence"),
                        lowered,
                        delimiter,
                    )
                    .map_err(sugar_error)?,
                )
            }
        };
        let added: usize = (rules_before..self.builder.len())
            .filter_map(|i| {
                RuleId::new(i)
                    .and_then(|id| self.builder.body(id))
                    .map(Expr::size)
            })
            .sum();
        self.charge(added + expr.as_ref().map_or(0, Expr::size))?;
        Ok(expr)
    }

    /// The delimiter of a delimited form: the given one lowered, else the default.
    fn delimiter(&mut self, delimiter: Option<&Hir>) -> Result<Option<Expr>, LowerError> {
        match delimiter {
            Some(hir) => self.lower(hir),
            None => Ok(Some(Expr::bytes(DEFAULT_DELIMITER))),
        }
    }

    fn unicode_class(
        &mut self,
        class: &regex_syntax::hir::ClassUnicode,
    ) -> Result<Option<Expr>, LowerError> {
        let key = key(class);
        if let Some(&id) = self.shared.get(&key) {
            return Ok(Some(Expr::rule(id)));
        }
        let Some(expr) = self.utf8_choice(class)? else {
            return Ok(None);
        };
        if self.uses.get(&key).copied().unwrap_or(0) < 2 {
            return Ok(Some(expr));
        }
        let id = self
            .builder
            .fresh(&self.rule_base)
            .map_err(|_| LowerError::TooLarge)?;
        self.builder.define(id, expr);
        self.shared.insert(key, id);
        Ok(Some(Expr::rule(id)))
    }

    /// The UTF-8 encodings of the class's characters as a choice of byte-class sequences.
    ///
    /// Consecutive sequences that differ only in their last byte range share one alternative
    /// whose last item is the union of those ranges (`\xe0\xa6` `[\x85-\x8c\x8f\x90]`), and
    /// all one-byte sequences share one byte class.
    fn utf8_choice(
        &mut self,
        class: &regex_syntax::hir::ClassUnicode,
    ) -> Result<Option<Expr>, LowerError> {
        let mut single = ByteClass::EMPTY;
        // (all byte ranges but the last, the union of last byte ranges)
        let mut groups: Vec<(Vec<(u8, u8)>, ByteClass)> = Vec::new();
        for range in class.ranges() {
            for seq in Utf8Sequences::new(range.start(), range.end()) {
                let Some((last, prefix)) = seq.as_slice().split_last() else {
                    continue;
                };
                if prefix.is_empty() {
                    single.add_range(last.start, last.end);
                    continue;
                }
                let prefix: Vec<(u8, u8)> = prefix.iter().map(|r| (r.start, r.end)).collect();
                match groups.last_mut() {
                    Some((p, tail)) if *p == prefix => tail.add_range(last.start, last.end),
                    _ => {
                        self.charge(prefix.len() + 2)?;
                        groups.push((prefix, ByteClass::range(last.start, last.end)));
                    }
                }
            }
        }
        let mut alternatives = Vec::with_capacity(groups.len() + 1);
        if let Some(expr) = Expr::class(single) {
            self.charge(1)?;
            alternatives.push(expr);
        }
        for (prefix, tail) in groups {
            alternatives.push(byte_sequence(
                prefix
                    .into_iter()
                    .map(|(lo, hi)| ByteClass::range(lo, hi))
                    .chain([tail]),
            ));
        }
        Ok(Expr::choice(alternatives))
    }
}

/// Sugar refuses only what [`crate::ext::prepare`] has checked already, or runs out of rules.
fn sugar_error(_: sugar::SugarError) -> LowerError {
    LowerError::TooLarge
}

/// The sequence of the given non-empty byte classes, runs of single bytes joined into strings.
fn byte_sequence(classes: impl IntoIterator<Item = ByteClass>) -> Expr {
    let mut items = Vec::new();
    let mut run = Vec::new();
    for class in classes {
        if let Some(b) = class.single_byte() {
            run.push(b);
            continue;
        }
        if !run.is_empty() {
            items.push(Expr::bytes(std::mem::take(&mut run)));
        }
        items.extend(Expr::class(class));
    }
    if !run.is_empty() {
        items.push(Expr::bytes(run));
    }
    Expr::seq(items)
}

fn key(class: &regex_syntax::hir::ClassUnicode) -> Vec<(char, char)> {
    class
        .ranges()
        .iter()
        .map(|r| (r.start(), r.end()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sieve_ir::ExprKind;

    fn lower(pattern: &str) -> (Option<Expr>, GrammarBuilder) {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap();
        let mut builder = GrammarBuilder::new();
        builder.declare("root").unwrap();
        let extensions = HashMap::new();
        let mut lowerer = Lowerer::new(&mut builder, "root", &extensions, 10_000);
        lowerer.count(&hir);
        let expr = lowerer.lower(&hir).ok().unwrap();
        (expr, builder)
    }

    #[test]
    fn one_byte_sequences_merge_into_one_class() {
        let (expr, _) = lower("[a-cx-zé]");
        let ExprKind::Choice(alts) = expr.unwrap().into_kind() else {
            panic!("a choice");
        };
        assert_eq!(
            alts[0],
            Expr::class(ByteClass::from_ranges([(b'a', b'c'), (b'x', b'z')])).unwrap()
        );
        assert_eq!(alts[1], Expr::bytes("é"));
    }

    #[test]
    fn sequences_sharing_a_prefix_merge_their_last_byte() {
        // U+0391..U+03A1 and U+03A3..U+03A9 are all \xce followed by one byte.
        let (expr, _) = lower("[Α-ΡΣ-Ω]");
        let expected = Expr::seq([
            Expr::bytes([0xce]),
            Expr::class(ByteClass::from_ranges([(0x91, 0xa1), (0xa3, 0xa9)])).unwrap(),
        ]);
        assert_eq!(expr.unwrap(), expected);
    }

    #[test]
    fn empty_language_propagates() {
        assert_eq!(lower("a[a&&b]").0, None);
        assert_eq!(lower("a|[a&&b]").0, Some(Expr::bytes("a")));
        assert_eq!(lower("[a&&b]*").0, Some(Expr::empty()));
        assert_eq!(lower("(?:[a&&b]){2}").0, None);
    }

    #[test]
    fn repeated_unicode_classes_become_one_rule() {
        let (expr, builder) = lower(r"\pL-\pL-[a-z]-[a-z]");
        assert_eq!(builder.len(), 2);
        let class_rule = builder.lookup("root_class").unwrap();
        let refs = expr
            .unwrap()
            .children()
            .iter()
            .filter(|e| **e == Expr::rule(class_rule))
            .count();
        assert_eq!(refs, 2);
    }

    #[test]
    fn the_node_limit_stops_lowering() {
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(r"\w")
            .unwrap();
        let mut builder = GrammarBuilder::new();
        let extensions = HashMap::new();
        let mut lowerer = Lowerer::new(&mut builder, "root", &extensions, 50);
        assert!(matches!(lowerer.lower(&hir), Err(LowerError::TooLarge)));
    }
}
