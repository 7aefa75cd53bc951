//! The stable text dump of [`GrammarFsms`], as `sieve ir --stage fsm` prints it.
//!
//! ```text
//! # root: number
//! # state 0 is the start; * marks accepting states
//! rule number (fsm, deterministic, 3 states, 4 edges, hash 5f0e…)
//!   0   "-" -> 1, [0-9] -> 2
//!   1   [0-9] -> 2
//!   2*  [0-9] -> 2
//! rule pairs (counted pair{2,5}, hash none)
//! ```
//!
//! Rules come in rule-id order; each regular rule lists its states in canonical order, each
//! state its edges in sorted order. A single byte prints as a string literal (`"a"`, `"\n"`,
//! `"\xff"`), a range as a byte class (`[0-9]`), a reference by rule name, an epsilon edge as
//! `ε`. The kind is `deterministic` or `nfa` (the DFA cap was hit). The hash is 16 hex digits
//! or `none`.
//!
//! # Invariants
//!
//! The text depends only on the automata's values and the rule names, never on addresses or
//! hash-map order.

use std::fmt::{self, Write};

use sieve_ir::{write_bytes, ByteClass};

use crate::{GrammarFsms, Label, RuleAutomaton};

impl fmt::Display for GrammarFsms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "# root: {}", self.name(self.root()))?;
        writeln!(f, "# state 0 is the start; * marks accepting states")?;
        for rule in self.rule_ids() {
            let hash = match self.hash(rule) {
                Some(h) => format!("{h:016x}"),
                None => "none".to_owned(),
            };
            match self.automaton(rule) {
                RuleAutomaton::Regular(fsm) => {
                    let kind = if fsm.is_deterministic() {
                        "deterministic"
                    } else {
                        "nfa"
                    };
                    writeln!(
                        f,
                        "rule {} (fsm, {kind}, {} states, {} edges, hash {hash})",
                        self.name(rule),
                        fsm.state_count(),
                        fsm.edge_count(),
                    )?;
                    let width = (fsm.state_count() - 1).to_string().len();
                    for state in fsm.states() {
                        let mark = if fsm.is_accepting(state) { '*' } else { ' ' };
                        let mut line = format!("  {:>width$}{mark} ", state.index());
                        for (i, edge) in fsm.edges(state).iter().enumerate() {
                            if i > 0 {
                                line.push_str(", ");
                            }
                            self.write_label(&mut line, edge.label)?;
                            write!(line, " -> {}", edge.target)?;
                        }
                        writeln!(f, "{}", line.trim_end())?;
                    }
                }
                RuleAutomaton::Counted { item, min, max } => {
                    let bounds = match (min, max) {
                        (m, Some(n)) if m == n => format!("{{{m}}}"),
                        (m, Some(n)) => format!("{{{m},{n}}}"),
                        (m, None) => format!("{{{m},}}"),
                    };
                    writeln!(
                        f,
                        "rule {} (counted {}{bounds}, hash {hash})",
                        self.name(rule),
                        self.name(*item),
                    )?;
                }
            }
        }
        Ok(())
    }
}

impl GrammarFsms {
    fn write_label(&self, out: &mut String, label: Label) -> fmt::Result {
        match label {
            Label::Bytes { lo, hi } if lo == hi => write_bytes(out, &[lo]),
            Label::Bytes { lo, hi } => write!(out, "{}", ByteClass::range(lo, hi)),
            Label::Rule(r) => out.write_str(self.name(r)),
            Label::Epsilon => out.write_str("ε"),
        }
    }
}
