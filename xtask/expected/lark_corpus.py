"""Writes lark-corpus.tsv: llguidance's verdict on every .lark file under SHARED/data/grammars
(`cargo xtask corpus` requires sieve to compile each one llguidance compiles).

    /work/peers-venv/bin/python xtask/expected/lark_corpus.py ../shared
"""

import glob
import os
import sys

import llguidance as llg

shared = sys.argv[1] if len(sys.argv) > 1 else "../shared"
root = os.path.join(shared, "data", "grammars")
here = os.path.dirname(os.path.abspath(__file__))
rows = []
for path in sorted(glob.glob(os.path.join(root, "**", "*.lark"), recursive=True)):
    err = llg.LLMatcher.validate_grammar(llg.LLMatcher.grammar_from_lark(open(path).read()))
    rows.append((os.path.relpath(path, root), "ok" if not err else "refused"))
with open(os.path.join(here, "lark-corpus.tsv"), "w") as f:
    f.write(f"# llguidance {llg.__version__}: its verdict on each .lark under shared/data/grammars (xtask/expected/lark_corpus.py)\n")
    for path, verdict in rows:
        f.write(f"{path}\t{verdict}\n")
