//! [`Config`]: the bounds on the whole-constraint DFA and on the token-level automaton.

/// What a [`crate::TokenDfa`] may grow to. Every bound turns into a typed
/// [`crate::TokenDfaError`] when hit; nothing is truncated silently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    state_limit: usize,
    token_automaton_bytes: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

impl Config {
    /// The defaults: 100 000 DFA states, 512 MiB of token automaton.
    pub fn new() -> Config {
        Config {
            state_limit: 100_000,
            token_automaton_bytes: 512 << 20,
        }
    }

    /// The most states of any DFA built on the way (one per rule, inlined references
    /// included, and the whole constraint's). The NFAs the DFAs are determinised from may hold
    /// four times as many states (a counted repetition expands into that many copies of its
    /// item). Cost: subset construction and minimisation are about linear in the states
    /// times the byte classes; the recogniser's tables take `4 × classes` bytes per state.
    /// Default 100 000.
    pub fn state_limit(mut self, limit: usize) -> Config {
        self.state_limit = limit;
        self
    }

    /// The most heap bytes of a [`crate::TokenAutomaton`] (8 bytes per explicit token edge,
    /// each state's token set — at most 4 bytes per edge or a bitmask of the vocabulary —
    /// and the state offsets). Past it [`crate::TokenDfa::token_automaton`] fails and masks
    /// come from per-state trie walks through the token cache instead (the backend's
    /// classification), which is the lazy form of the same table. Default 512 MiB.
    pub fn token_automaton_bytes(mut self, bytes: usize) -> Config {
        self.token_automaton_bytes = bytes;
        self
    }

    /// See [`Config::state_limit`].
    pub fn get_state_limit(&self) -> usize {
        self.state_limit
    }

    /// See [`Config::token_automaton_bytes`].
    pub fn get_token_automaton_bytes(&self) -> usize {
        self.token_automaton_bytes
    }
}
