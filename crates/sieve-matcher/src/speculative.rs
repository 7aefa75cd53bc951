//! Speculative decoding: the masks of a draft chain or a draft tree without changing the
//! matcher (XGrammar's `traverse_draft_tree`, llguidance's draft masks), and Pre³'s
//! batch-parallel verification of many matchers' drafts across rayon's threads.
//!
//! # The rows
//!
//! A draft *tree* ([`DraftTree`]) has a root, node 0, which stands for the matcher as it is
//! (in XGrammar's and SGLang's layout node 0 holds the token the target model sampled last,
//! already accepted; its token is ignored here), and nodes `1..n`, each a draft token
//! following its parent. A draft *chain* `[t1, …, tk]` is the tree root → t1 → … → tk.
//! [`Matcher::fill_draft_tree_bitmasks`] writes row `i` of a bitmask buffer (rows of
//! `words_per_row` words) for node `i`:
//!
//! - the root's row is the matcher's mask now ([`Matcher::fill_next_token_bitmask`]);
//! - an *accepted* node (its parent accepted, its token accepted after the parent's path) has
//!   the mask a matcher would give after accepting the path from the root to it, token by
//!   token — so a token budget ([`Matcher::with_budget`]) is spent along the path, and a node
//!   whose token is EOS has an all-zero row (the matcher would be terminated);
//! - a *rejected* node (its parent accepted, its token refused: not allowed by the grammar,
//!   over the budget, or after EOS) and every *unreached* node below a rejected one have
//!   all-zero rows.
//!
//! A node is accepted iff its token's bit is set in its parent's row (the masks are exact);
//! the tests check both ways.
//!
//! # Invariants
//!
//! - The matcher is left exactly as found — output, steps, tokens spent, termination — on
//!   success and on every error: the walk accepts tokens down a path and rolls back to the
//!   branch point before a sibling, and any error midway rolls back what was accepted.
//! - Each draft token is accepted once, whatever the number of its descendants, and each
//!   row is filled once; no node clones the matcher. The walk keeps an explicit stack, so a
//!   deep tree costs heap, never call stack.
//! - Bad input is refused before anything is written: unknown token ids (with the node),
//!   rows too short for the vocabulary, a buffer shorter than the rows. A recogniser limit
//!   hit midway zeroes the rows and is returned; the matcher is still unchanged.
//! - Words past the rows of the draft are never touched; padding words of a row (past
//!   [`CompiledGrammar::bitmask_words`](crate::CompiledGrammar::bitmask_words)) are zero.
//!
//! # Batches
//!
//! [`fill_draft_tree_bitmasks_batch`] gives matcher `i` the rows right after matcher
//! `i - 1`'s, and [`validate_tokens_batch`] runs [`Matcher::validate_tokens`] per matcher;
//! both run on the rayon pool the call is made in once the batch is big enough, like
//! [`fill_next_token_bitmasks`](crate::fill_next_token_bitmasks). A matcher's drafts are
//! walked by one thread (its state is sequential); the parallelism is across matchers.
//!
//! Everything goes through [`Matcher`]'s own `accept_token`, `rollback` and mask calls, so it
//! works unchanged on every backend behind the seam.

use std::borrow::BorrowMut;

use rayon::prelude::*;

use crate::{Matcher, MatcherError, PARALLEL_MIN_BATCH};

/// No node (the end of a child or sibling list).
const NONE: u32 = u32::MAX;

/// A tree of draft tokens, node 0 its root (the matcher as it is). Build it from parent
/// indices ([`DraftTree::from_parents`]), from XGrammar's first-child and next-sibling arrays
/// ([`DraftTree::from_next_token_and_sibling`]), or as a chain ([`DraftTree::chain`]).
///
/// Children are visited in the order their constructor gives them; the masks do not depend
/// on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DraftTree {
    /// The token of each node; the root's is never read.
    tokens: Vec<u32>,
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
}

/// Why a [`DraftTree`] could not be built from the arrays given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DraftTreeError {
    /// No node at all: a tree has at least its root.
    #[error("a draft tree has at least its root, node 0")]
    Empty,
    /// The arrays describing the nodes differ in length.
    #[error("{tokens} tokens but {links} links: one per node")]
    LengthMismatch {
        /// The number of tokens.
        tokens: usize,
        /// The length of the parent (or child / sibling) array.
        links: usize,
    },
    /// Node 0 has a parent or a sibling: it is the root.
    #[error("node 0 is the root: it has no parent and no sibling")]
    RootLinked,
    /// A node other than the root has no parent.
    #[error("node {node} has no parent: only node 0, the root, may have none")]
    NoParent {
        /// The node.
        node: usize,
    },
    /// A parent index is not below the node's own (parents come first).
    #[error("node {node} has parent {parent}: a parent comes before its children")]
    ParentNotBefore {
        /// The node.
        node: usize,
        /// Its parent.
        parent: usize,
    },
    /// A link names no node (below -1, or past the last node), or names the root as a child.
    #[error("node {node} links to {target}: not a node that can be a child (1..{nodes}) or -1")]
    LinkOutOfRange {
        /// The node.
        node: usize,
        /// The link given.
        target: i64,
        /// The number of nodes.
        nodes: usize,
    },
    /// A node is reached twice from the root (it has two parents, or the links form a cycle).
    #[error("node {node} is reached twice from the root: the links do not form a tree")]
    ReachedTwice {
        /// The node.
        node: usize,
    },
    /// A node is not reached from the root.
    #[error("node {node} is not reached from the root")]
    Unreached {
        /// The node.
        node: usize,
    },
}

impl DraftTree {
    /// The chain root → `draft[0]` → `draft[1]` → …: node `i + 1` is `draft[i]`.
    pub fn chain(draft: &[u32]) -> DraftTree {
        let n = draft.len() + 1;
        let mut tokens = Vec::with_capacity(n);
        tokens.push(0);
        tokens.extend_from_slice(draft);
        let first_child = (1..=n as u32).map(|c| if c < n as u32 { c } else { NONE });
        DraftTree {
            tokens,
            first_child: first_child.collect(),
            next_sibling: vec![NONE; n],
        }
    }

    /// A tree from each node's parent: `parents[0]` is `None` (the root) and every other
    /// node's parent comes before it. `tokens[0]` is the root's, never read. Children are
    /// visited in index order.
    ///
    /// # Errors
    /// [`DraftTreeError`] when the arrays differ in length, are empty, or do not give such a
    /// tree.
    pub fn from_parents(
        tokens: &[u32],
        parents: &[Option<usize>],
    ) -> Result<DraftTree, DraftTreeError> {
        if tokens.len() != parents.len() {
            return Err(DraftTreeError::LengthMismatch {
                tokens: tokens.len(),
                links: parents.len(),
            });
        }
        let n = tokens.len();
        match parents.first() {
            None => return Err(DraftTreeError::Empty),
            Some(Some(_)) => return Err(DraftTreeError::RootLinked),
            Some(None) => {}
        }
        let mut first_child = vec![NONE; n];
        let mut next_sibling = vec![NONE; n];
        for node in (1..n).rev() {
            let parent = parents[node].ok_or(DraftTreeError::NoParent { node })?;
            if parent >= node {
                return Err(DraftTreeError::ParentNotBefore { node, parent });
            }
            next_sibling[node] = first_child[parent];
            first_child[parent] = node as u32;
        }
        Ok(DraftTree {
            tokens: tokens.to_vec(),
            first_child,
            next_sibling,
        })
    }

    /// A tree in XGrammar's and SGLang's layout (`traverse_draft_tree`'s
    /// `retrieve_next_token`, `retrieve_next_sibling` and `draft_tokens`): `next_token[i]` is
    /// node `i`'s first child and `next_sibling[i]` its next sibling, `-1` for none; node 0
    /// is the root and `tokens[0]` is never read.
    ///
    /// # Errors
    /// [`DraftTreeError`] when the arrays differ in length, are empty, link outside the
    /// nodes or to the root, give the root a sibling, or do not reach every node exactly
    /// once from the root.
    pub fn from_next_token_and_sibling(
        tokens: &[u32],
        next_token: &[i64],
        next_sibling: &[i64],
    ) -> Result<DraftTree, DraftTreeError> {
        let n = tokens.len();
        for links in [next_token.len(), next_sibling.len()] {
            if links != n {
                return Err(DraftTreeError::LengthMismatch { tokens: n, links });
            }
        }
        if n == 0 {
            return Err(DraftTreeError::Empty);
        }
        if next_sibling[0] != -1 {
            return Err(DraftTreeError::RootLinked);
        }
        let link = |node: usize, target: i64| -> Result<u32, DraftTreeError> {
            match target {
                -1 => Ok(NONE),
                t if t >= 1 && (t as u64) < n as u64 => Ok(t as u32),
                _ => Err(DraftTreeError::LinkOutOfRange {
                    node,
                    target,
                    nodes: n,
                }),
            }
        };
        let mut first_child = Vec::with_capacity(n);
        let mut siblings = Vec::with_capacity(n);
        for node in 0..n {
            first_child.push(link(node, next_token[node])?);
            siblings.push(link(node, next_sibling[node])?);
        }
        let tree = DraftTree {
            tokens: tokens.to_vec(),
            first_child,
            next_sibling: siblings,
        };
        // Every node reached exactly once from the root: no cycle, no shared child, no orphan.
        let mut reached = vec![false; n];
        reached[0] = true;
        let mut stack = vec![0u32];
        while let Some(node) = stack.pop() {
            let mut child = tree.first_child[node as usize];
            while child != NONE {
                if std::mem::replace(&mut reached[child as usize], true) {
                    return Err(DraftTreeError::ReachedTwice {
                        node: child as usize,
                    });
                }
                stack.push(child);
                child = tree.next_sibling[child as usize];
            }
        }
        if let Some(node) = reached.iter().position(|&r| !r) {
            return Err(DraftTreeError::Unreached { node });
        }
        Ok(tree)
    }

    /// The number of nodes, the root included: the rows its masks take.
    pub fn nodes(&self) -> usize {
        self.tokens.len()
    }

    /// Node `node`'s draft token, or `None` for the root (and past the last node).
    pub fn token(&self, node: usize) -> Option<u32> {
        (node != 0)
            .then(|| self.tokens.get(node).copied())
            .flatten()
    }

    /// Node `node`'s children, in visiting order (empty past the last node).
    pub fn children(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        let first = self.first_child.get(node).copied().unwrap_or(NONE);
        std::iter::successors((first != NONE).then_some(first), |&c| {
            let next = self.next_sibling[c as usize];
            (next != NONE).then_some(next)
        })
        .map(|c| c as usize)
    }
}

/// What became of a node of a draft tree (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// The root, or a node whose token was accepted after its accepted parent's path: its
    /// row is the mask after the path.
    Accepted,
    /// Its parent was accepted and its token refused there: its row is zero.
    Rejected,
    /// An ancestor was rejected: its row is zero.
    Unreached,
}

/// The outcome of a draft tree's masks: each node's [`NodeState`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DraftTreeMasks {
    states: Vec<NodeState>,
}

impl DraftTreeMasks {
    /// Each node's state, by node index.
    pub fn states(&self) -> &[NodeState] {
        &self.states
    }

    /// Whether node `node` was accepted (`false` past the last node).
    pub fn is_accepted(&self, node: usize) -> bool {
        self.states.get(node) == Some(&NodeState::Accepted)
    }
}

/// The outcome of a draft chain's masks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DraftChainMasks {
    /// How many leading draft tokens were accepted: rows `0..=accepted` hold masks, the
    /// rows after are zero.
    pub accepted: usize,
    /// Why draft token `accepted` was refused, when one was: what
    /// [`Matcher::accept_token`] said after the accepted ones.
    pub rejection: Option<MatcherError>,
}

/// Why draft masks (or a batch of them) were refused or stopped. The matcher, or every
/// matcher of a batch, is unchanged after any of these.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DraftError {
    /// A draft token id is not below the vocabulary size. Nothing was written.
    #[error("draft node {node} has unknown token id {id}: the vocabulary has {n_vocab} ids")]
    UnknownToken {
        /// The node (for a chain, the token's index in the draft plus one).
        node: usize,
        /// The id given.
        id: u32,
        /// The vocabulary size.
        n_vocab: usize,
    },
    /// `words_per_row` is below what the vocabulary needs. Nothing was written.
    #[error("rows of {words_per_row} words are too short: the vocabulary needs {needed}")]
    RowTooShort {
        /// The row length given.
        words_per_row: usize,
        /// Words needed: `ceil(n_vocab / 32)`.
        needed: usize,
    },
    /// The buffer is shorter than the rows of the draft(s). Nothing was written.
    #[error("bitmask has {given} words, {rows} rows of {words_per_row} words need {needed}")]
    BitmaskTooSmall {
        /// Words given.
        given: usize,
        /// Words needed: `rows * words_per_row` (saturating).
        needed: usize,
        /// The rows needed: one per node (a chain: its length plus one).
        rows: usize,
        /// The row length given.
        words_per_row: usize,
    },
    /// A batch has a different number of drafts than matchers. Nothing was written.
    #[error("{matchers} matchers but {drafts} drafts: each matcher needs its draft")]
    DraftCount {
        /// The number of matchers.
        matchers: usize,
        /// The number of drafts.
        drafts: usize,
    },
    /// The matchers of a batch have vocabularies of different sizes. Nothing was written.
    #[error(
        "matcher {index} has a vocabulary of {n_vocab} tokens, matcher 0 one of {expected}: \
         the masks of one batch share a vocabulary size"
    )]
    VocabularyMismatch {
        /// The first matcher whose vocabulary size differs from matcher 0's.
        index: usize,
        /// Its vocabulary size.
        n_vocab: usize,
        /// Matcher 0's vocabulary size.
        expected: usize,
    },
    /// The recogniser hit one of its limits midway ([`MatcherError::Limit`]): the draft's
    /// rows are zero.
    #[error("{0}")]
    Matcher(#[from] MatcherError),
}

impl Matcher {
    /// Fills row `i` of `bitmask` (rows of `words_per_row` words, at least
    /// [`CompiledGrammar::bitmask_words`]) with the mask after the first `i` tokens of
    /// `draft`, for `i` in `0..=draft.len()`, stopping at the first token the matcher
    /// refuses: the rows after it are zero, and the outcome says where and why. Leaves the
    /// matcher as it was (see the [module docs](crate::speculative)).
    ///
    /// # Errors
    /// [`DraftError`] (nothing written) for an unknown token id or a buffer too small; a
    /// recogniser limit midway zeroes the rows.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use sieve_matcher::{CompiledGrammar, Matcher, Options, Tokenizer};
    ///
    /// let vocab = Arc::new(sieve_vocab::Vocabulary::embedded_default().clone());
    /// let grammar = sieve_gbnf::compile(r#"root ::= "yes" | "no""#, &Default::default()).unwrap();
    /// let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
    /// let compiled = Arc::new(CompiledGrammar::new(&grammar, tokenizer, &Options::default()).unwrap());
    /// let id = |text: &str| (0..vocab.n_vocab() as u32)
    ///     .find(|&t| vocab.bytes(vocab.token(t).unwrap()) == text.as_bytes()).unwrap();
    /// let mut matcher = Matcher::new(compiled.clone());
    /// let words = compiled.bitmask_words();
    /// let mut rows = vec![0u32; 4 * words];
    /// let draft = [id("y"), id("es"), id("no")];
    /// let outcome = matcher.fill_draft_bitmasks(&draft, &mut rows, words).unwrap();
    /// assert_eq!(outcome.accepted, 2); // "no" cannot follow "yes"
    /// assert!(rows[3 * words..].iter().all(|&w| w == 0));
    /// assert_eq!(matcher.output_len(), 0); // unchanged
    /// ```
    ///
    /// [`CompiledGrammar::bitmask_words`]: crate::CompiledGrammar::bitmask_words
    pub fn fill_draft_bitmasks(
        &mut self,
        draft: &[u32],
        bitmask: &mut [u32],
        words_per_row: usize,
    ) -> Result<DraftChainMasks, DraftError> {
        let rows = draft.len().saturating_add(1);
        let region = self.check_rows(rows, bitmask, words_per_row)?;
        if let Some((i, &id)) = draft.iter().enumerate().find(|(_, &id)| !self.known(id)) {
            return Err(self.unknown(i + 1, id));
        }
        let start = self.steps();
        let mut outcome = DraftChainMasks {
            accepted: 0,
            rejection: None,
        };
        let mut rows = region.chunks_exact_mut(words_per_row);
        let walked = (|| {
            for row in rows.by_ref() {
                self.fill_next_token_bitmask(row)?;
                let Some(&id) = draft.get(outcome.accepted) else {
                    break;
                };
                match self.accept_token(id) {
                    Ok(()) => outcome.accepted += 1,
                    Err(MatcherError::Limit(limit)) => return Err(MatcherError::Limit(limit)),
                    Err(refused) => {
                        outcome.rejection = Some(refused);
                        break;
                    }
                }
            }
            Ok(())
        })();
        let taken = self.steps() - start;
        self.rollback(taken)
            .expect("the steps the walk took can be undone");
        match walked {
            Ok(()) => {
                rows.for_each(|row| row.fill(0));
                Ok(outcome)
            }
            Err(error) => {
                region.fill(0);
                Err(error.into())
            }
        }
    }

    /// Fills row `i` of `bitmask` (rows of `words_per_row` words, at least
    /// [`CompiledGrammar::bitmask_words`]) with node `i`'s mask: the mask after the path
    /// from the root to node `i`, or zero when node `i` or an ancestor is refused. Leaves
    /// the matcher as it was (see the [module docs](crate::speculative)).
    ///
    /// # Errors
    /// [`DraftError`] (nothing written) for an unknown token id or a buffer too small; a
    /// recogniser limit midway zeroes the rows.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use sieve_matcher::{CompiledGrammar, DraftTree, Matcher, NodeState, Options, Tokenizer};
    ///
    /// let vocab = Arc::new(sieve_vocab::Vocabulary::embedded_default().clone());
    /// let grammar = sieve_gbnf::compile(r#"root ::= "yes" | "no""#, &Default::default()).unwrap();
    /// let tokenizer = Arc::new(Tokenizer::new(vocab.clone()));
    /// let compiled = Arc::new(CompiledGrammar::new(&grammar, tokenizer, &Options::default()).unwrap());
    /// let id = |text: &str| (0..vocab.n_vocab() as u32)
    ///     .find(|&t| vocab.bytes(vocab.token(t).unwrap()) == text.as_bytes()).unwrap();
    /// // root ─┬─ "y" ── "es"
    /// //       └─ "n" ── "es"
    /// let tree = DraftTree::from_parents(
    ///     &[0, id("y"), id("es"), id("n"), id("es")],
    ///     &[None, Some(0), Some(1), Some(0), Some(3)],
    /// ).unwrap();
    /// let mut matcher = Matcher::new(compiled.clone());
    /// let words = compiled.bitmask_words();
    /// let mut rows = vec![0u32; tree.nodes() * words];
    /// let outcome = matcher.fill_draft_tree_bitmasks(&tree, &mut rows, words).unwrap();
    /// use NodeState::*;
    /// assert_eq!(outcome.states(), [Accepted, Accepted, Accepted, Accepted, Rejected]);
    /// ```
    ///
    /// [`CompiledGrammar::bitmask_words`]: crate::CompiledGrammar::bitmask_words
    pub fn fill_draft_tree_bitmasks(
        &mut self,
        tree: &DraftTree,
        bitmask: &mut [u32],
        words_per_row: usize,
    ) -> Result<DraftTreeMasks, DraftError> {
        let region = self.check_rows(tree.nodes(), bitmask, words_per_row)?;
        if let Some(node) = (1..tree.nodes()).find(|&node| !self.known(tree.tokens[node])) {
            return Err(self.unknown(node, tree.tokens[node]));
        }
        let start = self.steps();
        let mut states = vec![NodeState::Unreached; tree.nodes()];
        let walked = self.walk_tree(tree, region, words_per_row, &mut states);
        let taken = self.steps() - start;
        self.rollback(taken)
            .expect("the steps the walk took can be undone");
        match walked {
            Ok(()) => Ok(DraftTreeMasks { states }),
            Err(error) => {
                region.fill(0);
                Err(error.into())
            }
        }
    }

    /// Depth first from the root: entering a node accepts its token (the root's excepted)
    /// and fills its row; leaving it rolls the token back. Refused and unreached nodes get
    /// zero rows.
    fn walk_tree(
        &mut self,
        tree: &DraftTree,
        region: &mut [u32],
        words_per_row: usize,
        states: &mut [NodeState],
    ) -> Result<(), MatcherError> {
        /// A step of the walk: enter a node, or undo the token of one being left.
        enum Visit {
            Enter(u32),
            Leave,
        }
        region.fill(0);
        let mut stack = vec![Visit::Enter(0)];
        while let Some(visit) = stack.pop() {
            let node = match visit {
                Visit::Leave => {
                    self.rollback(1)?;
                    continue;
                }
                Visit::Enter(node) => node as usize,
            };
            if node != 0 {
                match self.accept_token(tree.tokens[node]) {
                    Ok(()) => stack.push(Visit::Leave),
                    Err(MatcherError::Limit(limit)) => return Err(MatcherError::Limit(limit)),
                    Err(_) => {
                        states[node] = NodeState::Rejected;
                        continue;
                    }
                }
            }
            states[node] = NodeState::Accepted;
            let row = &mut region[node * words_per_row..(node + 1) * words_per_row];
            self.fill_next_token_bitmask(row)?;
            // Children pushed last to first, so they are entered in order.
            let first = stack.len();
            stack.extend(tree.children(node).map(|c| Visit::Enter(c as u32)));
            stack[first..].reverse();
        }
        Ok(())
    }

    /// The first `rows * words_per_row` words of `bitmask`, or why they are not there.
    fn check_rows<'b>(
        &self,
        rows: usize,
        bitmask: &'b mut [u32],
        words_per_row: usize,
    ) -> Result<&'b mut [u32], DraftError> {
        let needed = self.compiled().bitmask_words();
        if words_per_row < needed {
            return Err(DraftError::RowTooShort {
                words_per_row,
                needed,
            });
        }
        let words = rows.saturating_mul(words_per_row);
        if bitmask.len() < words {
            return Err(DraftError::BitmaskTooSmall {
                given: bitmask.len(),
                needed: words,
                rows,
                words_per_row,
            });
        }
        Ok(&mut bitmask[..words])
    }

    fn known(&self, id: u32) -> bool {
        (id as usize) < self.compiled().vocabulary().n_vocab()
    }

    fn unknown(&self, node: usize, id: u32) -> DraftError {
        DraftError::UnknownToken {
            node,
            id,
            n_vocab: self.compiled().vocabulary().n_vocab(),
        }
    }
}

/// [`Matcher::fill_draft_tree_bitmasks`] for many matchers at once, across rayon's threads:
/// matcher `i` fills `trees[i].nodes()` rows of `bitmask` (rows of `words_per_row` words)
/// right after matcher `i - 1`'s, matcher 0 from row 0. Returns one result per matcher, in
/// order; a failed matcher's rows are zero and the others are still filled. Words past the
/// last row are never touched; every matcher is left as it was.
///
/// Batches of fewer than [`PARALLEL_MIN_BATCH`] rows in all, of one matcher, or on a pool of
/// one thread run in the caller's thread; larger ones on the rayon pool the call is made in
/// (the global one, or yours through `ThreadPool::install`), matchers handed out by work
/// stealing.
///
/// # Errors
/// The whole batch is refused, with nothing written, when `trees` and `matchers` differ in
/// length, the matchers' vocabulary sizes differ, `words_per_row` is too short, or the
/// buffer is shorter than all the rows.
///
/// ```
/// use std::sync::Arc;
/// use sieve_matcher::{fill_draft_tree_bitmasks_batch, CompiledGrammar, DraftTree, Matcher, Options, Tokenizer};
///
/// let vocab = Arc::new(sieve_vocab::Vocabulary::embedded_default().clone());
/// let grammar = sieve_gbnf::compile(r#"root ::= "yes" | "no""#, &Default::default()).unwrap();
/// let tokenizer = Arc::new(Tokenizer::new(vocab));
/// let compiled = Arc::new(CompiledGrammar::new(&grammar, tokenizer, &Options::default()).unwrap());
/// let mut matchers = vec![Matcher::new(compiled.clone()), Matcher::new(compiled.clone())];
/// let trees = [DraftTree::chain(&[88]), DraftTree::chain(&[])]; // 88 is "y" in GPT-2
/// let words = compiled.bitmask_words();
/// let mut bitmask = vec![0u32; 3 * words];
/// let results = fill_draft_tree_bitmasks_batch(&mut matchers, &trees, &mut bitmask, words).unwrap();
/// assert!(results.iter().all(Result::is_ok));
/// assert_eq!(bitmask[..words], bitmask[2 * words..]); // both roots: the start's mask
/// ```
pub fn fill_draft_tree_bitmasks_batch<M>(
    matchers: &mut [M],
    trees: &[DraftTree],
    bitmask: &mut [u32],
    words_per_row: usize,
) -> Result<Vec<Result<DraftTreeMasks, DraftError>>, DraftError>
where
    M: BorrowMut<Matcher> + Send,
{
    check_batch(matchers, trees.len())?;
    let Some(first) = matchers.first() else {
        return Ok(Vec::new());
    };
    let needed = first.borrow().compiled().bitmask_words();
    if words_per_row < needed {
        return Err(DraftError::RowTooShort {
            words_per_row,
            needed,
        });
    }
    let rows = trees
        .iter()
        .fold(0usize, |sum, tree| sum.saturating_add(tree.nodes()));
    let words = rows.saturating_mul(words_per_row);
    if bitmask.len() < words {
        return Err(DraftError::BitmaskTooSmall {
            given: bitmask.len(),
            needed: words,
            rows,
            words_per_row,
        });
    }
    let regions = tree_regions(trees, &mut bitmask[..words], words_per_row);
    let one = |(matcher, (tree, region)): (&mut M, (&DraftTree, &mut [u32]))| {
        let filled = matcher
            .borrow_mut()
            .fill_draft_tree_bitmasks(tree, region, words_per_row);
        if filled.is_err() {
            region.fill(0);
        }
        filled
    };
    if rows < PARALLEL_MIN_BATCH || matchers.len() < 2 || rayon::current_num_threads() < 2 {
        Ok(matchers
            .iter_mut()
            .zip(trees.iter().zip(regions))
            .map(one)
            .collect())
    } else {
        Ok(matchers
            .par_iter_mut()
            .zip(trees.par_iter().zip(regions))
            .map(one)
            .collect())
    }
}

/// The rows of each tree, in order, as separate slices of `region`.
fn tree_regions<'b>(
    trees: &[DraftTree],
    mut region: &'b mut [u32],
    words_per_row: usize,
) -> Vec<&'b mut [u32]> {
    let mut regions = Vec::with_capacity(trees.len());
    for tree in trees {
        let (head, tail) = region.split_at_mut(tree.nodes() * words_per_row);
        regions.push(head);
        region = tail;
    }
    regions
}

/// [`Matcher::validate_tokens`] for many matchers at once, across rayon's threads (batches
/// of at least [`PARALLEL_MIN_BATCH`] matchers): entry `i` is how many leading tokens of
/// `drafts[i]` matcher `i` would accept. Every matcher is left as it was.
///
/// # Errors
/// [`DraftError::DraftCount`] when `drafts` and `matchers` differ in length; each matcher's
/// own error (an unknown id, a recogniser limit) is in its entry.
pub fn validate_tokens_batch<M, D>(
    matchers: &mut [M],
    drafts: &[D],
) -> Result<Vec<Result<usize, MatcherError>>, DraftError>
where
    M: BorrowMut<Matcher> + Send,
    D: AsRef<[u32]> + Sync,
{
    if matchers.len() != drafts.len() {
        return Err(DraftError::DraftCount {
            matchers: matchers.len(),
            drafts: drafts.len(),
        });
    }
    let one = |(matcher, draft): (&mut M, &D)| matcher.borrow_mut().validate_tokens(draft.as_ref());
    if matchers.len() < PARALLEL_MIN_BATCH || rayon::current_num_threads() < 2 {
        Ok(matchers.iter_mut().zip(drafts).map(one).collect())
    } else {
        Ok(matchers.par_iter_mut().zip(drafts).map(one).collect())
    }
}

/// Refuses a batch whose matchers and drafts do not pair up, or whose matchers cannot share
/// rows.
fn check_batch<M: BorrowMut<Matcher>>(matchers: &[M], drafts: usize) -> Result<(), DraftError> {
    if matchers.len() != drafts {
        return Err(DraftError::DraftCount {
            matchers: matchers.len(),
            drafts,
        });
    }
    match crate::batch::vocabulary_mismatch(matchers) {
        Some((index, n_vocab, expected)) => Err(DraftError::VocabularyMismatch {
            index,
            n_vocab,
            expected,
        }),
        None => Ok(()),
    }
}
