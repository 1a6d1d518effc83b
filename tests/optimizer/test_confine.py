"""The confined child that runs the model's methods (`optimizer/confine.py`), called directly with real child
processes: what Landlock stops."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import landlockpy
import pytest

from mapperopt.optimizer import confine
from mapperopt.optimizer.confine import ConfinedError, run_confined

NO_LANDLOCK = "this kernel has no Landlock (or it is disabled)"
landlocked = pytest.mark.skipif(landlockpy.abi_version() == 0, reason=NO_LANDLOCK)


def method(body: str) -> str:
    return "def probe(self, arg):\n" + "".join(f"    {line}\n" for line in body.splitlines())


@pytest.fixture
def no_bubblewrap(monkeypatch):
    """Landlock is used where bubblewrap is not (the two cannot be combined)."""
    monkeypatch.setattr(confine, "sandbox", lambda: ())


@landlocked
@pytest.mark.usefixtures("no_bubblewrap")
def test_a_method_still_runs_under_landlock():
    body = ("import json, re, math, collections, itertools, os\n"
            "return [os.listdir('.'), math.gcd(*arg), re.sub('a', 'b', 'aa')]")
    assert run_confined(method(body), "probe", [[12, 18]]) == [[], 6, "bb"]


@landlocked
@pytest.mark.usefixtures("no_bubblewrap")
@pytest.mark.parametrize("body", [
    # in place through a shared mapping: no file grows, so RLIMIT_FSIZE does not stop it
    "import mmap, os\nm = mmap.mmap(os.open(arg, os.O_RDWR), 0)\nm[0:5] = b'XXXXX'\nm.flush()",
    "open(arg, 'w').close()",                                   # emptied
    "import os\nos.truncate(arg, 0)",
    "import os\nos.remove(arg)",
    "open(arg + '.new', 'x').close()",                           # an empty file made next to it
    "return open(arg).read()",                                   # the tuning folder is not readable
])
def test_landlock_keeps_the_method_off_the_users_files(tmp_path, body):
    victim = tmp_path / "history.csv"
    victim.write_text("important data")
    with pytest.raises(ConfinedError) as refused:
        run_confined(method(body), "probe", [str(victim)])
    assert refused.value.type == "PermissionError"
    assert victim.read_text() == "important data" and sorted(os.listdir(tmp_path)) == ["history.csv"]


@landlocked
@pytest.mark.usefixtures("no_bubblewrap")
def test_landlock_stops_tcp_and_signals_outside():
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with pytest.raises(ConfinedError) as refused:
            run_confined(method(f"import socket\nsocket.create_connection(('127.0.0.1', {port}))"), "probe", [0])
        assert refused.value.type == "PermissionError"
    with pytest.raises(ConfinedError) as refused:
        run_confined(method("import os\nos.kill(os.getppid(), 0)"), "probe", [0])  # signal 0: only a check
    assert refused.value.type == "PermissionError"


@landlocked
def test_landlock_hides_the_tuners_key(tmp_path):
    """The tuner's environment and command line (/proc/<ppid>/environ, cmdline) hold the API key."""
    tuner = ("import sys\n"
             "from mapperopt.optimizer import confine\n"
             "confine.sandbox = lambda: ()\n"
             "body = ('def probe(self, name):\\n'\n"
             "        '    import os\\n'\n"
             "        '    return open(\"/proc/%d/%s\" % (os.getppid(), name), \"rb\").read().decode(errors=\"replace\")\\n')\n"
             "for name in ('environ', 'cmdline'):\n"
             "    try:\n"
             "        print(name, repr(confine.run_confined(body, 'probe', [name])))\n"
             "    except confine.ConfinedError as e:\n"
             "        print(name, e.type, e.message)\n")
    env = {**os.environ, "MAPPEROPT_LLM_API_KEY": "sk-fake-from-env"}
    seen = subprocess.run([sys.executable, "-c", tuner, "--llm-api-key", "sk-fake-on-cmdline"], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert seen.returncode == 0, seen.stderr
    assert "sk-fake" not in seen.stdout
    assert [line.split()[:2] for line in seen.stdout.splitlines()] == [["environ", "PermissionError"],
                                                                       ["cmdline", "PermissionError"]]
