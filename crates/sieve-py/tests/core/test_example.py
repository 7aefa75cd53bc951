"""The example of docs/python.md (proposed for the README), run as written there but for
the tokenizer's path."""

import json

import jsonschema

from conftest import DATA


def test_the_documented_example_runs():
    import numpy as np
    import sieve

    tok = sieve.Tokenizer.from_file(DATA / "tokenizer.json")
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    matcher = sieve.Matcher(sieve.compile_json_schema(tok, schema), max_tokens=24)
    bitmask = sieve.allocate_token_bitmask(1, tok.vocab_size)
    text = b""
    while not matcher.is_terminated():
        matcher.fill_next_token_bitmask(bitmask)
        logits = np.random.randn(tok.vocab_size).astype(np.float32)  # a model's logits
        sieve.apply_token_bitmask_inplace(logits, bitmask[0])
        token = int(logits.argmax())
        assert matcher.accept_token(token)
        text += tok.token_bytes(token)
    print(text.decode())  # valid JSON for the schema, e.g. {"ok":false}
    jsonschema.validate(json.loads(text), schema)
