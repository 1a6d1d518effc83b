"""A program killed by SIGKILL with nothing showing it ran out of memory (here it kills itself): the reason says what
is known (the kernel's out-of-memory killer or another process), not "probably out of memory", and AutoGuide does not
blame the mapper, whose statements map as Legion's default mapper does."""

from __future__ import annotations

import json

from mapperopt.cli import main


def test_a_program_that_kills_itself_is_not_said_out_of_memory(foreign_exe, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    program = tmp_path / "killer"  # runs to the end, then kills itself; its discovery (recording) runs plainly
    program.write_text(f'#!/bin/bash\n[ -n "$MAPPEROPT_RECORD" ] && exec {foreign_exe} "$@"\n'
                       f'{foreign_exe} "$@"; kill -KILL $$\n')
    program.chmod(0o755)
    mapper = tmp_path / "start.dsl"
    mapper.write_text("Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\nTunable 11 = 2 int32;\n")
    assert main(["run", "--app", f"{program} -n 100 -steps 1", "--cpus", "2", "--mapper", str(mapper), "--once",
                 "--out", str(tmp_path / "run")]) == 1
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["stage"] == "run" and result["reason"].startswith("killed by SIGKILL"), result
    assert "probably" not in result["reason"] and "another process" in result["reason"], result["reason"]
    feedback = json.loads((tmp_path / "run" / "feedback.json").read_text())
    said = " ".join(f"{feedback['explanation']} {feedback['suggestion']}".split())
    assert "AutoGuide has no rule" not in said and "change one statement at a time" not in said, said
    assert "another process" in said and "dmesg" in said, said
    assert "Run the same command without --mapper" in said, said
