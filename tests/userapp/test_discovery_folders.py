"""A failed discovery keeps the folder its program ran in (the error points to it, and says it is kept); such
folders of this user older than a week, which nobody reads any more, are removed by the next discovery, so that they
do not pile up in the temporary folder."""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

from mapperopt.cli import main


def test_a_failed_discovery_says_its_folder_is_kept_and_old_ones_go(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    old, recent = tmp_path / "mapperopt-discover-other-abc123", tmp_path / "mapperopt-discover-other-def456"
    unrelated = tmp_path / "not-mapperopt-old"
    for folder in (old, recent, unrelated):
        folder.mkdir()
        (folder / "stderr.txt").write_text("what an earlier failure said\n")
    week_ago = time.time() - 8 * 24 * 3600
    for folder in (old, unrelated):
        os.utime(folder, (week_ago, week_ago))
    program = tmp_path / "picky"
    program.write_text('#!/bin/sh\necho "picky: unknown option" >&2\nexit 2\n')
    program.chmod(0o755)
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\n")
    assert main(["run", "--app", str(program), "--mapper", str(mapper), "--once"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    kept = re.search(r"its output is in (\S+)/stdout\.txt and stderr\.txt", err)
    assert kept and Path(kept[1]).is_dir(), err
    assert "kept for you to read" in err and "a later discovery removes it after 7 days" in err, err
    assert not old.exists() and recent.is_dir() and unrelated.is_dir()
