//! Syntactic sugar: languages that are awkward or large to write with the IR's operators,
//! built once here for every front-end (the regex extensions of Koo et al., §2.5, and their
//! GBNF spellings).
//!
//! | constructor | language |
//! |---|---|
//! | [`text_until`] | valid UTF-8 text up to and including the first occurrence of a stop phrase |
//! | [`substring_of`] | the non-empty substrings of a text, never splitting a character |
//! | [`quoted_text`] | a JSON string literal (RFC 8259 §7), quotes included |
//! | [`unquoted_text`] | a YAML 1.2 one-line plain scalar (block context) |
//! | [`delimited_list`] | one or more items separated by a delimiter |
//! | [`delimited_subsequence`] | a non-empty subsequence of a list of items, in order, each at most once, separated by a delimiter |
//!
//! The exact definitions are in each function's docs and in `docs/regex-extensions.md`.
//! The IR has no complement or intersection, so the first four are built as automata and
//! emitted as right-linear rules (one per automaton state; see `automaton.rs`): a suffix
//! automaton for substrings, an Aho–Corasick automaton crossed with the UTF-8 decoder for
//! "text not containing a stop phrase yet", small scanners for the two text spellings.
//!
//! This module lives in `sieve-ir` because every front-end may depend on the IR and on
//! nothing else in common (`sieve-gbnf` may not depend on `sieve-regex`), and because its
//! output is plain IR: later stages never learn that sugar was used.
//!
//! **Invariants:** every constructor's language equals its definition (checked against a
//! direct Rust definition on every string up to a length over a small alphabet, in this
//! module's tests); rules are named after the caller's `base` through
//! [`GrammarBuilder::fresh`]; sizes are linear in the input text, which [`Limits`] bounds.

mod automaton;
mod scalar;
mod substring;
mod text_until;
mod utf8;

use crate::{Expr, GrammarBuilder, IrError};

/// Bounds on the texts given to the sugar constructors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest text of [`substring_of`], and the longest total length of the stop
    /// phrases of [`text_until`], in bytes. Each byte costs at most two rules and a few
    /// expression nodes; [`text_until`] also keeps a 1 KiB transition row per byte while it
    /// builds. Default: 16,384.
    pub max_text_len: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_text_len: 1 << 14,
        }
    }
}

/// Why a sugar constructor refused its input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SugarError {
    /// [`text_until`] was given no stop phrase, or an empty one.
    #[error("a stop phrase must not be empty")]
    EmptyStopPhrase,
    /// [`substring_of`] was given an empty text.
    #[error("the text must not be empty")]
    EmptyText,
    /// [`delimited_subsequence`] was given no items.
    #[error("the list of items must not be empty")]
    NoItems,
    /// The text is longer than [`Limits::max_text_len`].
    #[error("the text is {len} bytes long, over the limit of {limit}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// Building the rules failed (too many rules).
    #[error(transparent)]
    Ir(#[from] IrError),
}

/// Valid UTF-8 text up to and including the first occurrence of any of `stops`: the byte
/// strings `w` that are valid UTF-8, end with a stop phrase, and have no proper prefix ending
/// with one. The text before the phrase may be empty.
///
/// # Errors
///
/// [`SugarError::EmptyStopPhrase`] for no phrase or an empty one; [`SugarError::TooLong`]
/// when the phrases together are over [`Limits::max_text_len`]; [`SugarError::Ir`] when the
/// builder runs out of rule ids.
pub fn text_until(
    builder: &mut GrammarBuilder,
    base: &str,
    stops: &[&str],
    limits: &Limits,
) -> Result<Expr, SugarError> {
    if stops.is_empty() || stops.iter().any(|s| s.is_empty()) {
        return Err(SugarError::EmptyStopPhrase);
    }
    let len = stops.iter().map(|s| s.len()).sum::<usize>();
    if len > limits.max_text_len {
        return Err(SugarError::TooLong {
            len,
            limit: limits.max_text_len,
        });
    }
    let automaton = text_until::automaton(stops);
    Ok(automaton
        .emit(builder, base, 0)?
        .expect("every stop phrase is reachable"))
}

/// Every non-empty substring of `text` that starts and ends on a character boundary (so is
/// valid UTF-8), as the suffix automaton of its characters.
///
/// # Errors
///
/// [`SugarError::EmptyText`] for an empty text; [`SugarError::TooLong`] over
/// [`Limits::max_text_len`]; [`SugarError::Ir`] when the builder runs out of rule ids.
pub fn substring_of(
    builder: &mut GrammarBuilder,
    base: &str,
    text: &str,
    limits: &Limits,
) -> Result<Expr, SugarError> {
    if text.is_empty() {
        return Err(SugarError::EmptyText);
    }
    if text.len() > limits.max_text_len {
        return Err(SugarError::TooLong {
            len: text.len(),
            limit: limits.max_text_len,
        });
    }
    Ok(substring::automaton(text)
        .emit(builder, base, 0)?
        .expect("every state but the start accepts"))
}

/// A JSON string literal (RFC 8259 §7), quotes included: characters other than `"`, `\` and
/// U+0000–U+001F, and the escapes `\" \\ \/ \b \f \n \r \t \uXXXX`. One expression, no rules.
pub fn quoted_text() -> Expr {
    scalar::quoted_text()
}

/// A YAML 1.2 one-line plain scalar in block context (`ns-plain-one-line(flow-out)`):
/// non-empty printable text without line breaks or the byte order mark, not starting with
/// white space or an indicator (except `-`, `?`, `:` before a non-space), not ending with
/// white space or `:`, containing no `: ` and no ` #` (a `#` is allowed after a non-space, a
/// `:` before one). Rules are named after `base`.
///
/// # Errors
///
/// [`SugarError::Ir`] when the builder runs out of rule ids.
pub fn unquoted_text(builder: &mut GrammarBuilder, base: &str) -> Result<Expr, SugarError> {
    let char_rule = builder.fresh(&format!("{base}_char"))?;
    builder.define(char_rule, scalar::plain_char());
    Ok(scalar::unquoted_automaton(Expr::rule(char_rule))
        .emit(builder, base, 0)?
        .expect("the scanner accepts one character"))
}

/// One or more `item`s separated by `delimiter`: `item (delimiter item)*`. An item larger
/// than a few nodes becomes a rule named after `base`, so it is written once.
///
/// # Errors
///
/// [`SugarError::Ir`] when the builder runs out of rule ids.
pub fn delimited_list(
    builder: &mut GrammarBuilder,
    base: &str,
    item: Expr,
    delimiter: Expr,
) -> Result<Expr, SugarError> {
    let item = shared(builder, base, item)?;
    Ok(Expr::seq([
        item.clone(),
        Expr::star(Expr::seq([delimiter, item])),
    ]))
}

/// A non-empty subsequence of `items` (each at most once, in the given order) separated by
/// `delimiter`: `items[i₁] delimiter items[i₂] … ` for `i₁ < i₂ < …`. Built as one rule per
/// position, `Tᵢ ::= itemᵢ (delimiter Tᵢ₊₁)? | Tᵢ₊₁`, so its size is linear in the items.
///
/// # Errors
///
/// [`SugarError::NoItems`] for an empty list; [`SugarError::Ir`] when the builder runs out of
/// rule ids.
pub fn delimited_subsequence(
    builder: &mut GrammarBuilder,
    base: &str,
    items: Vec<Expr>,
    delimiter: Expr,
) -> Result<Expr, SugarError> {
    if items.is_empty() {
        return Err(SugarError::NoItems);
    }
    let delimiter = shared(builder, &format!("{base}_delimiter"), delimiter)?;
    // From the last item back: `rest` is the rule for the subsequences of the items after
    // the current one.
    let mut rest: Option<Expr> = None;
    let count = items.len();
    for (k, item) in items.into_iter().rev().enumerate() {
        let body = match rest {
            None => item,
            Some(rest) => Expr::choice([
                Expr::seq([
                    item,
                    Expr::optional(Expr::seq([delimiter.clone(), rest.clone()])),
                ]),
                rest,
            ])
            .expect("two alternatives"),
        };
        if k + 1 == count {
            return Ok(body);
        }
        let id = builder.fresh(base)?;
        builder.define(id, body);
        rest = Some(Expr::rule(id));
    }
    unreachable!("the loop returns at the first item")
}

/// `expr` itself when it is small, else a reference to a new rule holding it.
fn shared(builder: &mut GrammarBuilder, base: &str, expr: Expr) -> Result<Expr, IrError> {
    if expr.size() <= 3 {
        return Ok(expr);
    }
    let id = builder.fresh(base)?;
    builder.define(id, expr);
    Ok(Expr::rule(id))
}

#[cfg(test)]
mod tests;
