"""How often AutoGuide explains a failure specifically: runs the deliberately bad mappers of
`tests/autoguide/bad_mappers/<bench>/*.dsl` and prints, per benchmark, the share of failures that got a specific
rule (not the generic feedback and not a catalog fallback such as "an assertion failed").

    .venv/bin/python benchmarks/autoguide_coverage.py [BENCH ...] [--jobs N] [--json]

Each bad mapper is a DSL file whose leading comments say what it does wrong and how to run it:

    # One line saying what is wrong with this mapper.
    # expect: stencil-stride-assertion        (the rule AutoGuide should pick)
    # args: -nx 4004 -ny 4004                 (optional: extra application arguments)
    # timeout_s: 20                           (optional: per-execution timeout)
    # size: ci                                (optional, default ci)

Exit status 0 when every benchmark reaches `--min-share` (default 0.9), else 1.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BAD_MAPPERS = REPO / "tests" / "autoguide" / "bad_mappers"
DIRECTIVES = ("expect", "args", "timeout_s", "size")


@dataclass(frozen=True)
class BadMapper:
    """One deliberately bad mapper.

    Attributes:
        path: the DSL file.
        bench: the benchmark it is for (its folder's name).
        about: the first comment line (what is wrong).
        expect: the rule id AutoGuide should match.
        args: extra application arguments.
        timeout_s: per-execution timeout, or None for the size's.
        size: the benchmark size.
    """

    path: Path
    bench: str
    about: str
    expect: str
    args: tuple[str, ...] = ()
    timeout_s: float | None = None
    size: str = "ci"

    @property
    def name(self) -> str:
        return f"{self.bench}-{self.path.stem}"

    def command(self) -> str:
        """A shell command that reproduces this run through the public CLI."""
        parts = ["mapperopt", "run", self.bench, "--mapper", str(self.path.relative_to(REPO)), "--size", self.size]
        if self.timeout_s is not None:
            parts += ["--timeout", f"{self.timeout_s:g}"]
        if self.args:
            parts += ["--", *self.args]
        return shlex.join(parts)


def read_bad_mapper(path: Path) -> BadMapper:
    """Parse the leading comment directives of a bad-mapper file.

    Raises:
        ValueError: no `# expect:` line, or an unknown directive.
    """
    about, fields = "", {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        text = line[1:].strip()
        key, sep, value = text.partition(":")
        if sep and key.strip() in DIRECTIVES:
            fields[key.strip()] = value.strip()
        elif sep and " " not in key.strip() and key.strip().isidentifier():
            raise ValueError(f"{path}: unknown directive {key.strip()!r}; directives are {DIRECTIVES}")
        elif not about:
            about = text
    if "expect" not in fields:
        raise ValueError(f"{path}: missing '# expect: <rule id>'")
    return BadMapper(path=path, bench=path.parent.name, about=about, expect=fields["expect"],
                     args=tuple(shlex.split(fields.get("args", ""))),
                     timeout_s=float(fields["timeout_s"]) if "timeout_s" in fields else None,
                     size=fields.get("size", "ci"))


def bad_mappers(bench: str) -> list[BadMapper]:
    """The bad mappers of `bench`, sorted by file name."""
    return [read_bad_mapper(p) for p in sorted((BAD_MAPPERS / bench).glob("*.dsl"))]


def run_bad_mapper(bad: BadMapper, out_dir: Path):
    """Run `bad` through the harness; returns its `RunResult` (feedback.json is written by the harness)."""
    from mapperopt.benchmarks.harness import run_benchmark

    return run_benchmark(bad.bench, bad.path, size=bad.size, timeout_s=bad.timeout_s, extra_args=bad.args,
                         out_dir=out_dir / bad.name)


def evaluate(bench: str, jobs: int = 1) -> dict:
    """Run every bad mapper of `bench` and tally AutoGuide's answers.

    Returns:
        {"bench", "mappers", "failures", "specific", "share", "rows": [{"name", "stage", "rule", "specific",
        "expected", "about"}]}; `share` is specific / failures (None without failures).
    """
    from mapperopt.autoguide import explain, load_catalog

    catalog = load_catalog()
    todo = bad_mappers(bench)
    with tempfile.TemporaryDirectory(prefix="autoguide-coverage-") as tmp, ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda b: run_bad_mapper(b, Path(tmp)), todo))
    rows = []
    for bad, result in zip(todo, results):
        fb = explain(result) if not result.ok else None
        rule = catalog.rule(fb.rule) if fb else None
        rows.append({"name": bad.name, "stage": result.stage or "ok", "rule": fb.rule if fb else None,
                     "specific": bool(rule and rule.specific), "expected": bad.expect, "about": bad.about})
    failures = [r for r in rows if r["stage"] != "ok"]
    specific = [r for r in failures if r["specific"]]
    return {"bench": bench, "mappers": len(rows), "failures": len(failures), "specific": len(specific),
            "share": len(specific) / len(failures) if failures else None, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benches", nargs="*", default=None, help="benchmarks (default: every folder of bad mappers)")
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel")
    parser.add_argument("--min-share", type=float, default=0.9)
    parser.add_argument("--json", action="store_true", help="print the tallies as JSON")
    args = parser.parse_args(argv)
    benches = args.benches or sorted(p.name for p in BAD_MAPPERS.iterdir() if p.is_dir())
    reports = [evaluate(b, args.jobs) for b in benches]
    if args.json:
        print(json.dumps(reports, indent=2))
    else:
        for rep in reports:
            print(f"== {rep['bench']}: {rep['mappers']} bad mappers, {rep['failures']} failed")
            for r in rep["rows"]:
                mark = "ok " if r["rule"] == r["expected"] else "!! "
                print(f"  {mark}{r['name']:40} {r['stage']:8} {r['rule'] or '-':36} "
                      f"{'specific' if r['specific'] else 'GENERIC'}"
                      + ("" if r["rule"] == r["expected"] else f"  (expected {r['expected']})"))
            share = "n/a" if rep["share"] is None else f"{100 * rep['share']:.0f}%"
            print(f"  specific explanation for {rep['specific']}/{rep['failures']} failures: {share}")
    ok = all(rep["share"] is not None and rep["share"] >= args.min_share for rep in reports)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
