"""The records passed between layers: one benchmark run (`RunResult`) and what AutoGuide makes of it (`Feedback`).

Formats are those of the run folder (docs/running.md): a run's `result.json` and `feedback.json` (schema
`mapperopt.feedback/1`). A failed build or run is a `RunResult` with `status="failed"` and a `stage`, never an
exception that ends tuning.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

STAGES = ("parse", "check", "compile", "start", "run", "verify", "timeout")
# AutoGuide's feedback levels (`autoguide.explain`), here so that a settings file's reader need not load its catalog
LEVELS = ("raw", "explain", "suggest")


@dataclass(frozen=True)
class Attempt:
    """One execution of a benchmark application.

    Attributes:
        exit_code: the process's exit status (negative: killed by that signal; None: killed at the timeout).
        wall_s: wall-clock seconds of the whole process, start-up included.
        result: the parsed `MAPPEROPT_RESULT` object (docs/running.md), or None if none was printed.
        profile: the parsed `MAPPEROPT_PROFILE` object (docs/compiler.md), or None.
        stdout: path of the captured standard output, relative to the run folder.
        stderr: path of the captured standard error, relative to the run folder.
    """

    exit_code: int | None
    wall_s: float
    result: dict | None = None
    profile: dict | None = None
    stdout: str = ""
    stderr: str = ""


@dataclass(frozen=True)
class RunResult:
    """The outcome of evaluating one mapper on one benchmark (all repeats).

    Attributes:
        app: benchmark name, e.g. "circuit".
        mapper: "default", "expert" or the DSL file's name.
        status: "ok" or "failed" ("error" only in what `run --json` prints for an error before the run: nothing
            ran, no run folder).
        stage: for a failure, one of STAGES (where it failed); None when ok.
        reason: one line saying why it failed; None when ok.
        throughput: median throughput over the repeats (larger is better); None when failed.
        unit: throughput unit, e.g. "GFLOPS".
        trimmed_mean: mean throughput after dropping the best and the worst repeat (all, with < 3 repeats).
        spread: (max - min) / median of the repeats' throughputs; None for one execution (`no_spread`).
        interval: [low, high], the 90 % bootstrap interval of `trimmed_mean` (mapperopt.benchmarks.protocol); None
            for one execution.
        no_spread: why `spread` and `interval` are None although the run succeeded ("one measured execution: no
            estimate of the noise"), else None.
        time_s: median measured time of the timed iterations, seconds (a user's program: the executions' wall
            time, Legion's start-up included; `protocol.measured_time` gives its time metric).
        attempts: every execution, in order.
        run_dir: folder holding the run's files (docs/running.md, docs/tuning.md).
        dsl: the mapper's DSL text, or None for Legion's default mapper.
        log: the text AutoGuide reads for a failure (compiler messages or the failing execution's stderr and
            stdout, untrimmed); empty when ok.
        settings: size, processors, repeats, timeout and command line used.
        profile: per-task times of the run's profiling execution (`run_benchmark(profile=True)`): the
            `MAPPEROPT_PROFILE` object (docs/compiler.md) plus "iterations", its timed iterations, and "warmup", its
            warm-up iterations (None when the application does not say); None without one.
    """

    app: str
    mapper: str
    status: str
    stage: str | None = None
    reason: str | None = None
    throughput: float | None = None
    unit: str | None = None
    trimmed_mean: float | None = None
    spread: float | None = None
    interval: list[float] | None = None
    no_spread: str | None = None
    time_s: float | None = None
    attempts: tuple[Attempt, ...] = ()
    run_dir: str | None = None
    dsl: str | None = None
    log: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    profile: dict | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def recorded_throughput(self) -> float | None:
        """The run's figure as tuning records it (history.csv, the best so far) and AutoGuide quotes it: the trimmed
        mean where there is one (the harness's measurements), else `throughput`; same unit; None when failed."""
        return self.trimmed_mean if self.trimmed_mean is not None else self.throughput

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> RunResult:
        """Reads a stored result.json (its fields' kinds checked by `RESULT_FIELDS`); unknown keys, at its top or in
        an attempt (from a newer writer), are ignored, as a tuning journal's are."""
        def known(kind: type, obj: dict) -> dict:
            return {k: v for k, v in obj.items() if k in {f.name for f in fields(kind)}}

        return cls(**{**known(cls, data), "attempts": tuple(Attempt(**known(Attempt, a))
                                                            for a in data.get("attempts", ()))})


# The fields of a stored `RunResult` (result.json, a comparison's evaluations/) that its readers use, as
# `mapperopt.files.read_json` checks them.
RESULT_FIELDS = {"app": str, "mapper": str, "status": str, "stage?": (str, None), "reason?": (str, None),
                 "throughput?": (float, None), "unit?": (str, None), "trimmed_mean?": (float, None),
                 "spread?": (float, None), "interval?": ([float], None), "no_spread?": (str, None),
                 "time_s?": (float, None), "run_dir?": (str, None), "dsl?": (str, None), "log?": str,
                 "settings?": {"iterations?": (int, None), "measured_runs?": int, "calibration_runs?": int},
                 "profile?": (dict, None),
                 "attempts?": [{"exit_code": (int, None), "wall_s": float, "profile?": (dict, None), "stdout?": str,
                                "stderr?": str, "result?": ({"throughput?": (float, None), "time_s?": (float, None),
                                                            "metric?": float}, None)}]}


@dataclass(frozen=True)
class Edit:
    """One mechanical change to a DSL program that AutoGuide suggests (applied by `mapperopt.autoguide`).

    Attributes:
        op: the operation, one of those docs/autoguide.md lists, e.g. "set_task_kinds", "set_region_memory",
            "drop_layout_constraint", "drop_instance_limit", "wrap_index_modulo", "replace_index_map".
        args: the operation's arguments, e.g. {"task": "*", "region": "rp_ghost", "proc": "GPU",
            "memories": ["ZCMEM", "SYSMEM"]}.
    """

    op: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"op": self.op, **self.args}

    @classmethod
    def from_json(cls, data: dict) -> Edit:
        data = dict(data)
        return cls(data.pop("op"), data)


@dataclass(frozen=True)
class Feedback:
    """AutoGuide's reading of a run (docs/autoguide.md, schema mapperopt.feedback/1).

    Attributes:
        status: "ok" or "failed" (from the run).
        stage: the run's stage for a failure, else None.
        category: e.g. "memory.oom", "index_map.out_of_range", "performance".
        explanation: what happened, in plain language ("N/A" where nothing needs explaining).
        suggestion: what to change in the mapper, in plain language ("N/A" if none).
        edits: the suggestion as mechanical edits, when it can be applied mechanically.
        raw_excerpt: the output lines that matter, trimmed to a size budget.
        rule: the id of the catalog rule that matched, or "generic".
    """

    status: str
    stage: str | None
    category: str
    explanation: str
    suggestion: str
    edits: tuple[Edit, ...] = ()
    raw_excerpt: str = ""
    rule: str = "generic"

    def to_json(self) -> dict:
        return {"schema": "mapperopt.feedback/1", "status": self.status, "stage": self.stage,
                "category": self.category, "explanation": self.explanation, "suggestion": self.suggestion,
                "edits": [e.to_json() for e in self.edits], "raw_excerpt": self.raw_excerpt, "rule": self.rule}

    @classmethod
    def from_json(cls, data: dict) -> Feedback:
        return cls(status=data["status"], stage=data.get("stage"), category=data["category"],
                   explanation=data["explanation"], suggestion=data["suggestion"],
                   edits=tuple(Edit.from_json(e) for e in data.get("edits", ())),
                   raw_excerpt=data.get("raw_excerpt", ""), rule=data.get("rule", "generic"))
