//! Loops below a node: where the tokens of a subtree leave a byte class, for a walk that
//! reaches, at any depth, a state stepping to itself on every byte of the class (an
//! identifier's characters after `int `, a string's after ` "`).
//!
//! A [`super::ClassRegion`] serves walks that loop from a token's first byte; below a prefix
//! that left the class (the space of ` foo`) its sets do not apply. Below node `n`, every
//! token either stays in the class after `n`'s prefix, or first leaves it at an *exit*: a
//! node whose byte is outside the class while every byte between `n`'s prefix and it is
//! inside. Exits are disjoint subtrees in pre-order, so their positions are disjoint runs, in
//! order, and the tokens that stay in the class are exactly the positions below `n` outside
//! every run: the walker accepts those runs between exits whole and walks only the exits.
//!
//! Exits are found by scanning the nodes' bytes ([`TokenTrie::node_bytes`], one byte per
//! node, so the scan reads a fifth of what the nodes themselves take) and jumping over each
//! exit's subtree: nothing is computed per class ahead of time.

use super::TokenTrie;

impl TokenTrie {
    /// The byte of every node ([`super::TrieNode::byte`]), as one array.
    #[inline]
    pub fn node_bytes(&self) -> &[u8] {
        &self.node_bytes
    }

    /// The exits of node `n`'s subtree from a loop on the bytes that `outside` does not
    /// mark, in pre-order: the nodes below `n` whose byte is outside while every byte between
    /// `n`'s prefix and theirs is inside (module docs).
    pub fn loop_exits<'t>(
        &'t self,
        n: usize,
        outside: &'t [bool; 256],
    ) -> impl Iterator<Item = usize> + 't {
        let end = self.nodes[n].end as usize;
        let mut at = n + 1;
        std::iter::from_fn(move || {
            let exit = first_outside(&self.node_bytes[..end], at, outside)?;
            at = self.nodes[exit].end as usize;
            Some(exit)
        })
    }
}

/// The first index from `from` whose byte `outside` marks.
#[inline]
fn first_outside(bytes: &[u8], from: usize, outside: &[bool; 256]) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let mut chunks = rest.chunks_exact(8);
    let mut skipped = 0;
    for chunk in &mut chunks {
        if chunk.iter().any(|&byte| outside[byte as usize]) {
            break;
        }
        skipped += 8;
    }
    rest[skipped..]
        .iter()
        .position(|&byte| outside[byte as usize])
        .map(|i| from + skipped + i)
}

#[cfg(test)]
mod tests {
    use crate::{TokenTrie, Vocabulary};

    /// The prefix of every node, by walking its ancestors' bytes in pre-order.
    fn prefixes(trie: &TokenTrie) -> Vec<Vec<u8>> {
        let mut path: Vec<u8> = Vec::new();
        trie.nodes()
            .iter()
            .map(|node| {
                path.truncate(node.depth as usize - 1);
                path.push(node.byte);
                path.clone()
            })
            .collect()
    }

    /// On every node of the embedded vocabulary's trie, for classes large and small, the
    /// exits are what their definition says (checked node by node), and the positions below
    /// the node outside every exit's run are exactly the tokens whose later bytes all stay
    /// in the class (checked token by token).
    #[test]
    fn loop_exits_meet_their_definition() {
        let trie = TokenTrie::new(Vocabulary::embedded_default());
        assert_eq!(
            trie.node_bytes(),
            trie.nodes()
                .iter()
                .map(|node| node.byte)
                .collect::<Vec<_>>()
        );
        let prefixes = prefixes(&trie);
        let identifier = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let classes: [&dyn Fn(u8) -> bool; 5] = [
            &identifier,
            &|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\',
            &|b| b == b' ',
            &|_| true,
            &|_| false,
        ];
        for inside in classes {
            let outside: [bool; 256] = std::array::from_fn(|b| !inside(b as u8));
            for (n, node) in trie.nodes().iter().enumerate() {
                let depth = node.depth as usize;
                let expected: Vec<usize> = (n + 1..node.end as usize)
                    .filter(|&m| {
                        let (last, between) =
                            prefixes[m][depth..].split_last().expect("deeper than n");
                        !inside(*last) && between.iter().all(|&b| inside(b))
                    })
                    .collect();
                let exits: Vec<usize> = trie.loop_exits(n, &outside).collect();
                assert_eq!(exits, expected, "exits below node {n}");

                let mut runs = exits
                    .iter()
                    .map(|&m| trie.nodes()[m].pos as usize..trie.node_pos_end(m));
                let mut run = runs.next();
                for p in node.pos as usize..trie.node_pos_end(n) {
                    while run.as_ref().is_some_and(|r| r.end <= p) {
                        run = runs.next();
                    }
                    let in_run = run.as_ref().is_some_and(|r| r.contains(&p));
                    let stays = trie.bytes_at(p)[depth..].iter().all(|&b| inside(b));
                    assert_eq!(!in_run, stays, "position {p} below node {n}");
                }
            }
        }
    }
}
