"""mapperopt: write Legion mappers in a small DSL, compile them, run real benchmarks and tune them.

The package is layered; data flows DSL text -> AST (`mapperopt.dsl`) -> C++ (`mapperopt.compiler`) -> shared
library -> run (`mapperopt.benchmarks`) -> feedback (`mapperopt.autoguide`) -> optimizer (`mapperopt.optimizer`).
`mapperopt.toolchain` finds Legion and builds native code for all layers.
"""

__version__ = "0.1.0"
