"""What the scripts of this folder say when the Python running them has no mapperopt: they import the installed
package, and after the README's install (`python3 -m venv .venv && .venv/bin/pip install .`, not activated) a plain
`python3` has none. Imports nothing of mapperopt itself."""

import shlex
import sys


def missing(error: ModuleNotFoundError) -> int:
    """Prints which module is missing and the command again with the environment's Python; returns the exit status."""
    script, args = sys.argv[0], sys.argv[1:]
    print(f"error: {script} needs the mapperopt package, and this Python ({sys.executable}) cannot import it: "
          f"{error}", file=sys.stderr)
    print("hint: run it with the Python mapperopt is installed in, e.g. the README's .venv: "
          f"`{shlex.join(['.venv/bin/python', script, *args])}`, or `source .venv/bin/activate` first", file=sys.stderr)
    return 2
