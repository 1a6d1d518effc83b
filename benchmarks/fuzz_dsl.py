"""Fuzzing of the DSL front end: generated and mutated inputs through parse, check (with and without a machine),
fmt and the evaluator; and, with --programs, the differential test of the compiler on generated programs.

    python benchmarks/fuzz_dsl.py [--inputs 1000000] [--seed 0] [--jobs 2] [--state fuzz.jsonl] [--chunks A:B]
                                  [--programs 0] [--json]

Each input is a generated program (benchmarks/dsl_programs.py), a mutation of one (a span deleted, repeated or moved,
a token inserted), or a mutation of an example mapper. Every input must give a result or one of mapperopt's own
errors (no other exception), within 2 s of CPU time (CPU, not wall time: on a shared machine the wall time measures
the other work), and `fmt` must give a text that parses to the same program with the same comments in the same
places, and formats to itself. Inputs come in chunks of 1,000, chunk k drawn from its own generator (seed, k), so
`--jobs` processes share the work and a run with `--state FILE` resumes after the chunks FILE already holds (one JSON
line per finished chunk). Prints the counts (inputs, parse errors by code, checked programs, the slowest input with
its chunk, its index there and its start, failures); the exit status is 1 when any input failed.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import contextlib
import json
import multiprocessing
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

from mapperopt.benchmarks.dsl_programs import accepted_programs, differential, mutate, program
from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl import DslSyntaxError, check, format_program, parse
from mapperopt.dsl import ast as A
from mapperopt.dsl.evaluator import Evaluator
from mapperopt.errors import MapperoptError

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 2.0
MACHINE = parse_machine_spec("2x4")


def seeds() -> list[str]:
    """Example mappers (configs and the expert mappers of the tests) as starting points for mutations."""
    paths = [*sorted((ROOT / "configs").glob("*.dsl")), *sorted((ROOT / "tests" / "dsl" / "examples").glob("*.dsl"))]
    return [p.read_text() for p in paths]


def comment_places(program) -> list[tuple[str, int, bool]]:
    """Each comment with its place: the number of statements (function bodies included) before it and whether it
    ends the last line of the one before it (a function's: its header's, up to '{'). A comment on an earlier line of
    a statement counts as before that statement (where fmt joins the statement into one line, it goes just before)."""
    starts = []  # (start, last line) of each statement
    for s in program.statements:
        starts.append(((s.loc.line, s.loc.col), s.brace_line if isinstance(s, A.FuncDef) else s.loc.end_line))
        for b in (*getattr(s, "body", ()), *((s.ret,) if hasattr(s, "ret") else ())):
            starts.append(((b.loc.line, b.loc.col), b.loc.end_line))
    starts.sort()
    out = []
    for c in program.comments:
        n = bisect.bisect_left(starts, ((c.loc.line, c.loc.col),))
        last = starts[n - 1][1] if n else 0
        out.append((c.text, n - (c.loc.line < last), c.loc.line == last))
    return out


def one(text: str) -> str:
    """Run one input through the front end; returns an outcome label. Raises AssertionError for a broken invariant
    and lets any non-project exception through."""
    try:
        program = parse(text, "fuzz.dsl")
    except DslSyntaxError as err:
        str(err)
        return f"syntax {err.code}"
    formatted = format_program(program)
    again = parse(formatted, "fuzz.dsl")
    assert again == program, "fmt changed the program"
    assert comment_places(again) == comment_places(program), "fmt moved a comment"
    assert format_program(again) == formatted, "fmt is not idempotent"
    diags = check(program)
    if any(d.is_error for d in diags):
        return "check error"
    diags = check(program, None, MACHINE)
    if any(d.is_error for d in diags):
        return "check error (machine)"
    try:
        Evaluator(program, MACHINE, budget=100_000)
    except MapperoptError:
        return "evaluator error"
    return "ok"


def inputs(rng: random.Random, examples: list[str]):
    while True:
        r = rng.random()
        if r < 0.2:
            yield program(rng, rng.choice(("2x4", "1x4", "3x5")))
        else:
            text = rng.choice(examples) if r < 0.6 else program(rng)
            for _ in range(rng.choice((1, 1, 2, 3, 8))):
                text = mutate(rng, text)
            yield text


CHUNK = 1_000  # inputs per chunk: the unit of resuming (a minute of CPU time)


def fuzz(count: int, seed: int, chunk: int = 0) -> dict:
    """Run `count` inputs of chunk `chunk` (generator seeded by (seed, chunk)); returns its counts."""
    rng = random.Random(f"{seed}/{chunk}")
    outcomes: collections.Counter = collections.Counter()
    failures: list[dict] = []
    slowest = (0.0, "", 0)  # CPU time, start of the input, its index in the chunk
    examples = seeds()
    for k, text in enumerate(inputs(rng, examples)):
        if k == count:
            break
        start = time.process_time()
        try:
            outcomes[one(text)] += 1
        except (AssertionError, Exception) as exc:  # noqa: BLE001 - counting every non-project failure is the point
            outcomes["FAILED"] += 1
            if len(failures) < 20:
                failures.append({"input": text[:2000], "error": traceback.format_exception_only(exc)[-1].strip()})
        took = time.process_time() - start
        if took > slowest[0]:
            slowest = (took, text[:300], k)
        if took > LIMIT_S:
            outcomes["OVER 2 s"] += 1
            if len(failures) < 20:
                failures.append({"input": text[:2000], "error": f"took {took:.2f} s of CPU time"})
    return {"chunk": chunk, "inputs": count, "seed": seed, "outcomes": dict(outcomes.most_common()),
            "slowest_s": round(slowest[0], 3), "slowest_input": slowest[1], "slowest_index": slowest[2],
            "failures": failures}


def _chunk(job: tuple[int, int, int]) -> dict:
    count, seed, chunk = job
    return fuzz(count, seed, chunk)


def fuzz_chunks(count: int, seed: int, jobs: int, state: Path | None, only: range | None = None) -> dict:
    """All `count` inputs in chunks of CHUNK over `jobs` processes, skipping the chunks `state` already holds and
    appending each finished one to it; returns the counts summed over the chunks done. With `only`, this call runs
    only the chunks whose numbers are in that range (so that several machines share one run)."""
    sizes = {k: min(CHUNK, count - k * CHUNK) for k in range(-(-count // CHUNK))}
    done: dict[int, dict] = {}
    if state and state.exists():
        for line in state.read_text().splitlines():
            record = json.loads(line)
            if record["seed"] == seed and sizes.get(record["chunk"]) == record["inputs"]:
                done[record["chunk"]] = record
    todo = [(sizes[k], seed, k) for k in sizes if k not in done and (only is None or k in only)]
    with multiprocessing.Pool(jobs) if jobs > 1 else contextlib.nullcontext() as pool:
        results = pool.imap_unordered(_chunk, todo) if pool else map(_chunk, todo)
        for record in results:
            done[record["chunk"]] = record
            if state:
                with state.open("a") as f:
                    f.write(json.dumps(record) + "\n")
    outcomes: collections.Counter = collections.Counter()
    for record in done.values():
        outcomes.update(record["outcomes"])
    slowest = max(done.values(), key=lambda r: r["slowest_s"])
    return {"inputs": sum(r["inputs"] for r in done.values()), "seed": seed, "outcomes": dict(outcomes.most_common()),
            "slowest_s": slowest["slowest_s"], "slowest_input": slowest["slowest_input"],
            # where to find it again: the chunk's generator gives it at this index (absent in older state files)
            "slowest_chunk": slowest["chunk"], "slowest_index": slowest.get("slowest_index"),
            "failures": [f for k in sorted(done) for f in done[k]["failures"]][:20]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=1_000_000, help="number of fuzzed inputs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="processes sharing the chunks")
    parser.add_argument("--state", type=Path, help="JSON-lines file of finished chunks: a rerun resumes after them")
    parser.add_argument("--chunks", metavar="A:B", help="run only chunks A to B-1 (chunks of 1,000 inputs), so that "
                        "several machines share one run; their state files concatenated give the whole run")
    parser.add_argument("--programs", type=int, default=0,
                        help="also compile this many generated programs per machine (2x4, 3x5, 4x8x2) and compare "
                             "their compiled functions with the evaluator")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    only = range(*map(int, args.chunks.split(":"))) if args.chunks else None
    result = fuzz_chunks(args.inputs, args.seed, args.jobs, args.state, only)
    result["fuzz_wall_s"] = round(time.perf_counter() - start, 1)
    if args.programs:
        mismatches, maps = 0, 0
        for k, spec in enumerate(("2x4", "3x5", "4x8x2")):
            with tempfile.TemporaryDirectory() as tmp:
                for _, compiled, expected in differential(accepted_programs(args.seed + k, args.programs, spec), spec,
                                                          Path(tmp)):
                    mismatches += compiled != expected
                    maps += compiled.count("@@map")
        result["differential"] = {"programs": 3 * args.programs, "launch_points": maps, "mismatches": mismatches}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"inputs: {result['inputs']} (seed {args.seed}) in {result['fuzz_wall_s']} s")
        for label, n in result["outcomes"].items():
            print(f"  {label}: {n}")
        chunk, index = result["slowest_chunk"], result["slowest_index"]
        replay = (f"python benchmarks/fuzz_dsl.py --seed {args.seed} --inputs {args.inputs} --chunks "
                  f"{chunk}:{chunk + 1}")
        # CPU time, yet it varies between runs (a cold cache, another process's load): the input is what replays
        print(f"slowest input: {result['slowest_s']} s of CPU time (chunk {chunk}, "
              + (f"input {index} of it" if index is not None else "an input of it") + f"; to replay: {replay})")
        print(f"  its start: {result['slowest_input'][:200]!r}")
        for f in result["failures"]:
            print(f"FAILED: {f['error']}\n  input: {f['input'][:300]!r}")
        if "differential" in result:
            d = result["differential"]
            print(f"differential: {d['programs']} programs, {d['launch_points']} launch points, "
                  f"{d['mismatches']} mismatches")
    bad = result["outcomes"].get("FAILED", 0) + result["outcomes"].get("OVER 2 s", 0)
    return 1 if bad or result.get("differential", {}).get("mismatches") else 0


if __name__ == "__main__":
    sys.exit(main())
