"""The one-GPU evaluation (`mapperopt.benchmarks.evaluate`): `python3 benchmarks/gpu/evaluate.py run|report|list`.
Runs as a script so that, from the repository root, the installed package is imported (not the source folder
`mapperopt/`, which holds only part of it)."""

import sys

from mapperopt.benchmarks.evaluate import main

sys.exit(main())
