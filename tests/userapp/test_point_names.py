"""A program that names each subregion of its partition on its own (tests/app/pieces.cc: "block_0" ... "block_3" of
partition "blocks", as Legion's circuit example names its pieces): discovery records one point of each index launch,
so a statement naming one block applies to that point only at run time; `check` says so (W325) and points to the
partition's name, which applies to every point; `explain` labels the block's name as one point's. A variant's name
in a Task statement is said to be no task name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mapperopt.benchmarks.harness import run_benchmark
from mapperopt.benchmarks.userapp import load_app_file

FLAGS = ("--", "-ll:cpu", "2")


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mapperopt")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=tmp_path)


def test_a_statement_naming_one_points_subregion_is_said_to_apply_to_that_point_only(tmp_path, pieces_exe):
    (tmp_path / "m.dsl").write_text("Task * CPU;\nLayout fill block_0 * C_order;\n")
    done = cli(tmp_path, "check", "m.dsl", "--app", str(pieces_exe), *FLAGS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("m.dsl:2:13: warning[W325]: region 'block_0' is the subregion of partition 'blocks' that one point of "
            "the index launch of 'fill' uses (discovery records the first point it maps): where each point's "
            "subregion has a name of its own, this statement applies to that point only") in done.stdout, done.stdout
    assert "hint: `Layout fill blocks * C_order;` applies to every point" in done.stdout, done.stdout
    explained = cli(tmp_path, "explain", "m.dsl", "--app", str(pieces_exe), *FLAGS)
    assert explained.returncode == 0, explained.stdout + explained.stderr
    assert "block_0 (one point's)" in explained.stdout, explained.stdout
    assert "m.dsl:2:13: warning[W325]: region 'block_0' is the subregion" in explained.stderr, explained.stderr


def test_another_points_subregion_name_is_no_error(tmp_path, pieces_exe):
    """'block_3', the name of point 3's subregion, is no name discovery saw, but the run matches it at point 3."""
    (tmp_path / "m.dsl").write_text("Task * CPU;\nLayout fill block_3 * C_order;\n")
    done = cli(tmp_path, "check", "m.dsl", "--app", str(pieces_exe), *FLAGS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("warning[W325]: region 'block_3' is not a name discovery saw for task 'fill': it records one point of "
            "each index launch, whose subregion of partition 'blocks' is 'block_0'; if 'block_3' names another "
            "point's subregion, this statement applies to that point only") in done.stdout, done.stdout


def test_a_name_that_is_no_points_subregion_is_an_error_not_w325(tmp_path, pieces_exe):
    """W325 is for the subregion of another point of the launch ('block_3' of the 4 points' 'block_0' ... 'block_3');
    a name merely close to one point's, with a point the launch lacks or none at all, is an unknown region (E203):
    they got W325 and matched nothing at run time. The launch's partition and whole region get neither."""
    for name in ("block_7", "block_x", '"block_*"', "blocks_0"):
        (tmp_path / "m.dsl").write_text(f"Task * CPU;\nLayout fill {name} * C_order;\n")
        done = cli(tmp_path, "check", "m.dsl", "--app", str(pieces_exe), *FLAGS)
        assert done.returncode == 1 and "W325" not in done.stdout, done.stdout
        assert (f"m.dsl:2:13: error[E203]: unknown region '{name.strip(chr(34))}' for task 'fill'"
                in done.stdout), done.stdout
        if name in ("block_7", "block_x"):  # the partition, as W325's hint says; not 'block_0' (point 0 only)
            assert ("hint: `Layout fill blocks * C_order;` applies to every point (a point's own subregion, such as "
                    "'block_0', applies to that point only)") in " ".join(done.stdout.split()), done.stdout
    for name in ("blocks", "cells"):
        (tmp_path / "m.dsl").write_text(f"Task * CPU;\nLayout fill {name} * C_order;\n")
        done = cli(tmp_path, "check", "m.dsl", "--app", str(pieces_exe), *FLAGS)
        assert done.returncode == 0 and "warning" not in done.stdout and "error" not in done.stdout, done.stdout


def test_the_partitions_name_applies_to_every_point_and_a_blocks_to_its_point(tmp_path, pieces_exe):
    """What W325 says, in the run's placement trace."""
    app_file = tmp_path / "mapperopt.yaml"
    app_file.write_text(f"app: pieces\nexecutable: {pieces_exe}\nsizes:\n  ci: {{cpus: 2, timeout_s: 30}}\n"
                        "verify: {pattern: 'PIECES OK'}\n")
    app = load_app_file(app_file)
    orders = {}
    for region in ("blocks", "block_3"):
        run = tmp_path / region
        result = run_benchmark(app, f"Task * CPU;\nLayout fill {region} * C_order;\n", trace=True, out_dir=run)
        assert result.ok, result.reason
        orders[region] = sorted((tuple(r["point"]), r["regions"][0]["name"], r["regions"][0]["layout"]["dims"])
                                for r in map(json.loads, (run / "trace.jsonl").read_text().splitlines())
                                if r["task"] == "fill")
    assert orders["blocks"] == [((p,), f"block_{p}", "C") for p in range(4)]
    assert orders["block_3"] == [((p,), f"block_{p}", "C" if p == 3 else "F") for p in range(4)]


def test_a_variant_name_in_a_task_statement_is_said_to_be_no_task_name(tmp_path, pieces_exe):
    """'fill_cpu' is the name of the variant of task 'fill' (TaskVariantRegistrar's): discovery sees task names only,
    so check cannot tell that it is a variant's, but says that statements name tasks, not variants."""
    (tmp_path / "m.dsl").write_text("Task fill_cpu CPU;\n")
    done = cli(tmp_path, "check", "m.dsl", "--app", str(pieces_exe), *FLAGS)
    assert ("note: if 'fill_cpu' is a variant's name (TaskVariantRegistrar's), name its task: statements name tasks "
            "(discovery does not see variant names)") in done.stdout, done.stdout
