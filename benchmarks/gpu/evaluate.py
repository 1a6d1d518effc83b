"""The one-GPU evaluation (`mapperopt.benchmarks.evaluate`): `python3 benchmarks/gpu/evaluate.py run|report|list`.
Runs as a script so that, from the repository root, the installed package is imported (not the source folder
`mapperopt/`, which holds only part of it)."""

import sys

try:
    from mapperopt.benchmarks.evaluate import main
except ModuleNotFoundError as error:  # a Python without mapperopt: say which one to use
    from installed import missing

    sys.exit(missing(error))

sys.exit(main())
