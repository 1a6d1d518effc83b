"""mapperopt: write Legion mappers in a small DSL, compile them, run real benchmarks and tune them.

The package is layered; data flows DSL text -> AST (`mapperopt.dsl`) -> C++ (`mapperopt.compiler`) -> shared
library -> run (`mapperopt.benchmarks`) -> feedback (`mapperopt.autoguide`) -> optimizer (`mapperopt.optimizer`).
`mapperopt.toolchain` finds Legion and builds native code for all layers.
"""

from pathlib import Path

__version__ = "0.1.0"

# In a source checkout the layers are the folders beside this one (pyproject.toml maps `mapperopt.dsl` to `dsl/`...).
# Python run from the checkout's root imports this folder as `mapperopt` even when a copy is installed (`pip install
# .`): the layers must then come from the checkout too, or `python -m mapperopt.benchmarks.X` finds none of them.
_checkout = Path(__file__).resolve().parent.parent
if not (Path(__file__).parent / "dsl").is_dir() and (_checkout / "pyproject.toml").is_file() \
        and (_checkout / "dsl" / "__init__.py").is_file():
    __path__.append(str(_checkout))
