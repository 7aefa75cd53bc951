//! [`CompiledGrammar`]: a grammar compiled against a vocabulary, shared by every matcher.

use std::sync::Arc;

use sieve_backend::Backend;

use sieve_fsm::{AutomatonCache, GrammarFsms};
use sieve_ir::Grammar;
use sieve_tokencache::{CacheStats, SharedStore, StoreStats, TokenCache};
use sieve_vocab::{TokenId, TokenTrie, Vocabulary};

use crate::engine::{Engine, EngineCompletion};
use crate::pipeline;
use crate::selection::{BackendChoice, BackendKind};

/// Settings of every stage compiled into a [`CompiledGrammar`]; each stage documents its
/// own defaults.
#[derive(Clone, Debug)]
pub struct Options {
    /// Normalisation (repetition threshold, size limits).
    pub normalize: sieve_normalize::Config,
    /// Automaton construction (DFA cap, state limits).
    pub fsm: sieve_fsm::Config,
    /// Which backend recognises the grammar. Default [`BackendChoice::Earley`].
    pub backend: BackendChoice,
    /// Recogniser limits (items per set, history).
    pub earley: sieve_earley::Config,
    /// The LR backend's limits (states, reductions per byte, history).
    pub lr: sieve_lr::Config,
    /// The token-DFA backend's limits (DFA states, token automaton bytes).
    pub token_dfa: sieve_tokendfa::Config,
    /// The most bytes the token-mask cache of one compiled grammar keeps. Past it, states
    /// not yet cached are classified again at each mask (correct, slower). Default 256 MiB.
    pub max_cache_bytes: usize,
    /// Whether token classifications are shared with every grammar compiled against the
    /// same [`Tokenizer`] (its store, keyed by structure: see [`Tokenizer::store_stats`]).
    /// Default `true`.
    pub share_classifications: bool,
    /// Whether [`CompiledGrammar::new`] takes rule automata from, and adds them to, the
    /// [`Tokenizer`]'s automaton cache, shared by every grammar compiled against it (see
    /// [`Tokenizer::automata_stats`]). The automata are the same either way. Default `true`.
    pub share_automata: bool,
    /// Whether states are classified while compiling, rather than when a mask first meets
    /// them. Default [`AheadOfTime::Off`].
    pub ahead_of_time: AheadOfTime,
}

/// When a compiled grammar classifies its states (see [`Options::ahead_of_time`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AheadOfTime {
    /// Only when a mask first meets a state (just in time).
    #[default]
    Off,
    /// Every state at compile time; `parallel` runs them across rayon's threads (the pool
    /// `CompiledGrammar::new` is called in).
    All {
        /// Whether to use rayon's threads.
        parallel: bool,
    },
    /// The costliest states first, starting no new one after `budget` has passed; the
    /// rest just in time.
    Within {
        /// The time allowed.
        budget: std::time::Duration,
        /// Whether to use rayon's threads.
        parallel: bool,
    },
}

impl Default for Options {
    fn default() -> Options {
        Options {
            normalize: sieve_normalize::Config::default(),
            fsm: sieve_fsm::Config::default(),
            backend: BackendChoice::Earley,
            earley: sieve_earley::Config::default(),
            lr: sieve_lr::Config::default(),
            token_dfa: sieve_tokendfa::Config::new(),
            max_cache_bytes: 256 << 20,
            share_classifications: true,
            share_automata: true,
            ahead_of_time: AheadOfTime::Off,
        }
    }
}

/// Why a grammar could not be compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// Normalisation failed (the grammar accepts nothing, or grew past a limit).
    #[error(transparent)]
    Normalize(#[from] sieve_normalize::NormalizeError),
    /// Automaton construction failed (a limit).
    #[error(transparent)]
    Automata(#[from] sieve_fsm::BuildError),
    /// The LR backend refuses the grammar (not LR(1), an automaton it does not take, a limit).
    #[error("the lr backend refuses this grammar: {0}")]
    Lr(#[from] sieve_lr::LrError),
    /// The token-DFA backend refuses the grammar (recursive, or past its state limit).
    #[error("the token-dfa backend refuses this grammar: {0}")]
    TokenDfa(#[from] sieve_tokendfa::TokenDfaError),
    /// A rule's token limit (`max_tokens`) cannot be honoured with this vocabulary (the
    /// message names the rule and says why, e.g. the least limit that works).
    #[error("token limit: {0}")]
    TokenLimit(String),
}

/// A vocabulary prepared for mask computation: the vocabulary, its token trie, and the store
/// of token classifications shared by every grammar compiled against it (keyed by structure,
/// so a second schema reuses the string, number and object rules of a first). Built once per
/// tokenizer (tens of milliseconds for 200k tokens), like XGrammar's `TokenizerInfo`.
#[derive(Debug)]
pub struct Tokenizer {
    vocab: Arc<Vocabulary>,
    /// Shared with the tokenizers [`Tokenizer::with_fresh_caches`] makes.
    trie: Arc<TokenTrie>,
    store: Arc<SharedStore>,
    automata: Arc<AutomatonCache>,
}

/// Bytes 0x20–0x7F except the quote and the backslash, and the same without 0x7F, as
/// `[u64; 4]` bit sets (bit `b % 64` of word `b / 64`).
const JSON_STRING_CLASSES: [[u64; 4]; 2] = [
    [0xffff_fffb_0000_0000, 0xffff_ffff_efff_ffff, 0, 0],
    [0xffff_fffb_0000_0000, 0x7fff_ffff_efff_ffff, 0, 0],
];

/// Every ASCII byte but `<`, as a `[u64; 4]` bit set: the ASCII characters of free text until
/// a tag. Every tag-based tool-call format (Qwen's `<tool_call>`, Llama's `<|python_tag|>`,
/// Harmony's `<|channel|>`, DeepSeek's, Kimi's, …) triggers on `<`, so free text before a
/// trigger reads this class.
const FREE_TEXT_CLASS: [u64; 4] = [!(1 << b'<'), u64::MAX, 0, 0];

/// The byte budget of a [`Tokenizer`]'s cache of rule automata (see [`Options::share_automata`]).
pub const DEFAULT_AUTOMATA_BYTES: usize = 64 << 20;

/// The default byte budget of a [`Tokenizer`]'s shared classification store.
pub const DEFAULT_STORE_BYTES: usize = 512 << 20;

impl Tokenizer {
    /// Builds the trie of `vocab`, with a shared store of [`DEFAULT_STORE_BYTES`].
    pub fn new(vocab: Arc<Vocabulary>) -> Tokenizer {
        Tokenizer::with_store_budget(vocab, DEFAULT_STORE_BYTES)
    }

    /// Builds the trie of `vocab`, with a shared store of at most `bytes` (least recently
    /// used classifications are evicted past it; 0 shares nothing).
    pub fn with_store_budget(vocab: Arc<Vocabulary>, bytes: usize) -> Tokenizer {
        let trie = TokenTrie::new(&vocab);
        // The byte classes JSON string contents loop on (with and without U+007F, as JSON
        // Schemas and llama.cpp's json.gbnf write them): their regions — as bytes, and as
        // UTF-8 text, whole and cut by length for bounded strings — are prepared with the
        // trie, as llguidance prepares its token slices when it loads a tokenizer, so the
        // first mask inside a string does not pay for them. Free text until a tag
        // (`FREE_TEXT_CLASS`) is unbounded: its text region whole is enough (about 60 µs for
        // o200k_base, otherwise paid by the first free-text mask of the process).
        for class in JSON_STRING_CLASSES {
            trie.class_region(&class);
            trie.text_depths(&trie.text_region(&class));
        }
        trie.text_region(&FREE_TEXT_CLASS);
        Tokenizer {
            vocab,
            trie: Arc::new(trie),
            store: Arc::new(SharedStore::new(bytes)),
            automata: Arc::new(AutomatonCache::new(DEFAULT_AUTOMATA_BYTES)),
        }
    }

    /// The same vocabulary and trie (shared, not rebuilt) with empty caches of the same
    /// budgets: grammars compiled against it find none of the rule automata or
    /// classifications of grammars compiled against `self`. For measuring a first request's
    /// cost without reloading the vocabulary (`sieve bench`'s cold compiles).
    pub fn with_fresh_caches(&self) -> Tokenizer {
        Tokenizer {
            vocab: self.vocab.clone(),
            trie: self.trie.clone(),
            store: Arc::new(SharedStore::new(self.store.budget())),
            automata: Arc::new(AutomatonCache::new(DEFAULT_AUTOMATA_BYTES)),
        }
    }

    /// Counters of the cache of rule automata shared by the grammars compiled against this
    /// tokenizer (see [`Options::share_automata`]).
    pub fn automata_stats(&self) -> sieve_fsm::CacheStats {
        self.automata.stats()
    }

    /// The cache of rule automata shared by the grammars compiled against this tokenizer,
    /// for callers that run the pipeline's stages themselves ([`pipeline::automata_cached`]).
    pub fn automata_cache(&self) -> &Arc<AutomatonCache> {
        &self.automata
    }

    /// Counters of the shared classification store (hits, misses, evictions, size).
    pub fn store_stats(&self) -> StoreStats {
        self.store.stats()
    }

    /// The vocabulary.
    pub fn vocabulary(&self) -> &Arc<Vocabulary> {
        &self.vocab
    }

    /// The text tokens sorted by bytes.
    pub fn trie(&self) -> &TokenTrie {
        &self.trie
    }
}

/// A grammar compiled against a [`Tokenizer`]: the recogniser tables plus the shared
/// tokenizer. Immutable, `Send + Sync`; share it through an `Arc` and create a
/// [`crate::Matcher`] per request.
#[derive(Debug)]
pub struct CompiledGrammar {
    engine: Arc<Engine>,
    tokenizer: Arc<Tokenizer>,
    cache: TokenCache,
    /// The shortest completions in tokens, built when the first budgeted matcher asks.
    completion: std::sync::OnceLock<EngineCompletion>,
    /// Each token id's position in the trie (`u32::MAX` for specials), for budgeted masks.
    positions: std::sync::OnceLock<Vec<[u32; 2]>>,
}

impl CompiledGrammar {
    /// Normalises `grammar` and builds its automata and recogniser: the stages of
    /// [`crate::pipeline`] in order, each with its part of `options`.
    ///
    /// # Errors
    /// A [`CompileError`] from the stage that failed.
    pub fn new(
        grammar: &Grammar,
        tokenizer: Arc<Tokenizer>,
        options: &Options,
    ) -> Result<CompiledGrammar, CompileError> {
        let normalized = pipeline::normalize(grammar, options)?;
        let fsms = if options.share_automata {
            pipeline::automata_cached(&normalized, options, &tokenizer.automata)?
        } else {
            pipeline::automata(&normalized, options)?
        };
        CompiledGrammar::from_automata(&fsms, tokenizer, options)
    }

    /// The last stage of [`CompiledGrammar::new`]: the recogniser over automata built by
    /// [`pipeline::automata`] (with `options`' backend settings), against `tokenizer`, with an
    /// empty token-mask cache of at most `options.max_cache_bytes`.
    ///
    /// # Errors
    /// A [`CompileError`] when the backend cannot be built (none for the default backend).
    pub fn from_automata(
        fsms: &GrammarFsms,
        tokenizer: Arc<Tokenizer>,
        options: &Options,
    ) -> Result<CompiledGrammar, CompileError> {
        let engine = Arc::new(pipeline::engine(fsms, options, Some(&tokenizer.trie))?);
        engine
            .prepare_token_limits(&tokenizer.trie)
            .map_err(CompileError::TokenLimit)?;
        let mut cache = TokenCache::new(engine.state_count(), options.max_cache_bytes);
        if options.share_classifications {
            cache = cache.sharing(tokenizer.store.clone());
        }
        let (deadline, parallel) = match options.ahead_of_time {
            AheadOfTime::Off => (None, false),
            AheadOfTime::All { parallel } => (Some(None), parallel),
            AheadOfTime::Within { budget, parallel } => {
                (Some(Some(std::time::Instant::now() + budget)), parallel)
            }
        };
        if let Some(deadline) = deadline {
            cache.precompute(&*engine, &tokenizer.trie, deadline, parallel);
        }
        Ok(CompiledGrammar {
            engine,
            tokenizer,
            cache,
            completion: std::sync::OnceLock::new(),
            positions: std::sync::OnceLock::new(),
        })
    }

    /// The vocabulary.
    pub fn vocabulary(&self) -> &Arc<Vocabulary> {
        &self.tokenizer.vocab
    }

    /// Whether some rule of the grammar has a token limit (`max_tokens`).
    pub fn has_token_limits(&self) -> bool {
        match &*self.engine {
            crate::engine::Engine::Earley(g) => g.has_token_limits(),
            crate::engine::Engine::TokenDfa(g) => g.has_token_limits(),
            crate::engine::Engine::Lr(g) => g.has_token_limits(),
        }
    }

    /// The backend that recognises the grammar (the one [`Options::backend`] chose).
    pub fn backend(&self) -> BackendKind {
        self.engine.kind()
    }

    /// The heap bytes of the backend's compiled tables (the token-mask cache, which grows
    /// with use, is not counted: see [`CompiledGrammar::cache_stats`]).
    pub fn table_bytes(&self) -> usize {
        self.engine.table_bytes()
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Arc<Tokenizer> {
        &self.tokenizer
    }

    /// The backend's tables.
    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The backend's shortest completions counted in this vocabulary's tokens (built on
    /// first use: only budgeted matchers read them).
    pub(crate) fn completion(&self) -> &EngineCompletion {
        self.completion
            .get_or_init(|| self.engine.completion_table(&self.tokenizer.trie))
    }

    /// Each token id's positions in the trie: `[text, encoding]`, `u32::MAX` where it has no
    /// such reading. Built on first use (only budgeted matchers read it).
    pub(crate) fn trie_positions(&self) -> &[[u32; 2]] {
        self.positions.get_or_init(|| {
            let trie = &self.tokenizer.trie;
            let mut positions = vec![[u32::MAX; 2]; self.vocabulary().n_vocab()];
            for pos in 0..trie.len() {
                let reading = usize::from(trie.is_encoding(pos));
                positions[trie.token(pos).index()][reading] = pos as u32;
            }
            positions
        })
    }

    /// The per-state token classification, filled lazily by the matchers.
    pub(crate) fn cache(&self) -> &TokenCache {
        &self.cache
    }

    /// Figures about the token-mask cache (entries classified so far, their bytes).
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// The vocabulary's text tokens sorted by bytes.
    pub fn trie(&self) -> &TokenTrie {
        &self.tokenizer.trie
    }

    /// The number of `u32` words a bitmask needs: `ceil(n_vocab / 32)`.
    pub fn bitmask_words(&self) -> usize {
        self.vocabulary().n_vocab().div_ceil(32)
    }

    /// The tokens whose bits are set in `mask`, ascending.
    pub fn allowed_tokens(&self, mask: &[u32]) -> Vec<TokenId> {
        (0..self.vocabulary().n_vocab().min(mask.len() * 32))
            .filter(|&i| mask[i / 32] & (1 << (i % 32)) != 0)
            .filter_map(|i| self.vocabulary().token(i as u32))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{FREE_TEXT_CLASS, JSON_STRING_CLASSES};

    #[test]
    fn the_free_text_class_is_ascii_without_the_tag_opener() {
        for byte in 0..=255u8 {
            let member = FREE_TEXT_CLASS[byte as usize / 64] & (1 << (byte % 64)) != 0;
            assert_eq!(member, byte < 0x80 && byte != b'<', "byte {byte:#x}");
        }
    }

    #[test]
    fn json_string_classes_are_printable_ascii_without_quote_and_backslash() {
        for (class, last) in JSON_STRING_CLASSES.iter().zip([0x7f_u8, 0x7e]) {
            for byte in 0..=255u8 {
                let expected = (0x20..=last).contains(&byte) && byte != b'"' && byte != b'\\';
                let member = class[byte as usize / 64] & (1 << (byte % 64)) != 0;
                assert_eq!(member, expected, "byte {byte:#x}");
            }
        }
    }
}
