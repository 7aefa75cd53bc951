//! A reference recogniser: decides whether a byte string is in a grammar's language.
//!
//! It is the test oracle for the normalisation passes and the backends, so it is written to be
//! obviously right rather than fast: the grammar is lowered to plain BNF (one fresh nonterminal
//! per choice and repetition) and run through a textbook Earley recogniser with the
//! Aycock–Horspool treatment of nullable nonterminals. Any context-free grammar works, left
//! recursion and nullable rules included. Counted repetitions are expanded, so keep their
//! bounds small (at most [`MAX_EXPANDED_REPEAT`]).

use foldhash::HashSet;

use crate::{ByteClass, Expr, ExprKind, Grammar};

/// The largest repetition bound the recogniser expands.
pub const MAX_EXPANDED_REPEAT: u32 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Symbol {
    Terminal(usize),
    Nonterminal(usize),
}

/// A grammar lowered to BNF, ready to recognise strings.
#[derive(Clone, Debug)]
pub struct Recognizer {
    /// `productions[n]` lists the right-hand sides of nonterminal `n`.
    productions: Vec<Vec<Vec<Symbol>>>,
    terminals: Vec<ByteClass>,
    nullable: Vec<bool>,
    start: usize,
}

/// The grammar holds a repetition bound over [`MAX_EXPANDED_REPEAT`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepeatTooLarge(pub u32);

impl Recognizer {
    /// Lowers `grammar` to BNF.
    pub fn new(grammar: &Grammar) -> Result<Recognizer, RepeatTooLarge> {
        let mut r = Recognizer {
            productions: vec![Vec::new(); grammar.rules().len()],
            terminals: Vec::new(),
            nullable: Vec::new(),
            start: grammar.root().index(),
        };
        for (index, rule) in grammar.rules().iter().enumerate() {
            let rhs = r.lower(rule.body())?;
            r.productions[index].push(rhs);
        }
        r.nullable = r.compute_nullable();
        Ok(r)
    }

    fn new_nonterminal(&mut self) -> usize {
        self.productions.push(Vec::new());
        self.productions.len() - 1
    }

    fn terminal(&mut self, class: ByteClass) -> Symbol {
        self.terminals.push(class);
        Symbol::Terminal(self.terminals.len() - 1)
    }

    /// Lowers `expr` to a sequence of symbols, adding nonterminals as needed.
    fn lower(&mut self, expr: &Expr) -> Result<Vec<Symbol>, RepeatTooLarge> {
        Ok(match expr.kind() {
            ExprKind::Empty => Vec::new(),
            ExprKind::Bytes(bytes) => bytes
                .iter()
                .map(|&b| self.terminal(ByteClass::byte(b)))
                .collect(),
            ExprKind::Class(class) => vec![self.terminal(*class)],
            ExprKind::Ref(id) => vec![Symbol::Nonterminal(id.index())],
            ExprKind::Seq(items) => {
                let mut out = Vec::new();
                for item in items {
                    out.extend(self.lower(item)?);
                }
                out
            }
            ExprKind::Choice(alts) => {
                let n = self.new_nonterminal();
                for alt in alts {
                    let rhs = self.lower(alt)?;
                    self.productions[n].push(rhs);
                }
                vec![Symbol::Nonterminal(n)]
            }
            ExprKind::Repeat { item, min, max } => {
                let bound = max.unwrap_or(*min);
                if bound > MAX_EXPANDED_REPEAT {
                    return Err(RepeatTooLarge(bound));
                }
                let body = self.lower(item)?;
                let item_nt = self.new_nonterminal();
                self.productions[item_nt].push(body);
                let item = Symbol::Nonterminal(item_nt);
                let mut out = vec![item; *min as usize];
                match max {
                    None => {
                        // star ::= ε | item star
                        let star = self.new_nonterminal();
                        self.productions[star].push(Vec::new());
                        self.productions[star].push(vec![item, Symbol::Nonterminal(star)]);
                        out.push(Symbol::Nonterminal(star));
                    }
                    Some(max) => {
                        // opt_k ::= ε | item opt_{k-1}, opt_0 ::= ε
                        let mut tail: Option<usize> = None;
                        for _ in *min..*max {
                            let opt = self.new_nonterminal();
                            self.productions[opt].push(Vec::new());
                            let mut rhs = vec![item];
                            rhs.extend(tail.map(Symbol::Nonterminal));
                            self.productions[opt].push(rhs);
                            tail = Some(opt);
                        }
                        out.extend(tail.map(Symbol::Nonterminal));
                    }
                }
                out
            }
        })
    }

    fn compute_nullable(&self) -> Vec<bool> {
        let mut nullable = vec![false; self.productions.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for (n, prods) in self.productions.iter().enumerate() {
                if nullable[n] {
                    continue;
                }
                let derives_empty = prods.iter().any(|rhs| {
                    rhs.iter()
                        .all(|s| matches!(s, Symbol::Nonterminal(m) if nullable[*m]))
                });
                if derives_empty {
                    nullable[n] = true;
                    changed = true;
                }
            }
        }
        nullable
    }

    /// Whether `input` is a sentence of the grammar.
    pub fn accepts(&self, input: &[u8]) -> bool {
        let sets = self.run(input);
        sets.len() == input.len() + 1
            && sets[input.len()].iter().any(|item| {
                item.nonterminal == self.start
                    && item.origin == 0
                    && item.dot == self.productions[item.nonterminal][item.production].len()
            })
    }

    /// Whether `input` can be extended to a sentence of the grammar, assuming every rule that
    /// is reached can still complete (true after useless rules are removed).
    pub fn accepts_prefix(&self, input: &[u8]) -> bool {
        self.run(input).len() == input.len() + 1
    }

    /// The Earley sets for `input`, stopping early at the first empty set.
    fn run(&self, input: &[u8]) -> Vec<Vec<Item>> {
        let mut sets: Vec<Vec<Item>> = Vec::with_capacity(input.len() + 1);
        let mut first = Vec::new();
        for production in 0..self.productions[self.start].len() {
            first.push(Item {
                nonterminal: self.start,
                production,
                dot: 0,
                origin: 0,
            });
        }
        sets.push(first);
        for position in 0..=input.len() {
            self.close(&mut sets, position);
            if position == input.len() {
                break;
            }
            let byte = input[position];
            let next: Vec<Item> = sets[position]
                .iter()
                .filter(|item| match self.next_symbol(item) {
                    Some(Symbol::Terminal(t)) => self.terminals[t].contains(byte),
                    _ => false,
                })
                .map(|item| Item {
                    dot: item.dot + 1,
                    ..*item
                })
                .collect();
            if next.is_empty() {
                break;
            }
            sets.push(next);
        }
        sets
    }

    fn next_symbol(&self, item: &Item) -> Option<Symbol> {
        self.productions[item.nonterminal][item.production]
            .get(item.dot)
            .copied()
    }

    /// Runs predict and complete on set `position` to a fixpoint.
    fn close(&self, sets: &mut [Vec<Item>], position: usize) {
        let mut seen: HashSet<Item> = sets[position].iter().copied().collect();
        let mut i = 0;
        while i < sets[position].len() {
            let item = sets[position][i];
            i += 1;
            let mut add = |new: Item, set: &mut Vec<Item>| {
                if seen.insert(new) {
                    set.push(new);
                }
            };
            match self.next_symbol(&item) {
                Some(Symbol::Nonterminal(n)) => {
                    for production in 0..self.productions[n].len() {
                        let new = Item {
                            nonterminal: n,
                            production,
                            dot: 0,
                            origin: position,
                        };
                        add(new, &mut sets[position]);
                    }
                    if self.nullable[n] {
                        add(
                            Item {
                                dot: item.dot + 1,
                                ..item
                            },
                            &mut sets[position],
                        );
                    }
                }
                Some(Symbol::Terminal(_)) => {}
                None => {
                    let parents: Vec<Item> = sets[item.origin]
                        .iter()
                        .filter(|p| {
                            self.next_symbol(p) == Some(Symbol::Nonterminal(item.nonterminal))
                        })
                        .map(|p| Item {
                            dot: p.dot + 1,
                            ..*p
                        })
                        .collect();
                    for parent in parents {
                        add(parent, &mut sets[position]);
                    }
                }
            }
        }
    }
}

impl Recognizer {
    /// A random sentence of the grammar, reproducible from `seed`, or `None` when the root
    /// derives no finite string. Past `depth` nested expansions, every choice takes the
    /// shallowest alternative, so the output stays small.
    pub fn sample(&self, seed: u64, depth: usize) -> Option<Vec<u8>> {
        let heights = self.min_heights();
        heights[self.start]?;
        let mut rng = SplitMix64(seed);
        let mut out = Vec::new();
        let mut stack = vec![(Symbol::Nonterminal(self.start), 0usize)];
        while let Some((symbol, level)) = stack.pop() {
            match symbol {
                Symbol::Terminal(t) => {
                    let class = &self.terminals[t];
                    let pick = rng.below(class.len());
                    out.push(class.iter().nth(pick).expect("pick < len"));
                }
                Symbol::Nonterminal(n) => {
                    let finite: Vec<usize> = (0..self.productions[n].len())
                        .filter(|&p| self.production_height(n, p, &heights).is_some())
                        .collect();
                    let production = if level >= depth {
                        *finite
                            .iter()
                            .min_by_key(|&&p| self.production_height(n, p, &heights))
                            .expect("a finite rule has a finite production")
                    } else {
                        finite[rng.below(finite.len())]
                    };
                    for &s in self.productions[n][production].iter().rev() {
                        stack.push((s, level + 1));
                    }
                }
            }
        }
        Some(out)
    }

    fn production_height(&self, n: usize, p: usize, heights: &[Option<usize>]) -> Option<usize> {
        let mut height = 0;
        for symbol in &self.productions[n][p] {
            if let Symbol::Nonterminal(m) = symbol {
                height = height.max(heights[*m]?);
            }
        }
        Some(height + 1)
    }

    /// The least derivation height of each nonterminal; `None` for those with no finite
    /// derivation.
    fn min_heights(&self) -> Vec<Option<usize>> {
        let mut heights: Vec<Option<usize>> = vec![None; self.productions.len()];
        loop {
            let mut changed = false;
            for n in 0..self.productions.len() {
                let best = (0..self.productions[n].len())
                    .filter_map(|p| self.production_height(n, p, &heights))
                    .min();
                if best.is_some() && (heights[n].is_none() || best < heights[n]) {
                    heights[n] = best;
                    changed = true;
                }
            }
            if !changed {
                return heights;
            }
        }
    }
}

/// A small deterministic generator for [`Recognizer::sample`]; quality is ample for tests.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Item {
    nonterminal: usize,
    production: usize,
    dot: usize,
    origin: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ByteClass, GrammarBuilder};

    /// expr ::= expr "+" num | num ; num ::= [0-9]+  (left recursive)
    fn arithmetic() -> Grammar {
        let mut b = GrammarBuilder::new();
        let expr = b.declare("expr").unwrap();
        let num = b.declare("num").unwrap();
        b.define(
            expr,
            Expr::choice([
                Expr::seq([Expr::rule(expr), Expr::bytes("+"), Expr::rule(num)]),
                Expr::rule(num),
            ])
            .unwrap(),
        );
        b.define(
            num,
            Expr::plus(Expr::class(ByteClass::range(b'0', b'9')).unwrap()),
        );
        b.build(expr).unwrap()
    }

    #[test]
    fn left_recursion() {
        let r = Recognizer::new(&arithmetic()).unwrap();
        for ok in ["1", "12+3", "1+2+345"] {
            assert!(r.accepts(ok.as_bytes()), "{ok}");
        }
        for bad in ["", "+", "1+", "1++2", "a"] {
            assert!(!r.accepts(bad.as_bytes()), "{bad}");
        }
        assert!(r.accepts_prefix(b"1+"));
        assert!(!r.accepts_prefix(b"1+a"));
    }

    #[test]
    fn nullable_rules_and_bounded_repeats() {
        // root ::= opt opt "x"{2,3} ; opt ::= "a" | ""
        let mut b = GrammarBuilder::new();
        let root = b.declare("root").unwrap();
        let opt = b.declare("opt").unwrap();
        b.define(
            root,
            Expr::seq([
                Expr::rule(opt),
                Expr::rule(opt),
                Expr::repeat(Expr::bytes("x"), 2, Some(3)).unwrap(),
            ]),
        );
        b.define(
            opt,
            Expr::choice([Expr::bytes("a"), Expr::empty()]).unwrap(),
        );
        let r = Recognizer::new(&b.build(root).unwrap()).unwrap();
        for ok in ["xx", "axx", "aaxxx", "xxx"] {
            assert!(r.accepts(ok.as_bytes()), "{ok}");
        }
        for bad in ["x", "aaaxx", "xxxx", "aax"] {
            assert!(!r.accepts(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn samples_are_sentences_and_reproducible() {
        let r = Recognizer::new(&arithmetic()).unwrap();
        for seed in 0..50 {
            let s = r.sample(seed, 8).unwrap();
            assert!(r.accepts(&s), "{}", String::from_utf8_lossy(&s));
            assert_eq!(r.sample(seed, 8), Some(s));
        }
        // B ::= "a" B has no finite sentence.
        let mut b = GrammarBuilder::new();
        let root = b.declare("B").unwrap();
        b.define(root, Expr::seq([Expr::bytes("a"), Expr::rule(root)]));
        let r = Recognizer::new(&b.build(root).unwrap()).unwrap();
        assert_eq!(r.sample(1, 8), None);
    }
}
