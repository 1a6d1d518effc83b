"""The tuning folder: journal append/replay, torn lines, cache lookup, derived outputs, old journals."""

from __future__ import annotations

import csv
import errno
import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest
from optimizer_support import markers_clear_and_inside

from mapperopt.errors import MapperoptError
from mapperopt.files import refused_write
from mapperopt.optimizer.base import IterationRecord
from mapperopt.optimizer.store import TuneStore, progress_figure

DATA = Path(__file__).parent / "data"


def record(i: int, throughput: float | None, key: str = "", dsl: str = "Task * CPU;\n", **kw) -> IterationRecord:
    ok = throughput is not None
    return IterationRecord(iter=i, dsl=dsl, key=key or f"k{i}", status="ok" if ok else "failed",
                           stage=kw.pop("stage", None if ok else "run"),
                           category="performance" if ok else "mapper.r400",
                           throughput=throughput, unit="GFLOPS", best_throughput=throughput or 0.0, **kw)


def test_append_then_open_replays_the_journal(tmp_path):
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "guided", "iters": 3})
    assert store.root.parent == tmp_path / "circuit" and store.root.name.startswith("tune-")
    store.append(record(1, 2.0))
    store.append(record(2, None))
    again = TuneStore.open(store.root)
    assert again.records == store.records
    assert again.settings["optimizer"] == "guided" and again.settings["app"] == "circuit"
    with pytest.raises(ValueError, match="iteration 4"):
        again.append(record(4, 1.0))


def test_a_torn_last_line_is_skipped_with_a_note_and_cut_away_by_the_next_append(tmp_path):
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 2.0))
    with open(store.root / "state.jsonl", "a") as f:
        f.write('{"schema": "mapperopt.tune.iter/1", "iter": 2, "ds')  # the process died mid-write
    store.unlock()  # ...and its lock went with it
    reopened = TuneStore.open(store.root)
    assert [r.iter for r in reopened.records] == [1]
    assert len(reopened.damaged) == 1 and "state.jsonl line 2 is damaged" in reopened.damaged[0]
    reopened.append(record(2, 3.0))
    lines = (store.root / "state.jsonl").read_text().splitlines()
    assert [json.loads(line)["iter"] for line in lines] == [1, 2]  # the torn line is gone, not kept between
    assert TuneStore.open(store.root).damaged == []


def test_a_torn_last_line_that_is_cut_away_is_kept_beside_the_journal(tmp_path):
    """The next append cut a torn last line away and kept nothing of it: where the damage was not a torn write (a
    stray edit), its text was lost. It is moved to state.jsonl.damaged, which the note names."""
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 2.0))
    torn = '{"schema": "mapperopt.tune.iter/1", "iter": 2, "ds'
    with open(store.root / "state.jsonl", "a") as f:
        f.write(torn)
    store.unlock()
    reopened = TuneStore.open(store.root)
    kept = store.root / "state.jsonl.damaged"
    assert f"the journal's next record moves it to {kept}" in reopened.damaged[0], reopened.damaged
    assert not kept.exists()  # opening changes nothing
    reopened.append(record(2, 3.0))
    assert kept.read_text() == torn + "\n"
    assert [json.loads(line)["iter"] for line in (store.root / "state.jsonl").read_text().splitlines()] == [1, 2]


def test_a_last_record_without_its_line_end_is_kept_by_the_next_append(tmp_path):
    """A journal saved without its last newline (an editor's save) was read whole, but the next append cut its last
    record away as a torn line: the journal then lacked that iteration and the folder was refused."""
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 2.0))
    store.append(record(2, 3.0))
    store.unlock()
    path = store.root / "state.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    reopened = TuneStore.open(store.root)
    assert [r.iter for r in reopened.records] == [1, 2] and reopened.damaged == []
    reopened.append(record(3, 1.0))
    assert [r.iter for r in TuneStore.open(store.root).records] == [1, 2, 3]
    assert not (store.root / "state.jsonl.damaged").exists()


def journal_damaged_twice(tmp_path: Path) -> tuple[TuneStore, Path]:
    """A tuning folder whose journal holds iteration 1, two lines damaged in place, and a torn last line."""
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 2.0))
    path = store.root / "state.jsonl"
    with open(path, "a") as f:
        f.write('{"schema": "mapperopt.tune.iter/1", "iter": 2, "d\x00\x00\n[1, 2]\n')  # damaged in place
        f.write('{"schema": "mapperopt.tune.iter/1", "iter": 2, "ds')  # the process died mid-write
    store.unlock()
    return store, path


def test_damaged_lines_before_a_torn_last_one_are_said_to_be_the_journals_damage(tmp_path):
    """An interrupted append tears only the journal's last line: damaged lines before it were not left by an
    iteration that never finished, and the note says so of them, naming them (all were said to be such
    iterations); the torn last line keeps its note."""
    store, path = journal_damaged_twice(tmp_path)
    reopened = TuneStore.open(store.root)
    assert [r.iter for r in reopened.records] == [1]
    earlier, torn = reopened.damaged
    assert torn.startswith(f"{path} line 4 is damaged (not valid JSON: ") and torn.endswith(
        f"): skipped, as an iteration that never finished; the journal's next record moves it to {path}.damaged"), torn
    assert earlier.startswith(f"{path} lines 2 and 3 are damaged (line 2: not valid JSON: "), earlier
    assert "line 3: not an iteration record: " in earlier and "never finished" not in earlier, earlier
    assert earlier.endswith("skipped, and any iteration they record is run again; the journal was damaged there "
                            "otherwise than by an interrupted write, which tears only its last line"), earlier


def test_a_whole_last_line_of_the_wrong_shape_is_the_journals_damage_not_a_torn_write(tmp_path):
    """An interrupted append leaves a line cut short, which is never valid JSON: a last line that is a whole JSON
    object with a field of the wrong kind (an edit) is named as damage, as such a line before the last is, not as an
    iteration that never finished."""
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 2.0))
    path = store.root / "state.jsonl"
    with open(path, "a") as f:
        f.write(json.dumps({**record(2, 3.0).to_json(), "throughput": "fast"}) + "\n")
    store.unlock()
    note, = TuneStore.open(store.root).damaged
    assert note == (f"{path} line 2 is damaged (not an iteration record: its field 'throughput' is a string, not a "
                    "positive number or null): skipped, and any iteration it records is run again; the journal was "
                    "damaged there otherwise than by an interrupted write, which tears only its last line"), note


def test_damaged_lines_stay_noted_after_the_next_append(tmp_path):
    """The next append cuts away only the torn last line: the damaged lines before it stay in the journal, between
    records, and every later open names them (not only the one before the append); the records are as before."""
    store, path = journal_damaged_twice(tmp_path)
    reopened = TuneStore.open(store.root)
    reopened.append(record(2, 3.0))
    reopened.unlock()
    for _ in range(2):  # each open says it
        again = TuneStore.open(store.root)
        assert [r.iter for r in again.records] == [1, 2]
        note, = again.damaged
        assert note.startswith(f"{path} lines 2 and 3 are damaged (line 2: not valid JSON: "), note
        assert "line 3: not an iteration record: " in note and note.endswith(
            "skipped, and any iteration they record was run again; the journal was damaged there otherwise than "
            "by an interrupted write, which tears only its last line"), note
    assert len(path.read_text().splitlines()) == 4  # what the journal records is unchanged


def journal_of_three(tmp_path: Path) -> tuple[TuneStore, Path]:
    """A tuning folder whose journal records iterations 1-3, and the journal's path."""
    store = TuneStore.create(tmp_path, "circuit", {})
    for i in (1, 2, 3):
        store.append(record(i, 2.0))
    store.unlock()
    return store, store.root / "state.jsonl"


def test_a_damaged_line_inside_the_journal_is_named_with_its_line(tmp_path):
    store, path = journal_of_three(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1][:40] + "\x00\x00\x00\x00" + lines[1][44:]
    path.write_text("".join(lines))
    with pytest.raises(MapperoptError, match=r"state\.jsonl line 2 is damaged \(not valid JSON.*iteration 2"):
        TuneStore.open(store.root)


@pytest.mark.parametrize("field, value, why", [
    ("throughput", "fast", "its field 'throughput' is a string, not a positive number or null"),
    ("throughput", -1, "its field 'throughput' is -1, not a positive number or null"),
    ("throughput", 0, "its field 'throughput' is 0, not a positive number or null"),
    ("dsl", [1, 2], "its field 'dsl' is a list, not a string or null"),
    # a status the loop never writes was taken: the table showed "failed" with a throughput
    ("status", "great", "its field 'status' is 'great', not one of 'ok', 'failed'")])
def test_a_record_with_an_impossible_field_is_a_damaged_line(tmp_path, field, value, why):
    """A journal line that is valid JSON but records an impossible value (an edit, a copy) is damage, named with
    its line and field, never replayed into the history or a report."""
    store, path = journal_of_three(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = json.dumps({**json.loads(lines[1]), field: value}) + "\n"
    path.write_text("".join(lines))
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert f"{path} line 2 is damaged (not an iteration record: {why}): iteration 2" in str(raised.value), raised.value


@pytest.mark.parametrize("edit, why", [
    # a failed iteration's throughput kept: the table showed "failed (None) 2.228 GFLOPS", history.csv the figure
    ({"status": "failed"}, "its field 'status' is 'failed', but its field 'stage' is null and its field "
                           "'throughput' is 2.0: a failed iteration records where it failed and no throughput"),
    ({"status": "failed", "stage": "run"}, "its field 'status' is 'failed', but its field 'throughput' is 2.0: a "
                                           "failed iteration records where it failed and no throughput"),
    ({"status": "failed", "throughput": None}, "its field 'status' is 'failed', but its field 'stage' is null: a "
                                               "failed iteration records where it failed and no throughput"),
    ({"throughput": None}, "its field 'status' is 'ok', but its field 'throughput' is null: a successful iteration "
                           "records its throughput")])
def test_a_record_whose_status_contradicts_its_other_fields_is_a_damaged_line(tmp_path, edit, why):
    """Each field of the right kind, but together no record the loop writes (an edit): damage, as an impossible
    field is, so that a failure is never shown or written with a figure, nor a success without one."""
    store, path = journal_of_three(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = json.dumps({**json.loads(lines[1]), **edit}) + "\n"
    path.write_text("".join(lines))
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert f"{path} line 2 is damaged (not an iteration record: {why}): iteration 2" in str(raised.value), raised.value
    assert raised.value.hint.startswith("delete line 2 and every line after it from state.jsonl"), raised.value.hint
    path.write_text("".join(lines[:2]))  # the last record: skipped, and its iteration run again
    reopened = TuneStore.open(store.root)
    assert [r.iter for r in reopened.records] == [1], reopened.records
    assert reopened.damaged == [f"{path} line 2 is damaged (not an iteration record: {why}): skipped, and any "
                                "iteration it records is run again; the journal was damaged there otherwise than by "
                                "an interrupted write, which tears only its last line"], reopened.damaged


def test_a_damaged_settings_file_is_named(tmp_path):
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "guided"})
    store.unlock()
    path = store.root / "settings.json"
    path.write_text(path.read_text()[:30])
    with pytest.raises(MapperoptError, match=r"settings\.json is damaged: not valid JSON \(.*line \d+ column \d+"):
        TuneStore.open(store.root)


def test_a_full_disk_leaves_the_journal_as_it_was_and_names_it(tmp_path, monkeypatch):
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 2.0))
    before = (store.root / "state.jsonl").read_bytes()
    real_write = os.write

    def full_after_100_bytes(fd, data):  # as a nearly full file system does: a short write, then ENOSPC
        if len(data) <= 100:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data[:100])

    monkeypatch.setattr(os, "write", full_after_100_bytes)
    with pytest.raises(OSError) as raised:
        store.append(record(2, 3.0))
    monkeypatch.undo()
    assert (store.root / "state.jsonl").read_bytes() == before
    assert [r.iter for r in store.records] == [1]
    error = refused_write(raised.value)
    assert error is not None and f"cannot write {store.root / 'state.jsonl'}: no space left on device" in str(error)
    assert "run the same command again" in error.hint
    store.append(record(2, 3.0))  # space freed: the iteration is recorded after the first
    assert [r.iter for r in TuneStore.open(store.root).records] == [1, 2]


def test_a_file_the_disk_has_no_room_for_leaves_no_partial_copy(tmp_path, monkeypatch):
    store = TuneStore.create(tmp_path, "circuit", {})
    before = (store.root / "settings.json").read_text()
    real_write_text = Path.write_text

    def full(self, text, *args, **kwargs):  # half of it written, then the disk is full
        real_write_text(self, text[: len(text) // 2], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError):
        store.write_settings()
    monkeypatch.undo()
    assert sorted(p.name for p in store.root.iterdir()) == ["owner.json", "settings.json", "state.jsonl", "tune.lock"]
    assert (store.root / "settings.json").read_text() == before


def test_a_plot_the_disk_has_no_room_for_is_named_and_leaves_no_partial_copy(tmp_path, monkeypatch):
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 2.0))

    write_bytes = Path.write_bytes

    def full(path, data):  # as the disk fills while the PNG is written: half a file, an error naming none
        write_bytes(path, data[:4])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(OSError) as raised:
        store.write_outputs()
    assert raised.value.filename == str(store.root / "progress.png")
    assert not [p.name for p in store.root.iterdir() if p.name.startswith(".")]


def test_an_unrecorded_iteration_folder_starts_empty(tmp_path):
    store = TuneStore.create(tmp_path, "circuit", {})
    (store.iter_dir(1) / "stdout.txt").write_text("from an interrupted attempt")
    assert list(store.iter_dir(1).iterdir()) == []
    store.append(record(1, 2.0))
    (store.iter_dir(1) / "result.json").write_text("{}")
    assert [p.name for p in store.iter_dir(1).iterdir()] == ["result.json"]  # recorded: kept


def test_lookup_finds_the_evaluated_iteration_not_cached_copies(tmp_path):
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 2.0, key="a"))
    store.append(record(2, 2.0, key="a", cached=True, cached_from=1))
    assert store.lookup("a").iter == 1
    assert store.lookup("b") is None


def test_outputs_are_derived_from_the_journal(tmp_path):
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "guided"})
    store.append(record(1, 2.0, dsl="Task * CPU;\n"))
    store.append(record(2, None))
    store.append(record(3, 5.0, dsl="Task * GPU,CPU;\n", llm={"total_tokens": 42}))
    paths = store.write_outputs()
    assert paths["best"].read_text() == "Task * GPU,CPU;\n"
    rows = list(csv.DictReader(paths["history"].open()))
    assert [(r["iter"], r["status"], r["throughput"], r["total_tokens"]) for r in rows] == [
        ("1", "ok", "2.0", "0"), ("2", "failed", "", "0"), ("3", "ok", "5.0", "42")]
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_history_and_plot_mark_a_figure_measured_at_another_iteration_count(tmp_path, monkeypatch):
    """A candidate the harness recalibrated (circuit's -l 201 instead of the run's calibrated 100, as in the GPU
    evaluation's guided runs) weighs start-up differently: tune's and compare's lines said "not comparable", while
    history.csv and progress.png showed it as any other iteration. history.csv says so in a last column (the earlier
    columns keep their order), and the plot draws it hollow, with a legend entry of its own."""
    from mapperopt.optimizer import store as store_module
    from mapperopt.optimizer.store import HISTORY_COLUMNS

    figures = []
    monkeypatch.setattr(store_module, "plot_progress",
                        lambda records, path, **kw: figures.append(progress_figure(records, **kw)))
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "guided", "iterations": 100})
    calibrated = {"settings": {"iterations": 100, "iterations_flag": "-l"}}
    store.append(record(1, 2.0, best_iter=1, result=calibrated))
    store.append(record(2, None, best_iter=1))
    store.append(record(3, 3.1, best_iter=3, result={"settings": {"iterations": 201, "iterations_flag": "-l"}}))
    store.append(replace(record(4, 2.5, best_iter=3, result=calibrated), best_throughput=3.1))
    paths = store.write_outputs()
    with paths["history"].open() as f:
        header = next(csv.reader(f))
    assert header[-1] == "not_comparable" and header[:15] == [
        "iter", "status", "stage", "category", "throughput", "unit", "best_throughput", "best_iter", "cached",
        "cached_from", "note", "total_tokens", "wall_s", "key", "final_pick"], header
    assert tuple(header) == HISTORY_COLUMNS
    rows = list(csv.DictReader(paths["history"].open()))
    assert [r["not_comparable"] for r in rows] == ["", "", "measured with -l 201, not the run's 100", ""], rows
    [ax] = figures[0].axes
    labels = dict(zip(*reversed(ax.get_legend_handles_labels())))
    apart = labels["iteration measured at another iteration count (not comparable)"]
    assert [tuple(xy) for xy in apart.get_offsets()] == [(3, 3.1)]
    assert len(apart.get_facecolors()) == 0 or apart.get_facecolors()[0][3] == 0  # hollow
    assert [tuple(xy) for xy in labels["iteration"].get_offsets()] == [(1, 2.0), (4, 2.5)]
    markers_clear_and_inside(figures[0])
    # without a calibrated count (a user's program), or with every figure at it, nothing is marked
    figures.clear()
    store.settings.pop("iterations")
    store.write_outputs()
    assert all(r["not_comparable"] == "" for r in csv.DictReader(paths["history"].open()))
    assert not any("not comparable" in label for label in figures[0].axes[0].get_legend_handles_labels()[1])


def test_the_progress_plot_clips_no_marker_and_its_legend_covers_none():
    """The best iteration (at the top of the data) and the final pick's star used to be cut at the top edge."""
    records = [record(1, 0.52, best_iter=1), record(2, 0.525, best_iter=2),
               replace(record(3, 0.545, best_iter=3), best_throughput=0.545)]
    fig = progress_figure(records, baselines={"expert": 0.518}, final_pick=3)
    markers_clear_and_inside(fig)


def test_the_progress_plot_draws_the_final_comparisons_figures(tmp_path, monkeypatch):
    """The plot drew the best so far (1.96) against the default measured before tuning (1.74), a gap to the eye,
    while the final comparison measured both again and found no significant difference: its figures are drawn
    too, the references' as dotted lines naming the pick's ratio and the pick's with its interval."""
    from mapperopt.optimizer import store as store_module

    figures = []
    monkeypatch.setattr(store_module, "plot_progress",
                        lambda records, path, **kw: figures.append(progress_figure(records, **kw)))
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "random", "baselines": {"default": 1.74}})
    store.append(record(1, 1.7, best_iter=1))
    store.append(replace(record(2, 1.96, best_iter=2), best_throughput=1.96))

    def estimate(value, low, high):
        return {"values": [low, value, high], "value": value, "low": low, "high": high, "spread": 0.1}

    vs = {"ratio": 1.09, "low": 0.97, "high": 1.21, "significant": False}
    summary = {"best": "iter-2", "best_iter": 2, "vs": {"default": vs, "iter-1": None},
               "measured": {"iter-2": {"estimate": estimate(1.90, 1.80, 2.02)},
                            "iter-1": {"estimate": estimate(1.70, 1.6, 1.8)},
                            "default": {"estimate": estimate(1.75, 1.70, 1.81)}}}
    store.write_outputs(final_pick=2, summary=summary)
    [ax] = figures[0].axes
    labels = dict(zip(*reversed(ax.get_legend_handles_labels())))
    assert "default (measured before tuning)" in labels
    [line] = [h for label, h in labels.items() if label.startswith("default (final comparison")]
    assert set(line.get_ydata()) == {1.75} and line.get_linestyle() == ":"
    assert "1.09x (0.97-1.21)" in next(label for label in labels if label.startswith("default (final comparison"))
    [pick] = [h for label, h in labels.items() if label.startswith("final pick in the final comparison")]
    [(x, y)] = pick.lines[0].get_xydata()
    assert (x, y) == (2, 1.90)
    assert sorted(pick.lines[2][0].get_segments()[0][:, 1]) == [1.80, 2.02]  # its interval
    markers_clear_and_inside(figures[0])


def test_the_progress_plot_says_its_staircase_is_a_maximum_of_noise_and_keeps_the_axis_label_clear():
    """The staircase (3.3 to 4.7 GFLOPS) sat far above dashed baselines measured before tuning under other load
    (about 2.0), which read as a 2.3x gain the final comparison did not find, and the legend covered the x-axis label
    "iteration". The baselines are drawn lighter, the title says what the staircase is and which figures to read, and
    the legend sits under the axis label."""
    records = [record(1, 3.3, best_iter=1), replace(record(2, 3.1, best_iter=1), best_throughput=3.3),
               record(3, 4.7, best_iter=3)]
    for final in (None, {"pick": {"values": [4.0, 4.2, 4.4], "value": 4.2, "low": 4.0, "high": 4.4, "spread": 0.1},
                         "references": {"default": (3.98, None), "expert": (4.18, None)}}):
        fig = progress_figure(records, title="circuit — guided", baselines={"default": 2.06, "expert": 1.97},
                              final_pick=3, final=final)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        [ax] = fig.axes
        labels = dict(zip(*reversed(ax.get_legend_handles_labels())))
        staircase = labels["best so far"]
        for name in ("default", "expert"):
            before = labels[f"{name} (measured before tuning)"]
            assert before.get_alpha() is not None and before.get_alpha() <= 0.6, name
            assert before.get_linewidth() < staircase.get_linewidth()
        title = " ".join(ax.get_title().split())
        assert title.startswith("circuit — guided")
        assert "trimmed mean" in title and "beyond the noise" in title, title
        assert ("read the final comparison" if final else "the final comparison") in title.lower(), title
        label = ax.xaxis.label.get_window_extent(renderer)
        legend = ax.get_legend().get_window_extent(renderer)
        assert legend.y1 < label.y0, (legend, label)  # under the label, not over it
        assert legend.y0 >= 0 and fig.bbox.y1 >= ax.title.get_window_extent(renderer).y1  # inside the figure
        markers_clear_and_inside(fig)


def test_the_progress_plot_of_two_final_rounds_fits_its_legend_and_claims_no_interval():
    """`tune --final-rounds 2`: the references' legend entries (with the pick's ratio and why it has no interval) ran
    off both edges of progress.png, the pick's entry said "(90% interval)" of an interval there is none of, and the
    title said the staircase is "the maximum of noisy single measurements", which is not the loop's rule. The legend
    lies inside the figure, the pick's entry names no interval, and the title states the rule."""
    records = [record(1, 0.0160, best_iter=1), record(2, 0.0680, best_iter=2),
               replace(record(3, 0.0570, best_iter=2), best_throughput=0.0680),
               replace(record(4, 0.0640, best_iter=2), best_throughput=0.0680)]
    why = "2 executions each: too few for a 90 % interval, which takes 3"
    vs = {"default": {"ratio": 1.44, "low": 1.30, "high": 1.59, "significant": False, "no_interval": why},
          "expert": {"ratio": 0.94, "low": 0.65, "high": 1.58, "significant": False, "no_interval": why}}
    final = {"pick": {"values": [0.0873, 0.0790], "value": 0.0832, "low": 0.0790, "high": 0.0873, "spread": 0.1},
             "references": {"default": (0.0578, vs["default"]), "expert": (0.0884, vs["expert"])}}
    fig = progress_figure(records, title="stencil — guided", baselines={"default": 0.058, "expert": 0.11},
                          final_pick=4, final=final)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    [ax] = fig.axes
    legend = ax.get_legend().get_window_extent(renderer)
    assert fig.bbox.x0 <= legend.x0 and legend.x1 <= fig.bbox.x1, (legend, fig.bbox)  # not cut at either edge
    assert fig.bbox.y0 <= legend.y0, (legend, fig.bbox)
    labels = ax.get_legend_handles_labels()[1]
    [pick] = [label for label in labels if label.startswith("final pick in the final comparison")]
    assert "interval" not in pick and "2 executions" in pick, pick
    assert any("1.44x" in label and "too few" in " ".join(label.split()) for label in labels), labels
    title = " ".join(ax.get_title().split())
    assert "maximum of noisy single measurements" not in title and "climbs with noise" not in title, title
    assert "trimmed mean" in title and "beyond the noise" in title and "re-measured together" in title, title
    assert "diamond with its interval" not in title, title
    markers_clear_and_inside(fig)


def test_open_rejects_a_folder_that_is_not_a_tuning_run(tmp_path):
    with pytest.raises(MapperoptError, match="not a tuning folder"):
        TuneStore.open(tmp_path)


def test_a_journal_written_by_version_1_still_loads():
    store = TuneStore.open(DATA / "tune-v1")
    assert [r.iter for r in store.records] == [1, 2, 3]
    assert store.records[2].cached and store.records[2].cached_from == 1
    assert store.best().iter == 2
    assert json.loads((DATA / "tune-v1" / "settings.json").read_text())["schema"] == "mapperopt.tune.settings/1"


HOLD = """
import sys, time
from pathlib import Path
from mapperopt.optimizer.store import TuneStore, progress_figure
store = TuneStore.open(Path(sys.argv[1]))
store.lock()
print("locked", flush=True)
time.sleep(120)
"""


def test_one_writer_per_folder_and_the_second_is_told_who(tmp_path):
    import subprocess
    import sys

    store = TuneStore.create(tmp_path, "circuit", {"iters": 3})
    root = store.root
    store.unlock()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(root)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        other = TuneStore.open(root)  # reading needs no lock
        with pytest.raises(MapperoptError) as err:
            other.append(record(1, 1.0))
        assert f"is in use by process {holder.pid}" in str(err.value) and "--new" in err.value.hint
        assert other.records == [] and (root / "state.jsonl").read_text() == ""
    finally:
        holder.kill()
        holder.wait()
    # The kernel released the dead holder's lock: the folder can be written again.
    other.append(record(1, 1.0))
    assert len(TuneStore.open(root).records) == 1


def test_transient_failures_are_never_reused_from_the_cache(tmp_path):
    store = TuneStore.create(tmp_path, "circuit", {})
    timeout = record(1, None, key="same", stage="timeout")
    store.append(timeout)
    killed = record(2, None, key="killed", result={"attempts": [{"exit_code": -9}]})
    store.append(killed)
    assert timeout.transient and killed.transient
    assert store.lookup("same") is None and store.lookup("killed") is None
    crashed = record(3, None, key="crash", result={"attempts": [{"exit_code": -11}]})
    store.append(crashed)
    assert not crashed.transient and store.lookup("crash") == crashed


def test_best_is_the_iteration_the_loop_named(tmp_path):
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 1.0, best_iter=1))
    store.append(record(2, 1.05, best_iter=1))  # faster, but within the noise: not the best
    assert store.best().iter == 1
    store.write_outputs()
    assert (store.root / "best.dsl").exists() and not list(store.root.glob(".*.png"))
    rows = list(csv.DictReader((store.root / "history.csv").open()))
    assert [r["best_iter"] for r in rows] == ["1", "1"]


def test_a_faster_looking_iteration_kept_out_by_the_noise_is_flagged():
    # tune and compare print why such an iteration is not the best (a new user read it as a bug)
    kept = record(3, 1.61, best_iter=1)
    kept = IterationRecord(**{**kept.__dict__, "best_throughput": 1.47})
    assert kept.kept_out_by_noise
    assert not record(3, 1.61, best_iter=3).kept_out_by_noise          # it is the best
    assert not IterationRecord(**{**kept.__dict__, "throughput": 1.2}).kept_out_by_noise   # slower
    assert not record(3, None, best_iter=1).kept_out_by_noise  # failed


def test_tunes_progress_line_says_why_a_faster_looking_iteration_is_not_the_best():
    """The iteration's own line says it (the line printed again when a run continues, without the note printed
    live under it): `2.235 GFLOPS  best 1.999 GFLOPS` alone read as a bug."""
    from mapperopt.optimizer.commands import _line

    kept = IterationRecord(**{**record(2, 2.235, best_iter=1).__dict__, "best_throughput": 1.999, "unit": "GFLOPS"})
    line = _line(kept, 10)
    assert "2.235 GFLOPS  best 1.999 GFLOPS (iteration 1; this one is within the noise of it)" in line, line
    best = IterationRecord(**{**kept.__dict__, "best_iter": 2, "best_throughput": 2.235})
    assert "noise" not in _line(best, 10)


def test_the_same_command_continues_its_unfinished_folder_after_a_later_one_finished(tmp_path, capsys):
    """Two tunes of one command at once: A killed after 1 iteration, B (started a moment later) finished. The same
    command again said B was finished and started a new folder, never offering A; the docs say it continues the
    latest unfinished folder made with the same options."""
    from mapperopt.optimizer.commands import _latest

    request = {"bench": "circuit", "seed": 0}
    settings = {"iters": 3, "iterations": None, "request": request}
    runs = tmp_path / "runs"
    a = TuneStore.create(runs, "circuit", settings, root=runs / "circuit" / "tune-20261204-182100-aaaaaa")
    a.append(record(1, 2.0))
    b = TuneStore.create(runs, "circuit", settings, root=runs / "circuit" / "tune-20261204-182100-bbbbbb")
    for i in (1, 2, 3):
        b.append(record(i, 2.0))
    (b.root / "summary.json").write_text("{}\n")
    other = TuneStore.create(runs, "circuit", {**settings, "request": {**request, "seed": 1}},
                             root=runs / "circuit" / "tune-20261204-182200-cccccc")  # another command's
    other.append(record(1, 2.0))
    for store in (a, b, other):
        store.unlock()
    assert _latest(runs, "circuit", request, None) == (a.root, None)
    # Finished too: the latest finished one is named (to extend it instead of starting afresh).
    for i in (2, 3):
        a.append(record(i, 2.0))
    (a.root / "summary.json").write_text("{}\n")
    assert _latest(runs, "circuit", request, None) == (None, b.root)
    # Asked for more iterations than both have: both unfinished, the latest continues.
    assert _latest(runs, "circuit", request, 5) == (b.root, None)
    # A folder that cannot be read is skipped, and said so.
    damaged = other.root / "settings.json"
    damaged.write_text(damaged.read_text()[:50])
    capsys.readouterr()
    assert _latest(runs, "circuit", request, 5) == (b.root, None)
    assert f"Note: {damaged} is damaged: not valid JSON" in " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("given", [["--llm-api-key", "sk-secret"], ["--llm-api-key=sk-secret"]])
def test_the_owner_record_keeps_no_api_key_given_on_the_command_line(tmp_path, monkeypatch, given):
    # owner.json names the command that holds the folder, and the "in use" error quotes it: --help promises that
    # the key is never stored.
    monkeypatch.setattr("sys.argv", ["mapperopt", "tune", "circuit", *given, "--iters", "2"])
    root = TuneStore.create(tmp_path, "circuit", {"iters": 2}).root
    owner = (root / "owner.json").read_text()
    assert "sk-secret" not in owner
    # quoted, as it can be copied
    assert json.loads(owner)["command"] == "mapperopt tune circuit '--llm-api-key=***' --iters 2"


@pytest.mark.parametrize("journal", ["", None])  # emptied (a stray `>`, a crash), or deleted
def test_a_journal_emptied_under_a_run_refuses_to_redo_it(tmp_path, journal):
    """An emptied state.jsonl in a finished folder made `tune --resume` run every iteration again, silently, over
    iter-001/... (their measurements replaced). Iteration folders or outputs that the journal does not record are
    refused, naming what is there, and nothing is changed."""
    store = TuneStore.create(tmp_path, "circuit", {"iters": 3})
    for i in (1, 2, 3):
        (store.iter_dir(i) / "result.json").write_text("{}")
        store.append(record(i, 2.0 + i))
    store.write_outputs()
    store.write_summary({"best_dsl": "Task * CPU;\n"})
    store.unlock()
    path = store.root / "state.jsonl"
    if journal is None:
        path.unlink()
    else:
        path.write_text(journal)
    before = sorted(p.relative_to(store.root) for p in store.root.rglob("*"))
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    text = raised.value.message + " " + raised.value.hint
    assert f"{path} is {'empty' if journal is not None else 'missing'}" in text, text
    assert "iter-001 to iter-003, best.dsl, history.csv, progress.png, summary.json" in text, text
    assert "restore state.jsonl from a copy" in text and "--new" in text, text
    assert sorted(p.relative_to(store.root) for p in store.root.rglob("*")) == before


def test_iteration_folders_past_the_journals_end_are_refused(tmp_path):
    """A journal that lost whole lines (iterations 2 and 3 of 3): their folders would be made anew and overwritten.
    The folder of the one iteration after the journal's end is an interrupted attempt's, and is not refused."""
    store = TuneStore.create(tmp_path, "circuit", {"iters": 3})
    for i in (1, 2, 3):
        store.iter_dir(i)
        store.append(record(i, 2.0))
    store.unlock()
    path = store.root / "state.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0])
    with pytest.raises(MapperoptError, match=r"state\.jsonl records 1 iteration, but iter-003 is there"):
        TuneStore.open(store.root)
    path.write_text("".join(lines[:2]))
    assert len(TuneStore.open(store.root).records) == 2  # iter-003: iteration 3 never recorded, run again


@pytest.mark.parametrize("i", [2, 4])
def test_a_file_where_an_iterations_folder_belongs_is_refused(tmp_path, i):
    """iter-002 replaced by a file (a stray `echo x > iter-002`) was taken without a word, the summary naming the file
    as the best's run folder; the one after the journal's end (an interrupted attempt's) is made over at the next
    iteration. As for the journal or the final comparison's folder, it is refused, naming it, with nothing changed."""
    store = TuneStore.create(tmp_path, "circuit", {"iters": 4})
    for n in (1, 2, 3):
        store.iter_dir(n)
        store.append(record(n, 2.0))
    store.unlock()
    path = store.root / f"iter-{i:03d}"
    shutil.rmtree(path, ignore_errors=True)
    path.write_text("x\n")
    before = {p: p.read_bytes() for p in store.root.rglob("*") if p.is_file()}
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert raised.value.message == f"{path} is a file, where mapperopt keeps an iteration's run folder", raised.value
    assert raised.value.hint == "remove or rename it, then run the same command again"
    assert {p: p.read_bytes() for p in store.root.rglob("*") if p.is_file()} == before


def test_a_damaged_best_program_is_written_again_from_the_journal(tmp_path):
    """best.dsl is derived from the journal: one that is not UTF-8 any more (a crash, a stray write) stopped the next
    iteration with a UnicodeDecodeError."""
    store = TuneStore.create(tmp_path, "circuit", {})
    store.append(record(1, 2.0, dsl="Task * CPU;\n"))
    (store.root / "best.dsl").write_bytes(b"\xff\xfe\x00Task")
    store.write_outputs()
    assert (store.root / "best.dsl").read_text() == "Task * CPU;\n"


@pytest.mark.parametrize("damage", ["settings", "journal"])
def test_a_damaged_file_of_a_comparisons_run_hints_at_the_comparison_folder(tmp_path, damage):
    """A tuning run of a comparison (compare-*/random-1/) is restored with its comparison, whose other files its
    records go with (evaluations/, final.json): the hint names the comparison folder, not a tuning folder."""
    from mapperopt.optimizer.compare import SCHEMA

    comparison = tmp_path / "compare-0123456789"
    comparison.mkdir()
    (comparison / "settings.json").write_text(json.dumps({"schema": SCHEMA, "bench": "circuit"}))
    store = TuneStore.create(tmp_path, "circuit", {"optimizer": "random", "compare": ".."},
                             root=comparison / "random-1")
    for i in (1, 2):
        store.append(record(i, 2.0))
    store.unlock()
    if damage == "settings":
        (store.root / "settings.json").write_text("[]")
    else:
        path = store.root / "state.jsonl"
        path.write_text("{\x00\n" + path.read_text().splitlines(keepends=True)[1])
    with pytest.raises(MapperoptError, match="damaged") as caught:
        TuneStore.open(store.root)
    # a damaged record: what to delete to go on, by the comparison's command that tunes
    cut = ("delete line 1 and every line after it from state.jsonl, then run the command without --report-only: it "
           "runs iteration 1 and the later ones of random-1 again; or " if damage == "journal" else "")
    assert caught.value.hint == cut + "restore the comparison folder from a copy, or start a new one with `--new`"


def test_a_lost_settings_file_under_iterations_is_refused_naming_them(tmp_path):
    """settings.json deleted from a folder with iterations: it was called "not a tuning folder", with the hint to
    pass the folder `mapperopt tune` printed, which it is. It says what is there, that nothing was changed, and
    what to restore."""
    store, _ = journal_of_three(tmp_path)
    store.iter_dir(1)
    path = store.root / "settings.json"
    path.unlink()
    before = sorted(p.relative_to(store.root) for p in store.root.rglob("*"))
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    text = f"{raised.value.message} hint: {raised.value.hint}"
    assert f"{store.root} has no settings.json, but state.jsonl, iter-001 are there" in text, text
    assert "nothing was changed" in text and "restore settings.json from a copy" in text, text
    assert "pass the folder" not in text, text
    assert sorted(p.relative_to(store.root) for p in store.root.rglob("*")) == before


def test_a_folder_in_place_of_the_settings_file_is_named_with_what_to_do(tmp_path):
    store = TuneStore.create(tmp_path, "circuit", {})
    store.unlock()
    path = store.root / "settings.json"
    path.unlink()
    path.mkdir()
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert raised.value.message == f"{path} is a folder, where mapperopt keeps a file", raised.value
    assert raised.value.hint == "remove or rename it, then run the same command again"


def test_a_repeated_journal_line_is_named_as_such_with_what_to_do(tmp_path):
    """A journal whose last record is there twice (a copy, an edit) said "iteration 3 found where 4 was expected",
    with no hint."""
    store, path = journal_of_three(tmp_path)
    path.write_text(path.read_text() + path.read_text().splitlines(keepends=True)[2])
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert raised.value.message == (f"{path} line 4 records iteration 3 again (as line 3 does), where iteration 4 "
                                    "was expected: its records number the iterations 1, 2, 3, ... in order"), \
        raised.value
    assert raised.value.hint == ("delete line 4, a copy of line 3, then run the same command again; or restore the "
                                 "tuning folder from a copy, or start a new one with `--new`")


@pytest.mark.parametrize("name", ["best.dsl", "history.csv", "progress.png"])
def test_a_folder_where_an_output_belongs_is_refused_before_the_folder_is_written(tmp_path, name):
    """best.dsl, history.csv or progress.png a folder was found only when the outputs were written, after an
    iteration had run; as for the journal and the lock, it is refused when the folder is taken for writing."""
    store, _ = journal_of_three(tmp_path)
    (store.root / name).mkdir()
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root).lock()
    assert raised.value.message == f"{store.root / name} is a folder, where mapperopt keeps a file", raised.value
    assert raised.value.hint == "remove or rename it, then run the same command again"


def test_a_settings_file_naming_another_program_than_its_request_is_refused(tmp_path):
    """settings.json's `app` edited to another benchmark: continued, the run mixed two programs in one journal
    (stencil's iterations appended to circuit's, under circuit's baselines)."""
    from mapperopt.benchmarks import load_config

    store = TuneStore.create(tmp_path, "circuit", {"request": {"bench": "circuit"},
                                                   "app_description": load_config("circuit").stored_description()})
    store.unlock()
    path = store.root / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "app": "stencil"}))
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert raised.value.message == (f"{path} is damaged: its field 'app' is 'stencil', but its fields "
                                    "'request.bench' and 'app_description.app' are 'circuit'"), raised.value
    assert raised.value.hint.startswith("set its 'app' back to \"circuit\" (its iterations are that program's); or "
                                        "restore the tuning folder from a copy"), raised.value.hint


@pytest.mark.parametrize("field", ["cpus", "gpus"])
def test_a_processor_count_edited_without_reference_runs_is_refused(tmp_path, field):
    """A user's program tuned with --baseline none has no reference runs to tell an edited `cpus` or `gpus` by:
    continued, its next iterations ran on another machine than the earlier ones. The count given is the request's."""
    store = TuneStore.create(tmp_path, "circuit", {"request": {"bench": "circuit", "cpus": 2, "gpus": 0},
                                                   "cpus": 2, "gpus": 0})
    store.unlock()
    path = store.root / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), field: 3}))
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    made = 2 if field == "cpus" else 0
    assert raised.value.message == (f"{path} is damaged: its field '{field}' is 3, but its field 'request.{field}' "
                                    f"(the --{field} it was made with) is {made}"), raised.value
    assert raised.value.hint.startswith(f"set its '{field}' back to {made} ("), raised.value.hint


def test_a_settings_file_naming_another_program_everywhere_but_in_its_tasks_is_refused(tmp_path):
    """`app`, `request.bench` and `app_description.app` all edited to stencil in a circuit folder: the three names
    agree, and the run went on as stencil's (stencil built and run, its iterations appended to circuit's, under
    circuit's baselines). The description's tasks are still circuit's, which stencil has not."""
    from mapperopt.benchmarks import load_config

    described = load_config("circuit").stored_description()
    store = TuneStore.create(tmp_path, "circuit", {"request": {"bench": "circuit"}, "app_description": described})
    store.unlock()
    path = store.root / "settings.json"
    settings = json.loads(path.read_text())
    path.write_text(json.dumps({**settings, "app": "stencil", "request": {"bench": "stencil"},
                                "app_description": {**described, "app": "stencil"}}))
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert raised.value.message == (
        f"{path} is damaged: its field 'app' is 'stencil', but its field 'app_description.tasks' names the tasks "
        "init_piece, init_pointers, calculate_new_currents, distribute_charge, update_voltages and check_circuit, "
        "and stencil's are init_tile, stencil, increment and check"), raised.value
    assert raised.value.hint.startswith("the tasks are circuit's: if its iterations are too (their programs name "
                                        "these tasks), set 'app', 'request.bench' and 'app_description.app' to "
                                        "\"circuit\"; or restore the tuning folder from a copy"), raised.value.hint
    path.write_text(json.dumps(settings))
    TuneStore.open(store.root)  # as written: taken


def tuning_settings() -> dict:
    """The settings a resumed run reads, as `tune` writes them for circuit on a machine of 2 CPUs."""
    from mapperopt.benchmarks import load_config
    from mapperopt.descriptions import parse_machine_spec

    return {"size": "ci", "cpus": 2, "gpus": 0, "memory": {}, "repeats": 3, "max_repeats": 5, "min_time_s": 0.5,
            "timeout_s": None, "optimizer": "guided", "seed": 0, "iters": 3, "iterations": 100, "start": "default",
            "feedback_level": "suggest", "search_layouts": True, "app_args": [], "request": {"bench": "circuit"},
            "app_description": load_config("circuit").stored_description(),
            "machine": parse_machine_spec("1x0x2").to_json()}


def _without_memories(s: dict) -> None:
    del s["machine"]["memories"]


def _no_memory_on_node_0(s: dict) -> None:
    s["machine"]["memories"][0]["node"] = 1


@pytest.mark.parametrize("edit, why", [
    (lambda s: s["machine"]["processors"].update(CPU=[-1]),
     "its field 'machine.processors.CPU[0]' is -1, not an integer >= 0"),
    (lambda s: s["machine"]["processors"].update(CPU=[2, 2]),
     "its field 'machine' is no machine description: processors['CPU'] lists 2 nodes; the machine has 1"),
    (lambda s: s["machine"]["processors"].update(CPU=[0]),
     "its field 'machine.processors' lists no CPU or GPU processor on node 0"),
    (_without_memories, "its field 'machine.memories' is missing"),
    (_no_memory_on_node_0, "its field 'machine.memories' lists no memory of node 0"),
    (lambda s: s.update(feedback_level="loud"),
     "its field 'feedback_level' is 'loud', not one of 'raw', 'explain', 'suggest'"),
    (lambda s: s.update(optimizer="nosuch"),
     "its field 'optimizer' is 'nosuch', not one of 'guided', 'trace', 'opentuner', 'optuna', 'random'"),
    (lambda s: s.update(cpus=0), "its field 'cpus' is 0, not an integer >= 1"),
    (lambda s: s.update(baseline=None), "its field 'baseline' is null, not one of 'expert', 'default', 'both', 'none'"),
    (lambda s: s.update(optimizer=[]),
     "its field 'optimizer' is a list, not one of 'guided', 'trace', 'opentuner', 'optuna', 'random'"),
    (lambda s: s.update(baseline_failures=1), "its field 'baseline_failures' is a number, not an object"),
    (lambda s: s.update(gpus=-1), "its field 'gpus' is -1, not an integer >= 0"),
    (lambda s: s.update(repeats=0), "its field 'repeats' is 0, not an integer >= 1"),
    (lambda s: s.update(max_repeats=2), "its field 'max_repeats' is 2, below its field 'repeats', 3"),
    (lambda s: s.update(memory={"csize": 0}), "its field 'memory.csize' is 0, not an integer >= 1"),
    (lambda s: s.update(min_time_s=-1), "its field 'min_time_s' is -1, not a number >= 0 or null"),
    (lambda s: s.update(timeout_s=1e-9), "its field 'timeout_s' is 1e-09, not a number >= 0.1 or null"),
    (lambda s: s.update(search_layouts="yes"), "its field 'search_layouts' is a string, not true or false"),
    # was named as a program, '[]', with a hint to set 'app' to it
    (lambda s: s["request"].update(bench=[]), "its field 'request.bench' is a list, not a string")])
def test_a_settings_value_of_the_right_kind_but_not_allowed_is_refused_when_the_folder_is_opened(tmp_path, edit,
                                                                                                 why):
    """settings.json values of the right JSON kind that no run could have written (an edit): a machine without a CPU
    or GPU processor (a traceback from the search space), a feedback level or count out of range (an iteration run,
    final/ moved, then an error naming neither file nor field), memories deleted or a string for a flag (taken
    silently), a timeout below the shortest that --timeout takes (every execution journalled as timed out)."""
    settings = tuning_settings()
    store = TuneStore.create(tmp_path, "circuit", settings)
    store.unlock()
    TuneStore.open(store.root)  # as written: taken
    path = store.root / "settings.json"
    edit(settings)
    path.write_text(json.dumps({**json.loads(path.read_text()), **settings}))
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert raised.value.message == f"{path} is damaged: {why}", raised.value
    assert raised.value.hint == "restore the tuning folder from a copy, or start a new one with `--new`"


@pytest.mark.parametrize("line, damage, cut, removed", [
    # the folders of every iteration run again, the damaged line's included (not only those after it: the hints of
    # lines 1 and 2 read as if they disagreed)
    (2, {"throughput": -1}, "delete line 2 and every line after it from state.jsonl, and the folders iter-002 and "
                            "iter-003", ["iter-002", "iter-003"]),
    (2, {"iter": 7}, "delete line 2 and every line after it from state.jsonl, and the folders iter-002 and iter-003",
     ["iter-002", "iter-003"]),
    (1, {"throughput": -1}, "delete line 1 and every line after it from state.jsonl, the folders iter-001, iter-002 "
                            "and iter-003, and best.dsl, history.csv and progress.png",
     ["iter-001", "iter-002", "iter-003", "best.dsl", "history.csv", "progress.png"])])
def test_a_damaged_record_inside_the_journal_is_refused_with_a_way_to_go_on(tmp_path, line, damage, cut, removed):
    """A record inside the journal that cannot be read (or numbers another iteration) was refused with only "restore
    the folder from a copy, or start a new one": a user without a copy lost the run. The hint says what to delete so
    that the run goes on, running again the iterations from the damaged one on; done, the folder opens."""
    store, path = journal_of_three(tmp_path)
    for i in (1, 2, 3):
        (store.root / f"iter-{i:03d}").mkdir()
    store.write_outputs()
    lines = path.read_text().splitlines(keepends=True)
    lines[line - 1] = json.dumps({**json.loads(lines[line - 1]), **damage}) + "\n"
    path.write_text("".join(lines))
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert raised.value.hint == (f"{cut}, then run the same command again: it runs iteration {line} and the later ones "
                                 "again; "
                                 "or restore the tuning folder from a copy, or start a new one with `--new`"), \
        raised.value.hint

    path.write_text("".join(lines[:line - 1]))  # as the hint says
    for name in removed:
        target = store.root / name
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    reopened = TuneStore.open(store.root)
    assert [r.iter for r in reopened.records] == list(range(1, line)) and reopened.damaged == []


def test_a_tuning_folder_made_in_the_same_second_as_another_sorts_after_it(tmp_path):
    """The same tune command continues the latest of its folders, the latest found by name; two folders made in one
    second were ordered by their random suffix, so a finished run could sort before an older unfinished one (a
    rebuild's `--new` run, then the same command refused the old folder as another build)."""
    last = tmp_path / "circuit" / f"tune-{time.strftime('%Y%m%d-%H%M%S')}-ffffff"  # the largest suffix
    last.mkdir(parents=True)
    root = TuneStore.new_root(tmp_path, "circuit")
    assert root.name > last.name and not root.exists(), root


def test_swapped_journal_lines_are_said_to_be_out_of_order_with_the_line_that_records_the_iteration(tmp_path):
    """Lines 2 and 3 swapped: the hint said to delete line 2 and the lines after it, and their folders, which throws
    away measured iterations whose records are all there."""
    store, path = journal_of_three(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + lines[2] + lines[1])
    with pytest.raises(MapperoptError) as raised:
        TuneStore.open(store.root)
    assert raised.value.message.startswith(f"{path} line 2 records iteration 3, where iteration 2 was expected"), \
        raised.value
    assert raised.value.hint == ("line 3 records iteration 2: put the lines in the order of their iterations (each "
                                 "line's \"iter\"), then run the same command again; or restore the tuning folder "
                                 "from a copy, or start a new one with `--new`"), raised.value.hint
