"""Makes tokenizer.json, the suites' small byte-level BPE tokenizer (512 ids).

Run with any Python that has the ``tokenizers`` package (transformers brings it):
``python make_tokenizer.py``. The training text is JSON and prose, so merges such as
``{"``, ``":`` and `` the`` exist and tokens cross JSON's token boundaries, as real
tokenizers' do.
"""

import json
import pathlib

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HERE = pathlib.Path(__file__).parent

TEXT = [
    json.dumps({"name": "Ada Lovelace", "age": 36, "tags": ["math", "poetry"], "ok": True}),
    json.dumps({"id": 12345, "values": [1.5, -2, 3e10], "nested": {"a": None, "b": False}}),
    '{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}',
    "The quick brown fox jumps over the lazy dog. Yes, no, maybe: 0123456789.",
    "He said \"hello\\nworld\" and then \\u00e9t\\u00e9 \u00e9t\u00e9 \u2603 \U0001f600",
] * 20


def main() -> None:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=["<|endoftext|>", "<|pad|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(TEXT, trainer)
    tokenizer.save(str(HERE / "tokenizer.json"))


if __name__ == "__main__":
    main()
