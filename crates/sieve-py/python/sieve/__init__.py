"""sieve: exact token masks for grammar-constrained generation.

Build a ``Tokenizer`` once per tokenizer, compile a JSON Schema, GBNF/EBNF or Lark grammar,
regex or XGrammar structural tag against it once, then drive one ``Matcher`` per request::

    import sieve
    tok = sieve.Tokenizer.from_file("tokenizer.json")
    compiled = sieve.compile_json_schema(tok, {"type": "object", "properties": {...}})
    matcher = sieve.Matcher(compiled)
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    matcher.fill_next_token_bitmask(bitmask)   # then mask the logits, sample, and
    matcher.accept_token(token_id)             # accept the sampled token

The names follow XGrammar's Python API (``GrammarMatcher``'s methods, the bitmask helpers)
so that code written for it reads the same way. ``sieve.LogitsProcessor`` plugs a compiled
grammar into transformers' ``generate()``.
"""

from ._bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from ._logits import LogitsProcessor
from ._sieve import (
    CompiledGrammar,
    CompileError,
    DraftTree,
    LimitError,
    Matcher,
    Tokenizer,
    compile_grammar,
    compile_json_schema,
    compile_lark,
    compile_regex,
    compile_structural_tag,
    compile_tools,
    fill_draft_tree_bitmasks_batch,
    fill_next_token_bitmasks,
    validate_tokens_batch,
)

__all__ = [
    "CompileError",
    "CompiledGrammar",
    "DraftTree",
    "LimitError",
    "LogitsProcessor",
    "Matcher",
    "Tokenizer",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "compile_grammar",
    "compile_json_schema",
    "compile_lark",
    "compile_regex",
    "compile_structural_tag",
    "compile_tools",
    "fill_draft_tree_bitmasks_batch",
    "fill_next_token_bitmasks",
    "validate_tokens_batch",
]
