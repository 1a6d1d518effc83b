"""Bounded fuzzing of the front end in CI (the million-input run is `python benchmarks/fuzz_dsl.py`): generated
programs, their mutations and token soup give a result or a mapperopt error, never another exception, and `fmt`
keeps the program and every comment in place (benchmarks/fuzz_dsl.py's `one` checks each input)."""

from __future__ import annotations

import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mapperopt.benchmarks.dsl_programs import _TOKENS, mutate, program
from mapperopt.benchmarks.fuzz_dsl import one, seeds
from mapperopt.dsl import format_program, parse

FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
EXAMPLES = seeds()
WORDS = _TOKENS + ("x", "m", "f", "Machine(GPU)", "=", "(", ")", ".merge(0, 1)", "Region * * GPU FBMEM;", " ")


@settings(FUZZ, max_examples=50)
@given(st.integers(0, 2**32), st.integers(1, 6))
def test_mutated_programs(seed, edits):
    rng = random.Random(seed)
    for text in (program(rng), rng.choice(EXAMPLES)):
        outcomes = [one(text)]
        for _ in range(edits):
            text = mutate(rng, text)
            outcomes.append(one(text))
        assert all(outcomes)


@FUZZ
@given(st.lists(st.sampled_from(WORDS), max_size=60))
def test_token_soup(words):
    assert one(" ".join(words))
    assert one("".join(words))


@FUZZ
@given(st.text(max_size=80))
def test_any_text(text):
    assert one(text)


@settings(FUZZ, max_examples=100)
@given(st.integers(0, 2**32))
def test_statements_over_several_lines_with_comments(seed):
    """Generated programs with line breaks at random spaces and comments at the end of random lines (of a statement
    written over several lines: its last line or an earlier one): fmt keeps each comment in place."""
    rng = random.Random(seed)
    ends = (" ", " ", " ", "\n", "  # c\n")
    pieces = re.split(r'("[^"\n]*"|(?:#|//)[^\n]*)', program(rng))  # code at even indices, strings and comments odd
    for k in range(0, len(pieces), 2):
        pieces[k] = re.sub(r"[ \n]", lambda m: rng.choice(ends if m.group() == " " else ends[3:]), pieces[k])
    assert not one("".join(pieces)).startswith("syntax")


@settings(FUZZ, max_examples=150)
@given(st.integers(0, 2**32), st.sampled_from((False, True)))
def test_comments_before_closing_brackets_and_semicolons(seed, example):
    """Generated programs and example mappers with line breaks and comments just before `)`, `]` and `;`, where
    parentheses fmt drops often close: fmt keeps the program and each comment in place, is idempotent, and leaves
    no `;` alone on a line."""
    rng = random.Random(seed)
    before = ("", "", "", "\n", "  # c\n", " # d\n  ")
    text = rng.choice(EXAMPLES) if example else program(rng)
    pieces = re.split(r'("[^"\n]*"|(?:#|//)[^\n]*)', text)  # code at even indices, strings and comments odd
    for k in range(0, len(pieces), 2):
        pieces[k] = re.sub(r"[)\];]", lambda m: rng.choice(before) + m.group(), pieces[k])
    text = "".join(pieces)
    assert not one(text).startswith("syntax"), text
    out = format_program(parse(text, "fuzz.dsl"))
    lone = [line for line in out.splitlines() if re.fullmatch(r"\s*;\s*(#.*|//.*)?", line)]
    assert not lone, out


def test_the_fuzz_runs_slowest_input_is_named_and_replays(tmp_path):
    """`fuzz_dsl.py` printed only the slowest input's CPU time: which input it was could not be told nor replayed
    (reports/fuzz-dsl.md describes one). It names the chunk and the input's index in it, and prints its start; the
    chunk's generator gives that input again."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from mapperopt.benchmarks.fuzz_dsl import inputs

    root = Path(__file__).resolve().parents[2]
    args = [sys.executable, "benchmarks/fuzz_dsl.py", "--inputs", "2040", "--chunks", "2:3", "--seed", "5"]
    done = subprocess.run([*args, "--json"], cwd=root, capture_output=True, text=True, timeout=300)
    result = json.loads(done.stdout)
    assert result["inputs"] == 40 and result["slowest_chunk"] == 2, result  # chunk 2: inputs 2000-2039
    rng = random.Random(f"5/{result['slowest_chunk']}")
    replayed = next(text for k, text in enumerate(inputs(rng, EXAMPLES)) if k == result["slowest_index"])
    assert replayed.startswith(result["slowest_input"]) and result["slowest_input"], result
    text = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=300).stdout
    said = re.search(r"slowest input: [\d.]+ s of CPU time \(chunk 2, input (\d+) of it; to replay: (.*)\)\n", text)
    assert said and said[2] == "python benchmarks/fuzz_dsl.py --seed 5 --inputs 2040 --chunks 2:3", text
    replayed = next(t for k, t in enumerate(inputs(random.Random("5/2"), EXAMPLES)) if k == int(said[1]))
    assert f"\n  its start: {replayed[:200]!r}\n" in text, text
