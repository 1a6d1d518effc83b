"""`mapperopt run` of a mapper that a tuning or a comparison found (its best.dsl, an iteration's mapper.dsl): where
the run measures at other settings than the search measured it (another iteration count, as run's own calibration
gives, other processors), it says so after its result, with the command that measures as the search did."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from mapperopt.cli import main

FAST = ["--min-time", "0.05", "--repeats", "1", "--max-repeats", "2", "--final-rounds", "2"]
ONE = ["--repeats", "1", "--max-repeats", "1", "--no-profile"]  # run: one measured execution, no profile


@pytest.fixture(scope="module")
def tuned(tmp_path_factory) -> Path:
    """A finished tuning of Circuit on 2 CPU processors, 2 iterations at FAST's 0.05 s per execution."""
    runs = tmp_path_factory.mktemp("search") / "runs"
    assert main(["tune", "circuit", "--cpus", "2", "--baseline", "none", "--iters", "2", "--runs-dir", str(runs),
                 *FAST]) == 0
    (folder,) = (runs / "circuit").iterdir()
    return folder


def measured_count(folder: Path, run_dir: str) -> int:
    return json.loads((folder / run_dir / "result.json").read_text())["settings"]["iterations"]


def run(capsys, *args: str) -> tuple[str, dict]:
    """`mapperopt run` with `args` (an --out among them): its output, whitespace folded, and its result.json."""
    assert main(["run", *args]) == 0
    out = " ".join(capsys.readouterr().out.split())
    return out, json.loads((Path(args[args.index("--out") + 1]) / "result.json").read_text())


def run_json(capsys, *args: str) -> dict:
    """`mapperopt run --json` with `args`: the object it prints on stdout."""
    assert main(["run", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_run_of_a_tunings_best_at_its_own_calibration_says_the_figures_differ(tuned, tmp_path, capsys):
    """run calibrated the tuned mapper to its own --min-time (0.5 s: another iteration count than the tuning's
    0.05 s), printed a figure unlike the tuning's, and said nothing of it."""
    summary = json.loads((tuned / "summary.json").read_text())
    theirs = measured_count(tuned, summary["measured"][summary["best"]]["run_dirs"][0])
    best = tuned / "best.dsl"
    out, result = run(capsys, "circuit", "--cpus", "2", "--mapper", str(best), *ONE, "--out", str(tmp_path / "a"))
    ours = result["settings"]["iterations"]
    assert ours != theirs  # ten times the measured time
    command = f"mapperopt run circuit --cpus 2 --mapper {best} --min-time 0 -- -l {theirs}"
    assert (f"Note: the tuning measured this mapper with -l {theirs} (--min-time 0.05), this run with -l {ours} "
            f"(--min-time 0.5): their figures are not comparable; to measure as it did: {command}") in out, out
    # the command it gives measures at the tuning's count, and says nothing more
    words = shlex.split(command)[2:]  # after `mapperopt run`
    at = words.index("--")
    out, result = run(capsys, *words[:at], *ONE, "--out", str(tmp_path / "b"), *words[at:])
    assert result["settings"]["iterations"] == theirs
    assert "not comparable" not in out, out
    # a copy elsewhere is just a mapper file
    copy = tmp_path / "best.dsl"
    copy.write_text(best.read_text())
    out, _ = run(capsys, "circuit", "--mapper", str(copy), *ONE, "--out", str(tmp_path / "c"))
    assert "not comparable" not in out, out


def test_run_json_gives_the_note_among_its_notes(tuned, tmp_path, capsys):
    """run --json of the tuned best at run's own calibration: its `notes` had no word that its figure is not
    comparable with the tuning's; at the tuning's settings it has none."""
    summary = json.loads((tuned / "summary.json").read_text())
    theirs = measured_count(tuned, summary["measured"][summary["best"]]["run_dirs"][0])
    best = tuned / "best.dsl"
    data = run_json(capsys, "circuit", "--cpus", "2", "--mapper", str(best), *ONE, "--out", str(tmp_path / "a"))
    ours = data["settings"]["iterations"]
    command = f"mapperopt run circuit --cpus 2 --mapper {best} --min-time 0 -- -l {theirs}"
    assert {"kind": "measured_elsewhere", "code": None,
            "text": f"the tuning measured this mapper with -l {theirs} (--min-time 0.05), this run with -l {ours} "
                    f"(--min-time 0.5): their figures are not comparable; to measure as it did: {command}"} \
        in data["notes"], data["notes"]
    words = shlex.split(command)[2:]
    at = words.index("--")
    data = run_json(capsys, *words[:at], *ONE, "--out", str(tmp_path / "b"), *words[at:])
    assert data["settings"]["iterations"] == theirs
    assert [n for n in data["notes"] if n["kind"] == "measured_elsewhere"] == [], data["notes"]


def test_run_of_an_iteration_on_other_processors_names_them(tuned, tmp_path, capsys):
    """An iteration's mapper.dsl at the iteration's own count, on 1 CPU processor where the tuning had 2."""
    mapper = tuned / "iter-002" / "mapper.dsl"
    theirs = measured_count(tuned, "iter-002")
    out, _ = run(capsys, "circuit", "--mapper", str(mapper), *ONE, "--min-time", "0", "--out", str(tmp_path / "a"),
                 "--", "-l", str(theirs))
    assert (f"Note: the tuning measured this mapper with --cpus 2, this run with --cpus 1: their figures are not "
            f"comparable; to measure as it did: mapperopt run circuit --cpus 2 --mapper {mapper} --min-time 0 -- "
            f"-l {theirs}") in out, out


def test_run_of_a_comparisons_best_names_the_comparison(tmp_path, capsys):
    runs = tmp_path / "runs"
    assert main(["compare", "circuit", "--runs", "1", "--iters", "1", "--optimizers", "random", "--start", "default",
                 "--min-time", "0.05", "--repeats", "1", "--max-repeats", "1", "--final-rounds", "1",
                 "--runs-dir", str(runs)]) == 0
    capsys.readouterr()
    (folder,) = (runs / "circuit").iterdir()
    final = json.loads((folder / "final.json").read_text())
    [program] = [p for name, p in final["groups"][0]["measured"].items() if name != "expert"]
    theirs = measured_count(folder, program["run_dirs"][0])
    best = folder / "random-1" / "best.dsl"
    out, result = run(capsys, "circuit", "--mapper", str(best), *ONE, "--out", str(tmp_path / "a"))
    assert (f"Note: the comparison measured this mapper with -l {theirs} (--min-time 0.05), this run with "
            f"-l {result['settings']['iterations']} (--min-time 0.5): their figures are not comparable; to measure "
            f"as it did: mapperopt run circuit --mapper {best} --min-time 0 -- -l {theirs}") in out, out
