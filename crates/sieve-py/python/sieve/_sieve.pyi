"""Type stubs of ``sieve._sieve``, the native half of the ``sieve`` package."""

from os import PathLike
from typing import Any, List, Optional, Sequence, Union, final

__all__ = [
    "CompileError",
    "CompiledGrammar",
    "DraftTree",
    "LimitError",
    "Matcher",
    "Tokenizer",
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

class CompileError(ValueError):
    """A grammar, regex or JSON Schema that cannot be compiled; the message locates the
    fault."""

class LimitError(RuntimeError):
    """The recogniser reached one of its configured limits; the matcher is unchanged."""

@final
class Tokenizer:
    """A tokenizer's vocabulary prepared for masks. Immutable, shareable across threads,
    not picklable."""

    @staticmethod
    def from_file(
        path: Union[str, PathLike],
        *,
        vocab_size: Optional[int] = None,
        stop_token_ids: Optional[Sequence[int]] = None,
    ) -> Tokenizer: ...
    @staticmethod
    def from_huggingface(
        tokenizer: Any,
        *,
        vocab_size: Optional[int] = None,
        stop_token_ids: Optional[Sequence[int]] = None,
    ) -> Tokenizer: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def eos_token_ids(self) -> List[int]: ...
    def token_bytes(self, id: int) -> bytes: ...
    def is_special(self, id: int) -> bool: ...
    def with_fresh_caches(self) -> Tokenizer: ...

@final
class CompiledGrammar:
    """A grammar compiled against a Tokenizer. Immutable, shareable across threads, not
    picklable."""

    @property
    def vocab_size(self) -> int: ...
    @property
    def backend(self) -> str: ...
    @property
    def warnings(self) -> List[str]: ...

def compile_json_schema(
    tokenizer: Tokenizer,
    schema: Union[str, dict, bool],
    *,
    whitespace: str = "compact",
    order: str = "schema",
    escapes: str = "any",
    key_escapes: str = "canonical",
    literal_escapes: str = "canonical",
    lenient: bool = False,
    ahead_of_time: Union[bool, float, None] = None,
    backend: str = "earley",
) -> CompiledGrammar: ...
def compile_grammar(
    tokenizer: Tokenizer,
    grammar: str,
    *,
    root_rule: str = "root",
    ahead_of_time: Union[bool, float, None] = None,
    backend: str = "earley",
) -> CompiledGrammar: ...
def compile_regex(
    tokenizer: Tokenizer,
    pattern: str,
    *,
    ahead_of_time: Union[bool, float, None] = None,
    backend: str = "earley",
) -> CompiledGrammar: ...
def compile_lark(
    tokenizer: Tokenizer,
    grammar: str,
    *,
    ahead_of_time: Union[bool, float, None] = None,
    backend: str = "earley",
) -> CompiledGrammar: ...
def compile_structural_tag(
    tokenizer: Tokenizer,
    structural_tag: Union[str, dict],
    *,
    ahead_of_time: Union[bool, float, None] = None,
    backend: str = "earley",
) -> CompiledGrammar: ...
def compile_tools(
    tokenizer: Tokenizer,
    tools: Union[str, list],
    *,
    format: str,
    tool_choice: Union[str, dict, None] = None,
    parallel_tool_calls: bool = True,
    reasoning: Union[str, bool, None] = None,
    ahead_of_time: Union[bool, float, None] = None,
    backend: str = "earley",
) -> CompiledGrammar: ...

@final
class DraftTree:
    """A tree of draft tokens: node 0 the root (the matcher as it is), every other node a
    draft token following its parent. Immutable."""

    def __new__(cls, draft_tokens: Sequence[int], parents: Sequence[int]) -> DraftTree: ...
    @staticmethod
    def from_links(
        retrieve_next_token: Sequence[int],
        retrieve_next_sibling: Sequence[int],
        draft_tokens: Sequence[int],
    ) -> DraftTree: ...
    @staticmethod
    def chain(draft_tokens: Sequence[int]) -> DraftTree: ...
    def __len__(self) -> int: ...

@final
class Matcher:
    """The output of one request, checked token by token against a compiled grammar."""

    def __new__(cls, compiled: CompiledGrammar, max_tokens: Optional[int] = None) -> Matcher: ...
    @property
    def remaining_tokens(self) -> Optional[int]: ...
    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> None: ...
    def accept_token(self, token_id: int) -> bool: ...
    def accept_string(self, text: Union[str, bytes]) -> bool: ...
    def rollback(self, num_steps: int = 1) -> None: ...
    def reset(self) -> None: ...
    def is_terminated(self) -> bool: ...
    def can_terminate(self) -> bool: ...
    def fork(self) -> Matcher: ...
    def validate_tokens(self, token_ids: Sequence[int]) -> int: ...
    def fill_draft_bitmasks(self, draft_tokens: Sequence[int], bitmask: Any) -> int: ...
    def traverse_draft_tree(
        self,
        retrieve_next_token: Sequence[int],
        retrieve_next_sibling: Sequence[int],
        draft_tokens: Sequence[int],
        bitmask: Any,
    ) -> List[bool]: ...
    def fill_draft_tree_bitmasks(self, tree: DraftTree, bitmask: Any) -> List[bool]: ...
    def find_jump_forward_string(self) -> str: ...

def fill_next_token_bitmasks(
    matchers: Sequence[Matcher], bitmask: Any, indices: Sequence[int] | None = None
) -> None: ...
def fill_draft_tree_bitmasks_batch(
    matchers: Sequence[Matcher], trees: Sequence[DraftTree], bitmask: Any
) -> List[List[bool]]: ...
def validate_tokens_batch(
    matchers: Sequence[Matcher], drafts: Sequence[Sequence[int]]
) -> List[int]: ...
