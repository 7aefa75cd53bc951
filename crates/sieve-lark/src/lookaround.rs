//! Regular look-around in `/regex/` terminals (`(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`), which
//! llguidance and sieve's regex front-end refuse, made exact by automaton products.
//!
//! A terminal's regex matches a whole lexeme, so a look-around at the top level of the
//! pattern constrains the part of the lexeme after it (look-ahead) or before it
//! (look-behind): `X (?=B) Y` is `X · (Y ∩ B·Σ*)`, `X (?!B) Y` is `X · (Y ∖ B·Σ*)`,
//! `X (?<=B) Y` is `(X ∩ Σ*·B) · Y`, `X (?<!B) Y` is `(X ∖ Σ*·B) · Y`. A look-ahead never
//! sees past the end of the lexeme. This module only splits the pattern text; `lower.rs`
//! builds the automata.
//!
//! Supported: in each top-level alternative of the pattern (`alternatives`, whose automata
//! are united), any number of top-level look-aheads or any number of top-level look-behinds
//! (one direction per alternative). Look-arounds inside groups or repetitions stay in the
//! pattern and sieve's regex front-end refuses them with its located error.
//!
//! Invariant: the pieces and look-around bodies are slices of the pattern, in order, and
//! together with the look-around delimiters they cover it exactly.

/// One top-level look-around.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LookAround {
    /// `true` for look-behind.
    pub behind: bool,
    /// `true` for the negative forms `(?!` and `(?<!`.
    pub negative: bool,
    /// The body's offset and text in the pattern.
    pub body: (usize, String),
}

/// A pattern cut at its top-level look-arounds: `pieces[0] look[0] pieces[1] … pieces[n]`,
/// each piece with its offset in the pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Split {
    pub pieces: Vec<(usize, String)>,
    pub looks: Vec<LookAround>,
}

/// Why a pattern's look-arounds cannot be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SplitError {
    /// Look-aheads and look-behinds in one pattern, the second kind at this offset.
    Mixed(usize),
}

/// The top-level alternatives of `pattern` (split at `|` outside groups and classes), each
/// with its offset.
pub(crate) fn alternatives(pattern: &str) -> Vec<(usize, String)> {
    let bytes = pattern.as_bytes();
    let (mut depth, mut i, mut start) = (0usize, 0, 0);
    let mut out = Vec::new();
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'[' => i = class_end(bytes, i),
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'|' if depth == 0 => {
                out.push((start, pattern[start..i].to_owned()));
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    let start = start.min(bytes.len());
    out.push((start, pattern[start..].to_owned()));
    out
}

/// Cuts `pattern` at its top-level look-arounds; `None` if it has none.
pub(crate) fn split(pattern: &str) -> Result<Option<Split>, SplitError> {
    let bytes = pattern.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    let mut piece_start = 0;
    let mut pieces = Vec::new();
    let mut looks: Vec<LookAround> = Vec::new();
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'[' => i = class_end(bytes, i),
            b'(' if depth == 0 => {
                let rest = &pattern[i..];
                let opener = ["(?=", "(?!", "(?<=", "(?<!"]
                    .into_iter()
                    .find(|o| rest.starts_with(o));
                match opener {
                    Some(opener) => {
                        let body_start = i + opener.len();
                        let close = group_end(bytes, i);
                        pieces.push((piece_start, pattern[piece_start..i].to_owned()));
                        let behind = opener.starts_with("(?<");
                        if looks.first().is_some_and(|l| l.behind != behind) {
                            return Err(SplitError::Mixed(i));
                        }
                        looks.push(LookAround {
                            behind,
                            negative: opener.ends_with('!'),
                            body: (
                                body_start,
                                pattern[body_start..close.min(bytes.len())].to_owned(),
                            ),
                        });
                        i = (close + 1).min(bytes.len());
                        piece_start = i;
                    }
                    None => {
                        depth += 1;
                        i += 1;
                    }
                }
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    if looks.is_empty() {
        return Ok(None);
    }
    let end = piece_start.min(bytes.len());
    pieces.push((end, pattern[end..].to_owned()));
    Ok(Some(Split { pieces, looks }))
}

/// The offset after the character class starting at `i` (a `[`), nested classes included.
fn class_end(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    let start = i;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' => depth += 1,
            // A `]` right after `[` or `[^` is a literal.
            b']' if i > start + 1 && !(i == start + 2 && bytes[start + 1] == b'^') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// The offset of the `)` closing the group opened at `i`, or the pattern's length.
fn group_end(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' => {
                i = class_end(bytes, i);
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_top_level_lookarounds_only() {
        assert_eq!(split("ab(c)").unwrap(), None);
        let s = split(r"/(?!/)([^/)]|\))*/").unwrap().unwrap();
        assert_eq!(
            s.pieces,
            [(0, "/".to_owned()), (6, r"([^/)]|\))*/".to_owned())]
        );
        assert_eq!(
            s.looks,
            [LookAround {
                behind: false,
                negative: true,
                body: (4, "/".to_owned())
            }]
        );
        let s = split(r"a(?<=[)(]a)b(?<!x)").unwrap().unwrap();
        assert_eq!(s.looks.len(), 2);
        assert_eq!(s.pieces[1], (11, "b".to_owned()));
        assert_eq!(s.pieces[2], (18, String::new()));
        // Nested look-arounds are left for the regex front-end to refuse.
        assert_eq!(split("(a(?=b))").unwrap(), None);
        assert_eq!(split("(?=a)b(?<=b)"), Err(SplitError::Mixed(6)));
        assert_eq!(
            alternatives(r"[|]|a(b|c)|\|x"),
            [
                (0, "[|]".to_owned()),
                (4, "a(b|c)".to_owned()),
                (11, r"\|x".to_owned())
            ]
        );
    }
}
