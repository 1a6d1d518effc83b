"""The Pennant application (benchmarks/legion/pennant): the ci size verifies with Legion's default mapper, the
expert mapper and a mapper that keeps every region in system memory; Sedov and Noh match the original PENNANT's
reference outputs; a corrupted run fails its check; deck errors are usage errors; `--describe` gives the names and the
requirement order that the expert mapper and policies rely on."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from mapperopt import toolchain
from mapperopt.benchmarks import build_app, describe_app, load_config, run_benchmark

DECKS = Path(__file__).resolve().parents[2] / "benchmarks" / "legion" / "pennant" / "decks"
LEGION = ["-ll:cpu", "1", "-ll:util", "1", "-logfile", "stderr"]
ALL_SYSMEM = """Task * GPU,CPU;
Region * * GPU SYSMEM;
Region * * CPU SYSMEM;
"""


@pytest.fixture(scope="module")
def app() -> Path:
    return build_app("pennant")


def run(app: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(app), *args], capture_output=True, text=True, env=toolchain.runtime_env(), timeout=120)


def result_of(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("MAPPEROPT_")]
    assert len(lines) == 1, stdout
    assert lines[0].startswith("MAPPEROPT_RESULT ")
    return json.loads(lines[0][len("MAPPEROPT_RESULT "):])


@pytest.mark.parametrize("mapper", ["default", "expert", "all_sysmem"])
def test_ci_size_verifies(mapper, tmp_path):
    dsl = ALL_SYSMEM if mapper == "all_sysmem" else mapper
    result = run_benchmark("pennant", dsl, min_time_s=0, trace=mapper == "all_sysmem", out_dir=tmp_path)
    assert result.ok, f"{result.stage}: {result.reason}\n{result.log[-3000:]}"
    line = result.attempts[-1].result
    assert line["verified"] is True and line["unit"] == "zone-cycles/s"
    # leblanc 10 x 90 zones, 10 cycles of which 2 untimed: throughput = zones x timed cycles / time.
    assert line["iterations"] == 8 and line["warmup"] == 2
    assert line["throughput"] == pytest.approx(900 * 8 / line["time_s"], rel=1e-6)
    check = line["check"]
    assert check["kind"] == "sequential" and check["compared"] == 3 * 900
    assert check["max_abs_err"] <= 2e-6 and check["energy_rel_err"] <= 1e-9
    if mapper == "all_sysmem":
        placements = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
        regions = [r for p in placements for r in p["regions"]]
        assert {p["task"] for p in placements} >= {"calc_centers", "sum_point_force", "adv_pos_full"}
        assert regions and {r["memory"] for r in regions} == {"SYSMEM"}


@pytest.mark.parametrize("deck,pieces,zones", [("sedov", 3, 45 * 45), ("noh", 1, 30 * 100)])
def test_matches_the_reference_output(app, deck, pieces, zones):
    """Sedov (rect 45 x 45, 3 pieces) and Noh (pie 30 x 100), 10 cycles, against the original PENNANT's final zr, ze,
    zp (<deck>.xy.std) with the original's CI tolerances."""
    proc = run(app, "-deck", str(DECKS / f"{deck}.pnt"), "-npieces", str(pieces), "-check", "reference", *LEGION)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    check = result_of(proc.stdout)["check"]
    assert check["kind"] == "reference" and check["compared"] == 3 * zones
    assert check["max_abs_err"] <= 2e-6 and check["max_rel_err"] <= 1e-8
    assert check["energy_rel_err"] <= check["energy_tolerance"]


def test_a_corrupted_run_fails_its_check(app):
    proc = run(app, "-deck", str(DECKS / "sedovsmall.pnt"), "-npieces", "2", "-test-corrupt", *LEGION)
    assert proc.returncode == 2, proc.stderr[-2000:]
    result = result_of(proc.stdout)
    assert result["verified"] is False
    assert result["check"]["kind"] == "reference"
    assert "values differ; first: " in result["check"]["mismatch"]
    assert "verification failed" in proc.stderr


def test_deck_and_flag_errors_are_usage_errors(app, tmp_path):
    deck = tmp_path / "bad.pnt"
    deck.write_text("meshtype rect\nmeshparams 4 4\nviscosity 3\n")
    proc = run(app, "-deck", str(deck), *LEGION)
    assert proc.returncode == 1 and f"{deck}:3: unknown deck keyword 'viscosity'" in proc.stderr
    deck.write_text("meshtype hex\nmeshparams 4 4\n")
    assert "rect and pie meshes only" in run(app, "-deck", str(deck), *LEGION).stderr
    proc = run(app, "-deck", str(DECKS / "nohsmall.pnt"), "-npieces", "2", *LEGION)
    assert proc.returncode == 1 and "pie meshes run as one piece" in proc.stderr
    proc = run(app, "-deck", str(DECKS / "sedovsmall.pnt"), "-npieces", "4", "-numpcx", "3", *LEGION)
    assert proc.returncode == 1 and "-numpcx/-numpcy must divide -npieces" in proc.stderr
    assert "-deck FILE.pnt is required" in run(app, *LEGION).stderr


def test_describe_names_and_requirement_order():
    desc = describe_app("pennant", "ci")
    tasks = {t["name"]: t for t in desc["tasks"]}
    assert len(tasks) == 30
    if toolchain.cuda_enabled("auto"):  # the 27 phase tasks have GPU variants
        assert len([t for t in desc["tasks"] if "GPU" in t["variants"]]) == 27
    for name in ("initialize_topology", "calc_global_dt", "check_state"):
        assert tasks[name]["variants"] == ["CPU"]
    assert tasks["calc_global_dt"]["launch"] == "single" and tasks["calc_dt_hydro"]["domain"] == [2]

    def shape(task):
        return [(r["names"][0], r["privilege"], r.get("redop")) for r in tasks[task]["regions"]]

    # Zone/side tasks: rz_all_p, rp_all_private_p, rp_all_ghost_p, rs_all_p, then the written fields.
    assert shape("sum_point_mass") == [("rz_all_p", "read_only", None), ("rp_all_private_p", "read_write", None),
                                       ("rp_all_ghost_p", "reduce", "sum_f64"), ("rs_all_p", "read_only", None)]
    assert shape("calc_centers") == [("rz_all_p", "read_only", None), ("rp_all_private_p", "read_only", None),
                                     ("rp_all_ghost_p", "read_only", None), ("rs_all_p", "read_only", None),
                                     ("rz_all_p", "write_discard", None), ("rs_all_p", "write_discard", None)]
    # Point tasks: the piece's private and shared points, written fields first.
    assert [s[0] for s in shape("adv_pos_full")] == ["rp_all_private_p", "rp_all_shared_p"] * 2
    chains = {r["names"][0]: r["names"] for t in desc["tasks"] for r in t["regions"]}
    assert chains["rp_all_ghost_p"] == ["rp_all_ghost_p", "rp_all_ghost", "rp_all_p", "rp_all"]
    assert chains["rp_all_shared_p"] == ["rp_all_shared_p", "rp_all_ghost", "rp_all_p", "rp_all"]
    assert {(n["name"], n["kind"], n["parent"]) for n in desc["region_tree"]} == {
        ("rz_all", "region", None), ("rz_all_p", "partition", "rz_all"), ("rp_all", "region", None),
        ("rp_all_p", "partition", "rp_all"), ("rp_all_private", "region", "rp_all_p"),
        ("rp_all_ghost", "region", "rp_all_p"), ("rp_all_private_p", "partition", "rp_all_private"),
        ("rp_all_ghost_p", "partition", "rp_all_ghost"), ("rp_all_shared_p", "partition", "rp_all_ghost"),
        ("rs_all", "region", None), ("rs_all_p", "partition", "rs_all")}
    assert load_config("pennant").size("ci").args["-deck"] == str(DECKS / "leblanc.pnt")


def test_expert_index_map_places_pieces_cyclically(tmp_path):
    """With two CPUs (no GPU: the expert's mgpu is the CPU machine), gpu_cyclic sends piece p to CPU p mod 2 and
    initialize_topology, the CPU-only index task, to the node's first CPU."""
    result = run_benchmark("pennant", "expert", cpus=2, min_time_s=0, trace=True, out_dir=tmp_path)
    assert result.ok, f"{result.stage}: {result.reason}\n{result.log[-3000:]}"
    placements = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    index = [p for p in placements if p["point"] is not None]
    assert {p["task"] for p in index} >= {"calc_centers", "sum_point_mass", "adv_pos_full", "calc_dt_hydro"}
    for p in index:
        expected = 0 if p["task"] == "initialize_topology" else p["point"][0] % 2
        assert (p["proc"]["kind"], p["proc"]["index"]) == ("CPU", expected), p


def run_table(monkeypatch, capsys, tmp_path, *flags: str, options=("--once",)) -> str:
    """`mapperopt run pennant --mapper expert --once --no-profile -- FLAGS`'s output, on one line per table row
    (`options` in place of --once)."""
    from mapperopt.cli import main

    monkeypatch.setenv("COLUMNS", "300")
    capsys.readouterr()
    main(["run", "pennant", "--mapper", "expert", *options, "--no-profile", "--out", str(tmp_path / "run"), "--",
          *flags])
    return capsys.readouterr().out


def test_run_says_when_only_energy_conservation_verified(monkeypatch, capsys, tmp_path):
    """The energy check measures conservation from the start, so a run that starts wrong (-test-corrupt) passes it:
    `run` says which check verified instead of a bare yes (the `small` and `gpu` sizes use it)."""
    out = run_table(monkeypatch, capsys, tmp_path / "energy", "-test-corrupt", "-check", "energy")
    energy = r"│ yes, every execution \(energy conservation only: the final state is not compared\) +│"
    assert re.search(energy, out), out
    out = run_table(monkeypatch, capsys, tmp_path / "sequential")  # the final state compared: the row says how
    assert re.search(r"│ verified +│ yes, every execution \(against the program's own sequential run\) +│", out), out


def test_run_says_when_a_deck_without_its_reference_output_is_checked_against_the_sequential_run(
        monkeypatch, capsys, tmp_path):
    """sedovsmall.pnt copied to a working folder lost its sedovsmall.xy.std (the original PENNANT's output), and the
    check fell back to the program's own sequential run without a word: `run` says so, and says nothing where the
    reference output is beside the deck."""
    (tmp_path / "sedovsmall.pnt").write_text((DECKS / "sedovsmall.pnt").read_text())
    monkeypatch.chdir(tmp_path)
    out = run_table(monkeypatch, capsys, tmp_path / "copied", "-deck", "sedovsmall.pnt", "-energy-tolerance", "0.1")
    said = (r"│ verified +│ yes, every execution \(against the program's own sequential run: no sedovsmall.xy.std "
            r"beside the deck, the original PENNANT's output\) +│")
    assert re.search(said, out), out
    out = run_table(monkeypatch, capsys, tmp_path / "shipped", "-deck", str(DECKS / "sedovsmall.pnt"),
                    "-energy-tolerance", "0.1")
    assert re.search(r"│ verified +│ yes, every execution \(against the original PENNANT's output\) +│", out), out
    # At another cycle count than the deck's the reference output would not be used even beside the deck: the note
    # says that instead of blaming the missing file.
    out = run_table(monkeypatch, capsys, tmp_path / "cstop", "-deck", "sedovsmall.pnt", "-energy-tolerance", "0.1",
                    "-cstop", "5")
    said = (r"│ verified +│ yes, every execution \(against the program's own sequential run: the original "
            r"PENNANT's output is compared only at the deck's own cycle count, cstop 10, not -cstop 5\) +│")
    assert re.search(said, out), out


def test_a_calibrated_run_of_a_deck_says_its_reference_output_was_compared_only_at_the_decks_cycle_count(
        monkeypatch, capsys, tmp_path):
    """`run pennant -- -deck sedovsmall.pnt` calibrates from the deck's own cstop 10, where the original PENNANT's
    output is compared, to more cycles, where only the sequential run is: the row said a plain yes, because the
    calibration execution's check (reference) was counted with the measured ones (sequential)."""
    out = run_table(monkeypatch, capsys, tmp_path, "-deck", str(DECKS / "sedovsmall.pnt"), "-energy-tolerance", "0.1",
                    options=("--min-time", "0.3", "--repeats", "1", "--max-repeats", "1"))
    timed = re.search(r"│ measured time +│ [\d.]+ s \(\d+ timed of -cstop (\d+)\)", out)
    assert timed and int(timed[1]) > 10, out  # calibrated beyond the deck's count
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    kinds = [a["result"]["check"]["kind"] for a in result["attempts"]]
    assert kinds[0] == "reference" and kinds[-1] == "sequential", kinds
    said = (r"│ verified +│ yes, every execution \(against the program's own sequential run: the original PENNANT's "
            rf"output is compared only at the deck's own cycle count, cstop 10, not -cstop {timed[1]}\) +│")
    assert re.search(said, out), out


def test_run_table_says_how_many_cycles_were_timed(monkeypatch, capsys, tmp_path):
    """-cstop counts the 2 warm-up cycles too: the measured time is that of the 8 timed ones, which the zone-cycles/s
    figure divides."""
    out = run_table(monkeypatch, capsys, tmp_path)
    assert "s (8 timed of -cstop 10)" in out, out


def test_a_deck_relative_to_the_current_folder_runs(tmp_path, monkeypatch):
    """`-- -deck mydeck.pnt` passed `--describe` (run here) and then failed the run (started in its run folder)."""
    (tmp_path / "mydeck.pnt").write_text((DECKS / "sedovsmall.pnt").read_text())
    monkeypatch.chdir(tmp_path)
    result = run_benchmark("pennant", "default", min_time_s=0, out_dir=tmp_path / "run",
                           extra_args=("-deck", "mydeck.pnt", "-energy-tolerance", "0.1"))
    assert result.ok, f"{result.stage}: {result.reason}"
    assert result.settings["extra_args"][:2] == ["-deck", "mydeck.pnt"]  # as given


def test_an_energy_change_above_the_sizes_tolerance_names_the_flag(tmp_path):
    """Sedov at ci: ci's `-energy-tolerance 1e-9` (for leblanc) carries over; the feedback said the application or its
    problem size is at fault (Legion's default mapper fails too), and named no flag."""
    result = run_benchmark("pennant", "expert", min_time_s=0, out_dir=tmp_path,
                           extra_args=("-deck", str(DECKS / "sedov.pnt")))
    assert result.stage == "verify", f"{result.stage}: {result.reason}"
    feedback = json.loads((tmp_path / "feedback.json").read_text())
    assert "more than its -energy-tolerance 1e-09" in feedback["explanation"], feedback
    assert "`-- -energy-tolerance 0.1`" in feedback["suggestion"], feedback
