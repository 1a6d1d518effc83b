"""A comparison folder whose files hold valid JSON of a wrong shape, at any depth (a copy of another file, an edit,
`echo '[]' >`): resuming it ends with an error naming the damaged file and field, or goes on with a note (a file
made again from what it comes from), never with a Python traceback, and no file of the folder is lost. One small
real comparison on Stencil (ci size), damaged at random (hypothesis); a tuning folder likewise."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mapperopt.cli import main

# The command that made the comparison, resumed: everything is measured already, so nothing is measured again
# unless the damage asks for it.
ARGS = ["--iters", "2", "--runs", "1", "--optimizers", "random", "--final-rounds", "1"]
# The comparison folder's files that hold JSON objects, as its code reads them. The descriptions of the application
# and the machine in settings.json are left out here (a field's kind changed there can still be a kind they take, a
# task's parent null or named, which changes the program searched): `test_a_wrong_shape_in_the_stored_descriptions_
# is_named` checks the kinds they must have.
FILES = ("settings.json", "final.json", "expert.json", "summary.json", "baseline-expert/result.json",
         "random-1/settings.json")
DESCRIPTIONS = ("app_description", "machine")

JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner,
                                                                                max_size=2),
                    max_leaves=4)


@pytest.fixture(scope="module")
def comparison(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("made") / "runs"
    assert main(["compare", "stencil", "--size", "ci", "--start", "default", "--repeats", "1", "--max-repeats", "1",
                 "--min-time", "0.05", "--runs-dir", str(runs), *ARGS]) == 0
    [folder] = (runs / "stencil").iterdir()
    return folder


def paths(value, at=()) -> list[tuple]:
    """Every place in the JSON `value` (keys and list indices from its top), but inside the descriptions."""
    inner = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [at] * bool(at) + [p for k, v in inner if k not in DESCRIPTIONS for p in paths(v, (*at, k))]


def damage(path: Path, data) -> None:
    """Replaces one value anywhere in the JSON object of `path` by one of another kind, drawn from `data`."""
    content = json.loads(path.read_text())
    *parent, last = data.draw(st.sampled_from(paths(content)), label="field")
    holder = content
    for key in parent:
        holder = holder[key]
    holder[last] = data.draw(JSON.filter(lambda v: kind(v) != kind(holder[last])), label="value")
    path.write_text(json.dumps(content))


def said(capsys, status: int, path: Path, kind: str) -> None:
    """Checks the command's end: no traceback; an error (a damaged file's names the file and how to restore its
    `kind` of folder) or success."""
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert "Traceback" not in text, text
    if status == 1:
        assert "error: " in text, text
        if f"{path} is damaged: its field '" in text:  # named by its path in the file
            # final.json, the record of the final measurement, can be measured again instead
            restored = "final.json" if path.name == "final.json" else f"the {kind} folder"
            # first the value to set back, where the folder tells it (`request.cpus` [] for the `cpus` measured)
            assert re.search(rf"hint: (set its '[^']+' back to .+; or )?restore {restored} from a copy", text), text
    else:
        assert status == 0, text


def kind(value) -> str:
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_wrong_shape_anywhere_in_a_comparisons_files_is_named(comparison, tmp_path_factory, capsys, data):
    folder = tmp_path_factory.mktemp("damaged") / comparison.name
    shutil.copytree(comparison, folder)
    path = folder / data.draw(st.sampled_from(FILES), label="file")
    damage(path, data)
    before = {p.relative_to(folder) for p in folder.rglob("*")}
    capsys.readouterr()

    status = main(["compare", "--resume", str(folder), *ARGS])

    said(capsys, status, path, "comparison")
    lost = before - {p.relative_to(folder) for p in folder.rglob("*")}
    assert not lost, lost


@pytest.fixture(scope="module")
def tuning(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("made") / "runs"
    assert main(["tune", "stencil", "--size", "ci", "--iters", "1", "--start", "default", "--repeats", "1",
                 "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "1", "--baseline", "default",
                 "--runs-dir", str(runs)]) == 0
    [folder] = (runs / "stencil").iterdir()
    return folder


# Extended by one iteration, the finished run reads them all (each example measures: few of them).
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_wrong_shape_anywhere_in_a_tuning_folders_files_is_named(tuning, tmp_path_factory, capsys, data):
    folder = tmp_path_factory.mktemp("damaged") / tuning.name
    shutil.copytree(tuning, folder)
    path = folder / data.draw(st.sampled_from(("settings.json", "summary.json", "baseline-default/result.json")),
                              label="file")
    damage(path, data)
    before = {p.relative_to(folder) for p in folder.rglob("*")}
    capsys.readouterr()

    status = main(["tune", "--resume", str(folder), "--iters", "2"])

    said(capsys, status, path, "tuning")
    # once the run goes on, its final comparison (summary.json, final/) is kept in final-1/ (damaged or not)
    after = {p.relative_to(folder) for p in folder.rglob("*")}
    moved = {Path("summary.json"): Path("final-1/summary.json")}
    lost = [p for p in before if p not in after and moved.get(p, Path("final-1", *p.parts[1:]) if p.parts[0] ==
                                                              "final" else p) not in after]
    assert not lost, lost


@pytest.mark.parametrize("keys, value", [(("settings", "min_time_s"), None), (("settings",), "cpus min_time_s"),
                                         (("trimmed_mean",), "x")])
def test_a_references_result_of_another_kind_is_no_traceback_in_the_settings_check(tuning, tmp_path, capsys, keys,
                                                                                     value):
    """The settings check compares settings.json's counts and baselines with the reference runs' result.json: a
    value there of another kind (found by the fuzz above: `min_time_s` null) was a TypeError traceback."""
    folder = tmp_path / tuning.name
    shutil.copytree(tuning, folder)
    path = folder / "baseline-default" / "result.json"

    def put(result: dict) -> None:
        holder = result
        for key in keys[:-1]:
            holder = holder[key]
        holder[keys[-1]] = value

    edited(path, put)
    capsys.readouterr()
    said(capsys, main(["tune", "--resume", str(folder), "--iters", "2"]), path, "tuning")


@pytest.mark.parametrize("reference", [-1.0, 0])
def test_an_impossible_reference_throughput_of_a_final_group_is_named(comparison, tmp_path, capsys, reference):
    """A final group's `reference` (the reference mapper's throughput the group's scores divide by) is a figure like
    the measurements beside it: 0 or below is damage, named, never a report with negative or re-normalised scores."""
    folder = tmp_path / comparison.name
    shutil.copytree(comparison, folder)
    final = json.loads((folder / "final.json").read_text())
    final["groups"][0]["reference"] = reference
    (folder / "final.json").write_text(json.dumps(final))
    text = refused(folder, capsys)
    assert (f"error: {folder / 'final.json'} is damaged: its field 'groups[0].reference' is {reference!r}, not a "
            "positive number") in text, text
    assert "hint: restore final.json from a copy; or delete it" in text, text


@pytest.mark.parametrize("made", ["comparison", "tuning"])
@pytest.mark.parametrize("field, value, named", [
    ("app_description", {"tasks": 5}, "'app_description.tasks' is a number, not a list"),
    ("app_description", {"tasks": [{"regions": [{"fields": "x"}]}]},
     "'app_description.tasks[0].regions[0].fields' is a string, not a list"),
    ("machine", {"processors": {"CPU": "x"}}, "'machine.processors.CPU' is a string, not an integer >= 0 or a list"),
    ("machine", {"memories": [{"procs": {"CPU": [None]}}]}, "'machine.memories[0].procs.CPU[0]' is null, not an "
                                                            "integer")])
def test_a_wrong_shape_in_the_stored_descriptions_is_named(request, made, tmp_path, capsys, field, value, named):
    """settings.json keeps the application's and the machine's descriptions, which a resumed run reads (its search
    space, the checks of its programs): a field of the wrong kind in them is named like any other of the file,
    before anything is measured."""
    folder = tmp_path / made
    shutil.copytree(request.getfixturevalue(made), folder)
    settings = json.loads((folder / "settings.json").read_text())

    def merged(stored, damage):
        if isinstance(stored, dict) and isinstance(damage, dict):
            return {**stored, **{k: merged(stored.get(k), v) for k, v in damage.items()}}
        if isinstance(stored, list) and isinstance(damage, list):
            return [merged(s, d) for s, d in zip(stored, damage)]
        return damage

    settings[field] = merged(settings[field], value)
    (folder / "settings.json").write_text(json.dumps(settings))
    capsys.readouterr()

    args = ["compare", "--resume", str(folder), *ARGS] if made == "comparison" else \
        ["tune", "--resume", str(folder), "--iters", "2"]
    assert main(args) == 1
    text = " ".join(capsys.readouterr().err.split())
    assert f"error: {folder / 'settings.json'} is damaged: its field {named}" in text, text
    assert f"hint: restore the {'comparison' if made == 'comparison' else 'tuning'} folder from a copy" in text, text
    assert not (folder / "iter-002").exists()  # nothing measured


def _del_memories(settings: dict) -> None:
    del settings["machine"]["memories"]


def tune_refused(folder: Path, capsys) -> str:
    """Resumes the tuning `folder` to 2 iterations, which must be refused before anything in it is written or
    touched; returns its error output with whitespace collapsed."""
    before = {p.relative_to(folder): p.stat().st_mtime_ns for p in folder.rglob("*")}
    capsys.readouterr()
    assert main(["tune", "--resume", str(folder), "--iters", "2"]) == 1
    text = " ".join(capsys.readouterr().err.split())
    assert {p.relative_to(folder): p.stat().st_mtime_ns for p in folder.rglob("*")} == before, text
    return text


@pytest.mark.parametrize("edit, named", [
    (lambda s: s["machine"]["processors"].update(CPU=[-1]), "'machine.processors.CPU[0]' is -1, not an integer >= 0"),
    (lambda s: s.update(feedback_level="loud"), "'feedback_level' is 'loud', not one of 'raw', 'explain', 'suggest'"),
    (lambda s: s.update(cpus=0), "'cpus' is 0, not an integer >= 1"),
    (_del_memories, "'machine.memories' is missing"),
    (lambda s: s.update(search_layouts="yes"), "'search_layouts' is a string, not true or false"),
    (lambda s: s.update(timeout_s=1e-9), "'timeout_s' is 1e-09, not a number >= 0.1 or null"),
    (lambda s: s.update(iterations=0), "'iterations' is 0, not an integer >= 1 or null"),
    (lambda s: s["machine"].update(nodes=2), "'machine.nodes' is 2, but its field 'machine.processors.CPU' lists 1 "
                                             "node"),
    (lambda s: s["machine"]["memories"][0].update(kind="NOSUCH"),
     "'machine.memories[0].kind' is 'NOSUCH', not one of 'SYSMEM', 'FBMEM', 'ZCMEM', 'RDMEM', 'SOCKMEM'"),
    (lambda s: s["machine"]["memories"][0]["procs"].update(CPU=[99]),
     "'machine' is no machine description: memories[0].procs.CPU[0] is 99, but node 0 has "),
    (lambda s: (s.update(size="nosuch"), s["request"].update(size="nosuch")),
     "'size' is 'nosuch', not one of stencil's sizes: ci, small, gpu, tight")])
def test_a_settings_value_that_no_option_takes_is_refused_before_anything_runs(tuning, tmp_path, capsys, edit, named):
    """A tuning folder's settings.json edited to a value of the right kind that no option takes: it was a traceback
    (a machine without processors), an iteration run and final/ moved before an error naming neither file nor field
    (feedback level, cpus), taken silently (memories deleted, a string for a flag, a memory kind or processor that
    does not exist, a calibrated count of 0: the program's own), or every execution journalled as timed out (a
    timeout below --timeout's shortest); another size ran its problem into the journal, an unknown one was named
    with a hint to give --size, which a resumed run ignores. Named up front, and the folder is left as it was."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    settings = json.loads((folder / "settings.json").read_text())
    edit(settings)
    (folder / "settings.json").write_text(json.dumps(settings))
    text = tune_refused(folder, capsys)
    assert f"error: {folder / 'settings.json'} is damaged: its field {named}" in text, text
    back = "set its 'machine.nodes' back to 1; or " if "'machine.nodes'" in named else ""  # the way back, when known
    assert f"hint: {back}restore the tuning folder from a copy, or start a new one with `--new`" in text, text


@pytest.mark.parametrize("size", ["small", "nosuch"])
def test_a_tuning_folders_size_edited_is_refused_before_anything_runs(tuning, tmp_path, capsys, size):
    """settings.json's `size` edited in a tuning folder: continued, the run measured that size's problem with the
    calibration of its own and journalled it; an unknown size was named with a hint to give --size, which a resumed
    run ignores. Refused, naming the file, the field and the size the run was made with, before anything runs."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    edited(folder / "settings.json", lambda s: s.update(size=size))
    text = tune_refused(folder, capsys)
    assert (f"error: {folder / 'settings.json'} is damaged: its field 'size' is {size!r}, but its field "
            "'request.size' (the --size it was made with) is 'ci'") in text, text
    assert "hint: set its 'size' back to \"ci\" (its iterations were measured at that size); or restore the " \
           "tuning folder from a copy" in text, text
    assert "--size" not in text.split("hint:")[1], text


@pytest.mark.parametrize("field, value, made, why", [
    ("app_args", ["-nx", "64"], "arguments after --", "its iterations ran with those arguments"),
    ("optimizer", "random", "--optimizer", "its iterations were proposed by that optimizer"),
    ("seed", 7, "--seed", "its search was drawn from that seed")])
def test_a_tuning_folders_setting_edited_is_refused_as_its_size_is(tuning, tmp_path, capsys, field, value, made, why):
    """settings.json's `app_args`, `optimizer` or `seed` edited in a tuning folder: continued, the run measured
    another problem (`-p 8`) into its journal, or searched on with another optimizer or seed under the same header,
    silently. `request` records what the run was made with: refused as an edited `size` is, before anything runs."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    was = json.loads((folder / "settings.json").read_text())[field]
    assert was != value
    edited(folder / "settings.json", lambda s: s.update({field: value}))
    text = tune_refused(folder, capsys)
    assert (f"error: {folder / 'settings.json'} is damaged: its field '{field}' is {value!r}, but its field "
            f"'request.{field}' (the {made} it was made with) is {was!r}") in text, text
    assert f"hint: set its '{field}' back to {json.dumps(was)} ({why}); or restore the tuning folder from a copy" \
        in text, text


@pytest.mark.parametrize("field, value", [("cpus", 2), ("gpus", 1), ("min_time_s", 100)])
def test_a_tuning_folders_measured_setting_edited_is_refused(tuning, tmp_path, capsys, field, value):
    """settings.json's `cpus` edited (with the machine's count too, or not): the next iterations ran on 2 CPUs under
    a header saying so, the earlier ones and the baselines on 1. `request.cpus` is null when --cpus was not given,
    so the count is checked against the one the reference mappers were measured with; so is `min_time_s`, whose
    100 s the header claimed while calibration, which keeps an execution within half the timeout, gave ~11 s (a
    --min-time 100 is refused up front)."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    was = json.loads((folder / "settings.json").read_text())[field]
    edited(folder / "settings.json", lambda s: s.update({field: value}))
    text = tune_refused(folder, capsys)
    assert (f"error: {folder / 'settings.json'} is damaged: its field '{field}' is {value}, but the reference mappers "
            f"were measured with {was:g} (baseline-default/result.json)") in text, text
    assert f"hint: set its '{field}' back to {was:g}; or restore the tuning folder from a copy" in text, text


def test_a_tuning_folders_baseline_throughput_edited_is_refused(tuning, tmp_path, capsys):
    """settings.json's `baselines.default` edited (to 100): the header printed it and AutoGuide told every later
    iteration (and a model reading it) a false ratio to the default mapper. It is the trimmed mean of
    baseline-default/result.json: refused, naming that figure to set back."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    measured = json.loads((folder / "baseline-default" / "result.json").read_text())["trimmed_mean"]
    edited(folder / "settings.json", lambda s: s["baselines"].update(default=100.0))
    text = tune_refused(folder, capsys)
    assert (f"error: {folder / 'settings.json'} is damaged: its field 'baselines.default' is 100.0, but "
            f"baseline-default/result.json measured {measured!r}") in text, text
    assert f"hint: set its 'baselines.default' back to {measured!r}; or restore the tuning folder from a copy" \
        in text, text


def test_a_tuning_folders_request_size_edited_is_named_as_the_odd_field(tuning, tmp_path, capsys):
    """`request.size` edited instead of `size`: the two disagree as well, but the baselines were measured at `size`,
    so `request.size` is named, with the size to set back; setting `size` to it would measure another problem."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    edited(folder / "settings.json", lambda s: s["request"].update(size="small"))
    capsys.readouterr()

    assert main(["tune", "--resume", str(folder), "--iters", "2"]) == 1
    text = " ".join(capsys.readouterr().err.split())
    assert (f"error: {folder / 'settings.json'} is damaged: its field 'request.size' is 'small', but its field "
            "'size' (the size its baselines were measured at) is 'ci'") in text, text
    assert "hint: set its 'request.size' back to \"ci\"; or restore the tuning folder from a copy" in text, text


def test_a_tuning_folders_calibrated_count_edited_is_refused(tuning, tmp_path, capsys):
    """settings.json's `iterations` is the count the reference mappers were calibrated to, which every iteration
    runs: edited (to 1), the next iterations measured another problem than the earlier ones, under the same header.
    Refused, naming the count the references measured, before anything runs."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    calibrated = json.loads((folder / "settings.json").read_text())["iterations"]
    assert calibrated > 1
    edited(folder / "settings.json", lambda s: s.update(iterations=1))
    text = tune_refused(folder, capsys)
    assert (f"error: {folder / 'settings.json'} is damaged: its field 'iterations' is 1, but the reference mappers "
            f"were measured at {calibrated}, the count calibrated before tuning") in text, text
    assert f"hint: set its 'iterations' back to {calibrated}; or restore the tuning folder from a copy" in text, text


@pytest.mark.parametrize("field, value, named", [
    ("timeout_s", 1e-9, "'timeout_s' is 1e-09, not a number >= 0.1 or null"),
    ("iters", 0, "'iters' is 0, not an integer >= 1"),
    ("iters", -3, "'iters' is -3, not an integer >= 1"),
    ("repeats", 0, "'repeats' is 0, not an integer >= 1"),
    ("executions", 0, "'executions' is 0, not an integer >= 1"),
    ("min_time_s", -1, "'min_time_s' is -1, not a number >= 0"),
    ("cpus", 0, "'cpus' is 0, not an integer >= 1"),
    ("gpus", -1, "'gpus' is -1, not an integer >= 0"),
    ("optimizers", ["random", "nosuch"], "'optimizers[1]' is 'nosuch', not one of 'guided'")])
@pytest.mark.parametrize("report_only", [False, True])
def test_a_comparisons_settings_value_that_no_option_takes_is_refused_before_anything_runs(
        comparison, tmp_path, capsys, field, value, named, report_only):
    """A comparison's settings.json edited to a value of the right kind that no option takes: a timeout below the
    shortest journalled every run's next iteration as timed out for good; `iters` 0 was a traceback; `executions` 0
    or `min_time_s` -1 rewrote the report with them, `cpus` 0 failed with an error naming neither file nor field, an
    unknown optimizer read as a mistake on the command line. Each is held to what its option takes, as a tuning
    folder's is, and named up front; the folder is left as it was."""
    folder = tmp_path / "comparison"
    shutil.copytree(comparison, folder)
    settings = json.loads((folder / "settings.json").read_text())
    (folder / "settings.json").write_text(json.dumps({**settings, field: value}))
    before = {p.relative_to(folder): p.stat().st_mtime_ns for p in folder.rglob("*")}
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), *(["--report-only"] if report_only else ["--iters", "3"])]) == 1
    text = " ".join(capsys.readouterr().err.split())
    assert f"error: {folder / 'settings.json'} is damaged: its field {named}" in text, text
    assert "hint: restore the comparison folder from a copy" in text, text
    assert {p.relative_to(folder): p.stat().st_mtime_ns for p in folder.rglob("*")} == before


def copied(comparison: Path, tmp_path: Path) -> Path:
    folder = tmp_path / comparison.name
    shutil.copytree(comparison, folder)
    return folder


def edited(path: Path, edit) -> None:
    """Applies `edit` to the JSON object stored in `path`."""
    content = json.loads(path.read_text())
    edit(content)
    path.write_text(json.dumps(content))


def reports(folder: Path) -> dict:
    return {name: (folder / name).read_bytes() for name in ("summary.json", "summary.csv", "table.md", "runs.csv")}


def refused(folder: Path, capsys, report_only: bool = True) -> str:
    """Resumes the comparison `folder` (`--report-only`, or tuning to 3 iterations), which must be refused before
    anything is run or written; returns its error output with whitespace collapsed."""
    before = reports(folder)
    capsys.readouterr()
    status = main(["compare", "--resume", str(folder), *(["--report-only"] if report_only else
                                                          [*ARGS[:1], "3", *ARGS[2:]])])
    text = " ".join(capsys.readouterr().err.split())
    assert status == 1, text
    assert not (folder / "random-1" / "iter-003").exists()
    assert reports(folder) == before
    return text


@pytest.mark.parametrize("report_only", [True, False])
def test_a_comparisons_bench_edited_to_another_program_is_refused(comparison, tmp_path, capsys, report_only):
    """settings.json's `bench` is the program the runs tune: edited to another benchmark, a resumed comparison would
    run that program and append its figures to the first one's journals; refused, naming the fields that disagree
    and both programs, before anything is run or written."""
    folder = copied(comparison, tmp_path)
    edited(folder / "settings.json", lambda s: s.update(bench="circuit"))
    text = refused(folder, capsys, report_only)
    assert (f"error: {folder / 'settings.json'} is damaged: its field 'bench' is 'circuit', but its field "
            "'app_description.app' and the field 'app' of random-1/settings.json are 'stencil'") in text, text
    assert "hint: set its 'bench' back to \"stencil\"" in text, text


@pytest.mark.parametrize("report_only", [True, False])
def test_a_comparisons_size_edited_is_refused(comparison, tmp_path, capsys, report_only):
    """settings.json's `size` is the problem the runs tune: edited, a resumed comparison ran that size's problem into
    the runs' journals (failures for good) and titled the report with it; `--report-only` retitled the report
    alone. Refused, naming the runs' size and the way back, before anything is run or written."""
    folder = copied(comparison, tmp_path)
    edited(folder / "settings.json", lambda s: s.update(size="small"))
    text = refused(folder, capsys, report_only)
    assert (f"error: {folder / 'settings.json'} is damaged: its field 'size' is 'small', but the field 'size' of "
            "random-1/settings.json is 'ci'") in text, text
    assert "hint: set its 'size' back to \"ci\" (its runs were tuned at that size); or restore the comparison " \
           "folder from a copy" in text, text


@pytest.mark.parametrize("field, other, why", [
    ("app_args", lambda was: ["-nx", "64"], "its runs were tuned with those arguments"),
    ("cpus", lambda was: was + 1, "its runs were tuned with that count"),
    ("gpus", lambda was: was + 1, "its runs were tuned with that count"),
    ("min_time_s", lambda was: 100, "its runs were measured with it"),
    ("seed", lambda was: was + 7, "its runs were tuned from it")])
@pytest.mark.parametrize("report_only", [True, False])
def test_a_comparisons_setting_edited_is_refused_as_its_size_is(comparison, tmp_path, capsys, field, other, why,
                                                                   report_only):
    """settings.json's `app_args`, `cpus`, `gpus` or `seed` edited in a comparison: resumed, its runs tuned another
    problem (`-p 8`, 2 CPUs) into their journals, or went on from another seed, and `--report-only` retitled the
    report (`on 2 CPU processor(s)`, runs.csv's seeds). Refused as an edited `size` is, naming the runs' value."""
    folder = copied(comparison, tmp_path)
    due = json.loads((folder / "random-1" / "settings.json").read_text())[field]  # repeat 1: the comparison's seed
    value = other(due)
    edited(folder / "settings.json", lambda s: s.update({field: value}))
    text = refused(folder, capsys, report_only)
    assert (f"error: {folder / 'settings.json'} is damaged: its field '{field}' is {value!r}, but the field "
            f"'{field}' of random-1/settings.json is {due!r}") in text, text
    assert f"hint: set its '{field}' back to {json.dumps(due)} ({why}); or restore the comparison folder from a " \
           "copy" in text, text


def test_a_references_throughput_edited_is_made_again_from_its_run_folder(comparison, tmp_path, capsys):
    """expert.json's `throughput` is what the curves divide by: edited (to 100), the report's curves and sentence
    were rewritten with it. It is the trimmed mean of the reference's run folder, so it is made again from it, with
    a note, as an edited `iterations` is."""
    folder = copied(comparison, tmp_path)
    path = folder / "expert.json"
    kept = json.loads(path.read_text())
    edited(path, lambda e: e.update(throughput=100.0))
    before = reports(folder)
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"Note: {path} is damaged: its field 'throughput' is 100.0, but the expert mapper was measured at "
            f"{kept['throughput']!r}: made again from {folder / 'baseline-expert' / 'result.json'}") in out, out
    assert json.loads(path.read_text()) == kept
    assert json.loads((folder / "summary.json").read_text()) == json.loads(before["summary.json"])


def test_a_runs_size_edited_in_a_comparison_is_named(comparison, tmp_path, capsys):
    """A run's settings.json whose `size` is not its comparison's is the damaged file (the comparison measures every
    run at its own size): named, with the comparison's size to set back."""
    folder = copied(comparison, tmp_path)
    edited(folder / "random-1" / "settings.json", lambda s: s.update(size="small"))
    text = refused(folder, capsys)
    assert (f"error: {folder / 'random-1' / 'settings.json'} is damaged: its field 'size' is 'small', but the "
            "comparison's settings.json names 'ci' in 'size'") in text, text
    assert "hint: set its 'size' back to \"ci\"" in text, text


def _two_nodes(settings: dict) -> None:
    settings["machine"]["nodes"] = 2


@pytest.mark.parametrize("edit, named", [
    (_two_nodes, "'machine.nodes' is 2, but its field 'machine.processors.CPU' lists 1 node"),
    (lambda s: s["machine"]["memories"][0].update(kind="NOSUCH"),
     "'machine.memories[0].kind' is 'NOSUCH', not one of 'SYSMEM', 'FBMEM', 'ZCMEM', 'RDMEM', 'SOCKMEM'"),
    (lambda s: s["machine"]["memories"][0]["procs"].update(CPU=[99]),
     "'machine' is no machine description: memories[0].procs.CPU[0] is 99, but node 0 has ")])
@pytest.mark.parametrize("report_only", [True, False])
def test_a_comparisons_machine_edited_to_no_machine_is_refused(comparison, tmp_path, capsys, edit, named,
                                                                report_only):
    """A comparison's settings.json machine that no probe wrote (counts of another node count, a memory kind or a
    processor that does not exist): every run failed with an error naming neither file nor field, then a hint about
    --report-only that was not given; or it was taken silently. Named up front, as a tuning folder's is."""
    folder = copied(comparison, tmp_path)
    edited(folder / "settings.json", edit)
    before = {p.relative_to(folder): p.stat().st_mtime_ns for p in folder.rglob("*")}
    capsys.readouterr()

    status = main(["compare", "--resume", str(folder), *(["--report-only"] if report_only else
                                                          [*ARGS[:1], "3", *ARGS[2:]])])

    text = " ".join(capsys.readouterr().err.split())
    assert status == 1, text
    assert f"error: {folder / 'settings.json'} is damaged: its field {named}" in text, text
    back = "set its 'machine.nodes' back to 1; or " if "'machine.nodes'" in named else ""  # the way back, when known
    assert f"hint: {back}restore the comparison folder from a copy" in text, text
    assert {p.relative_to(folder): p.stat().st_mtime_ns for p in folder.rglob("*")} == before


def test_runs_stopped_by_errors_are_not_said_to_need_a_command_without_report_only(comparison, tmp_path, capsys):
    """When every run to extend stops with an error, the end of the output points at those errors; it told the user
    to run the command without --report-only, which was not given."""
    folder = copied(comparison, tmp_path)
    (folder / "random-1" / "history.csv").unlink()
    (folder / "random-1" / "history.csv").mkdir()
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), *ARGS[:1], "3", *ARGS[2:]]) == 1
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert f"{folder / 'random-1' / 'history.csv'} is a folder, where mapperopt keeps a file" in text, text
    assert (f"error: no tuning run of {folder} has 3 iterations yet hint: the errors above stopped the runs: do what "
            "they say, then run the same command again") in text, text
    assert "--report-only" not in text, text


def test_a_references_calibrated_count_edited_is_made_again_from_its_run_folder(comparison, tmp_path, capsys):
    """expert.json's `iterations` is the count every run's iterations run: edited (to 1), the runs went on at -l 1.
    It is taken from the reference's run folder, so it is made again from it, with a note, as a damaged one is."""
    folder = copied(comparison, tmp_path)
    path = folder / "expert.json"
    kept = json.loads(path.read_text())
    edited(path, lambda e: e.update(iterations=1))
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"Note: {path} is damaged: its field 'iterations' is 1, but the expert mapper was measured at "
            f"{kept['iterations']}: made again from "
            f"{folder / 'baseline-expert' / 'result.json'}") in out, out
    assert json.loads(path.read_text()) == kept


def test_a_run_folder_replaced_by_a_file_is_named(comparison, tmp_path, capsys):
    """A file where a run's folder belongs is named as such (not as a run not tuned yet), with what to do, by the
    report and by the command that would tune the run."""
    folder = copied(comparison, tmp_path)
    shutil.rmtree(folder / "random-1")
    (folder / "random-1").write_text("x\n")
    before = reports(folder)
    for args in (["--report-only"], ARGS):
        capsys.readouterr()
        status = main(["compare", "--resume", str(folder), *args])
        out = capsys.readouterr()
        text = " ".join((out.out + out.err).split())
        assert status == 1, text
        assert f"error: {folder / 'random-1'} is a file, where mapperopt keeps a run's folder" in text, text
        assert "hint: remove or rename it, then run the command without --report-only" in text, text
        assert "not tuned" not in text, text
    assert reports(folder) == before


def test_a_final_groups_reference_that_is_not_its_own_measurement_is_named(comparison, tmp_path, capsys):
    """A final group's `reference` is the value of its own measurement of the reference mapper (`measured`): another
    figure there would rescale every score of the group; it is named with the measured one, never reported."""
    folder = copied(comparison, tmp_path)
    measured = json.loads((folder / "final.json").read_text())["groups"][0]["measured"]["expert"]["estimate"]["value"]
    edited(folder / "final.json", lambda f: f["groups"][0].update(reference=measured * 3))
    text = refused(folder, capsys)
    assert (f"error: {folder / 'final.json'} is damaged: its field 'groups[0].reference' is {measured * 3!r}, but "
            f"the group's own measurement of the expert mapper, 'groups[0].measured.expert.estimate.value', is "
            f"{measured!r}") in text, text
    assert f"hint: set its 'groups[0].reference' back to {measured!r}" in text, text


def test_a_final_group_naming_a_run_that_is_not_there_is_named(comparison, tmp_path, capsys):
    folder = copied(comparison, tmp_path)
    edited(folder / "final.json", lambda f: f["groups"][0]["runs"].append("nosuch-9"))
    text = refused(folder, capsys)
    assert (f"error: {folder / 'final.json'} is damaged: its field 'groups[0].runs' names nosuch-9, which is no "
            f"run of this comparison (there is no folder {folder / 'nosuch-9'})") in text, text


def test_an_app_field_in_a_benchmarks_comparison_settings_is_said_to_be_a_programs_of_yours(comparison, tmp_path,
                                                                                             capsys):
    """`app` in a comparison's settings.json describes a program of the user's (`--app`), as an object; a name
    there (as a tuning folder's settings.json has it) is said so, not as if an object were simply expected."""
    folder = copied(comparison, tmp_path)
    edited(folder / "settings.json", lambda s: s.update(app="circuit"))
    text = refused(folder, capsys)
    assert (f"error: {folder / 'settings.json'} is damaged: its field 'app' is 'circuit', not an object: a "
            "comparison's settings.json keeps in 'app' the description of a program of yours (--app), and names a "
            "benchmark in 'bench'") in text, text


def test_a_runs_settings_naming_another_program_than_its_comparison_is_named(comparison, tmp_path, capsys):
    folder = copied(comparison, tmp_path)
    edited(folder / "random-1" / "settings.json", lambda s: s.update(app="circuit"))
    text = refused(folder, capsys)
    assert (f"error: {folder / 'random-1' / 'settings.json'} is damaged: its field 'app' is 'circuit', but the "
            "comparison's settings.json names 'stencil' in 'bench' and 'app_description.app'") in text, text
    assert "hint: set its 'app' back to \"stencil\"" in text, text


def test_a_finished_final_measurement_whose_record_was_lost_is_not_called_cut_short(comparison, tmp_path, capsys):
    """final.json deleted after the final measurement final-1 ended: `compare --resume` recorded final-1 as
    `interrupted` and printed that it was cut short, and that no final measurement had ended. summary.json names
    final-1 as ended: it is recorded and said as such (a measurement whose record was lost), and measured again."""
    folder = copied(comparison, tmp_path)
    (folder / "final.json").unlink()
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "cut short" not in text and "no final measurement" not in text, text
    assert "final-1 (runs of " in text and "ended, but final.json lost its record" in text, text
    final = json.loads((folder / "final.json").read_text())
    assert "interrupted" not in final, final
    assert [g["folder"] for g in final["lost"]] == ["final-1"], final
    assert [g["folder"] for g in final["groups"]] == ["final-2"], final


def test_a_final_estimate_at_odds_with_its_own_values_is_named(comparison, tmp_path, capsys):
    """A final group's measurement of a best program keeps its executions' throughputs (`values`) and their trimmed
    mean (`value`), which its run's score takes: `value` edited (100 for a figure near 0.2) made a report of a score
    hundreds of times too high, silently. Named with the figure its values give, and nothing written."""
    folder = copied(comparison, tmp_path)
    [program] = [k for k in json.loads((folder / "final.json").read_text())["groups"][0]["measured"] if k != "expert"]
    estimate = json.loads((folder / "final.json").read_text())["groups"][0]["measured"][program]["estimate"]
    edited(folder / "final.json", lambda f: f["groups"][0]["measured"][program]["estimate"].update(value=100.0))
    text = refused(folder, capsys)
    field = f"groups[0].measured.{program}.estimate.value"
    assert (f"error: {folder / 'final.json'} is damaged: its field '{field}' is 100.0, but the trimmed mean of the "
            f"same estimate's 'values', the throughputs of its executions, is {estimate['value']!r}") in text, text
    assert f"hint: set its '{field}' back to {estimate['value']!r}" in text, text


def test_a_reference_edited_with_its_own_measurement_is_named(comparison, tmp_path, capsys):
    """The reference and its own measurement both edited to one figure: the cross-check of the two agreed, and every
    score was divided by the edited figure. The measurement's values tell, and the hint names both fields."""
    folder = copied(comparison, tmp_path)
    value = json.loads((folder / "final.json").read_text())["groups"][0]["reference"]

    def both(f):
        f["groups"][0]["reference"] = 5.0
        f["groups"][0]["measured"]["expert"]["estimate"]["value"] = 5.0

    edited(folder / "final.json", both)
    text = refused(folder, capsys)
    assert (f"error: {folder / 'final.json'} is damaged: its field 'groups[0].measured.expert.estimate.value' is "
            f"5.0, but the trimmed mean") in text, text
    assert (f"hint: set its 'groups[0].measured.expert.estimate.value' and 'groups[0].reference' back to "
            f"{value!r}") in text, text


def test_a_damaged_final_record_says_that_deleting_it_measures_again(comparison, tmp_path, capsys):
    """final.json torn: the hint was to restore the whole comparison from a copy or start anew, though final.json
    deleted is measured again. The hint says so; followed, the comparison measures the final scores again, and its
    ended final-1 is recorded as such, not as cut short."""
    folder = copied(comparison, tmp_path)
    text = (folder / "final.json").read_text()
    (folder / "final.json").write_text(text[:100])
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), "--report-only"]) == 1
    said = " ".join(capsys.readouterr().err.split())
    assert f"error: {folder / 'final.json'} is damaged: not valid JSON" in said, said
    assert ("hint: restore final.json from a copy; or delete it: the command without --report-only then measures "
            "the final scores again") in said, said

    (folder / "final.json").unlink()
    (folder / "summary.json").unlink()  # nothing names final-1 as ended but the folder itself
    assert main(["compare", "--resume", str(folder)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "cut short" not in said and "no final measurement" not in said, said
    final = json.loads((folder / "final.json").read_text())
    assert "interrupted" not in final and [g["folder"] for g in final["lost"]] == ["final-1"], final
    assert [g["folder"] for g in final["groups"]] == ["final-2"], final


def test_a_run_folder_removed_as_the_hint_says_is_tuned_again(comparison, tmp_path, capsys):
    """A run's folder replaced by a file: the hint says to remove it; done, final.json, whose group names the run,
    was called damaged ('added by hand'). A run the report files name is one whose folder was removed: it is tuned
    again, and its best scored."""
    folder = copied(comparison, tmp_path)
    shutil.rmtree(folder / "random-1")
    (folder / "random-1").write_text("x\n")
    capsys.readouterr()
    assert main(["compare", "--resume", str(folder), "--report-only"]) == 1
    text = " ".join(capsys.readouterr().err.split())
    assert ("hint: remove or rename it, then run the command without --report-only: it tunes that run again"
            in text), text

    (folder / "random-1").unlink()
    assert main(["compare", "--resume", str(folder)]) == 0
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert "damaged" not in text, text
    assert len((folder / "random-1" / "state.jsonl").read_text().splitlines()) == 2
    summary = json.loads((folder / "summary.json").read_text())
    assert [r["folder"] for r in summary["runs"]] == ["random-1"] and summary["runs"][0]["normalized"] > 0, summary


def test_a_damaged_reference_run_result_is_noted_and_the_report_written(comparison, tmp_path, capsys):
    """baseline-expert/result.json damaged: `tune` notes it and goes on (its figure is kept elsewhere); `compare`
    refused the whole comparison with restore-or-new. It notes it too: expert.json keeps the figure."""
    folder = copied(comparison, tmp_path)
    edited(folder / "baseline-expert" / "result.json", lambda r: r.update(status=5))
    capsys.readouterr()

    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (f"Note: {folder / 'baseline-expert' / 'result.json'} is damaged: its field 'status' is a number, not a "
            "string: the noise of the expert mapper's first measurement is not shown (its figure is in expert.json)"
            in text), text
    assert json.loads((folder / "summary.json").read_text())["reference_first_throughput"] == \
        json.loads((folder / "expert.json").read_text())["throughput"]


def test_a_damaged_reference_run_result_without_its_record_is_named_not_called_unmeasured(comparison, tmp_path,
                                                                                           capsys):
    """expert.json missing and baseline-expert/result.json, which it is made again from, damaged: `--report-only`
    said the folder "has no measurement yet"."""
    folder = copied(comparison, tmp_path)
    (folder / "expert.json").unlink()
    edited(folder / "baseline-expert" / "result.json", lambda r: r.update(status=5))
    text = refused(folder, capsys)
    assert "no measurement yet" not in text, text
    assert (f"{folder / 'baseline-expert' / 'result.json'} is damaged: its field 'status' is a number, not a string"
            in text and f"{folder / 'expert.json'}" in text), text
    assert "without --report-only" in text, text
    assert main(["compare", "--resume", str(folder), *ARGS]) == 0  # as the hint says: measured again
    assert (folder / "expert.json").is_file()


def test_a_comparisons_bench_and_description_edited_together_name_its_settings(comparison, tmp_path, capsys):
    """settings.json's `bench` and `app_description.app` both edited to another program: the intact runs' files were
    called damaged, with a hint to write that program into them (followed: a report titled with the other program
    and this one's scores). The runs agree with each other and with the description's tasks: the comparison's
    settings.json is named."""
    folder = copied(comparison, tmp_path)

    def other(s):
        s["bench"] = "circuit"
        s["app_description"]["app"] = "circuit"

    edited(folder / "settings.json", other)
    text = refused(folder, capsys)
    assert (f"error: {folder / 'settings.json'} is damaged: its fields 'bench' and 'app_description.app' are "
            "'circuit', but its runs' random-1/settings.json names 'stencil'") in text, text
    assert "hint: set its 'bench' and 'app_description.app' back to \"stencil\"" in text, text


def test_a_damaged_journal_line_of_a_comparisons_run_is_refused_with_a_way_to_go_on(comparison, tmp_path, capsys):
    """A damaged record inside a comparison run's journal got only restore-or-new (a whole comparison lost without a
    copy), and the journal emptied a tuning run's hint (`--new` would start another comparison). The hint says what
    to delete, as `tune`'s does; followed, the run is tuned again from there."""
    folder = copied(comparison, tmp_path)
    journal = folder / "random-1" / "state.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text(json.dumps({**json.loads(lines[0]), "throughput": -1}) + "\n" + "".join(lines[1:]))
    text = refused(folder, capsys)
    assert ("hint: delete line 1 and every line after it from state.jsonl, the folders iter-001 and iter-002, and "
            "best.dsl, "
            "history.csv and progress.png, then run the command without --report-only: it runs iteration 1 and the "
            "later ones of random-1 again") in text, text

    journal.write_text("")
    assert main(["compare", "--resume", str(folder), "--report-only"]) == 1
    text = " ".join(capsys.readouterr().err.split())
    assert f"error: {journal} is empty, but iter-001, iter-002, best.dsl" in text, text
    assert "--resume, with --new" not in text, text
    assert ("hint: restore state.jsonl from a copy; or delete the folders iter-001 and iter-002, and best.dsl, "
            "history.csv and progress.png, then run the command without --report-only: it runs iteration 1 and the "
            "later ones of random-1 again") in text, text

    for name in ("iter-002", "best.dsl", "history.csv", "progress.png"):
        target = folder / "random-1" / name
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    assert main(["compare", "--resume", str(folder)]) == 0
    assert len(journal.read_text().splitlines()) == 2


@pytest.mark.parametrize("value", [[], {"name": "random"}, 3])
def test_a_comparison_runs_optimizer_of_another_type_is_named(comparison, tmp_path, capsys, value):
    """A run's settings.json whose `optimizer` is not a name (a list, found by the fuzz below) raised `TypeError:
    unhashable type` in the check that the run's folder names its optimizer; it is refused naming the file."""
    folder = copied(comparison, tmp_path)
    edited(folder / "random-1" / "settings.json", lambda s: s.update(optimizer=value))

    text = refused(folder, capsys)

    assert f"{folder / 'random-1' / 'settings.json'}" in text, text
    assert "Traceback" not in text and "TypeError" not in text, text


@pytest.mark.parametrize("report_only", [True, False])
def test_a_comparison_runs_optimizer_edited_is_refused(comparison, tmp_path, capsys, report_only):
    """A run's settings.json saying another optimizer than its folder's name (`random-1` tuned by guided): resumed,
    the run went on with that optimizer under random's name, or the report counted guided's figures as random's."""
    folder = copied(comparison, tmp_path)

    def edit(s):
        s["optimizer"] = "guided"
        if isinstance(s.get("request"), dict) and "optimizer" in s["request"]:
            s["request"]["optimizer"] = "guided"  # both, or the request alone would name it

    edited(folder / "random-1" / "settings.json", edit)

    text = refused(folder, capsys, report_only)

    assert (f"error: {folder / 'random-1' / 'settings.json'} is damaged: its field 'optimizer' is 'guided', but its "
            "folder random-1 is a run of random") in text, text
    assert "hint: set its 'optimizer' back to \"random\"" in text, text


def test_a_journal_kept_only_compressed_says_how_to_restore_it(comparison, tmp_path, capsys):
    """A comparison copied from a results folder that commits its journals as `state.jsonl.xz` (the GPU evaluation's)
    got "state.jsonl is missing ... restore state.jsonl from a copy", with the compressed copy beside it unsaid. The
    error names it and the command that restores it; run, the report reads the folder again."""
    import shlex
    import subprocess

    folder = copied(comparison, tmp_path)
    journal = folder / "random-1" / "state.jsonl"
    subprocess.run(["xz", "-z", str(journal)], check=True)  # state.jsonl.xz in its place, as the evaluation commits
    text = refused(folder, capsys)
    assert f"error: {journal} is missing" in text, text
    assert f"{journal.name}.xz is beside it" in text, text
    command = re.search(r"hint: restore it: `(xz -dk [^`]+)`", text)
    assert command, text
    subprocess.run(shlex.split(command[1]), check=True)
    assert main(["compare", "--resume", str(folder), "--report-only"]) == 0
