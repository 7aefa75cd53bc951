//! Locations in source text and the rendering of errors that point into it.
//!
//! Front-ends report errors as a [`Span`] (byte offsets into the text they were given) and a
//! message; [`SourceFile`] turns the span into `file:line:column` and renders the offending
//! line with a caret under the span:
//!
//! ```text
//! grammars/bad.gbnf:3:9: undefined rule `valu`
//!   3 | root ::= valu
//!     |          ^^^^
//! ```
//!
//! Lines and columns are 1-based; columns count characters (Unicode scalar values), not bytes,
//! so the caret lines up under multi-byte text. Offsets past the end or inside a UTF-8
//! sequence are clamped, never a panic.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

/// A half-open byte range `start..end` into a source text.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start,
            end: end.max(start),
        }
    }

    /// The empty span at `offset`.
    pub fn at(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// An error located in a source text: what front-ends return.
pub trait Located: std::fmt::Display {
    /// Where in the source the error is.
    fn span(&self) -> Span;
}

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    /// The line, from 1.
    pub line: usize,
    /// The column in characters, from 1.
    pub column: usize,
}

/// A named source text with an index of its line starts.
#[derive(Clone, Debug)]
pub struct SourceFile<'a> {
    name: &'a str,
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> SourceFile<'a> {
    /// Indexes `text`, known to the user as `name` (a path, or `<regex>` for a command-line
    /// argument).
    pub fn new(name: &'a str, text: &'a str) -> SourceFile<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name,
            text,
            line_starts,
        }
    }

    /// The name given to [`SourceFile::new`].
    pub fn name(&self) -> &str {
        self.name
    }

    fn clamp(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    fn line_index(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset) - 1
    }

    /// The line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = self.clamp(offset);
        let line = self.line_index(offset);
        let column = self.text[self.line_starts[line]..offset].chars().count() + 1;
        LineCol {
            line: line + 1,
            column,
        }
    }

    /// The text of a 1-based line, without its line break.
    pub fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line - 1];
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&next| next - 1);
        self.text[start..end].trim_end_matches('\r')
    }

    /// `file:line:col: message`, the source line, and a caret line under the span (the part
    /// of it on its first line).
    pub fn render(&self, span: Span, message: &str) -> String {
        let start = self.line_col(span.start);
        let line_text = self.line_text(start.line);
        let mut out = format!("{}:{}:{}: {message}\n", self.name, start.line, start.column);
        let gutter = start.line.to_string();
        let _ = writeln!(out, "{gutter} | {line_text}");
        let end = self.clamp(span.end);
        let line_end = self.line_starts[start.line - 1] + line_text.len();
        let underlined = self.text
            [self.clamp(span.start)..end.min(line_end).max(self.clamp(span.start))]
            .chars()
            .count()
            .max(1);
        let pad: String = line_text
            .chars()
            .take(start.column - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let _ = writeln!(
            out,
            "{} | {pad}{}",
            " ".repeat(gutter.len()),
            "^".repeat(underlined)
        );
        out
    }

    /// Renders a located error with [`SourceFile::render`].
    pub fn render_error(&self, error: &dyn Located) -> String {
        self.render(error.span(), &error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let src = SourceFile::new("g.gbnf", "root ::= a\nä ::= \"x\"\n");
        assert_eq!(src.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(src.line_col(11), LineCol { line: 2, column: 1 });
        // the byte after `ä` (two bytes) is column 2
        assert_eq!(src.line_col(13), LineCol { line: 2, column: 2 });
        // inside `ä`: clamped to its start
        assert_eq!(src.line_col(12), LineCol { line: 2, column: 1 });
        assert_eq!(src.line_col(999), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn render_underlines_the_span() {
        let src = SourceFile::new("g.gbnf", "root ::= valu\n");
        assert_eq!(
            src.render(Span::new(9, 13), "undefined rule `valu`"),
            "g.gbnf:1:10: undefined rule `valu`\n1 | root ::= valu\n  |          ^^^^\n"
        );
    }

    #[test]
    fn render_at_end_of_input_shows_one_caret() {
        let src = SourceFile::new("r", "ab");
        assert_eq!(
            src.render(Span::at(2), "unexpected end"),
            "r:1:3: unexpected end\n1 | ab\n  |   ^\n"
        );
    }
}
