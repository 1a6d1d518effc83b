"""The measurement protocol's statistics (docs/tuning.md): trimmed mean, interval, adaptive R, comparisons.
Pure functions of given numbers: no timing is measured here."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, example
from hypothesis import strategies as st

from mapperopt.benchmarks import protocol
from mapperopt.benchmarks.protocol import compare, enough, estimate, trimmed_mean, values_of

throughputs = st.lists(st.floats(min_value=0.01, max_value=1e6, allow_nan=False), min_size=1, max_size=9)


def test_trimmed_mean_drops_the_ends():
    assert trimmed_mean([5.0]) == 5.0
    assert trimmed_mean([1.0, 3.0]) == 2.0
    assert trimmed_mean([1.0, 100.0, 2.0]) == 2.0              # the median of 3: one outlier is ignored
    assert trimmed_mean([1.0, 2.0, 3.0, 4.0, 1000.0]) == 3.0   # the mean of the middle 3 of 5
    with pytest.raises(ValueError):
        trimmed_mean([])


@settings(max_examples=60, deadline=None)
@given(throughputs)
@example([1.0] + [838861.4328797144] * 6)  # the trimmed mean rounded above the values (found by CI)
def test_the_interval_holds_the_estimate_and_is_reproducible(values):
    est = estimate(values)
    assert min(values) <= est.low <= est.value <= est.high <= max(values)
    assert estimate(values) == est          # fixed seed: the same numbers, the same verdict
    assert est.spread >= 0 and (est.spread == 0) == (min(values) == max(values))


def test_adaptive_repeats_stop_when_tight_or_at_the_cap():
    assert not enough([1.0, 1.0])                                   # fewer than the minimum
    assert enough([1.0, 1.01, 0.99])                                # tight at 3
    noisy = [1.0, 1.6, 0.7, 1.3]
    assert not enough(noisy)                                        # wide: repeat again
    assert enough(noisy + [0.8, 1.5, 0.9])                          # the cap (7) is reached
    assert enough([1.0, 2.0, 3.0], min_repeats=3, max_repeats=3)


def test_comparisons_say_when_a_difference_is_within_the_noise():
    fast, slow = [2.0, 2.1, 1.95, 2.05, 2.0], [1.0, 1.05, 0.98, 1.02, 1.0]
    c = compare(fast, slow)
    assert c.ratio == pytest.approx(2.0, rel=0.02) and c.significant and c.low > 1.5
    assert "not a significant" not in c.describe()
    noisy_a, noisy_b = [1.0, 1.6, 0.7, 1.3, 0.9], [1.1, 0.8, 1.5, 0.9, 1.2]
    n = compare(noisy_a, noisy_b)
    assert not n.significant and n.low < 1 < n.high and "not a significant difference" in n.describe()
    assert compare([3.0], [1.0]).significant  # single executions: the estimates decide


def test_values_of_a_run_skip_calibration_and_failed_retries():
    def attempt(code, throughput=None):
        return {"exit_code": code, "result": {"throughput": throughput} if throughput else None}

    run = {"status": "ok", "settings": {"calibration_runs": 1, "measured_runs": 3},
           "attempts": [attempt(0, 0.5), attempt(0, 1.0), attempt(None), attempt(0, 1.2), attempt(0, 1.1)]}
    assert values_of(run) == [1.0, 1.2, 1.1]
    assert values_of({"status": "failed", "attempts": []}) == []
    # an execution whose result holds no throughput (a damaged result.json) gives no value, not a None to average
    gap = {"exit_code": 0, "result": {"throughput": None}}
    assert values_of({**run, "settings": {}, "attempts": [attempt(0, 1.0), gap, attempt(0, 1.1)]}) == [1.0, 1.1]


def test_the_protocol_asks_for_half_a_second_and_three_repeats():
    assert protocol.MIN_TIME_S >= 0.5 and protocol.MIN_REPEATS >= 3 and protocol.MAX_REPEATS > protocol.MIN_REPEATS


def test_rounds_rotate_the_order_of_the_mappers(monkeypatch, tmp_path):
    """A load that changes during a measurement must not always fall on the same position: round r starts with
    the r-th mapper. The runs are stand-ins recording their order (the order, not a timing, is under test)."""
    from mapperopt.benchmarks import harness

    order = []

    class Result:
        ok, unit, settings = True, "GFLOPS", {"iterations": 5}

        def __init__(self, mapper, out_dir):
            self.mapper, self.run_dir = mapper, str(out_dir)

        def to_json(self):
            return {"status": "ok", "attempts": [{"exit_code": 0, "result": {"throughput": 1.0}}]}

    def fake_run(app, mapper, out_dir, **options):
        order.append(mapper)
        return Result(mapper, out_dir)

    monkeypatch.setattr(harness, "run_benchmark", fake_run)
    measured = protocol.measure_together("circuit", {"a": "A", "b": "B", "c": "C"}, rounds=4, out_dir=tmp_path)
    assert order == list("ABC" "BCA" "CAB" "ABC")
    assert list(measured) == ["a", "b", "c"] and all(m.estimate is not None for m in measured.values())


def test_noise_warnings_say_what_was_measured_the_target_and_what_to_do():
    """An interval far wider than the target after the last repeat, or executions shorter than the protocol's
    minimum, give one line each naming the figure, the target and the options to change; a tight, long enough
    measurement gives none."""
    tight, wide = estimate([1.02, 0.97, 1.0]), estimate([1.0, 1.6, 0.7, 1.3, 0.9, 1.5, 0.8])
    assert not tight.noisy and wide.noisy and wide.half_width > protocol.NOISY_HALF_WIDTH > protocol.TARGET_HALF_WIDTH
    assert protocol.noise_warnings({"": (tight, protocol.MIN_TIME_S)}, "a higher --max-repeats", 0.5) == []
    (noisy,) = protocol.noise_warnings({"": (wide, 1.0)}, "a higher --max-repeats", 0.5)
    assert noisy[0] == "Noisy measurement"
    assert f"±{100 * wide.half_width:.0f} % after 7 executions (spread {100 * wide.spread:.0f} %)" in noisy[1]
    assert "target of ±5 %" in noisy[1] and "a higher --max-repeats" in noisy[1] and "--size" in noisy[1]
    (short,) = protocol.noise_warnings({"": (tight, 0.061)}, "a higher --max-repeats", 0.05)
    assert short == ("Short measurement", "0.061 s measured per execution, less than the protocol's minimum of 0.5 s, "
                     "where timing noise weighs heavily; measure again with a larger --size or --min-time 0.5.")
    # Several mappers: one line per kind, naming the mappers it concerns; an unknown time is not judged.
    lines = protocol.noise_warnings({"start": (wide, 0.2), "default": (tight, 0.3), "expert": (tight, None)},
                                    "a higher --final-rounds", 0.5)
    assert [title for title, _ in lines] == ["Noisy measurement", "Short measurement"]
    assert "start ±" in lines[0][1] and "default" not in lines[0][1]
    assert lines[1][1].startswith("start 0.2 s, default 0.3 s measured per execution") and "expert" not in lines[1][1]


def test_short_measurement_advice_asks_for_more_than_was_used():
    """Executions calibrated to the default 0.5 s that measured less: the advice once said `--min-time 0.5`, the value
    already in use. It asks for twice the target, and says that calibration fell short of it."""
    tight = estimate([1.02, 0.97, 1.0])
    ((title, text),) = protocol.noise_warnings({"": (tight, 0.31)}, "a higher --max-repeats", protocol.MIN_TIME_S)
    assert title == "Short measurement" and "--min-time 0.5." not in text
    assert text.endswith("(calibration aimed at 0.5 s and fell short of it); measure again with a larger --size or "
                         "--min-time 1."), text
    ((_, text),) = protocol.noise_warnings({"": (tight, 0.4)}, "more", 0.3)  # short of the protocol, not the target
    assert "fell short" not in text and text.endswith("--min-time 0.6."), text


def test_short_measurement_prints_a_time_just_below_the_minimum_with_the_digits_that_show_it():
    """0.49968 s once printed as `0.5 s ..., less than the protocol's minimum of 0.5 s`: the time gets the digits that
    print it below the minimum; two significant digits otherwise."""
    tight = estimate([1.02, 0.97, 1.0])
    ((_, text),) = protocol.noise_warnings({"expert": (tight, 0.49968)}, "more", protocol.MIN_TIME_S)
    assert text.startswith("expert 0.4997 s measured per execution, less than the protocol's minimum of 0.5 s"), text
    ((_, text),) = protocol.noise_warnings({"": (tight, 0.0612)}, "more", protocol.MIN_TIME_S)
    assert text.startswith("0.061 s measured"), text


def test_a_single_execution_is_said_to_have_no_spread_estimate():
    """One execution gives an interval of zero width: it used to pass as a tight measurement (e.g. baselines
    measured with --repeats 1); it is said to have no spread estimate instead, with the option that gives more."""
    one = estimate([1.0])
    assert not one.noisy  # the premise: its interval alone does not show it
    ((title, text),) = protocol.noise_warnings({"": (one, 1.0)}, "a higher --repeats", 0.5)
    assert title == "No spread estimate"
    assert text == ("measured by a single execution, which gives no interval: how much of the figure is the machine's "
                    "noise is unknown; measure again with a higher --repeats.")
    lines = protocol.noise_warnings({"default": (one, 1.0), "expert": (one, 1.0),
                                     "start": (estimate([1.0, 1.01]), 1.0)}, "a higher --final-rounds", 0.5)
    assert lines == [("No spread estimate", "default, expert measured by a single execution each, which gives no "
                      "interval: how much of the figure is the machine's noise is unknown; measure again with a "
                      "higher --final-rounds."),
                     ("Too few executions for an interval", "start measured by 2 executions, too few for a 90 % "
                      "interval, which takes 3: how much of the figure is the machine's noise is unknown; measure "
                      "again with a higher --final-rounds, for 3 executions or more.")]


def test_measured_time_is_a_benchmarks_timed_loop_or_a_users_time_metric():
    run = {"status": "ok", "time_s": 0.07, "settings": {"iterations_flag": "-l"}}
    assert protocol.measured_time(run) == 0.07
    assert protocol.measured_time({**run, "status": "failed"}) is None
    # A user's program: the median of its measured executions' metric, in seconds, when the metric is a time
    # the first execution is not a measured one
    attempts = [{"exit_code": 0, "result": {"metric": m}} for m in (900.0, 50.0, 370.0, 120.0)]
    user = {"status": "ok", "time_s": 1.5, "unit": "1/ms", "attempts": attempts,
            "settings": {"iterations_flag": "", "app_file": "mapperopt.yaml", "measured_runs": 3}}
    assert protocol.measured_time(user) == pytest.approx(0.12)
    assert protocol.measured_time({**user, "unit": "1/s"}) == pytest.approx(120.0)  # the wall time
    assert protocol.measured_time({**user, "unit": "GB/s"}) is None  # not a time
    (title, text), = protocol.noise_warnings({"": (protocol.estimate([1.0, 1.1, 1.05]), 0.12)}, "more", 0.5,
                                             calibrated=False)
    assert title == "Short measurement" and "0.12 s measured per execution" in text
    # which time: the program's own figure, not the wall time a run's result.json calls `time_s`
    assert "measured per execution by the program's time metric (not the wall time" in text, text
    assert "--min-time" not in text and "calibration" not in text and "application file" in text
    # no metric: the wall time, which the text calls so
    (_, text), = protocol.noise_warnings({"": (protocol.estimate([1.0, 1.1, 1.05]), 0.12)}, "more", 0.5,
                                         calibrated=False, wall=True)
    assert text.startswith("0.12 s of wall time per execution (Legion's start-up included), less than the "
                           "protocol's minimum of 0.5 s"), text


def test_advice_for_a_users_program_asks_for_larger_arguments_not_a_size():
    """A user's program (`--app 'CMD ARGS'` has the one size ci) is never calibrated: more work per execution comes
    from its arguments, not from a larger --size; where they are: in the quoted command line (flags after `--` are
    added after them, which only a parser that takes the last value reads as a change), or the file's sizes."""
    wide = estimate([1.0, 1.6, 0.7, 1.3, 0.9, 1.5, 0.8])
    lines = protocol.noise_warnings({"": (wide, 0.1)}, "a higher --max-repeats", 0.0, calibrated=False)
    assert [title for title, _ in lines] == ["Noisy measurement", "Short measurement"]
    for _, text in lines:
        assert "--size" not in text and "after `--`" not in text, text
        assert "larger size arguments (in --app's quoted command line, or the application file's `sizes`)" in text, \
            text
        assert "((" not in text and "))" not in text, text  # no parenthesis inside another


def test_short_measurement_under_a_given_timeout_names_it():
    """`--timeout 5 --min-time 2`: calibration keeps an execution's expected wall time within half of the timeout,
    so it fell short of --min-time, and the advice named only --min-time (a larger one would fall short too). With a
    --timeout given, the line says what it allows and names it among the options."""
    tight = estimate([1.02, 0.97, 1.0])
    ((_, text),) = protocol.noise_warnings({"": (tight, 0.48)}, "more", 2.0, timeout_s=5.0)
    assert text.endswith("(calibration aimed at 2 s and fell short of it: it lengthens an execution only while its "
                         "expected wall time, Legion's start-up included, stays within half of --timeout 5, 2.5 s); "
                         "measure again with a --timeout well above 4 or none, or a larger --size."), text
    # `--min-time 0.2 --timeout 1.2` with 0.6 s of start-up: "well above 0.4" named a --timeout the user had already
    # tripled; the advice leaves room for what an execution costs besides its measured time.
    ((_, text),) = protocol.noise_warnings({"": (tight, 0.015)}, "more", 0.2, timeout_s=1.2, start_up_s=0.6)
    assert text.endswith("stays within half of --timeout 1.2, 0.6 s); measure again with a --timeout well above 1.6 "
                         "(twice --min-time and the 0.6 s each execution took besides it) or none, or a larger "
                         "--size."), text
    # No --timeout: as before.
    ((_, text),) = protocol.noise_warnings({"": (tight, 0.48)}, "more", 2.0)
    assert text.endswith("(calibration aimed at 2 s and fell short of it); measure again with a larger --size or "
                         "--min-time 4."), text


def test_two_executions_are_said_to_be_too_few_for_an_interval():
    """compare's noise lines quoted a "90 %" interval of ±20 % from 2 executions, where every ratio takes 3 for an
    interval (`MIN_INTERVAL_VALUES`). Fewer than that are said to be too few for one, with how many give one."""
    two = estimate([1.0, 1.5])
    assert two.noisy  # the premise: its bootstrap interval alone would be called noisy
    lines = protocol.noise_warnings({"expert": (two, 1.0), "random-1": (estimate([2.0, 2.8]), 1.0),
                                     "guided-1": (estimate([1.0, 1.6, 0.7, 1.3, 0.9, 1.5, 0.8]), 1.0)},
                                    "a higher --final-rounds", 0.5)
    assert lines[0][0] == "Noisy measurement" and "expert" not in lines[0][1] and "guided-1 ±" in lines[0][1], lines
    assert lines[1:] == [("Too few executions for an interval", "expert, random-1 measured by 2 executions each, too "
                          "few for a 90 % interval, which takes 3: how much of the figure is the machine's noise is "
                          "unknown; measure again with a higher --final-rounds, for 3 executions or more each.")], lines


def test_a_value_at_a_rules_edge_prints_the_digits_that_decide():
    """A half-width of 10.49 % is noisy (wider than ±10 %) and printed '±10 %'; a ratio's interval whose low end is
    0.99993 is not significant and printed '1.00-1.73x': each now shows the digit that decides, the verdict the same."""
    wide = protocol.Estimate((0.9, 1.0, 1.1), 1.0, 0.9, 1.1098, 0.2)
    assert wide.noisy
    (noisy,) = protocol.noise_warnings({"": (wide, 1.0)}, "a higher --max-repeats", 0.5)
    assert "interval of the trimmed mean is ±10.5 % after 3 executions" in noisy[1], noisy
    wider = protocol.Estimate((0.9, 1.0, 1.1), 1.0, 0.85, 1.15, 0.2)
    assert "is ±15 % after" in protocol.noise_warnings({"": (wider, 1.0)}, "a higher --max-repeats", 0.5)[0][1]
    # just above the edge: one decimal at most, rounded up (it printed '±10.002 %' beside others' '±12 %')
    edge = protocol.Estimate((0.9, 1.0, 1.1), 1.0, 0.9, 1.10002, 0.2)
    assert edge.noisy
    assert "is ±10.1 % after" in protocol.noise_warnings({"": (edge, 1.0)}, "a higher --max-repeats", 0.5)[0][1]
    c = protocol.Comparison(1.37, 0.99993, 1.73)
    assert not c.significant
    assert c.describe() == "1.3700x (90% interval 0.9999-1.7300x: not a significant difference)", c.describe()
    assert protocol.Comparison(0.8, 0.7, 1.004).text() == "0.800x (0.700-1.004)"


def test_too_few_executions_advice_is_a_whole_sentence_after_a_parenthesis():
    """compare's reference measured with `--repeats 2`: the advice ended "measure again with a higher --repeats in a
    new comparison (--repeats is one of the settings that identify one) (3 or more).", a "(3 or more)" that belonged
    to nothing. It says what the 3 counts."""
    more = "a higher --repeats in a new comparison (--repeats is one of the settings that identify one)"
    ((title, text),) = protocol.noise_warnings({"": (estimate([1.0, 1.01]), 1.0)}, more, 0.5)
    assert title == "Too few executions for an interval"
    assert ") (" not in text and "(3 or more)" not in text, text
    assert text.endswith(f"measure again with {more}, for 3 executions or more."), text


def test_the_advice_of_a_larger_size_names_those_that_run_here(monkeypatch):
    """`tune stencil --size small` on a CPU-only machine: every noise line advised "a larger --size", while the
    larger sizes (gpu, tight) need GPUs. The advice names the larger sizes that run on this machine, and where none
    does it names the other remedies alone."""
    from mapperopt import toolchain
    from mapperopt.benchmarks.apps import larger_size

    monkeypatch.setattr(toolchain, "has_cuda_driver", lambda: False)
    assert larger_size("stencil", "ci") == "a larger --size (small)"
    assert larger_size("stencil", "small") == ""
    monkeypatch.setattr(toolchain, "has_cuda_driver", lambda: True)
    assert larger_size("stencil", "small") == "a larger --size (gpu, tight)"
    wide = estimate([1.0, 1.6, 0.7, 1.3, 0.9, 1.5, 0.8])
    (noisy,) = protocol.noise_warnings({"": (wide, 1.0)}, "a higher --final-rounds", 0.5, larger="")
    assert noisy[1].endswith("measure again with a higher --final-rounds, or on a quieter machine."), noisy
    (short,) = protocol.noise_warnings({"": (estimate([1.0, 1.01, 0.99]), 0.061)}, "a higher --max-repeats", 0.05,
                                       larger="")
    assert short[1].endswith("measure again with --min-time 0.5."), short
    (short,) = protocol.noise_warnings({"": (estimate([1.0, 1.01, 0.99]), 0.061)}, "a higher --max-repeats", 0.05,
                                       larger="a larger --size (small)")
    assert short[1].endswith("measure again with a larger --size (small) or --min-time 0.5."), short
