//! The stable, human-readable text form of the IR, as `sieve ir` prints it.
//!
//! One rule a line, in rule-id order, after a `# root: NAME` line. Bodies use GBNF notation
//! over bytes: `"…"` byte strings (printable ASCII as itself, other bytes as `\xHH`), `[…]`
//! byte classes, rule names, juxtaposition, `|`, parentheses, and `? * + {m} {m,} {m,n}`. A
//! token terminal's encoding inside a byte string prints as `<[id]>` (`crate::token`); a set
//! of ids stays the byte classes it is made of.
//! A rule with a token limit prints as `name[max_tokens=N] ::= …` (XGrammar's spelling), a
//! shared rule as `name[shared] ::= …`.
//! The output depends only on the grammar's value, never on addresses or hash order.

use std::fmt::{self, Write};

use crate::{Expr, ExprKind, Grammar};

impl fmt::Display for Grammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "# root: {}", self.rule(self.root()).name())?;
        for rule in self.rules() {
            f.write_str(rule.name())?;
            if let Some(limit) = rule.max_tokens() {
                write!(f, "[max_tokens={limit}]")?;
            }
            if rule.is_shared() {
                f.write_str("[shared]")?;
            }
            f.write_str(" ::= ")?;
            write_expr(f, self, rule.body(), Precedence::Choice)?;
            f.write_char('\n')?;
        }
        Ok(())
    }
}

impl Grammar {
    /// The text form of one expression of this grammar (rule references by name).
    pub fn expr_to_string(&self, expr: &Expr) -> String {
        let mut out = String::new();
        write_expr(&mut out, self, expr, Precedence::Choice).expect("writing to a String");
        out
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Precedence {
    Choice,
    Seq,
    Postfix,
}

fn write_expr(out: &mut impl Write, g: &Grammar, expr: &Expr, ctx: Precedence) -> fmt::Result {
    let own = match expr.kind() {
        ExprKind::Choice(_) => Precedence::Choice,
        ExprKind::Seq(_) => Precedence::Seq,
        // Text and a token terminal print as two items.
        ExprKind::Bytes(bytes) if token_pieces(bytes).len() > 1 => Precedence::Seq,
        _ => Precedence::Postfix,
    };
    // A repeat inside a repeat also needs parentheses: `(a*)?`.
    let nested_repeat =
        ctx == Precedence::Postfix && matches!(expr.kind(), ExprKind::Repeat { .. });
    let parens = own < ctx || nested_repeat;
    if parens {
        out.write_str("(")?;
    }
    match expr.kind() {
        ExprKind::Empty => out.write_str("\"\"")?,
        ExprKind::Bytes(bytes) => {
            for (i, piece) in token_pieces(bytes).into_iter().enumerate() {
                if i > 0 {
                    out.write_str(" ")?;
                }
                match crate::token::decode(piece) {
                    Some(id) => write!(out, "<[{id}]>")?,
                    None => write_bytes(out, piece)?,
                }
            }
        }
        ExprKind::Class(class) => write!(out, "{class}")?,
        ExprKind::Ref(id) => out.write_str(g.rule(*id).name())?,
        ExprKind::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_str(" ")?;
                }
                write_expr(out, g, item, Precedence::Seq)?;
            }
        }
        ExprKind::Choice(alts) => {
            for (i, alt) in alts.iter().enumerate() {
                if i > 0 {
                    out.write_str(" | ")?;
                }
                write_expr(out, g, alt, Precedence::Seq)?;
            }
        }
        ExprKind::Repeat { item, min, max } => {
            write_expr(out, g, item, Precedence::Postfix)?;
            match (*min, *max) {
                (0, Some(1)) => out.write_str("?")?,
                (0, None) => out.write_str("*")?,
                (1, None) => out.write_str("+")?,
                (m, None) => write!(out, "{{{m},}}")?,
                (m, Some(n)) if m == n => write!(out, "{{{m}}}")?,
                (m, Some(n)) => write!(out, "{{{m},{n}}}")?,
            }
        }
    }
    if parens {
        out.write_str(")")?;
    }
    Ok(())
}

/// `bytes` cut into text runs and whole token encodings (`crate::token`), which print as
/// `<[id]>`: a marker with fewer than three bytes after it stays in its text run.
fn token_pieces(bytes: &[u8]) -> Vec<&[u8]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == crate::token::TOKEN_MARKER && i + 4 <= bytes.len() {
            if start < i {
                pieces.push(&bytes[start..i]);
            }
            pieces.push(&bytes[i..i + 4]);
            i += 4;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < bytes.len() || pieces.is_empty() {
        pieces.push(&bytes[start..]);
    }
    pieces
}

/// Writes `bytes` as a double-quoted GBNF string literal over bytes.
pub fn write_bytes(out: &mut impl Write, bytes: &[u8]) -> fmt::Result {
    out.write_char('"')?;
    for &b in bytes {
        match b {
            b'"' => out.write_str("\\\"")?,
            b'\\' => out.write_str("\\\\")?,
            b'\n' => out.write_str("\\n")?,
            b'\r' => out.write_str("\\r")?,
            b'\t' => out.write_str("\\t")?,
            0x20..=0x7e => out.write_char(b as char)?,
            _ => write!(out, "\\x{b:02x}")?,
        }
    }
    out.write_char('"')
}

#[cfg(test)]
mod tests {
    use crate::{ByteClass, Expr, GrammarBuilder};

    #[test]
    fn prints_with_minimal_parentheses() {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let item = b.declare("item").unwrap();
        let alt = Expr::choice([Expr::bytes("a\n"), Expr::rule(item)]).unwrap();
        let body = Expr::seq([
            Expr::star(alt),
            Expr::optional(Expr::seq([Expr::bytes("x"), Expr::rule(item)])),
            Expr::repeat(Expr::bytes("\u{e9}"), 2, Some(5)).unwrap(),
            Expr::optional(Expr::plus(Expr::bytes("z"))),
        ]);
        b.define(root, Expr::choice([body, Expr::empty()]).unwrap());
        b.define(
            item,
            Expr::class(ByteClass::range(b'0', b'9').union(&ByteClass::byte(0xff))).unwrap(),
        );
        let g = b.build(root).unwrap();
        assert_eq!(
            g.to_string(),
            "# root: root\n\
             root ::= (\"a\\n\" | item)* (\"x\" item)? \"\\xc3\\xa9\"{2,5} (\"z\"+)? | \"\"\n\
             item ::= [0-9\\xff]\n"
        );
    }

    #[test]
    fn token_encodings_print_as_token_terminals() {
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let mut bytes = b"ab".to_vec();
        bytes.extend(crate::token::encode(70_000));
        bytes.extend(b"c");
        b.define(root, Expr::star(Expr::bytes(bytes)));
        let grammar = b.build(root).unwrap();
        assert_eq!(
            grammar.to_string(),
            "# root: root\nroot ::= (\"ab\" <[70000]> \"c\")*\n"
        );
    }
}
