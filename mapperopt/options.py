"""Click parameter types and command classes shared by the commands."""

from __future__ import annotations

import math

import click


class FiniteFloatRange(click.FloatRange):
    """A `click.FloatRange` that refuses nan and inf: click's bounds let nan through (every comparison with it is
    false) and inf past a lower bound, and no number of seconds is either."""

    def convert(self, value, param, ctx):
        number = click.types.FloatParamType.convert(self, value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)



class ListsBenchmarks(click.Command):
    """A command whose first argument names benchmarks (BENCH, build's BENCHES): its help ends with their names, which
    no other help lists."""

    def format_epilog(self, ctx, formatter):
        from mapperopt.benchmarks.apps import known_benchmarks

        formatter.write_paragraph()
        word = next(p.name for p in self.params if isinstance(p, click.Argument)).upper()
        formatter.write_text(f"{word}: {', '.join(known_benchmarks())}.")
        super().format_epilog(ctx, formatter)
