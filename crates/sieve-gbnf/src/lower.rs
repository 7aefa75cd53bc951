//! [`ast::Grammar`] to [`sieve_ir::Grammar`].
//!
//! Invariants:
//!
//! - The IR is built only through [`GrammarBuilder`] and the [`Expr`] constructors, so it keeps
//!   the IR's invariants by construction; IR rules are in definition order (root wherever it
//!   is), named as in the text, followed by the rules built-in calls add.
//! - Characters become UTF-8: a literal becomes its UTF-8 bytes; a class (complemented over all
//!   Unicode scalar values when negated) and `.` become a choice of byte sequences from
//!   [`Utf8Sequences`], the one-byte sequences merged into a single byte class.
//! - Repetitions map to [`Expr::repeat`] unexpanded; groups disappear.
//! - Built-in calls (`text_until(…)`, …) are lowered by [`sieve_ir::sugar`], the same code
//!   as the regex front-end's extension groups; their rules are named after the rule holding
//!   the call (`root_text_until`, `root_text_until_1`, …) and count against
//!   [`crate::Limits::max_rules`].
//! - Every error is collected (all undefined rules, all duplicates, …) before returning. The
//!   tree's depth is checked without recursion before the recursive lowering runs, so any
//!   tree, parsed or built by hand, is safe.

use std::collections::HashMap;

use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
use regex_syntax::utf8::Utf8Sequences;
use sieve_diagnostics::Span;
use sieve_ir::{sugar, ByteClass, Expr, GrammarBuilder, RuleId};

use crate::ast::{self, Builtin, ExprKind};
use crate::{Error, Errors, Options};

/// Lowers `grammar` (see [`crate::lower`]).
pub(crate) fn lower(
    grammar: &ast::Grammar,
    options: &Options,
) -> Result<sieve_ir::Grammar, Errors> {
    let limits = &options.limits;
    // Three expression levels per group at most (alternation, concatenation, repetition), and
    // the group itself: anything deeper did not come from a parse under these limits.
    let depth_limit = 4 * (limits.max_depth + 1);
    if grammar.depth() > depth_limit {
        return Err(Errors::new(vec![Error::TooDeep {
            span: deepest_span(grammar),
            limit: limits.max_depth,
        }]));
    }
    let mut errors = Vec::new();
    if grammar.rules.len() > limits.max_rules {
        let rule = &grammar.rules[limits.max_rules];
        return Err(Errors::new(vec![Error::TooManyRules {
            span: rule.name_span,
            limit: limits.max_rules,
        }]));
    }

    let mut builder = GrammarBuilder::new();
    // name -> (id, index of the first definition)
    let mut defined: HashMap<&str, (RuleId, usize)> = HashMap::new();
    for (index, rule) in grammar.rules.iter().enumerate() {
        if let Some(&(_, first)) = defined.get(rule.name.as_str()) {
            errors.push(Error::DuplicateRule {
                span: rule.name_span,
                name: rule.name.clone(),
                first_line: grammar.rules[first].line,
            });
            continue;
        }
        match builder.declare(&rule.name) {
            Ok(id) => {
                defined.insert(&rule.name, (id, index));
            }
            Err(_) => errors.push(Error::TooManyRules {
                span: rule.name_span,
                limit: limits.max_rules,
            }),
        }
    }
    let root = defined.get(options.root.as_str()).map(|&(id, _)| id);
    if root.is_none() {
        errors.push(Error::MissingRoot {
            span: Span::at(grammar.span.start),
            name: options.root.clone(),
        });
    }

    let mut lowerer = Lowerer {
        defined: &defined,
        errors: &mut errors,
        max_repeat: limits.max_repeat,
        max_call_text: limits.max_call_text,
        max_rules: limits.max_rules,
        builder: &mut builder,
        rule: String::new(),
        tokens: options.tokens.as_ref().map(|names| &*names.0),
    };
    let mut bodies = Vec::new();
    for (index, rule) in grammar.rules.iter().enumerate() {
        lowerer.rule.clone_from(&rule.name);
        let body = lowerer.expr(&rule.body);
        if let Some(look) = &rule.lookahead {
            // Still check it, so its undefined rules are reported too.
            let _ = lowerer.expr(&look.expr);
            lowerer
                .errors
                .push(Error::LookaheadUnsupported { span: look.span });
        }
        match defined.get(rule.name.as_str()) {
            Some(&(id, first)) if first == index => bodies.push((id, body, rule.max_tokens)),
            _ => {}
        }
    }

    if !errors.is_empty() {
        return Err(Errors::new(errors));
    }
    for (id, body, max_tokens) in bodies {
        builder.define(id, body.expect("no errors, so every body lowered"));
        if let Some(k) = max_tokens {
            builder.limit_tokens(id, k);
        }
    }
    let root = root.expect("no errors, so the root exists");
    builder.build(root).map_err(|e| {
        // The constructors keep the IR's invariants, so this is a bug, not a user error; it
        // is reported rather than a panic.
        Errors::new(vec![Error::Internal {
            span: Span::at(grammar.span.start),
            message: e.to_string(),
        }])
    })
}

/// The span of the first expression that is deepest, found without recursion.
fn deepest_span(grammar: &ast::Grammar) -> Span {
    let mut best = (0, grammar.span);
    let mut stack: Vec<(&ast::Expr, usize)> = Vec::new();
    for rule in &grammar.rules {
        stack.push((&rule.body, 1));
        if let Some(look) = &rule.lookahead {
            stack.push((&look.expr, 1));
        }
    }
    while let Some((expr, depth)) = stack.pop() {
        if depth > best.0 {
            best = (depth, expr.span);
        }
        for child in expr.children() {
            stack.push((child, depth + 1));
        }
    }
    best.1
}

struct Lowerer<'a> {
    defined: &'a HashMap<&'a str, (RuleId, usize)>,
    errors: &'a mut Vec<Error>,
    max_repeat: u32,
    max_call_text: usize,
    max_rules: usize,
    /// Where built-in calls add their rules (named after the rule being lowered).
    builder: &'a mut GrammarBuilder,
    /// The rule being lowered.
    rule: String,
    /// What token terminals resolve against.
    tokens: Option<&'a dyn sieve_ir::token::TokenNames>,
}

impl Lowerer<'_> {
    /// Lowers one expression; `None` when it had an error (already reported).
    fn expr(&mut self, expr: &ast::Expr) -> Option<Expr> {
        match &expr.kind {
            ExprKind::Empty => Some(Expr::empty()),
            ExprKind::Literal(s) => Some(Expr::bytes(s.as_bytes())),
            ExprKind::Dot => Some(utf8_choice(&ClassUnicode::new([ClassUnicodeRange::new(
                '\0',
                char::MAX,
            )]))),
            ExprKind::Class(class) => {
                let mut set = ClassUnicode::new(
                    class
                        .items
                        .iter()
                        .map(|item| ClassUnicodeRange::new(item.lo, item.hi)),
                );
                if class.negated {
                    set.negate();
                }
                if set.ranges().is_empty() {
                    self.errors.push(Error::EmptyClass { span: expr.span });
                    return None;
                }
                Some(utf8_choice(&set))
            }
            ExprKind::Token { raw, set } => match set.expr(self.tokens) {
                Ok(e) => Some(e),
                Err(reason) => {
                    self.errors.push(Error::UnresolvedToken {
                        span: expr.span,
                        text: raw.clone(),
                        reason,
                    });
                    None
                }
            },
            ExprKind::RuleRef(name) => match self.defined.get(name.as_str()) {
                Some(&(id, _)) => Some(Expr::rule(id)),
                None => {
                    self.errors.push(Error::UndefinedRule {
                        span: expr.span,
                        name: name.clone(),
                    });
                    None
                }
            },
            ExprKind::Group(inner) => self.expr(inner),
            ExprKind::Repeat { item, quantifier } => {
                let item = self.expr(item);
                let (min, max) = quantifier.bounds();
                let bound = max.unwrap_or(min).max(min);
                if bound > self.max_repeat {
                    self.errors.push(Error::RepeatOverLimit {
                        span: expr.span,
                        bound,
                        limit: self.max_repeat,
                    });
                    return None;
                }
                match Expr::repeat(item?, min, max) {
                    Ok(e) => Some(e),
                    Err(_) => {
                        self.errors.push(Error::RepeatMinOverMax {
                            span: expr.span,
                            min,
                            max: max.unwrap_or(min),
                        });
                        None
                    }
                }
            }
            ExprKind::Concat(items) => {
                let lowered: Vec<Option<Expr>> = items.iter().map(|i| self.expr(i)).collect();
                lowered
                    .into_iter()
                    .collect::<Option<Vec<_>>>()
                    .map(Expr::seq)
            }
            ExprKind::Alternation(alts) => {
                let lowered: Vec<Option<Expr>> = alts.iter().map(|a| self.expr(a)).collect();
                let alts = lowered.into_iter().collect::<Option<Vec<_>>>()?;
                // `None` only for no alternatives, which a parsed tree never has.
                Some(Expr::choice(alts).unwrap_or_else(Expr::empty))
            }
            ExprKind::Call { function, args } => self.call(*function, args, expr.span),
        }
    }

    /// Lowers a built-in call through [`sieve_ir::sugar`]; `None` when it had an error.
    fn call(&mut self, function: Builtin, args: &[ast::Expr], span: Span) -> Option<Expr> {
        let name = function.name();
        let expected = match function {
            Builtin::TextUntil => {
                "one or more non-empty string literals, e.g. `text_until(\"</tool>\", \"<stop>\")`"
            }
            Builtin::SubstringOf => "one non-empty string literal, e.g. `substring_of(\"…\")`",
            Builtin::QuotedText => "no arguments: `quoted_text()`",
            Builtin::UnquotedText => "no arguments: `unquoted_text()`",
            Builtin::DelimitedList => {
                "an item and an optional delimiter (default `\", \"`), e.g. `delimited_list(item, \"; \")`"
            }
            Builtin::DelimitedSubsequenceOf => {
                "alternatives and an optional delimiter (default `\", \"`), e.g. `delimited_subsequence_of(a | b | c, \"; \")`"
            }
        };
        let (least, most) = match function {
            Builtin::TextUntil => (1, usize::MAX),
            Builtin::SubstringOf => (1, 1),
            Builtin::QuotedText | Builtin::UnquotedText => (0, 0),
            Builtin::DelimitedList | Builtin::DelimitedSubsequenceOf => (1, 2),
        };
        let bad = |span| Error::BadArguments {
            span,
            function: name,
            expected,
        };
        if args.len() < least || args.len() > most {
            self.errors.push(bad(span));
            return None;
        }
        let base = format!("{}_{}", self.rule, name);
        let built = match function {
            Builtin::TextUntil | Builtin::SubstringOf => {
                let mut texts = Vec::with_capacity(args.len());
                for arg in args {
                    match literal(arg) {
                        Some(text) if !text.is_empty() => texts.push(text),
                        _ => self.errors.push(bad(arg.span)),
                    }
                }
                if texts.len() < args.len() {
                    return None;
                }
                let len = texts.iter().map(|t| t.len()).sum::<usize>();
                if len > self.max_call_text {
                    self.errors.push(Error::CallTextTooLong {
                        span,
                        function: name,
                        len,
                        limit: self.max_call_text,
                    });
                    return None;
                }
                let limits = sugar::Limits {
                    max_text_len: self.max_call_text,
                };
                if function == Builtin::TextUntil {
                    sugar::text_until(self.builder, &base, &texts, &limits)
                } else {
                    sugar::substring_of(self.builder, &base, texts[0], &limits)
                }
            }
            Builtin::QuotedText => Ok(sugar::quoted_text()),
            Builtin::UnquotedText => sugar::unquoted_text(self.builder, &base),
            Builtin::DelimitedList | Builtin::DelimitedSubsequenceOf => {
                let delimiter = match args.get(1) {
                    Some(d) => self.expr(d),
                    None => Some(Expr::bytes(", ")),
                };
                let items: Vec<Option<Expr>> = if function == Builtin::DelimitedList {
                    vec![self.expr(&args[0])]
                } else {
                    alternatives(&args[0])
                        .iter()
                        .map(|a| self.expr(a))
                        .collect()
                };
                let (delimiter, mut items) =
                    (delimiter?, items.into_iter().collect::<Option<Vec<_>>>()?);
                if function == Builtin::DelimitedList {
                    let item = items.pop().expect("one item");
                    sugar::delimited_list(self.builder, &base, item, delimiter)
                } else {
                    sugar::delimited_subsequence(self.builder, &base, items, delimiter)
                }
            }
        };
        // Every input sugar refuses is checked above, so only running out of rule ids fails
        // here; the rules sugar adds count against the rule limit too.
        match built {
            Ok(expr) if self.builder.len() <= self.max_rules => Some(expr),
            _ => {
                self.errors.push(Error::TooManyRules {
                    span,
                    limit: self.max_rules,
                });
                None
            }
        }
    }
}

/// The text of a string literal argument, looking through groups.
fn literal(arg: &ast::Expr) -> Option<&str> {
    match &arg.kind {
        ExprKind::Literal(s) => Some(s),
        ExprKind::Group(inner) => literal(inner),
        _ => None,
    }
}

/// The alternatives of a `delimited_subsequence_of` argument (through one group), else the
/// argument itself.
fn alternatives(arg: &ast::Expr) -> &[ast::Expr] {
    match &arg.kind {
        ExprKind::Alternation(alts) => alts,
        ExprKind::Group(inner) => match &inner.kind {
            ExprKind::Alternation(alts) => alts,
            _ => std::slice::from_ref(arg),
        },
        _ => std::slice::from_ref(arg),
    }
}

/// The UTF-8 encodings of the characters of `set` (non-empty) as a choice of byte sequences.
fn utf8_choice(set: &ClassUnicode) -> Expr {
    let mut ascii = ByteClass::EMPTY;
    let mut alternatives = Vec::new();
    for range in set.iter() {
        for sequence in Utf8Sequences::new(range.start(), range.end()) {
            let ranges = sequence.as_slice();
            if let [one] = ranges {
                ascii.add_range(one.start, one.end);
                continue;
            }
            alternatives.push(Expr::seq(ranges.iter().map(|r| {
                Expr::class(ByteClass::range(r.start, r.end)).expect("a UTF-8 range is non-empty")
            })));
        }
    }
    if let Some(single) = Expr::class(ascii) {
        alternatives.insert(0, single);
    }
    Expr::choice(alternatives).expect("a non-empty set has an encoding")
}
