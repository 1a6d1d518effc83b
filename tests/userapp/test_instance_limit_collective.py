"""An InstanceLimit below the points of an index launch whose points all reduce into one whole region
(tests/app/histogram.cc): Legion maps such a requirement collectively, every point waiting until all are mapped, so a
mapper that held points back beyond the limit would hang the program. The DSL mapper maps it per point instead (note
R459) and the limit holds; a requirement the program itself gives collective coherence keeps it, and the limit then
holds back none of the launch's points."""

from __future__ import annotations

from mapperopt.cli import main


def run(tmp_path, exe, mapper_text: str, *app_args: str, name: str = "run") -> tuple[int, str, str]:
    """(exit status, the program's stdout, its stderr) of `mapperopt run --app 'EXE -n 100000 -reps 2 ARGS' --mapper
    ... --once --timeout 15`: a hang fails in 15 s."""
    out = tmp_path / name
    path = tmp_path / f"{name}.dsl"
    path.write_text(mapper_text)
    code = main(["run", "--app", " ".join([str(exe), "-n", "100000", "-reps", "2", *app_args]), "--mapper", str(path),
                 "--verify-pattern", "HIST OK", "--once", "--timeout", "15", "--out", str(out)])
    texts = [(out / f).read_text() if (out / f).exists() else "" for f in ("stdout.txt", "stderr.txt")]
    return code, *texts


MAPPER = "Task * CPU;\nRegion * * CPU SYSMEM;\nInstanceLimit histogram {};\n"


def test_a_limit_below_the_points_of_a_launch_reducing_into_one_region_does_not_hang(tmp_path, monkeypatch,
                                                                                    histogram_exe):
    monkeypatch.chdir(tmp_path)
    for limit in (1, 2, 7):
        code, stdout, stderr = run(tmp_path, histogram_exe, MAPPER.format(limit), name=f"limit{limit}")
        assert code == 0 and "HIST OK total 200000" in stdout, (limit, stdout, stderr[-3000:])
        assert ("note R459: task 'histogram' has an InstanceLimit: requirement 1 (bins), one region every point of "
                "its index launch reduces into, is mapped per point, not collectively") in stderr, stderr[-3000:]


def test_a_limit_holds_back_no_point_of_a_launch_with_collective_coherence(tmp_path, monkeypatch, histogram_exe):
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = run(tmp_path, histogram_exe, MAPPER.format(2), "-collective")
    assert code == 0 and "HIST OK total 200000" in stdout, stdout + stderr[-3000:]
    assert ("note R459: task 'histogram' has an InstanceLimit: requirement 1 (bins) has collective coherence: every "
            "point of its index launch is mapped together, so the limit holds back none of them") in stderr, \
        stderr[-3000:]


def test_check_warns_of_any_limit_on_a_collectively_mapped_launch(tmp_path, histogram_exe, capsys):
    """Discovery records that every point of histogram reduces into `bins` (`"collective": true`): `check` warns
    (W317) of a limit on it, below its 8 points or not, as the mapper maps `bins` per point under either (R459)."""
    app = f"{histogram_exe} -n 1000 -reps 1"
    for limit in (2, 8):
        (tmp_path / f"l{limit}.dsl").write_text(MAPPER.format(limit))
        assert main(["check", str(tmp_path / f"l{limit}.dsl"), "--app", app]) == 0
        out = capsys.readouterr().out
        assert (f"l{limit}.dsl:3:15: warning[W317]: InstanceLimit {limit} applies to the index launch of 'histogram' "
                "(8 points): Legion maps its requirement 1 (bins), which every point reduces into, with all points "
                "together; under an InstanceLimit of any count the mapper maps it per point instead") in out, out
        assert "hint: without an InstanceLimit on 'histogram', Legion maps it collectively again" in out, out


BOX_NOTE = ("note: launch domains are shown as bounding boxes from 0; a sparse or offset domain has fewer or other "
            "points")


def test_explain_marks_the_reduction_and_the_bounding_box(tmp_path, histogram_exe, capsys):
    """explain marks histogram's requirement 1 as a reduction (its operator, every point into the one region), and
    says in one short line that a user's index launch is shown over its domain's bounding box (discovery records no
    sparse domain's points nor an offset one's corner; it took about 290 characters, for dense launches too)."""
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    assert main(["explain", str(tmp_path / "m.dsl"), "--app", f"{histogram_exe} -n 1000 -reps 1"]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.strip().startswith("1  bins")]
    assert "reduce sum_i64" in line and line.endswith("(every point reduces into this one region)"), out
    assert out.splitlines().count(BOX_NOTE) == 1 and out.count("bounding box") == 1, out


def test_explain_says_nothing_of_bounding_boxes_without_an_index_launch(tmp_path, shards_exe, capsys):
    """shards launches its tasks one at a time (a must-epoch launch): no launch domain is shown, so no note."""
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    assert main(["explain", str(tmp_path / "m.dsl"), "--app", f"{shards_exe} -s 1"]) == 0
    out = capsys.readouterr().out
    assert "shard (single launch)" in out and "bounding box" not in out, out
