"""Generated programs that `check` accepts compile, and their compiled functions agree with the evaluator: machine
models built by every transformation on multi-node machines (2x4, 3x5, 4x8), their sizes, processors and processor
sets, integer and tuple arithmetic, and mapping functions at every launch point (benchmarks/dsl_programs.py; the
larger run is `python benchmarks/fuzz_dsl.py --programs N`)."""

from __future__ import annotations

import difflib

import pytest

from mapperopt.benchmarks.dsl_programs import accepted_programs, differential

PROGRAMS_PER_MACHINE = 20


@pytest.mark.parametrize("spec,seed", [("2x4", 1), ("3x5", 2), ("4x8x2", 3)])
def test_generated_programs_agree_with_the_evaluator(spec, seed, tmp_path):
    texts = accepted_programs(seed, PROGRAMS_PER_MACHINE, spec)
    results = differential(texts, spec, tmp_path, cache=True)  # compiled once per change of the compiler's code
    assert sum(compiled.count("@@map") for _, compiled, _ in results) >= 5 * len(texts)
    for text, compiled, expected in results:
        assert compiled == expected, text + "\n" + "\n".join(
            difflib.unified_diff(expected.splitlines(), compiled.splitlines(), "evaluator", "compiled", lineterm=""))


def test_a_merge_with_the_wrong_dimension_order_is_caught(tmp_path, monkeypatch):
    import re

    from mapperopt.benchmarks import dsl_programs

    # Programs whose first transformation is a merge of two different dimensions.
    texts = [t for t in accepted_programs(11, 80, "2x4") if re.search(r"Machine\(GPU\)\.merge\((\d), (?!\1)", t)][:3]
    assert texts
    real = dsl_programs.generate

    def swapped(program):  # merge(a, b) compiled as merge(b, a)
        return re.sub(r"(Method::MERGE, \{machine\(cx, GPU, Site\{[^}]*\}\)), (Value::integer\(\d+LL\)), "
                      r"(Value::integer\(\d+LL\))\}", r"\1, \3, \2}", real(program))

    monkeypatch.setattr(dsl_programs, "generate", swapped)
    results = differential(texts, "2x4", tmp_path, jobs=1, cache=True)
    assert any(compiled != expected for _, compiled, expected in results)
