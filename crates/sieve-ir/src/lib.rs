//! sieve's grammar IR.
//!
//! A [`Grammar`] is a list of named [`Rule`]s whose bodies are [`Expr`]s over bytes: byte
//! strings, byte classes, rule references, sequence, choice and bounded or unbounded
//! repetition. Every front-end (GBNF/EBNF, regex, and later JSON Schema) produces it, the
//! normalisation passes rewrite it, and the automata layer consumes it. It is plain data:
//! serde-serialisable, comparable, hashable.
//!
//! # Invariants
//!
//! Values are built only through constructors ([`Expr::seq`], [`Expr::choice`], …,
//! [`GrammarBuilder`]) that keep the invariants listed in [`expr`] and [`Grammar`];
//! [`verify::verify`] checks all of them and runs on every deserialised grammar. The IR is
//! over bytes, not characters: a front-end turns Unicode into UTF-8 byte sequences.
//!
//! # Example
//!
//! ```
//! use sieve_ir::{ByteClass, Expr, GrammarBuilder, reference::Recognizer};
//!
//! let mut b = GrammarBuilder::new();
//! let root = b.declare("root").unwrap();
//! let digits = Expr::plus(Expr::class(ByteClass::range(b'0', b'9')).unwrap());
//! b.define(root, Expr::seq([Expr::bytes("n="), digits]));
//! let grammar = b.build(root).unwrap();
//! assert_eq!(grammar.to_string(), "# root: root\nroot ::= \"n=\" [0-9]+\n");
//! assert!(Recognizer::new(&grammar).unwrap().accepts(b"n=42"));
//! ```

mod class;
mod display;
mod error;
pub mod expr;
mod grammar;
mod id;
pub mod reference;
pub mod sugar;
pub mod token;
pub mod verify;

pub use class::ByteClass;
pub use display::write_bytes;
pub use error::IrError;
pub use expr::{Expr, ExprKind};
pub use grammar::{FreshNames, Grammar, GrammarBuilder, Rule};
pub use id::RuleId;
