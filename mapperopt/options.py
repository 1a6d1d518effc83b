"""Click parameter types shared by the commands."""

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
