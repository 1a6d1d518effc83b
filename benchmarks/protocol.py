"""The measurement protocol shared by `mapperopt run`, `tune` and `compare` (docs/tuning.md describes it).

    est = estimate([1.02, 0.97, 1.10])          # trimmed mean, 90 % interval, spread
    enough([1.02, 0.97, 1.10], 3, 7)            # True when the interval is tight or the cap is reached
    c = compare(best_values, start_values)      # ratio of estimates, its interval, significant or not
    results = measure_together("circuit", {"start": dsl, "expert": "expert"}, rounds=3, out_dir=root / "final")
    noise_warnings({"start": (est, 0.2)}, "a higher --final-rounds", min_time_s=0.5)  # [(title, text)] for the user

A mapper's figure is the trimmed mean of R verified executions, each calibrated to at least `MIN_TIME_S` of
measured time; R starts at `MIN_REPEATS` and grows until the 90 % interval of the estimate is within
`TARGET_HALF_WIDTH` of it or `MAX_REPEATS` is reached (an interval still wider than `NOISY_HALF_WIDTH`, a single
execution, or executions shorter than `MIN_TIME_S`, are warned of: `noise_warnings`). Intervals are percentile
bootstraps with a fixed seed, so the same numbers always give the same verdict. Mappers that are compared are
measured *together*: interleaved rounds in one invocation, so that a change of the machine's load falls on all of
them alike.
"""

from __future__ import annotations

import math
import os
import shlex
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}  # a user's metric in seconds
# Other spellings of those units (any case): a metric's unit given so is stored as the short one.
TIME_SPELLINGS = {**{w: "s" for w in ("sec", "secs", "second", "seconds")},
                  **{w: "ms" for w in ("msec", "msecs", "millisecond", "milliseconds")},
                  **{w: "us" for w in ("usec", "usecs", "microsecond", "microseconds")},
                  **{w: "ns" for w in ("nsec", "nsecs", "nanosecond", "nanoseconds")}}
MIN_TIME_S = 0.5          # measured seconds per execution at least, at every size a user tunes or compares at
# The shortest timeout a program run takes (--timeout, an application file's timeout_s, a folder's settings),
# seconds: Legion's start-up alone takes longer, so a shorter one (1e-9 for 1e9, say) would fail every execution at
# stage timeout.
SHORTEST_TIMEOUT_S = 0.1
MIN_REPEATS = 3           # executions per mapper at least
MAX_REPEATS = 7           # ...and at most (the adaptive R stops here even if the interval is still wide)
TARGET_HALF_WIDTH = 0.05  # stop repeating once the interval's half-width is within 5 % of the estimate
NOISY_HALF_WIDTH = 2 * TARGET_HALF_WIDTH  # an interval ending wider than this is far from the target: warned of
TRIM = 0.2                # fraction dropped at each end for the trimmed mean (rounded; at least 1 from 3 values)
CONFIDENCE = 0.90         # of the bootstrap intervals
RESAMPLES = 2000          # bootstrap resamples
SEED = 20260101           # fixed: the same values always give the same interval
MIN_INTERVAL_VALUES = 3   # executions of each side for a ratio's interval in a verdict (`compare`'s min_values)


@dataclass(frozen=True)
class Estimate:
    """A mapper's throughput from repeated executions.

    Attributes:
        values: the executions' throughputs, in the order measured.
        value: their trimmed mean (`TRIM` of each end dropped).
        low, high: the `CONFIDENCE` bootstrap interval of the trimmed mean (equal to `value` for one execution).
        spread: (max - min) / median of `values` (0 for one execution).
    """

    values: tuple[float, ...]
    value: float
    low: float
    high: float
    spread: float

    @property
    def half_width(self) -> float:
        """Half the interval's width relative to the estimate (0 when the estimate is 0)."""
        return (self.high - self.low) / 2 / self.value if self.value else 0.0

    @property
    def noisy(self) -> bool:
        """Whether the interval's half-width exceeds `NOISY_HALF_WIDTH`: far from the target the repeats aim at."""
        return self.half_width > NOISY_HALF_WIDTH

    def to_json(self) -> dict:
        return {"values": list(self.values), "value": self.value, "low": self.low, "high": self.high,
                "spread": self.spread}

    @classmethod
    def from_json(cls, data: dict) -> Estimate:
        return cls(tuple(data["values"]), data["value"], data["low"], data["high"], data["spread"])


@dataclass(frozen=True)
class Comparison:
    """`a` against `b`: the ratio of their estimates (> 1: a is faster), its interval, and whether it excludes 1.
    `no_interval`: why the ratio has no interval worth the name (too few executions: `compare`), else None; such a
    ratio is never significant, and its texts say why instead of giving low-high."""

    ratio: float
    low: float
    high: float
    no_interval: str | None = None

    @property
    def significant(self) -> bool:
        return self.no_interval is None and (self.low > 1.0 or self.high < 1.0)

    def decimals(self) -> int:
        """Decimals (2 or more) that show each end of the interval on its own side of 1, which decides significance:
        0.951-0.998, not 0.95-1.00; 0.9999-1.7300, not 1.00-1.73."""
        def off_side(end: float) -> bool:
            shown = float(f"{end:.{d}f}")
            return (end > 1 and shown <= 1) or (end < 1 and shown >= 1)

        d = 2
        while d < 17 and (off_side(self.low) or off_side(self.high)):
            d += 1
        return d

    def text(self) -> str:
        """The ratio and its interval, e.g. '0.975x (0.951-0.998)', with `decimals()` decimals; without one,
        e.g. '1.18x (one execution each: no interval)'."""
        d = self.decimals()
        if self.no_interval:
            return f"{self.ratio:.{d}f}x ({self.no_interval})"
        return f"{self.ratio:.{d}f}x ({self.low:.{d}f}-{self.high:.{d}f})"

    def describe(self) -> str:
        """e.g. '1.32x (90 % interval 1.18-1.47x: significant)' or '1.04x (90 % interval 0.93-1.15x: not a
        significant difference)'; without an interval as `text`."""
        if self.no_interval:
            return self.text()
        d = self.decimals()
        text = f"{self.ratio:.{d}f}x ({CONFIDENCE:.0%} interval {self.low:.{d}f}-{self.high:.{d}f}x"
        return text + (": significant)" if self.significant else ": not a significant difference)")

    def to_json(self) -> dict:
        """{"ratio", "low", "high", "significant"}, and "no_interval" when there is none (`from_json` reads it)."""
        data = {"ratio": self.ratio, "low": self.low, "high": self.high, "significant": self.significant}
        return {**data, "no_interval": self.no_interval} if self.no_interval else data

    @classmethod
    def from_json(cls, data: dict) -> Comparison:
        return cls(data["ratio"], data["low"], data["high"], data.get("no_interval"))


def trimmed_mean(values: Sequence[float]) -> float:
    """Mean after dropping `TRIM` of the values at each end (rounded; at least one each end from 3 values on).

    Raises:
        ValueError: no values.
    """
    if not values:
        raise ValueError("trimmed_mean of no values")
    ordered = sorted(values)
    k = max(1, round(TRIM * len(ordered))) if len(ordered) >= 3 else 0
    kept = ordered[k:len(ordered) - k]
    return math.fsum(kept) / len(kept)


def _bootstrap(values: Sequence[float], rng) -> Any:
    """RESAMPLES trimmed means of resamples of `values` (numpy array)."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    samples = np.sort(data[rng.integers(0, len(data), size=(RESAMPLES, len(data)))], axis=1)
    n = len(data)
    k = max(1, round(TRIM * n)) if n >= 3 else 0
    return samples[:, k:n - k].mean(axis=1)


def estimate(values: Sequence[float]) -> Estimate:
    """The protocol's estimate of throughput `values` (one per execution; larger is better).

    Raises:
        ValueError: no values.
    """
    import numpy as np

    ordered = sorted(values)
    # Clamped: the mean of equal values can round one unit in the last place beyond them.
    value = min(max(trimmed_mean(values), ordered[0]), ordered[-1])
    median = ordered[len(ordered) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1]
                                                                  + ordered[len(ordered) // 2]) / 2
    spread = (ordered[-1] - ordered[0]) / median if median else 0.0
    if len(values) < 2:
        return Estimate(tuple(values), value, value, value, spread)
    means = _bootstrap(values, np.random.default_rng(SEED))
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    low, high = max(ordered[0], min(float(low), value)), min(ordered[-1], max(float(high), value))
    return Estimate(tuple(values), value, low, high, spread)


def enough(values: Sequence[float], min_repeats: int = MIN_REPEATS, max_repeats: int = MAX_REPEATS,
           target: float = TARGET_HALF_WIDTH) -> bool:
    """Whether the adaptive R may stop: at least `min_repeats` values and either `max_repeats` of them or an
    interval whose half-width is within `target` (relative) of the estimate."""
    if len(values) < min_repeats:
        return False
    return len(values) >= max_repeats or estimate(values).half_width <= target


def compare(a: Sequence[float], b: Sequence[float], min_values: int = 1) -> Comparison:
    """How much faster `a` is than `b` (throughputs of their executions): the ratio of trimmed means with a
    bootstrap interval (both sides resampled independently).

    Args:
        min_values: executions that each side needs for the interval to count; with fewer the Comparison has
            `no_interval` (and is never significant). 1, the default, is the search's rule (`optimizer.loop`): with
            one execution each the estimates alone decide. A verdict a user reads takes `MIN_INTERVAL_VALUES`, 3:
            with 2 values a side's resample repeats one value half the time, so the 5 % and 95 % quantiles are the
            extreme ratios and the "90 %" interval is the min-max of the 4 ratios of the values, which excludes 1
            for about 30 % of pairs of equal mappers (simulated, normal, t3 and exponential noise) instead of 10 %;
            from 3 values on, the quantiles fall inside the resamples' range and that rate is about 10 %.

    Raises:
        ValueError: either side has no values or `b`'s estimate is 0.
    """
    import numpy as np

    ta, tb = trimmed_mean(a), trimmed_mean(b)
    if tb <= 0:
        raise ValueError("cannot compare with a throughput of 0")
    rng = np.random.default_rng(SEED)
    ratios = _bootstrap(a, rng) / _bootstrap(b, rng)
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return Comparison(ta / tb, float(min(low, ta / tb)), float(max(high, ta / tb)),
                      too_few(len(a), len(b), min_values))


def too_few(n_a: int, n_b: int, min_values: int = MIN_INTERVAL_VALUES) -> str | None:
    """Why a ratio of `n_a` executions to `n_b` has no interval (`compare`'s min_values), e.g. "one execution each:
    no interval"; None when each side has `min_values` at least."""
    fewest, each = min(n_a, n_b), "each" if n_a == n_b else "on one side"
    if fewest >= min_values:
        return None
    if fewest == 1:
        return f"one execution {each}: no interval"
    return f"{fewest} executions {each}: too few for a {100 * CONFIDENCE:.0f} % interval, which takes {min_values}"


def values_of(result: Any) -> list[float]:
    """The measured throughputs of a `RunResult` (or its JSON): calibration executions excluded."""
    data = result if isinstance(result, dict) else result.to_json()
    if data.get("status") != "ok":
        return []
    ok = [a["result"]["throughput"] for a in data.get("attempts") or []
          if a.get("exit_code") == 0 and (a.get("result") or {}).get("throughput") is not None]
    settings = data.get("settings") or {}
    return ok[-settings.get("measured_runs", len(ok) - settings.get("calibration_runs", 0)):]


def measured_time(result: Any) -> float | None:
    """The median measured seconds per execution of a `RunResult` (or its JSON): a benchmark's timed loop's; a user's
    program's metric, when its unit is a time (`TIME_UNITS`; the wall time: "s"); None for a failed run or another
    metric."""
    data = result if isinstance(result, dict) else result.to_json()
    settings = data.get("settings") or {}
    if data.get("status") != "ok":
        return None
    if settings.get("iterations_flag"):
        return data.get("time_s")
    scale = TIME_UNITS.get((data.get("unit") or "").removeprefix("1/"))
    if "app_file" not in settings or scale is None:
        return None
    n = settings.get("measured_runs", 0)
    metrics = [a["result"]["metric"] for a in data.get("attempts") or [] if a.get("exit_code") == 0 and a.get("result")]
    return statistics.median(metrics[-n:]) * scale if n and metrics else None


def span(*values: float) -> str:
    """A value, or an interval (low, high), to 4 significant digits: "1773", "1724-1818"; an interval whose ends
    print alike (one execution, or all measured the same) prints as one value."""
    return "-".join(dict.fromkeys(f"{v:.4g}" for v in values))


def _times(unit: str, throughputs: tuple[float, ...]) -> str:
    """For throughputs in "1/<time unit>" (a user's program whose metric is a time, lower is better: `TIME_UNITS`),
    the times themselves, which people read more easily: "1773 ms" for 0.000564 1/ms, "1724-1818 ms" for an interval
    low-high (its bounds swap); "" for any other unit."""
    time_unit = unit.removeprefix("1/")
    if time_unit == unit or time_unit not in TIME_UNITS or not all(t > 0 for t in throughputs):
        return ""
    return f"{span(*(1 / t for t in reversed(throughputs)))} {time_unit}"


def untimed(unit: str | None) -> str | None:
    """For a user's program's throughput `unit`, the unit of its metric when that is not a time ("" for a number
    without one; `noise_warnings`' `untimed`), else None: "GB/s" -> "GB/s", "1/cycles" -> "cycles", "1/ms" -> None."""
    unit = unit or ""
    if as_time(unit, 1):
        return None
    return "" if unit in ("1/metric", "") else unit.removeprefix("1/")  # lower is better: "1/cycles" counts cycles


def as_time(unit: str, *throughputs: float) -> str:
    """The time of throughputs in a time metric's unit (`_times`) in parentheses, to print beside them: " (1773 ms)"
    for 0.000564 1/ms; "" for any other unit (display only: stored figures stay throughputs)."""
    times = _times(unit, throughputs)
    return f" ({times})" if times else ""


def start_up_time(result: Any) -> float | None:
    """What an execution of a `RunResult` (or its JSON) cost besides its measured time, seconds: the least, over its
    executions that worked, of the wall time (Legion's start-up and the application's set-up included) less the
    measured time; None when none tells (a failed run, a user's program without a time metric)."""
    data = result if isinstance(result, dict) else result.to_json()
    if not (data.get("settings") or {}).get("iterations_flag"):  # a user's program: its metric may not be a time
        return None
    spent = [a["wall_s"] - a["result"]["time_s"] for a in data.get("attempts") or []
             if a.get("exit_code") == 0 and a.get("wall_s") is not None
             and (a.get("result") or {}).get("time_s") is not None]
    return max(0.0, min(spent)) if spent else None


def figure(unit: str, *throughputs: float) -> str:
    """A throughput, or an interval (low, high), with its unit as `run`'s table prints it: a time metric's time first,
    "1773 ms (throughput 0.000564 1/ms)", else "12.5 GFLOP/s" (display only: stored figures stay throughputs)."""
    times, value = _times(unit, throughputs), f"{span(*throughputs)} {unit}".rstrip()
    return f"{times} (throughput {value})" if times else value


def timeout_needed(min_time_s: float, start_up_s: float = 0.0) -> float:
    """The --timeout, seconds, above which calibration can make an execution measure `min_time_s`: it lengthens an
    execution only while its expected wall time (`start_up_s` and the measured time) stays within half of it."""
    return 2 * (min_time_s + start_up_s)


def _above(value: float, limit: float) -> str:
    """`value` (> `limit`) printed above `limit` with one decimal at most, as the others' whole percents: 10.5, not
    10, for 10.49 > 10; 10.1 (rounded up, not 10.002) for 10.002."""
    if float(f"{value:.0f}") > limit:
        return f"{value:.0f}"
    return f"{math.ceil(value * 10) / 10:.1f}"


def _below(value: float, limit: float) -> str:
    """`value` (< `limit`) with the fewest significant digits, two at least, that print it below `limit`: 0.4997,
    not 0.5, for 0.49968 < 0.5."""
    d = 2
    while d < 6 and float(f"{value:.{d}g}") >= limit:
        d += 1
    return f"{value:.{d}g}"


# What gives an execution of a user's program more work (it is never calibrated): its own size arguments, where they
# are given (flags after `--` are added after them: only a parser that takes the last value sees them as a change).
USER_WORK = "larger size arguments (in --app's quoted command line, or the application file's `sizes`)"


def noise_warnings(measured: Mapping[str, tuple[Estimate, float | None]], more: str,
                   min_time_s: float, calibrated: bool = True, timeout_s: float | None = None,
                   untimed: str | None = None, start_up_s: float | None = None,
                   anew: str | None = None, wall: bool = False,
                   larger: str = "a larger --size") -> list[tuple[str, str]]:
    """What makes measurements unreliable, as (title, text) for the user to read; none when nothing does.

    "Noisy measurement": estimates whose interval is wider than `NOISY_HALF_WIDTH` of the trimmed mean (`noisy`);
    "No spread estimate": a single execution, whose interval (`low` = `high`) says nothing of the noise;
    "Too few executions for an interval": fewer than `MIN_INTERVAL_VALUES`, whose interval is not quoted;
    "Short measurement": executions that measured less than `MIN_TIME_S` seconds each (the median of a mapper's);
    "Measured time unknown": a user's program whose metric is not a time (`untimed`), whose executions may be as
    short without a word.

    Args:
        measured: name -> (estimate, median measured seconds per execution or None when unknown, as for a user's
            program); a single entry named "" is a measurement that the text does not name.
        more: what gives more executions, e.g. "a higher --max-repeats".
        min_time_s: the measured seconds per execution that calibration aimed at (--min-time; 0: none). The advice
            asks for twice that (at least `MIN_TIME_S`), and says so when the executions fell short of it.
        calibrated: False for a user's program, whose arguments alone fix the work of an execution (no --min-time).
        timeout_s: the --timeout the user gave, seconds (None: none): calibration keeps an execution's expected
            wall time within half of it, so executions that fell short of `min_time_s` name it.
        untimed: the unit of a user's program's metric that is not a time (GB/s, say; "": none), else None.
        start_up_s: what an execution costs besides its measured time (`start_up_time`), seconds, None when unknown:
            the --timeout advised leaves room for it too.
        anew: where the options that lengthen an execution can be changed when they identify the measurement
            (compare's "a new comparison (...)"), said after that advice; None: in the same command.
        wall: a user's program measured by its wall time (no metric of its own), not by a time metric.
        larger: the advice of more work per execution (`apps.larger_size`: the larger sizes that run on this
            machine); "" where there is none, and the other remedies are named alone.
    """
    def named(name: str, text: str) -> str:
        return f"{name} {text}" if name else text

    # fewer than MIN_INTERVAL_VALUES: an interval too unreliable to quote (`compare`'s min_values)
    noisy = [named(name, f"±{_above(100 * est.half_width, 100 * NOISY_HALF_WIDTH)} % after {len(est.values)} "
                         "executions (spread "
                         f"{100 * est.spread:.0f} %)") for name, (est, _) in measured.items()
             if est.noisy and len(est.values) >= MIN_INTERVAL_VALUES]
    single = [name for name, (est, _) in measured.items() if len(est.values) < 2]
    few = {name: len(est.values) for name, (est, _) in measured.items() if 2 <= len(est.values) < MIN_INTERVAL_VALUES}
    short = {name: time_s for name, (_, time_s) in measured.items() if time_s is not None and time_s < MIN_TIME_S}
    # More work per execution: a larger size, or for a user's program (whose `--app 'CMD'` has the one size ci) its
    # own arguments.
    work = USER_WORK if not calibrated else larger
    out = []
    if noisy:
        out.append(("Noisy measurement", f"the {100 * CONFIDENCE:.0f} % interval of the trimmed mean is "
                                         f"{', '.join(noisy)}, far from the target of "
                                         f"±{100 * TARGET_HALF_WIDTH:.0f} %: its figures and ratios may reflect "
                                         f"the machine's load more than the mapper; measure again with {more}, "
                                         + (f"{work}, " if work else "") + "or on a quieter machine."))
    if single:
        out.append(("No spread estimate", named(", ".join(single), f"measured by a single execution"
                                                f"{' each' if len(single) > 1 else ''}, which gives no interval: how "
                                                "much of the figure is the machine's noise is unknown; measure again "
                                                f"with {more}.")))
    if few:
        counts = set(few.values())
        by = f"{counts.pop()} executions" if len(counts) == 1 else f"fewer than {MIN_INTERVAL_VALUES} executions"
        out.append(("Too few executions for an interval",
                    named(", ".join(few), f"measured by {by}{' each' if len(few) > 1 else ''}, too few for a "
                                          f"{100 * CONFIDENCE:.0f} % interval, which takes {MIN_INTERVAL_VALUES}: how "
                                          "much of the figure is the machine's noise is unknown; measure again with "
                                          f"{more}, for {MIN_INTERVAL_VALUES} executions or more"
                                          f"{' each' if len(few) > 1 else ''}.")))
    if short:
        # Calibration scales the iteration count from a shorter execution and later executions vary: it can
        # undershoot its target.
        under = [t for t in short.values() if t < min_time_s] if calibrated else []
        timeout = under and timeout_s is not None
        out.append(("Short measurement", f"{', '.join(named(n, f'{_below(t, MIN_TIME_S)} s') for n, t in short.items())} "
                                         + ("of wall time per execution (Legion's start-up included)" if wall else
                                            "measured per execution" if calibrated else
                                            "measured per execution by the program's time metric (not the wall "
                                            "time, Legion's start-up included, that a run's result.json gives as "
                                            "`time_s`)")
                                         + f", less than the protocol's minimum of {MIN_TIME_S:g} s, "
                                         "where timing noise weighs heavily"
                                         + (f" (calibration aimed at {min_time_s:g} s and fell short of it"
                                            + (": it lengthens an execution only while its expected wall time, "
                                               "Legion's start-up included, stays within half of --timeout "
                                               f"{timeout_s:g}, {timeout_s / 2:g} s)" if timeout else ")")
                                            if under else "")
                                         + (f"; measure again with a --timeout well above "
                                            f"{timeout_needed(min_time_s, start_up_s or 0.0):.3g}"
                                            + (f" (twice --min-time and the {start_up_s:.2g} s each execution took "
                                               "besides it)" if start_up_s else "")
                                            + " or none" + (f", or {larger}" if larger else "") if timeout else
                                            "; measure again with " + (f"{larger} or " if larger else "")
                                            + f"--min-time {max(2 * min_time_s, MIN_TIME_S):g}" if calibrated else
                                            f"; give each execution more work, with {work}, and measure again")
                                         + (f", in {anew}." if anew else ".")))
    if untimed is not None:
        metric = f"the metric, in {untimed}," if untimed else "the metric, a number without a unit,"
        out.append(("Measured time unknown", f"{metric} is not a time, so whether the part of each "
                                             "execution the program times reached the protocol's minimum of "
                                             f"{MIN_TIME_S:g} s is not known (a time metric below it gets `Short "
                                             "measurement`): if it is shorter, timing noise weighs heavily; then "
                                             f"give each execution more work, with {work}."))
    return out


def utility_processors(util: int, extra_args: Sequence[Any] | None) -> int:
    """The utility processors of a run: the last `-ll:util N` among `extra_args` (the flags after `--`), else `util`
    (its size's)."""
    extra = [str(a) for a in extra_args or ()]
    return next((int(v) for f, v in reversed(list(zip(extra, extra[1:]))) if f == "-ll:util" and v.isdigit()), util)


def core_warning(settings: Mapping[str, Any]) -> tuple[str, str] | None:
    """("More processors than cores", text for the user) when a run's CPU and utility processors (`settings`' cpus
    and util, or the last `-ll:util` among the flags after `--`) outnumber the cores this process may run on
    (`os.sched_getaffinity`): Realm then gives them shared cores, and every timing is slower and noisier. Else None.
    The text says where to ask for fewer: in `--app`'s command line (`settings`' app_options) where it gives them."""
    cpus, util = settings.get("cpus") or 0, utility_processors(settings.get("util") or 0, settings.get("extra_args"))
    cores = len(os.sched_getaffinity(0))
    if cpus + util <= cores:
        return None
    # where to ask for fewer: the program's command line (`--app 'CMD ARGS'`, `app_options`) where it gives a count
    # that no flag after `--` overrides
    words = shlex.split(settings.get("app_options") or "")
    command = shlex.split(words[words.index("--app") + 1])[1:] if "--app" in words[:-1] else []
    given = [f for f in ("-ll:cpu", "-ll:util") if f in command and f not in map(str, settings.get("extra_args") or ())]
    it = "it" if len(given) == 1 else "them"
    # not --cpus there: one that contradicts the command line's -ll:cpu is refused (`apps.require_one_value`)
    fewer = (f": lower {' and '.join(given)} in --app's quoted command line, which gives {it} (or override {it} with "
             f"{' and '.join(given)} after `--`)" if given else " (--cpus, or -ll:cpu and -ll:util after `--`)")
    return ("More processors than cores", f"{cpus} CPU and {util} utility processor{'s' * (util != 1)}, "
                                          f"{cpus + util} in all, on the {cores} cores this machine gives the run: "
                                          "they share cores, so its timings are slower and noisier than with a core "
                                          "each (Realm's `reservation ... cannot be satisfied` lines in stderr say "
                                          f"the same); to measure, ask for fewer{fewer}.")


@dataclass(frozen=True)
class Measured:
    """One mapper measured by `measure_together`: its estimate, or why it failed.

    Attributes:
        name: the name it was given.
        estimate: the Estimate of its rounds' executions, or None when it failed.
        reason: why it failed ("stage: reason"), else None.
        run_dirs: the run folders of its rounds.
        unit: the throughput unit.
        time_s: the median of its rounds' measured seconds per execution (`measured_time`), None when unknown.
    """

    name: str
    estimate: Estimate | None
    reason: str | None
    run_dirs: tuple[str, ...]
    unit: str | None = None
    time_s: float | None = None

    @property
    def ok(self) -> bool:
        return self.estimate is not None

    def to_json(self) -> dict:
        return {"name": self.name, "estimate": self.estimate.to_json() if self.estimate else None,
                "reason": self.reason, "run_dirs": list(self.run_dirs), "unit": self.unit, "time_s": self.time_s}


def measure_together(app: str, mappers: Mapping[str, Any], rounds: int, out_dir: Path,
                     min_time_s: float = MIN_TIME_S, after_round: Callable[[int], Any] | None = None,
                     **run_options: Any) -> dict[str, Measured]:
    """Measures several mappers in interleaved rounds: round 1 runs each mapper once (calibrating its iteration
    count to `min_time_s`), rounds 2..`rounds` run each again with that count. Round r starts with the r-th
    mapper (a rotation), so that a load rising or falling during the measurement does not always favour the same
    position. A mapper that fails is not run in later rounds. Run folders: `out_dir/<name>/round-N/`.

    Args:
        app: benchmark name.
        mappers: name -> what `run_benchmark` takes as `mapper` ("default", "expert", a Path, DSL text).
        rounds: executions per mapper (>= 1).
        out_dir: the folder for the run folders (created).
        min_time_s: measured seconds per execution at least.
        after_round: called with each round's number once its executions ended; what it raises stops the
            measurement (a user's program rebuilt meanwhile). Nothing measured changes.
        run_options: passed to `run_benchmark` (size, cpus, gpus, timeout_s, extra_args, csize...).

    Returns:
        name -> Measured, in the order of `mappers`.

    Raises:
        MapperoptError: as `run_benchmark` (unknown benchmark, bad settings, broken toolchain).
    """
    from mapperopt.benchmarks.apps import load_config
    from mapperopt.benchmarks.harness import run_benchmark

    flag = load_config(app).iterations_flag
    extra = [str(a) for a in run_options.pop("extra_args", ())]
    values: dict[str, list[float]] = {name: [] for name in mappers}
    dirs: dict[str, list[str]] = {name: [] for name in mappers}
    iterations: dict[str, int] = {}
    failed: dict[str, str] = {}
    units: dict[str, str | None] = {}
    times: dict[str, list[float]] = {name: [] for name in mappers}
    names = list(mappers)
    for r in range(1, rounds + 1):
        k = (r - 1) % len(names)
        for name in names[k:] + names[:k]:
            mapper = mappers[name]
            if name in failed:
                continue
            # A user's program (no iterations flag) does a fixed amount of work: nothing to calibrate.
            fixed = [flag, str(iterations[name])] if flag and iterations.get(name) else []
            result = run_benchmark(app, mapper, repeats=1, out_dir=Path(out_dir) / name / f"round-{r}",
                                   min_time_s=0 if fixed else min_time_s, extra_args=[*extra, *fixed],
                                   **run_options)
            dirs[name].append(result.run_dir)
            if not result.ok:
                failed[name] = f"{result.stage}: {result.reason}"
                continue
            iterations[name] = result.settings["iterations"]
            units[name] = result.unit
            values[name].extend(values_of(result))
            if measured_time(result) is not None:
                times[name].append(measured_time(result))
        if after_round is not None:
            after_round(r)
    return {name: Measured(name, None if name in failed else estimate(values[name]), failed.get(name),
                           tuple(dirs[name]), units.get(name), statistics.median(times[name]) if times[name] else None)
            for name in mappers}


__all__ = ["TIME_UNITS", "CONFIDENCE", "Comparison", "Estimate", "MAX_REPEATS", "MIN_INTERVAL_VALUES", "MIN_REPEATS",
           "MIN_TIME_S", "Measured", "NOISY_HALF_WIDTH", "TARGET_HALF_WIDTH", "compare", "core_warning", "enough",
           "estimate", "measure_together", "measured_time", "noise_warnings", "start_up_time", "timeout_needed",
           "too_few", "trimmed_mean", "utility_processors", "values_of"]
