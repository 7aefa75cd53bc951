#!/usr/bin/env python3
"""sieve beside XGrammar and llguidance, each through its Python package, on the same JSON
Schema workloads, the same tokenizer and the same token sequences; prints one table.

    python benches/python/side_by_side.py [--shared ../shared] [--tokenizer qwen3]
        [--workloads schema_flat_object,...] [--repeats 3] [--batch 1,16,64,256,1024]

Needs `sieve` (pip install crates/sieve-py), `xgrammar`, `llguidance`, `transformers`,
`torch` and `numpy`. Workloads are `<shared>/bench/workloads/schema_*` (schema.json and
samples.jsonl); the tokenizer is a tokenizer.json from `<shared>/tokenizers`, loaded once as a
transformers tokenizer and handed to every engine through its own from-Hugging-Face loader.

Per engine and workload:
- compile: JSON Schema text to a compiled grammar, median of --compile-repeats runs, each on
  a fresh compiler (XGrammar: a new GrammarCompiler without cache; llguidance: the
  LLMatcher constructor, which compiles; sieve: compile_json_schema against the Tokenizer
  with fresh caches, Tokenizer.with_fresh_caches(), so no run reuses the rule automata of
  the one before; the walks then run on that grammar, so the first walk is cold);
- mask p50/p99: one fill_next_token_bitmask call (Python call included), over every step of
  --repeats walks through every sample, the first (cold) walk included;
- batch: one batched fill of N matchers at different points of the samples, with the
  engine's threads (sieve: rayon from 16 matchers on; XGrammar: BatchGrammarMatcher;
  llguidance: LLExecutor), median of --batch-repeats, in µs per batch.
A walk whose token an engine refuses counts in `fail` (the engines' JSON dialects differ
slightly: whitespace, escapes); masks are not compared here.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import time
from typing import Any, Callable, Dict, List

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Sieve:
    name = "sieve"

    def __init__(self, hf, vocab_size: int) -> None:
        import sieve

        self.sieve = sieve
        self.tok = sieve.Tokenizer.from_huggingface(hf, vocab_size=vocab_size)

    def compile(self, schema: str):
        return self.sieve.compile_json_schema(self.tok.with_fresh_caches(), schema)

    def matcher(self, compiled):
        return self.sieve.Matcher(compiled)

    def bitmask(self, rows: int, vocab_size: int):
        return self.sieve.allocate_token_bitmask(rows, vocab_size)

    def fill(self, matcher, bitmask) -> None:
        matcher.fill_next_token_bitmask(bitmask)

    def accept(self, matcher, token: int) -> bool:
        return matcher.accept_token(token)

    def batch(self, matchers: List[Any], bitmask) -> Callable[[], None]:
        return lambda: self.sieve.fill_next_token_bitmasks(matchers, bitmask)


class XGrammar:
    name = "xgrammar"

    def __init__(self, hf, vocab_size: int) -> None:
        import xgrammar

        self.xgr = xgrammar
        self.info = xgrammar.TokenizerInfo.from_huggingface(hf, vocab_size=vocab_size)
        self.batcher = xgrammar.BatchGrammarMatcher(max_threads=os.cpu_count() or 1)

    def compile(self, schema: str):
        compiler = self.xgr.GrammarCompiler(self.info, cache_enabled=False)
        return compiler.compile_json_schema(
            schema, any_whitespace=False, separators=(",", ":"), strict_mode=False
        )

    def matcher(self, compiled):
        return self.xgr.GrammarMatcher(compiled)

    def bitmask(self, rows: int, vocab_size: int):
        return self.xgr.allocate_token_bitmask(rows, vocab_size)

    def fill(self, matcher, bitmask) -> None:
        matcher.fill_next_token_bitmask(bitmask)

    def accept(self, matcher, token: int) -> bool:
        return matcher.accept_token(token)

    def batch(self, matchers: List[Any], bitmask) -> Callable[[], None]:
        return lambda: self.batcher.batch_fill_next_token_bitmask(matchers, bitmask)


class LLGuidance:
    name = "llguidance"

    def __init__(self, hf, vocab_size: int) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.numpy

        self.llg = llguidance
        self.np = llguidance.numpy
        self.tok = llguidance.hf.from_tokenizer(hf, n_vocab=vocab_size)
        self.executor = llguidance.LLExecutor(num_threads=os.cpu_count() or 1)

    def compile(self, schema: str):
        grammar = self.llg.LLMatcher.grammar_from_json_schema(
            schema, defaults={"whitespace_flexible": False}
        )
        matcher = self.llg.LLMatcher(self.tok, grammar, log_level=0)
        if matcher.is_error():
            raise ValueError(matcher.get_error())
        return grammar

    def matcher(self, compiled):
        return self.llg.LLMatcher(self.tok, compiled, log_level=0)

    def bitmask(self, rows: int, vocab_size: int):
        return self.np.allocate_token_bitmask(rows, vocab_size)

    def fill(self, matcher, bitmask) -> None:
        self.np.fill_next_token_bitmask(matcher, bitmask, 0)

    def accept(self, matcher, token: int) -> bool:
        return matcher.consume_token(token) and not matcher.is_error()

    def batch(self, matchers: List[Any], bitmask) -> Callable[[], None]:
        rows = [(m, i) for i, m in enumerate(matchers)]
        return lambda: self.np.fill_next_token_bitmask_par(self.executor, rows, bitmask)


ENGINES = {"sieve": Sieve, "xgrammar": XGrammar, "llguidance": LLGuidance}


def run_workload(engine, schema: str, samples: List[List[int]], eos: int, vocab_size: int,
                 args) -> Dict[str, Any]:
    compile_ms = []
    for _ in range(args.compile_repeats):
        start = time.perf_counter()
        compiled = engine.compile(schema)
        compile_ms.append((time.perf_counter() - start) * 1e3)
    masks_us, fails = [], 0
    bitmask = engine.bitmask(1, vocab_size)
    for _ in range(args.repeats):
        for sample in samples:
            matcher = engine.matcher(compiled)
            for token in sample + [eos]:
                start = time.perf_counter()
                engine.fill(matcher, bitmask)
                masks_us.append((time.perf_counter() - start) * 1e6)
                if not engine.accept(matcher, token):
                    fails += 1
                    break
    batch_us = {}
    for size in args.batch:
        matchers = []
        for i in range(size):
            sample = samples[i % len(samples)]
            matcher = engine.matcher(compiled)
            for token in sample[: (i * 7) % max(1, len(sample))]:
                if not engine.accept(matcher, token):
                    break
            matchers.append(matcher)
        rows = engine.bitmask(size, vocab_size)
        fill = engine.batch(matchers, rows)
        fill()
        times = []
        for _ in range(args.batch_repeats):
            start = time.perf_counter()
            fill()
            times.append((time.perf_counter() - start) * 1e6)
        batch_us[size] = statistics.median(times)
    return {
        "compile_ms": statistics.median(compile_ms),
        "mask_p50_us": percentile(masks_us, 0.5),
        "mask_p99_us": percentile(masks_us, 0.99),
        "steps": len(masks_us),
        "fail": fails,
        "batch_us": batch_us,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=pathlib.Path, default=REPO.parent / "shared")
    parser.add_argument("--tokenizer", default="qwen3", help="a folder of <shared>/tokenizers")
    parser.add_argument("--workloads", default="", help="comma-separated; default all schema_*")
    parser.add_argument("--engines", default="sieve,xgrammar,llguidance")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compile-repeats", type=int, default=3)
    parser.add_argument("--batch", default="1,16,64,256,1024")
    parser.add_argument("--batch-repeats", type=int, default=5)
    args = parser.parse_args()
    args.batch = [int(n) for n in args.batch.split(",") if n]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import transformers

    tok_dir = args.shared / "tokenizers" / args.tokenizer
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tok_dir / "tokenizer.json"))
    config = json.loads((tok_dir / "tokenizer_config.json").read_text())
    eos_name = config.get("eos_token")
    eos_name = eos_name["content"] if isinstance(eos_name, dict) else eos_name
    hf.eos_token = eos_name
    eos = hf.convert_tokens_to_ids(eos_name)
    vocab_size = len(hf)

    root = args.shared / "bench" / "workloads"
    names = [n for n in args.workloads.split(",") if n] or sorted(
        p.name for p in root.glob("schema_*")
    )
    workloads = []
    for name in names:
        schema = (root / name / "schema.json").read_text()
        samples = []
        for line in (root / name / "samples.jsonl").read_text().splitlines():
            text = json.loads(line)["text"]
            ids = hf.encode(text, add_special_tokens=False)
            if hf.decode(ids) == text:
                samples.append(ids)
        workloads.append((name, schema, samples))

    engines = []
    for name in args.engines.split(","):
        start = time.perf_counter()
        engines.append(ENGINES[name](hf, vocab_size))
        print(f"{name}: tokenizer ready in {(time.perf_counter() - start) * 1e3:.0f} ms")

    header = ["workload", "engine", "compile ms", "mask p50 µs", "mask p99 µs", "steps", "fail"]
    header += [f"batch {n} µs" for n in args.batch]
    rows = []
    for name, schema, samples in workloads:
        for engine in engines:
            try:
                r = run_workload(engine, schema, samples, eos, vocab_size, args)
            except Exception as error:  # an engine that cannot compile the schema
                rows.append([name, engine.name, f"error: {str(error)[:40]}"])
                continue
            rows.append(
                [name, engine.name, f"{r['compile_ms']:.2f}", f"{r['mask_p50_us']:.1f}",
                 f"{r['mask_p99_us']:.1f}", str(r["steps"]), str(r["fail"])]
                + [f"{r['batch_us'][n]:.0f}" for n in args.batch]
            )
    print(f"\ntokenizer {args.tokenizer} ({vocab_size} ids), {os.cpu_count()} cores, "
          f"compile median of {args.compile_repeats}, masks over {args.repeats} walks, "
          f"batch median of {args.batch_repeats}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
