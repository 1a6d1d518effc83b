"""The optimizer protocol, the tuning record and the registry of optimizers.

An optimizer proposes one DSL program per iteration and is told the outcome:

    opt = make_optimizer("guided", space=space, start=start_dsl, seed=0)
    proposal = opt.propose(history)        # -> Proposal (DSL text, or an agent error)
    ...evaluate...
    opt.observe(record)                    # -> None; record is the IterationRecord just stored
    opt.close()                            # once, when the run ends, also on an error or Ctrl-C (`loop.tune`)

`resume(history)` brings a fresh optimizer to the state it had after `history`; the default replays
`propose`/`observe` over the stored records, which is exact for deterministic optimizers. The registry, `OPTIMIZERS`,
maps CLI names to what the commands need to know of each optimizer (`OptimizerSpec`); classes are imported lazily,
so that `guided` never pays for importing trace-opt.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Sequence

from mapperopt.errors import MapperoptError, install_extra
from mapperopt.files import OneOf, Positive, wrong_fields

RECORD_SCHEMA = "mapperopt.tune.iter/1"


@dataclass(frozen=True)
class OptimizerSpec:
    """What the commands need to know of an optimizer, declared once in `OPTIMIZERS` (no command tests names).

    Attributes:
        target: its class, "module:Class", imported only when it is made.
        needs_model: it proposes with a language model: `tune` and `compare` need an endpoint for it
            (`LLMConfig.configured`), and `tune` records the endpoint's settings (never the key) with the run.
        reads_profile: it reads AutoGuide's feedback, which names the heaviest tasks from a profiling execution;
            `compare` spares the others' evaluations that execution (one Legion start less each).
        default: `tune`'s optimizer when none is named, one among those that need a model (used when an endpoint
            is configured) and one among the others.
        compared: in `compare`'s default --optimizers and in the evaluation's plan (benchmarks/evaluate.py).
        extra: the pip extra that installs its optional packages ("" when it has none).
        packages: those packages, as (import name, pip name).
    """

    target: str
    needs_model: bool = False
    reads_profile: bool = False
    default: bool = False
    compared: bool = True
    extra: str = ""
    packages: tuple[tuple[str, str], ...] = ()


# CLI name -> its spec
OPTIMIZERS = {
    "guided": OptimizerSpec("mapperopt.optimizer.guided:GuidedOptimizer", reads_profile=True, default=True),
    "trace": OptimizerSpec("mapperopt.optimizer.agent:TraceOptimizer", needs_model=True, reads_profile=True,
                           default=True, extra="llm", packages=(("openai", "openai"), ("opto", "trace-opt"))),
    "opentuner": OptimizerSpec("mapperopt.optimizer.baselines:OpenTunerSearch", extra="baselines",
                               packages=(("opentuner", "opentuner"),)),
    "optuna": OptimizerSpec("mapperopt.optimizer.baselines:OptunaSearch", extra="baselines",
                            packages=(("optuna", "optuna"),)),
    "random": OptimizerSpec("mapperopt.optimizer.baselines:RandomSearch"),
}


def optimizer_spec(name: str) -> OptimizerSpec:
    """The registry's entry of the optimizer `name`.

    Raises:
        MapperoptError: unknown name.
    """
    if name not in OPTIMIZERS:
        raise MapperoptError(f"unknown optimizer '{name}'", hint=f"choose one of {', '.join(OPTIMIZERS)}")
    return OPTIMIZERS[name]


def default_optimizer(model: bool) -> str:
    """`tune`'s optimizer when none is named: the default one that needs a language model when an endpoint is
    configured (`model`), else the default one that does not."""
    return next(name for name, spec in OPTIMIZERS.items() if spec.default and spec.needs_model == model)


def require_packages(names: Sequence[str]) -> None:
    """Checks that the optional packages of the optimizers `names` are installed, before any work is done.

    Raises:
        MapperoptError: an unknown name; one or more packages are missing (names each optimizer, its missing
            packages and the pip extra).
    """
    import shlex
    import sys
    from importlib.util import find_spec

    lines, extras, packages, usable = [], [], [], []
    for name in dict.fromkeys(names):
        spec = optimizer_spec(name)
        missing = [pip for module, pip in spec.packages if find_spec(module) is None]
        if missing:
            lines.append(f"the {name} optimizer needs the optional package{'s' * (len(missing) > 1)} "
                         f"{' and '.join(repr(m) for m in missing)}, which {'is' if len(missing) == 1 else 'are'} "
                         f"not installed (pip extra '{spec.extra}')")
            extras.append(spec.extra)
            packages += missing
        else:
            usable.append(name)
    if lines:
        # The extra as this copy was installed (from its checkout, or by name from the package index), and the
        # packages alone; both for the interpreter that runs mapperopt.
        exact = shlex.join([sys.executable, "-m", "pip", "install", *dict.fromkeys(packages)])
        rest = f"or leave them out: --optimizers {','.join(usable)}" if usable else "or choose another optimizer"
        raise MapperoptError("; ".join(lines), hint=f"{install_extra(','.join(dict.fromkeys(extras)))} (or the "
                                                    f"packages alone: {exact}), {rest}")


@dataclass(frozen=True)
class Proposal:
    """What an optimizer proposes for one iteration.

    Attributes:
        dsl: the program to evaluate, or None when the agent itself failed to produce one.
        note: one line saying how it was obtained (shown in the progress display and stored).
        error: the agent's error text when `dsl` is None; it becomes the iteration's feedback.
        state: the optimizer's state needed to resume after this iteration (JSON), or None.
        llm: language-model usage while proposing: {"calls": [...], "prompt_tokens", "completion_tokens",
            "total_tokens"}; None when no model was called.
    """

    dsl: str | None
    note: str = ""
    error: str | None = None
    state: dict | None = None
    llm: dict | None = None


@dataclass(frozen=True)
class IterationRecord:
    """One tuning iteration as stored in `state.jsonl` (one JSON object per line, schema mapperopt.tune.iter/1).

    Attributes:
        iter: 1-based iteration number.
        dsl: the evaluated program as proposed, or None when the agent failed.
        key: cache key (hash of the normalised program, `normalize_dsl`, and the run settings), or None without a
            program.
        status: "ok" or "failed".
        stage: where a failure happened: "generate" (the agent raised) or a run stage (records.STAGES).
        category: AutoGuide's category (e.g. "performance", "memory.oom"), "agent.error" for agent failures.
        unit: unit of `throughput`.
        throughput: the measurement protocol's estimate (trimmed mean of the repeats; larger is better); None
            when failed.
        best_throughput: the throughput of the best iteration of 1..iter (0.0 when none succeeded).
        best_iter: the best iteration of 1..iter: a candidate replaces the best only when it is faster beyond the
            noise or after both were re-measured together (None: none succeeded, or a journal of before).
        cached: True when the program had been evaluated before and its stored result was reused.
        cached_from: the iteration whose result was reused: its number, or, for an outcome another run of the same
            comparison measured (`compare`'s shared evaluations; `cached` False: new to this run, it is judged as
            this run's own measurement), that run's iteration folder relative to the comparison's, e.g.
            "guided-1/iter-003".
        feedback_text: the feedback string the optimizer was given (docs/autoguide.md §2).
        note: how the optimizer obtained the program (Proposal.note).
        result: the run's RunResult as JSON (None for agent failures and cached iterations).
        feedback: AutoGuide's Feedback as JSON (None for agent failures and cached iterations).
        optimizer_state: Proposal.state.
        llm: Proposal.llm.
        wall_s: seconds the iteration took (proposal and evaluation).
    """

    iter: int
    dsl: str | None
    key: str | None
    status: str
    stage: str | None
    category: str
    throughput: float | None
    unit: str | None
    best_throughput: float
    cached: bool = False
    cached_from: int | str | None = None
    feedback_text: str = ""
    note: str = ""
    result: dict | None = None
    feedback: dict | None = None
    optimizer_state: dict | None = None
    llm: dict | None = None
    wall_s: float = 0.0
    best_iter: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def transient(self) -> bool:
        """A failure that may say more about the machine than the mapper (a timeout or a SIGKILL): never reused
        from the cache."""
        if self.ok or self.stage == "generate":
            return False
        codes = [a.get("exit_code") for a in (self.result or {}).get("attempts") or []]
        return self.stage == "timeout" or bool(codes and codes[-1] in (-9, 137))

    @property
    def kept_out_by_noise(self) -> bool:
        """Measured faster than the best, but not beyond the noise: the best stays `best_iter` (until the final
        comparison measures them together)."""
        return (self.ok and self.throughput is not None and self.best_iter not in (None, self.iter)
                and self.throughput > self.best_throughput)

    @property
    def score(self) -> float:
        """Throughput, 0 for a failure (the paper's convention)."""
        return self.throughput if self.ok and self.throughput is not None else 0.0

    def to_json(self) -> dict:
        return {"schema": RECORD_SCHEMA, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict) -> IterationRecord:
        """Reads a stored line; unknown keys (from a newer writer) are ignored.

        Raises:
            ValueError: the line is of another schema, or a field is missing or of another kind (an impossible
                throughput: 0, below, not finite), named.
        """
        if data.get("schema") != RECORD_SCHEMA:
            raise ValueError(f"not a tuning record (schema {data.get('schema')!r}, expected {RECORD_SCHEMA!r})")
        why = wrong_fields(data, _RECORD_FIELDS) or _contradiction(data)
        if why:
            raise ValueError(why)
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


# The fields of a stored `IterationRecord`, as `mapperopt.files.read_json` checks them
_RECORD_FIELDS = {"iter": int, "dsl": (str, None), "key": (str, None), "status": OneOf(("ok", "failed")),
                  "stage": (str, None),
                  "category": str, "throughput": (Positive, None), "unit": (str, None), "best_throughput": float,
                  "cached?": bool, "cached_from?": (int, str, None), "feedback_text?": str, "note?": str,
                  "result?": (dict, None), "feedback?": (dict, None), "optimizer_state?": (dict, None),
                  "llm?": (dict, None), "wall_s?": float, "best_iter?": (int, None)}


def _contradiction(data: dict) -> str | None:
    """Why a stored record whose fields are each of the right kind is still none the loop writes: a failure with a
    throughput or without a stage, a success without a throughput (an edit); None when it is one."""
    def shown(field: str) -> str:
        return f"its field '{field}' is {'null' if data[field] is None else repr(data[field])}"

    if data["status"] == "failed":
        wrong = [shown(f) for f, bad in (("stage", data["stage"] is None),
                                         ("throughput", data["throughput"] is not None)) if bad]
        return (f"its field 'status' is 'failed', but {' and '.join(wrong)}: a failed iteration records where it "
                "failed and no throughput") if wrong else None
    if data["throughput"] is None:
        return f"its field 'status' is 'ok', but {shown('throughput')}: a successful iteration records its throughput"
    return None


def normalize_dsl(text: str) -> str:
    """The canonical text of a program: formatted, comments and parentheses that precedence does not need dropped
    (`(a) + 1` is `a + 1`). Text that does not parse is returned with
    trailing spaces and blank lines removed, so that equal broken programs still share a cache entry."""
    from dataclasses import replace

    from mapperopt.dsl.ast import without_parens
    from mapperopt.dsl.formatter import format_program
    from mapperopt.dsl.parser import parse

    try:
        program = parse(text, "<mapper>")
    except MapperoptError:
        lines = [line.rstrip() for line in text.strip().splitlines()]
        return "\n".join(line for line in lines if line) + "\n"
    return format_program(replace(without_parens(program), comments=(), source=""))  # without source: canonical layout


def cache_key(dsl: str, settings: dict) -> str:
    """The cache key of evaluating `dsl` (already normalised) under run `settings` (app, size, processors,
    repeats...): 16 hex digits of a SHA-256."""
    blob = json.dumps({"dsl": dsl, "settings": settings}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class Optimizer:
    """Base class of optimizers (see the module docstring for the protocol).

    Args:
        space: the SearchSpace of the application on this machine.
        start: the DSL program of the first iteration.
        seed: seed of every random choice the optimizer makes.
        options: optimizer-specific settings (ignored by optimizers that have none).
    """

    name: ClassVar[str] = ""

    def __init__(self, space: Any, start: str, seed: int = 0, **options: Any):
        self.space = space
        self.start = start
        self.seed = seed
        self.options = options

    def propose(self, history: Sequence[IterationRecord]) -> Proposal:
        raise NotImplementedError

    def observe(self, record: IterationRecord) -> None:
        """Default: nothing to learn."""

    def resume(self, history: Sequence[IterationRecord]) -> None:
        """Replays `history` (propose then observe per record) to rebuild a deterministic optimizer's state."""
        for i, record in enumerate(history):
            self.propose(history[:i])
            self.observe(record)

    def describe(self) -> str:
        """One line for the display, e.g. 'guided (rule-based search, not a language model)'."""
        return self.name

    def close(self) -> None:
        """Releases what the optimizer holds (a database connection, a model client); nothing is proposed after it.
        Default: nothing to release."""


def start_note(space: Any, start: str, start_point: Any) -> str:
    """The first iteration's note: "start program", and when the start is a program of the user's (no
    `start_point`), what the search's programs leave out of it because it changes nothing here
    (`SearchSpace.left_out`) and the statements whose effect they do not have (`SearchSpace.decided_otherwise`),
    so that a statement missing from the next programs is not a surprise."""
    if start_point is not None:
        return "start program"
    left_out, decided = space.left_out(start), space.decided_otherwise(start)
    return "start program" + (f"; {left_out}" if left_out else "") + (
        f"; the search's programs do not keep {decided}" if decided else "")


def make_optimizer(name: str, **kwargs: Any) -> Optimizer:
    """An optimizer by CLI name.

    Raises:
        MapperoptError: unknown name.
    """
    module, cls = optimizer_spec(name).target.split(":")
    return getattr(importlib.import_module(module), cls)(**kwargs)


__all__ = ["IterationRecord", "Optimizer", "OptimizerSpec", "Proposal", "OPTIMIZERS", "cache_key", "default_optimizer",
           "make_optimizer", "normalize_dsl", "optimizer_spec", "require_packages", "start_note"]
