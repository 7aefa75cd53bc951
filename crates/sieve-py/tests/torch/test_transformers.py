"""transformers' generate() with sieve.LogitsProcessor: a tiny GPT-2 with random weights,
built from a config (nothing downloaded), under a bounded JSON Schema; every output is
validated with the jsonschema package."""

import json

import jsonschema
import pytest
import torch
import transformers

import sieve

from conftest import DATA

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"enum": ["Ada", "Alan", "Grace"]},
        "ok": {"type": "boolean"},
        "n": {"type": "integer", "minimum": 0, "maximum": 99},
        "tags": {
            "type": "array",
            "items": {"enum": ["math", "poetry"]},
            "maxItems": 2,
        },
    },
    "required": ["name", "ok", "n", "tags"],
    "additionalProperties": False,
}

# The model's logits are wider than the tokenizer (448 > 423 ids), as many models' are.
MODEL_VOCAB = 448


@pytest.fixture(scope="module")
def hf_tokenizer():
    return transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(DATA / "tokenizer.json"),
        eos_token="<|endoftext|>",
        pad_token="<|pad|>",
    )


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=MODEL_VOCAB,
        n_positions=128,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=1,
    )
    return transformers.GPT2LMHeadModel(config).eval()


def test_from_huggingface_reads_the_same_vocabulary(tok, hf_tokenizer):
    from_hf = sieve.Tokenizer.from_huggingface(hf_tokenizer)
    assert from_hf.vocab_size == tok.vocab_size == len(hf_tokenizer)
    assert from_hf.eos_token_ids == [hf_tokenizer.eos_token_id]
    for i in range(tok.vocab_size):
        assert from_hf.token_bytes(i) == tok.token_bytes(i), i
        if not tok.is_special(i):
            assert hf_tokenizer.decode([i]).encode() == tok.token_bytes(i) or "\ufffd" in (
                hf_tokenizer.decode([i])
            )
    wide = sieve.Tokenizer.from_huggingface(
        hf_tokenizer, vocab_size=MODEL_VOCAB, stop_token_ids=[0, 1]
    )
    assert wide.vocab_size == MODEL_VOCAB and wide.eos_token_ids == [0, 1]


@pytest.mark.parametrize("do_sample", [False, True])
def test_generate_under_a_schema(hf_tokenizer, model, do_sample):
    tok = sieve.Tokenizer.from_huggingface(hf_tokenizer, vocab_size=MODEL_VOCAB)
    compiled = sieve.compile_json_schema(tok, SCHEMA)
    prompts = ["The quick brown fox", "Yes", "He said"]
    inputs = hf_tokenizer(prompts, return_tensors="pt", padding=True)
    torch.manual_seed(1)
    output = model.generate(
        **inputs,
        logits_processor=[sieve.LogitsProcessor(compiled)],
        max_new_tokens=100,
        do_sample=do_sample,
        pad_token_id=1,
    )
    generated = output[:, inputs["input_ids"].shape[1]:]
    for row in generated.tolist():
        assert 0 in row, f"no EOS within 100 tokens: {row}"
        text = hf_tokenizer.decode(row[: row.index(0)])
        jsonschema.validate(json.loads(text), SCHEMA)


def test_the_processor_restarts_for_a_new_generate_call(hf_tokenizer, model):
    tok = sieve.Tokenizer.from_huggingface(hf_tokenizer, vocab_size=MODEL_VOCAB)
    processor = sieve.LogitsProcessor(sieve.compile_regex(tok, "(yes|no)!"))
    for prompt in ["Yes", "The quick"]:
        inputs = hf_tokenizer([prompt], return_tensors="pt")
        output = model.generate(
            **inputs, logits_processor=[processor], max_new_tokens=10, do_sample=True,
            pad_token_id=1,
        )
        row = output[0, inputs["input_ids"].shape[1]:].tolist()
        assert hf_tokenizer.decode(row[: row.index(0)]) in ("yes!", "no!")


def test_generate_under_an_unbounded_schema_with_a_token_budget(hf_tokenizer, model):
    """Free strings and arrays: only the budget makes every row end with EOS in time."""
    schema = {
        "type": "object",
        "properties": {"note": {"type": "string"}, "xs": {"type": "array"}},
        "required": ["note", "xs"],
    }
    tok = sieve.Tokenizer.from_huggingface(hf_tokenizer, vocab_size=MODEL_VOCAB)
    processor = sieve.LogitsProcessor(sieve.compile_json_schema(tok, schema), max_tokens=40)
    inputs = hf_tokenizer(["He said", "Yes", "The", "0123"], return_tensors="pt", padding=True)
    torch.manual_seed(2)
    output = model.generate(
        **inputs, logits_processor=[processor], max_new_tokens=40, do_sample=True,
        pad_token_id=1,
    )
    for row in output[:, inputs["input_ids"].shape[1]:].tolist():
        assert 0 in row, f"no EOS within the budget: {row}"
        jsonschema.validate(json.loads(hf_tokenizer.decode(row[: row.index(0)])), schema)
