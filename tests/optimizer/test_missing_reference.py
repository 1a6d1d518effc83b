"""A tuning folder whose first reference mapper's run folder (`baseline-expert/`) was deleted: resuming it names
that folder, not settings.json, as the problem, and never advises setting `iterations` to the other reference's
count. Each reference mapper is calibrated on its own (one that measured less than the minimum is calibrated
again), so the two may have been measured at different counts; the run takes the expert's. One small real tuning
run of Stencil (ci size) with both references."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from mapperopt.cli import main


@pytest.fixture(scope="module")
def tuning(tmp_path_factory):
    runs = tmp_path_factory.mktemp("made") / "runs"
    assert main(["tune", "stencil", "--size", "ci", "--iters", "1", "--start", "default", "--repeats", "1",
                 "--max-repeats", "1", "--min-time", "0.05", "--final-rounds", "1", "--baseline", "both",
                 "--runs-dir", str(runs)]) == 0
    [folder] = (runs / "stencil").iterdir()
    return folder


def recalibrated_default(folder) -> int:
    """Makes baseline-default/result.json say it was measured at another count than the expert (twice it), as
    after its own calibration reached a longer run; returns that count."""
    path = folder / "baseline-default" / "result.json"
    result = json.loads(path.read_text())
    count = 2 * json.loads((folder / "settings.json").read_text())["iterations"]
    result["settings"]["iterations"] = count
    path.write_text(json.dumps(result))
    return count


def test_a_deleted_expert_reference_is_named_not_settings(tuning, tmp_path, capsys):
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    settings = (folder / "settings.json").read_bytes()
    calibrated = json.loads(settings)["iterations"]
    other = recalibrated_default(folder)
    shutil.rmtree(folder / "baseline-expert")
    capsys.readouterr()
    assert main(["tune", "--resume", str(folder), "--iters", "2"]) == 1
    text = " ".join(capsys.readouterr().err.split())
    assert (f"error: {folder / 'baseline-expert'}/ is missing: it held the expert mapper's reference measurement, "
            f"which fixed the run's iteration count (settings.json's 'iterations', {calibrated})") in text, text
    # (how many of the journal's iterations ran at that count, said after it, depends on the machine's speed)
    assert (f"hint: restore baseline-expert/ from a copy of the tuning folder, then run the same command again; "
            f"leave settings.json as it is: each reference mapper is calibrated on its own, so baseline-default/ "
            f"measured at {other} is no sign of damage") in text, text
    assert "is damaged" not in text and "set its 'iterations'" not in text, text
    assert (folder / "settings.json").read_bytes() == settings and not (folder / "iter-002").exists()


def journal_counts(folder, count: int) -> int:
    """Makes the journal's iterations say they ran at `count` (as when no iteration was measured at another count
    than the run's); returns how many there are."""
    path = folder / "state.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for record in records:
        record["result"]["settings"]["iterations"] = count
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return len(records)


@pytest.mark.parametrize("same", [True, False], ids=["at-the-count", "at-another-count"])
def test_a_deleted_expert_reference_counts_the_iterations_measured_at_its_count(tuning, tmp_path, capsys, same):
    """The hint says how many of the journal's iterations ran at the run's count, which another count in
    settings.json would make not comparable; nothing of them where none did."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    calibrated = json.loads((folder / "settings.json").read_text())["iterations"]
    other = recalibrated_default(folder)
    ran = journal_counts(folder, calibrated if same else calibrated + 1)
    shutil.rmtree(folder / "baseline-expert")
    capsys.readouterr()
    assert main(["tune", "--resume", str(folder), "--iters", "2"]) == 1
    text = " ".join(capsys.readouterr().err.split())
    clause = (f"so baseline-default/ measured at {other} is no sign of damage, and {ran} of the journal's iterations "
              f"ran at {calibrated} (another count would make them not comparable); or start a new run with `--new`")
    assert (clause in text) == same, text
    if not same:
        assert f"measured at {other} is no sign of damage; or start a new run with `--new`" in text, text


def test_references_measured_at_different_counts_are_no_damage(tuning, tmp_path, capsys):
    """The same folder with both references there is continued: the expert's count is the run's."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    recalibrated_default(folder)
    assert main(["tune", "--resume", str(folder), "--iters", "2"]) == 0, capsys.readouterr().err
    assert (folder / "iter-002" / "result.json").is_file()


def test_a_deleted_default_reference_is_said_and_its_figure_keeps_its_unit(tuning, tmp_path, capsys):
    """baseline-default/ deleted: the run is continued (the final comparison measures that mapper anew), and the
    baselines line gives settings.json's figure with its unit and says that its run folder is missing."""
    folder = tmp_path / "tuning"
    shutil.copytree(tuning, folder)
    shutil.rmtree(folder / "baseline-default")
    unit = json.loads((folder / "baseline-expert" / "result.json").read_text())["unit"]
    capsys.readouterr()
    assert main(["tune", "--resume", str(folder), "--iters", "2", "--final-rounds", "1"]) == 0, \
        capsys.readouterr().err
    out = " ".join("".join(capsys.readouterr()).split())
    assert re.search(rf"Baselines: expert [\d.,]+ {re.escape(unit)}, default [\d.,]+ {re.escape(unit)} ", out), out
    assert f"Note: {folder / 'baseline-default'}/ is missing" in out, out
    assert "energy" not in out, out  # Stencil's results are checked otherwise
