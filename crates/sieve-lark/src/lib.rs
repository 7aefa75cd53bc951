//! sieve's Lark front-end: llguidance's dialect of Lark grammars to sieve's grammar IR.
//!
//! A Lark file defines rules (lower-case names) and terminals (upper-case names); the
//! language starts at `start`. Terminals are lexemes: regular, written without whitespace
//! inside; rules are context-free and may have `%ignore`d text between their lexemes. The
//! precise semantics, and where sieve differs from llguidance, are in `docs/lark.md`.
//!
//! # Pipeline
//!
//! text → `lexer` (tokens; `%json {…}` taken whole) → `parse` (recursive descent, spans on
//! every node, nesting bounded) → [`ast::File`] → `lower` (names resolved, `%import common.…`
//! against the shipped `common.lark`, `%ignore` threaded between lexemes, regexes through
//! sieve-regex, `%json` through sieve-jsonschema, `&`/`~`/lazy/look-around through byte
//! automata in `dfa` and `lookaround`) → [`Grammar`].
//!
//! # Supported
//!
//! Rules and terminals; `|`, grouping, `[…]`, `?`, `*`, `+`, `~n`, `~m..n`, `{n}`, `{m,n}`,
//! `{,n}`, `{m,}`; string literals (with the `i` flag) and `"a".."z"` ranges; `/regex/flags`
//! (flags `i m s x u`); `?rule`, `!rule`, `_name`, `-> alias` (tree shaping only); rule and
//! terminal priorities `.N` (accepted: they choose among parses, never change the language);
//! `%import common.NAME [-> ALIAS]` and `%import common (A, B)`; `%ignore`; `%json {…}` with
//! `x-guidance` options; `%regex {"substring_…": …}`; rule attributes `lazy`, `suffix=`,
//! `capture`, `temperature=`; the terminal operators `&` and `~`; look-around at the top level
//! of a regex's alternatives (`/a(?!b)\w*/`, beyond llguidance), exact by automaton products.
//!
//! # Refused, with a located error
//!
//! Special tokens (`<|eot_id|>`, `<[128009]>`), templates, imports other than `common`,
//! `%declare`/`%override`, the `stop=` attribute, look-around nested in a
//! regex's groups, back-references, terminals that refer to themselves or to rules.
//!
//! # Example
//!
//! ```
//! use sieve_ir::reference::Recognizer;
//!
//! let grammar = sieve_lark::compile(
//!     "start: NAME (\",\" NAME)*\nNAME: /[a-z]+/\n%ignore \" \"",
//!     &Default::default(),
//! )
//! .unwrap();
//! let recognizer = Recognizer::new(&grammar).unwrap();
//! assert!(recognizer.accepts(b"ab , cd"));
//! assert!(!recognizer.accepts(b"a b"));
//! ```

pub mod ast;
mod dfa;
mod error;
mod json;
mod lexer;
mod lookaround;
mod lower;
mod parse;

pub use error::{Error, ErrorKind, Errors};

use sieve_diagnostics::Span;
use sieve_ir::Grammar;

/// The shipped `common.lark` (Lark's, MIT licensed; see the file's header).
pub const COMMON_LARK: &str = include_str!("common.lark");

/// Bounds on the input and on the work one grammar may cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest text accepted, in bytes (default 8 MiB).
    pub max_input_bytes: usize,
    /// The deepest nesting of groups and operators (default 256).
    pub max_nesting: usize,
    /// The most states of one automaton built for `&`, `~` or a lazy lexeme, NFA or DFA
    /// (default 50,000): each costs 1 KiB of transition table.
    pub max_automaton_states: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_input_bytes: 8 << 20,
            max_nesting: 256,
            max_automaton_states: 50_000,
        }
    }
}

/// How to compile a Lark grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The base options of inline `%json` schemas; their `x-guidance` object adjusts them, and
    /// whitespace is flexible unless it says otherwise (llguidance's default).
    pub json: sieve_jsonschema::Options,
    /// The most whitespace characters per gap of a `%json` value's flexible whitespace
    /// (llguidance allows any number; sieve keeps a bound so a model cannot loop on
    /// whitespace, the same one as structural tags'). Default: 16, enough for pretty-printed
    /// JSON several levels deep.
    pub json_max_whitespace: u32,
    /// Size limits.
    pub limits: Limits,
    /// The tokenizer special tokens (`<|im_end|>`, `<[^7]>`) resolve against; without one only
    /// plain ids (`<[7]>`) can be written.
    pub tokens: Option<sieve_ir::token::SharedNames>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            json: sieve_jsonschema::Options::default(),
            json_max_whitespace: 16,
            limits: Limits::default(),
            tokens: None,
        }
    }
}

/// Parses Lark text into its AST.
pub fn parse(text: &str, limits: &Limits) -> Result<ast::File, Error> {
    if text.len() > limits.max_input_bytes {
        return Err(Error::new(
            ErrorKind::Limit,
            Span::new(limits.max_input_bytes, text.len()),
            format!(
                "the grammar is {} bytes long, over the limit of {} bytes",
                text.len(),
                limits.max_input_bytes
            ),
        ));
    }
    let tokens = lexer::lex(text)?;
    parse::Parser::new(&tokens, text.len(), limits.max_nesting).file()
}

/// Compiles Lark text to a grammar whose root derives the language of `start`.
pub fn compile(text: &str, options: &Options) -> Result<Grammar, Errors> {
    let file = parse(text, &options.limits)?;
    let common = parse(COMMON_LARK, &Limits::default()).map_err(|e| {
        Error::new(
            ErrorKind::Syntax,
            Span::at(0),
            format!("the shipped common.lark does not parse: {e}"),
        )
    })?;
    lower::lower(&file, &common, options)
}
