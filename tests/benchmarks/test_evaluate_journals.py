"""The comparisons' resume journals of a results folder (state.jsonl, OpenTuner's opentuner.db and its rollback
journal) made up 14.5 MiB of the 26 MiB committed under reports/<card>-eval, and the whole working tree travels to
the lent GPU machine under a size limit (a call was refused at ~65 MB). They are committed as `<file>.xz`, the plain
files are git-ignored, every command that reads a results folder restores them, and `run` and evaluate.sh compress
them again; the tarball evaluate.sh returns carries the .xz files only."""

import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from mapperopt.benchmarks import evaluate

COMMITTED = Path("reports/h100-eval")  # a real results folder: 8 tuning units started, OpenTuner's databases


def _journals(results: Path) -> dict[Path, bytes]:
    return {p.relative_to(results): p.read_bytes() for pattern in evaluate.JOURNALS
            for p in (results / "work").rglob(pattern)}


def _copy(tmp_path: Path) -> Path:
    """A copy of the committed folder with its plain journals (restored from the .xz where the checkout lacks them)
    and an .xz for each."""
    results = tmp_path / "reports" / COMMITTED.name
    shutil.copytree(COMMITTED, results)
    evaluate.restore_journals(results)
    evaluate.compress_journals(results)
    return results


def test_list_and_report_restore_the_journals_from_their_xz(tmp_path, capsys):
    results = _copy(tmp_path)
    plain = _journals(results)
    assert len(plain) >= 30 and any(p.name.endswith(".db-journal") for p in plain)
    for path in plain:
        assert lzma.decompress((results / f"{path}.xz").read_bytes()) == plain[path]
    assert evaluate.main(["list", "--results", str(results)]) == 0
    listed = capsys.readouterr().out
    assert "started " in listed
    page = evaluate.write_report(results, tmp_path / "reports" / "h100-evaluation.md", shown=Path("reports/h100-eval"))
    pngs = {p: p.read_bytes() for p in results.glob("*.png")}

    # as in a fresh clone: only the .xz
    for path in plain:
        (results / path).unlink()
    assert evaluate.main(["list", "--results", str(results)]) == 0
    assert capsys.readouterr().out == listed
    assert _journals(results) == plain
    for path in plain:  # a restored journal is as old as its .xz: not taken for one written since
        assert (results / path).stat().st_mtime_ns == (results / f"{path}.xz").stat().st_mtime_ns
    for path in plain:
        (results / path).unlink()
    assert evaluate.main(["report", "--results", str(results)]) == 0
    assert _journals(results) == plain
    assert evaluate.write_report(results, tmp_path / "reports" / "h100-evaluation.md",
                                 shown=Path("reports/h100-eval")) == page
    assert {p: p.read_bytes() for p in results.glob("*.png")} == pngs
    # nothing changed: nothing is compressed again
    packed = {p: p.read_bytes() for p in (results / "work").rglob("*.xz")}
    assert evaluate.compress_journals(results) == []
    assert {p: p.read_bytes() for p in (results / "work").rglob("*.xz")} == packed


def test_a_journal_written_since_its_xz_is_kept_and_an_older_one_is_restored(tmp_path, capsys):
    results = _copy(tmp_path)
    (results / "units" / "tune-circuit-gpu-opentuner-i10-s0.json").unlink()  # as when its run was stopped
    journal = next(p for p in results.glob("work/circuit/compare-*/opentuner-1/state.jsonl")
                   if json.loads((p.parent.parent / "settings.json").read_text())["size"] == "gpu")
    whole = journal.read_bytes()
    # a run wrote it since (3 of its 10 iterations, e.g. a folder being resumed): never overwritten by the .xz
    journal.write_bytes(b"".join(whole.splitlines(keepends=True)[:3]))
    later = journal.with_name("state.jsonl.xz").stat().st_mtime_ns + 10**9
    os.utime(journal, ns=(later, later))
    assert evaluate.main(["list", "--results", str(results)]) == 0
    assert "started  tune-circuit-gpu-opentuner-i10-s0 (3 of 10 iterations done)" in capsys.readouterr().out
    assert len(journal.read_bytes().splitlines()) == 3
    # compressed where changed, and only there
    assert evaluate.compress_journals(results) == [journal.with_name("state.jsonl.xz")]
    assert lzma.decompress(journal.with_name("state.jsonl.xz").read_bytes()) == journal.read_bytes()

    # an .xz newer than its journal (a tarball unpacked over the folder, a git pull): the journal is restored
    journal.with_name("state.jsonl.xz").write_bytes(lzma.compress(whole))
    earlier = journal.with_name("state.jsonl.xz").stat().st_mtime_ns - 10**9
    os.utime(journal, ns=(earlier, earlier))
    assert evaluate.restore_journals(results) == [journal]
    assert journal.read_bytes() == whole


def test_an_ended_sqlite_transactions_journal_is_not_brought_back(tmp_path):
    """SQLite deletes `opentuner.db-journal` when the transaction ends, writing the database: its .xz is then
    outdated, and restoring it beside the newer database would roll stale pages back into it."""
    results = _copy(tmp_path)
    db = next(results.glob("work/circuit/compare-*/opentuner-1/opentuner.db"))
    rollback = db.with_name("opentuner.db-journal")
    assert rollback.exists() and db.with_name("opentuner.db-journal.xz").exists()
    rollback.unlink()
    later = db.with_name("opentuner.db.xz").stat().st_mtime_ns + 10**9
    os.utime(db, ns=(later, later))
    assert evaluate.restore_journals(results) == []
    assert not rollback.exists()
    assert evaluate.compress_journals(results) == [db.with_name("opentuner.db-journal.xz")]  # its .xz goes too
    assert not db.with_name("opentuner.db-journal.xz").exists()
    # where the database is the one of its .xz (a fresh clone), its journal comes back with it
    other = next(p for p in results.glob("work/*/compare-*/opentuner-1/opentuner.db-journal") if p != rollback)
    other.unlink()
    other.with_name("opentuner.db").unlink()
    assert evaluate.restore_journals(results) == [other.with_name("opentuner.db"), other]


def test_a_killed_write_leaves_the_old_xz_whole(tmp_path, monkeypatch):
    results = _copy(tmp_path)
    journal = next(results.glob("work/circuit/compare-*/guided-1/state.jsonl"))
    xz = journal.with_name("state.jsonl.xz")
    before = xz.read_bytes()
    journal.write_bytes(journal.read_bytes() + b"\n")

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        evaluate.compress_journals(results)
    monkeypatch.undo()
    assert xz.read_bytes() == before and not list(journal.parent.glob(".*.tmp"))
    # a temporary file a SIGKILL left behind is removed before the folder is read
    (journal.parent / ".state.jsonl.xz.k2j4_9ab.tmp").write_bytes(before[:100])
    evaluate.restore_journals(results)
    assert not list(journal.parent.glob(".*.tmp"))
    # a cut-short .xz is said, with how to fix it, not taken for an empty journal
    xz.write_bytes(before[:100])
    journal.unlink()
    assert evaluate.main(["list", "--results", str(results)]) == 2


def test_the_plain_journals_are_ignored_and_their_xz_committed():
    root = Path(__file__).resolve().parents[2]
    folder = str(Path("reports", "h200-eval", "work", "circuit", "compare-29bda3775a", "opentuner-1")) + "/"
    plain = [folder + "state.jsonl", folder + "opentuner.db", folder + "opentuner.db-journal"]
    kept = [p + ".xz" for p in plain] + [folder + "history.csv", folder + "best.dsl", "reports/state.jsonl",
                                         "reports/compare-cpu/x.db"]
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *plain, *kept], cwd=root, capture_output=True,
                             text=True).stdout.split()
    assert ignored == plain, ignored
    tracked = subprocess.run(["git", "ls-files", "reports"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.split()
    assert not [p for p in tracked if any(Path(p).match(j) for j in evaluate.JOURNALS)]
    assert len([p for p in tracked if p.endswith("/state.jsonl.xz")]) >= 100


def _stub(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def test_evaluate_sh_packs_the_journals_as_xz_only(tmp_path):
    """The tarball the lead unpacks over the committed folder carries each journal's .xz, compressed after the
    paths in the journals were made relative, and no plain journal."""
    results = _copy(tmp_path)
    home = tmp_path / "home"
    journal = next(results.glob("work/circuit/compare-*/guided-1/state.jsonl"))
    lines = journal.read_text().splitlines(keepends=True)
    record = json.loads(lines[0])
    record["dsl"] += f"# {home}/x\n"  # a path of the machine, as a run may store it
    journal.write_text(json.dumps(record) + "\n" + "".join(lines[1:]))
    stubs = tmp_path / "bin"
    stubs.mkdir()
    _stub(stubs, "nvidia-smi", 'case "$*" in *-L*) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)";; '
                               '*) echo "NVIDIA H100 80GB HBM3";; esac\n')
    _stub(stubs, "mapperopt", 'echo "building $4"\n')
    env = {**os.environ, "PATH": f"{stubs}:{Path(sys.executable).parent}:{os.environ['PATH']}", "HOME": str(home),
           "RESULTS": str(results), "OUT": str(tmp_path / "out"), "STOP_AFTER": "600", "EVAL_ARGS": "--only ^none$"}
    done = subprocess.run(["bash", "benchmarks/gpu/evaluate.sh"], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    with tarfile.open(tmp_path / "out" / "h100-eval.tar.gz") as tar:
        members = {m.name: m for m in tar.getmembers()}
        packed = {n: lzma.decompress(tar.extractfile(m).read()) for n, m in members.items() if n.endswith(".xz")}
    names = [Path(n) for n in members]
    assert not [n for n in names if any(n.match(j) for j in evaluate.JOURNALS)]
    assert {f"h100-eval/{p}.xz" for p in _journals(results)} == set(packed)
    relative = packed[f"h100-eval/{journal.relative_to(results)}.xz"]
    assert f"{home}/".encode() not in relative and b"# ~/x" in relative
    assert "h100-eval/units/limit-copybw.json" in members


def test_the_page_says_the_journals_are_restored_before_they_are_read_by_hand(tmp_path):
    """`mapperopt compare --resume <folder> --report-only` and a person browsing a comparison read the plain
    journals, which a fresh clone lacks: the page says which command restores them."""
    results = _copy(tmp_path)
    text = evaluate.write_report(results, tmp_path / "reports" / "h100-evaluation.md", shown=Path("reports/h100-eval"))
    how = " ".join(text[text.index("## How it was run"):].split())
    assert ("are committed compressed, as `<file>.xz` beside the plain file, which git ignores: `evaluate.py run`, "
            "`list` and `report` restore the plain files first") in how, how
    assert ("before browsing a comparison's folder or resuming it by hand (`mapperopt compare --resume <its "
            "folder>`), run `python3 benchmarks/gpu/evaluate.py list --results reports/h100-eval`.") in how, how
