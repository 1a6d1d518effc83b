"""The evaluation on one GPU machine (reports/h200-evaluation.md), as a resumable work list of units.

    python3 benchmarks/gpu/evaluate.py run --results reports/my-eval --stop-after 480
    python3 benchmarks/gpu/evaluate.py report --results reports/my-eval   # the page: my-evaluation.md beside it
    python3 benchmarks/gpu/evaluate.py list --results reports/my-eval

`--results` defaults to reports/my-eval, a folder of your own: the project's folders (reports/h200-eval,
reports/h100-eval) hold its lent machines' timings, and benchmarks/gpu/evaluate.sh continues them there. `report`
writes the page beside the results folder, named after it; `--out` names another file or folder (a relative path is
from the current directory, as --results is), and the page's links are written from where it lands.

A unit is one piece of work whose outcome is saved as `<results>/units/<unit id>.json` as soon as it ends; `run`
skips the units saved already (`--retry-failed` runs the failed ones again), so calls under a short wall-clock limit
(`--stop-after`: no unit starts after it, a unit still running then is stopped and loses only its unfinished
iteration) continue one another. The units, in the order they run (the most informative first):

    limit-copybw, limit-dgemm          device-to-device copy bandwidth (benchmarks/gpu/copybw.cu, bytes read plus
                                       written) and cuBLAS DGEMM (benchmarks/gpu/dgemm.cu): the ceilings
    base-<bench>-<size>                Legion's default mapper and the expert, measured together in interleaved rounds
                                       (`protocol.measure_together`); also the figures the application prints
                                       (the stencil's BANDWIDTH)
    cpu-pennant-gpu                    Pennant's deck on CPUs only, for the GPU's zone-cycles/s to be compared with
    tune-<bench>-<size>-<opt>-i<N>-s<seed>   one tuning run of `mapperopt compare` (optimizer, N iterations, seed),
                                       seed 0 of every optimizer on one benchmark and size, then on the next,
                                       then seed 1 ...; the runs of 100 iterations last
    final-<bench>-<size>-i<N>          compare's final measurement: the expert and every run's best, together

The tuning units are `run_compare` of one comparison per benchmark and size (`<results>/work/<bench>/compare-*`,
shared by every optimizer and seed, so a program is run once per comparison); the runs of 100 iterations extend those
of 10 (the first 10 iterations are the same run). An iteration is one measured execution (`EXECUTIONS`), plus a
profiling one for the optimizers that read it; on the dedicated machine a timeout (5x the run's best execution, or the
expert's before a success) is final. The units of a GPU-free plan (`--gpus 0`) leave out the limits. `plan.json` keeps
the options of the last `run`, the only source of the work list (its `optimizers` run; `excluded` names those left
out, and why: an optimizer that needs a language model is in a plan only where `--optimizers` names it), and the GPU
its units were measured on (`gpu`, nvidia-smi's name): `run` refuses a folder measured on another card (timings of two
cards are never mixed: each card's evaluation has its own folder, e.g. reports/h100-eval beside reports/h200-eval),
and a plan that measures on a GPU where this machine has none (nothing is recorded); `run --check` does only these
checks (benchmarks/gpu/evaluate.sh, before it builds). `report` lists from it the units still missing and estimates
the device time they need (`cost_estimate`); `list` gives each unit's state: ok, failed, stale (a final measurement of
fewer runs than it now needs), started (a tuning unit stopped with some iterations in its journal, how many) or
missing. benchmarks/gpu/evaluate.sh appends a line per call to `calls.jsonl` in the results folder (its times, builds,
card, units finished), which the report lists. `notes.json` (a person's text) and `changes.json` (the dates of the
fixes and expert edits made while the evaluation ran, `load_changes`: the summary table marks the figures they
concern) are written by hand. The comparisons' journals (`state.jsonl`, OpenTuner's `opentuner.db` and
`opentuner.db-journal`) are committed as their `.xz`: `run`, `list` and `report` restore the plain files first
(`restore_journals`; they are git-ignored), and `run` compresses them again when it ends (`compress_journals`;
`compress` does only this, benchmarks/gpu/evaluate.sh before it packs the folder).
"""

from __future__ import annotations

import argparse
import difflib
import json
import lzma
import multiprocessing
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SCHEMA = "mapperopt.evaluate/1"
SIZES = ("gpu", "tight")
LONG_RUN = ("opentuner", 100)  # (optimizer, iterations) of the long baseline run
PRINTED = re.compile(r"^([A-Z][A-Z ]*[A-Z]) = +([-+0-9.eE]+) (\S+)\s*$", re.M)  # e.g. `BANDWIDTH = 2985.1 GB/s`
FP32_LANES_PER_SM = 128  # Hopper: 128 FP32 units per multiprocessor (NVIDIA H100 architecture whitepaper)
# One measured execution per tuning evaluation: on the GPU the GEMMs repeat an execution within 0.3 %
# (reports/gemm-h200.md; Pennant's two mappers differ by 3-6 % in single executions, reports/pennant-h200.md), while
# one costs 6-17 s of Legion start-up, set-up and check for 1.4-3 s of measured time; the `final` units measure every
# run's best with the expert in rounds.
EXECUTIONS = 1
# Timed work of a comparison where the size's is far above the ~1 s a measurement needs (the size's own stays for the
# reference units): Pennant's `gpu` deck runs 52 ms a cycle (58 timed cycles: 3 s), its `tight` one 600 ms a cycle
# with the sides in zero-copy memory (58 timed cycles: 36 s); -cstop counts the 2 untimed warm-up cycles too.
TUNE_ARGS = {"pennant-gpu": ["-cstop", "30"], "pennant-tight": ["-cstop", "5"]}


@dataclass(frozen=True)
class Unit:
    """One piece of the work list.

    Attributes:
        id: its name, also its file name (units/<id>.json).
        kind: "limit", "base", "cpu", "tune" or "final".
        bench, size: the benchmark and size (None for a limit).
        optimizer, iters, seed: for "tune" (optimizer, iters) and "final" (iters).
        needs: ids of the units that must be done first ("final" needs its tuning runs).
    """

    id: str
    kind: str
    bench: str | None = None
    size: str | None = None
    optimizer: str | None = None
    iters: int | None = None
    seed: int | None = None
    needs: tuple[str, ...] = ()


# Why an optimizer that proposes with a language model is outside a plan unless named (--optimizers): the GPU
# machines the evaluation runs on have no network.
NO_ENDPOINT = ("it proposes with a language model, and the GPU machine the evaluation runs on (no network) reaches no "
               "model endpoint")


def default_plan(**overrides) -> dict:
    """The options of a work list: benchmarks (all configured), sizes (those of SIZES a benchmark has), gpus (None:
    the size's), optimizers (those whose units run: by default compare's less those that need a language model),
    excluded ({optimizer: why it is outside the plan}, stated on the report: compare's optimizers not named in
    `optimizers`), iters, seeds, long_iters (OpenTuner's long run; 0: none), base_rounds, final_rounds, cpu_cpus
    (the CPU Pennant run), executions (measured executions per tuning evaluation), min_time_s (measured seconds per
    execution at least; None: the size's and the protocol's), tune_args ({"<bench>-<size>": application arguments of
    its comparison}), dedicated (nothing else runs on the machine: compare's `dedicated`), gpu (nvidia-smi's name of
    the card the units are measured on; `run` sets it). The work list depends on the plan alone, never on the
    environment it is read in (an endpoint configured there or not)."""
    from mapperopt.benchmarks import known_benchmarks
    from mapperopt.optimizer.base import optimizer_spec
    from mapperopt.optimizer.compare import DEFAULT_OPTIMIZERS

    model = [o for o in DEFAULT_OPTIMIZERS if optimizer_spec(o).needs_model]
    plan = {"schema": SCHEMA, "benchmarks": known_benchmarks(), "sizes": list(SIZES), "gpus": None,
            "optimizers": [o for o in DEFAULT_OPTIMIZERS if o not in model],
            "excluded": {o: NO_ENDPOINT for o in model}, "iters": 10, "seeds": 5, "long_iters": LONG_RUN[1],
            "base_rounds": 3, "final_rounds": 5, "cpu_cpus": 12, "executions": EXECUTIONS, "min_time_s": None,
            "tune_args": dict(TUNE_ARGS), "dedicated": True, "gpu": None}
    plan.update({k: v for k, v in overrides.items() if v is not None})
    return _named_is_planned(plan)


def _named_is_planned(plan: dict) -> dict:
    """`plan` with the optimizers it names in `optimizers` taken out of `excluded`."""
    return {**plan, "excluded": {o: why for o, why in plan.get("excluded", {}).items()
                                 if o not in plan["optimizers"]}}


def this_gpu() -> str | None:
    """nvidia-smi's name of this machine's first GPU (e.g. "NVIDIA H200"); None where there is none."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = out.stdout.strip().splitlines() if out.returncode == 0 else []
    return names[0].strip() or None if names else None


def measured_on(plan: dict, units: dict) -> str | None:
    """The GPU a results folder's units were measured on: plan.json's `gpu`, else (a folder from before it was kept)
    the name the copy-bandwidth unit read; None before anything ran on a GPU."""
    copy = units.get("limit-copybw", {}).get("gpu")
    return plan.get("gpu") or (copy.split(",")[0].strip() if copy else None)


def card_label(name: str | None) -> str:
    """The model in a GPU's name ("NVIDIA H100 80GB HBM3" -> "H100"); the whole name where it has none."""
    model = re.search(r"\b[A-Z][0-9]{2,4}\b", name or "")
    return model.group(0) if model else (name or "GPU")


def load_plan(results: Path) -> dict:
    """The plan stored in `results` (plan.json), with the defaults of options added since it was written."""
    stored = json.loads((results / "plan.json").read_text())
    return _named_is_planned({**default_plan(), **stored})


def usable_optimizers(plan: dict) -> tuple[list[str], dict[str, str]]:
    """(the plan's optimizers, {optimizer outside the plan: why}): from the plan alone, whatever the environment."""
    return list(plan["optimizers"]), {o: f"outside the plan: {why}" for o, why in plan.get("excluded", {}).items()}


def missing_endpoint(plan: dict) -> list[str]:
    """The plan's optimizers that need a language-model endpoint where none is configured here."""
    from mapperopt.optimizer.base import optimizer_spec
    from mapperopt.optimizer.llm import LLMConfig

    model = [o for o in plan["optimizers"] if optimizer_spec(o).needs_model]
    return model if model and not LLMConfig.from_env().configured else []


def pairs(plan: dict) -> list[tuple[str, str]]:
    """(benchmark, size) of the plan, benchmark-major: Circuit and Stencil first, Pennant (most of a minute of set-up
    per execution) last."""
    from mapperopt.benchmarks import load_config

    first = {"circuit": 0, "stencil": 1, "pennant": 3}
    benches = sorted(plan["benchmarks"], key=lambda b: first.get(b, 2))
    return [(b, s) for b in benches for s in plan["sizes"] if s in load_config(b).sizes]


def work_list(plan: dict) -> list[Unit]:
    """The units of `plan`, in the order `run` does them."""
    gpu = plan["gpus"] != 0
    both = pairs(plan)
    optimizers, _ = usable_optimizers(plan)
    units = [Unit("limit-copybw", "limit"), Unit("limit-dgemm", "limit")] if gpu else []
    units += [Unit(f"base-{b}-{s}", "base", b, s) for b, s in both]
    if gpu:
        # the same deck as every Pennant size on GPUs (they differ in memory only)
        units += [Unit("cpu-pennant-gpu", "cpu", b, s) for b, s in both if b == "pennant" and s == "gpu"]

    def tune(opt: str, iters: int, seed: int, b: str, s: str) -> Unit:
        return Unit(f"tune-{b}-{s}-{opt}-i{iters}-s{seed}", "tune", b, s, opt, iters, seed)

    # seed 0 of every optimizer on one benchmark and size (a whole row of the comparison's table) before the next,
    # and on every benchmark before seed 1 of any: a short session's results are complete comparisons
    units += [tune(opt, plan["iters"], seed, b, s) for seed in range(plan["seeds"]) for b, s in both
              for opt in optimizers]
    for b, s in both:
        needs = tuple(tune(o, plan["iters"], seed, b, s).id for o in optimizers for seed in range(plan["seeds"]))
        units.append(Unit(f"final-{b}-{s}-i{plan['iters']}", "final", b, s, iters=plan["iters"], needs=needs))
    opt, iters = LONG_RUN[0], plan["long_iters"]
    if iters and opt in optimizers:
        units += [tune(opt, iters, seed, b, s) for seed in range(plan["seeds"]) for b, s in both]
        for b, s in both:
            needs = tuple(tune(opt, iters, seed, b, s).id for seed in range(plan["seeds"]))
            units.append(Unit(f"final-{b}-{s}-i{iters}", "final", b, s, opt, iters, needs=needs))
    return units


def is_done(unit: Unit, saved: dict | None) -> bool:
    """Whether a saved outcome finishes `unit`: it succeeded, and (a final measurement) covered every run the unit
    now needs (a plan with more seeds makes an earlier final measurement stale). A reference unit is done once the
    expert measured: Legion's default mapper failing beside it (a size made to exceed its memory) is a finding."""
    if saved and unit.kind == "base" and (saved.get("mappers", {}).get("expert") or {}).get("estimate"):
        return True
    return bool(saved) and saved["status"] == "ok" and set(saved.get("needs", ())) == set(unit.needs)


def _error(saved: dict) -> str:
    """Why a saved unit failed (a reference measurement: each failing mapper's reason)."""
    reasons = [f"{n}: {m['reason']}" for n, m in saved.get("mappers", {}).items() if not m.get("estimate")]
    return saved.get("error") or "; ".join(reasons) or "see the unit's file"


def expert_failed(units: dict, bench: str, size: str) -> bool:
    """Whether the expert mapper failed at this size in its reference unit: then nothing can be normalised to it,
    and the size's tuning units are not run."""
    saved = units.get(f"base-{bench}-{size}", {})
    return saved.get("status") == "failed" and not (saved.get("mappers", {}).get("expert") or {}).get("estimate")


def load_units(results: Path) -> dict[str, dict]:
    """The saved unit outcomes by id."""
    folder = results / "units"
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))} if folder.exists() else {}


def iterations_done(results: Path, unit: Unit) -> int | None:
    """How many of a tuning `unit`'s iterations its run's journal records (a unit stopped at a call's time limit
    keeps them for the next call, which resumes it), at most its own count; None when no comparison of its
    benchmark and size holds its run. A journal that cannot be read counts as none done."""
    from mapperopt.errors import MapperoptError
    from mapperopt.optimizer.store import TuneStore

    found = None
    for settings in sorted((results / "work" / unit.bench).glob("compare-*/settings.json")):
        run = settings.parent / f"{unit.optimizer}-{unit.seed + 1}"
        if json.loads(settings.read_text()).get("size") != unit.size or not (run / "settings.json").exists():
            continue
        try:
            done = len(TuneStore.open(run).records)
        except MapperoptError:
            done = 0
        found = max(found or 0, min(done, unit.iters))
    return found


def _save(results: Path, unit_id: str, data: dict) -> None:
    folder = results / "units"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{unit_id}.tmp"
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(folder / f"{unit_id}.json")  # a torn file never looks like a finished unit


# ------------------------------------------------------------------------------------------------ the journals

# The comparisons' resume journals under <results>/work (the tuning runs' state.jsonl, OpenTuner's SQLite database
# and its rollback journal) are committed compressed, as `<file>.xz` beside the plain file, which is git-ignored:
# every command that reads a results folder first restores the plain files (`restore_journals`), and `run`
# compresses them again when it ends (`compress_journals`), so that the folder a lent machine receives stays small.
JOURNALS = ("state.jsonl", "*.db", "*.db-journal")
XZ = ".xz"


def _is_journal(path: Path) -> bool:
    return any(path.match(pattern) for pattern in JOURNALS)


def _unpacked(xz: Path) -> bytes | None:
    """The content of a journal's .xz, or None where it cannot be read (damaged, or cut short)."""
    try:
        return lzma.decompress(xz.read_bytes())
    except (OSError, lzma.LZMAError, EOFError):
        return None


def _write_atomically(path: Path, data: bytes, mtime_ns: int | None = None) -> None:
    """Writes `path` under a temporary name beside it, then renames it: a process killed meanwhile leaves the old
    file whole (and no newer, torn one)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def restore_journals(results: Path) -> list[Path]:
    """Writes each journal of `<results>/work` that is missing, or older than its .xz and of another content, from
    its .xz (the restored file gets the .xz's modification time), after removing the temporary files of a process
    killed while it wrote a journal or its .xz; returns the journals written. A plain journal newer than
    its .xz (written since, e.g. by a run) is kept. An SQLite rollback journal (`*.db-journal`) is restored only
    while its database is not newer than the database's .xz: SQLite deletes the journal when a transaction ends, and
    an outdated journal beside a newer database would be rolled back into it."""
    work = results / "work"
    if not work.is_dir():
        return []
    for tmp in work.rglob(".*.tmp"):  # what a process killed in `_write_atomically` left
        written = Path(tmp.name[1:-len(".tmp")].rpartition(".")[0])
        if _is_journal(written) or _is_journal(Path(written.name.removesuffix(XZ))):
            tmp.unlink()
    restored = []
    # the databases before their rollback journals
    found = sorted(work.rglob("*" + XZ), key=lambda p: (p.name.endswith(".db-journal" + XZ), str(p)))
    for xz in found:
        plain = xz.with_name(xz.name[:-len(XZ)])
        if not _is_journal(plain):
            continue
        packed = xz.stat().st_mtime_ns
        if plain.exists() and plain.stat().st_mtime_ns >= packed:
            continue  # written since it was compressed (or restored from it already)
        if plain.name.endswith(".db-journal"):
            db = plain.with_name(plain.name.removesuffix("-journal"))
            db_xz = db.with_name(db.name + XZ)
            if db.exists() and db_xz.exists() and db.stat().st_mtime_ns > db_xz.stat().st_mtime_ns:
                continue  # the database was written since: its journal, or none, is the one beside it
        data = _unpacked(xz)
        if data is None:
            raise OSError(f"{xz} cannot be decompressed (damaged or cut short): its journal {plain.name} was not "
                          f"restored; restore {xz.name} from git (git checkout -- {xz}) or from the tarball it came in")
        if plain.exists() and plain.read_bytes() == data:
            continue
        _write_atomically(plain, data, packed)
        restored.append(plain)
    return restored


def compress_journals(results: Path) -> list[Path]:
    """Compresses each journal of `<results>/work` to its .xz where the .xz is missing or holds another content
    (written under a temporary name, then renamed), and removes the .xz of a journal no longer there (SQLite's
    rollback journal, deleted when its transaction ended); returns the .xz files written or removed. Call it after
    `restore_journals`: a journal missing then was deleted."""
    work = results / "work"
    if not work.is_dir():
        return []
    changed = []
    for plain in sorted(p for pattern in JOURNALS for p in work.rglob(pattern)):
        if not plain.is_file():
            continue
        xz = plain.with_name(plain.name + XZ)
        data = plain.read_bytes()
        if xz.exists() and _unpacked(xz) == data:
            continue
        _write_atomically(xz, lzma.compress(data))
        changed.append(xz)
    for xz in sorted(work.rglob("*" + XZ)):
        plain = xz.with_name(xz.name[:-len(XZ)])
        if _is_journal(plain) and not plain.exists():
            xz.unlink()
            changed.append(xz)
    return changed


# ------------------------------------------------------------------------------------------------ the units


def _compare_opts(plan: dict, results: Path, unit: Unit, optimizers: list[str], repeats: int, final: bool) -> dict:
    """`run_compare` options: the comparison of (bench, size) is the same folder for every unit of it (the compare
    folder's identity leaves optimizers, iterations and repeats out)."""
    executions = plan.get("executions", EXECUTIONS)
    return {"optimizers": optimizers, "iters": unit.iters, "repeats": repeats, "size": unit.size, "cpus": None,
            "gpus": plan["gpus"], "seed": 0, "start": "random", "memory": {}, "executions": executions,
            "max_executions": executions, "min_time_s": plan.get("min_time_s"), "timeout_s": None,
            "final_rounds": plan["final_rounds"],
            "runs_dir": results / "work", "new": False,
            "app_args": tuple(plan.get("tune_args", {}).get(f"{unit.bench}-{unit.size}", ())), "final": final,
            "dedicated": plan.get("dedicated", False)}


def _printed(run_dirs) -> dict[str, dict]:
    """Median of each `NAME = value unit` line the measured executions printed (e.g. the stencil's BANDWIDTH)."""
    values: dict[str, list[float]] = {}
    units: dict[str, str] = {}
    for d in run_dirs:
        path = Path(d) / "result.json"
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        settings = data.get("settings") or {}
        attempts = [a for a in data.get("attempts") or [] if a.get("exit_code") == 0 and a.get("stdout")]
        for a in attempts[settings.get("calibration_runs", 0):]:
            for name, value, unit in PRINTED.findall((Path(d) / a["stdout"]).read_text(errors="replace")):
                values.setdefault(name, []).append(float(value))
                units[name] = unit
    return {k: {"median": statistics.median(v), "values": v, "unit": units[k]} for k, v in values.items()}


def _run_limit(unit: Unit, sources: Path) -> dict:
    exe = Path(tempfile.mkdtemp()) / unit.id
    cu = sources / ("copybw.cu" if unit.id == "limit-copybw" else "dgemm.cu")
    libs = [] if unit.id == "limit-copybw" else ["-lcublas"]
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", str(cu), *libs, "-o", str(exe)], check=True)
    args = [] if unit.id == "limit-copybw" else ["4096", "8192", "16384"]
    out = subprocess.run([str(exe), *args], check=True, capture_output=True, text=True).stdout
    print(out, end="")
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.max.sm,memory.total,driver_version",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    data = {"output": out, "gpu": gpu}
    if unit.id == "limit-copybw":
        data["copy_gbs"] = float(re.search(r"COPY BANDWIDTH = ([0-9.]+)", out).group(1))
        sms = re.search(r"MULTIPROCESSORS = (\d+)", out)
        clock = re.search(r",\s*(\d+) MHz", gpu)
        if sms and clock:  # every FP32 unit doing one fused multiply-add (2 flops) per cycle at the top clock
            data["fp32_peak_gflops"] = int(sms.group(1)) * FP32_LANES_PER_SM * 2 * int(clock.group(1)) / 1e3
            data["fp32_peak_source"] = (f"{sms.group(1)} multiprocessors x {FP32_LANES_PER_SM} FP32 units x 2 flops "
                                        f"x {clock.group(1)} MHz (nvidia-smi clocks.max.sm)")
    else:
        data["dgemm_gflops"] = {n: float(g) for n, g in re.findall(r"n=(\d+) gflops=([0-9.]+)", out)}
    return data


def _run_base(plan: dict, results: Path, unit: Unit) -> dict:
    from mapperopt.benchmarks import load_config, protocol
    from mapperopt.optimizer.commands import default_cpus

    size = load_config(unit.bench).size(unit.size)
    gpus = size.gpus if plan["gpus"] is None else plan["gpus"]
    cpus = default_cpus(size, gpus, unit.bench)
    out = results / "work" / unit.bench / f"base-{unit.size}"
    shutil.rmtree(out, ignore_errors=True)  # an interrupted earlier attempt
    measured = protocol.measure_together(unit.bench, {"default": "default", "expert": "expert"}, plan["base_rounds"],
                                         out,
                                         min_time_s=plan.get("min_time_s") or max(size.min_time_s, protocol.MIN_TIME_S),
                                         size=unit.size, cpus=cpus, gpus=gpus)
    data = {"cpus": cpus, "gpus": gpus, "rounds": plan["base_rounds"], "mappers": {}}
    for name, m in measured.items():
        # Folders relative to the results folder: the results travel between machines.
        data["mappers"][name] = {**_no_spread_of_one(m.to_json()),
                                 "run_dirs": [os.path.relpath(d, results) for d in m.run_dirs],
                                 "printed": _printed(m.run_dirs)}
    if not all(m.ok for m in measured.values()):
        data.update(status="failed", error="; ".join(f"{n}: {m.reason}" for n, m in measured.items() if not m.ok))
    return data


NO_SPREAD = "one measured execution: no estimate of the noise"  # as a run's result.json says it (`no_spread`)


def _no_spread_of_one(measured: dict) -> dict:
    """A mapper's measurement as a unit stores it: of a single execution, `spread` null and `no_spread` saying why
    (the protocol's estimate gives 0.0, which a reader takes for "no noise"); the measured values unchanged."""
    est = measured.get("estimate")
    if est and len(est.get("values") or ()) == 1:
        return {**measured, "estimate": {**est, "spread": None, "no_spread": NO_SPREAD}}
    return measured


def _run_cpu(plan: dict, results: Path, unit: Unit) -> dict:
    from mapperopt.benchmarks import run_benchmark

    n = plan["cpu_cpus"]
    out = results / "work" / unit.bench / f"cpu-{unit.size}"
    shutil.rmtree(out, ignore_errors=True)
    args = ["-npieces", str(n), "-numpcx", "1", "-cstop", "5"]  # one piece per CPU; 2 untimed + 3 timed cycles
    result = run_benchmark(unit.bench, "default", size=unit.size, gpus=0, cpus=n, min_time_s=0, extra_args=args,
                           out_dir=out)
    return {"status": result.status, "cpus": n, "args": args, "throughput": result.throughput,
            "throughput_unit": result.unit,
            "time_s": result.time_s, "reason": result.reason, "iterations": result.settings.get("iterations")}


def _run_tune(plan: dict, results: Path, unit: Unit) -> dict:
    from mapperopt.optimizer.compare import run_compare
    from mapperopt.optimizer.store import TuneStore

    # repeat r of a comparison has seed r; earlier seeds are resumed (done already when the units run in order)
    summary = run_compare(unit.bench, _compare_opts(plan, results, unit, [unit.optimizer], unit.seed + 1, False))
    folder = Path(summary["folder"])
    store = TuneStore.open(folder / f"{unit.optimizer}-{unit.seed + 1}")
    records = store.records[:unit.iters]
    best = records[records[-1].best_iter - 1] if records and records[-1].best_iter else None
    return {"folder": str(folder.relative_to(results)), "reference_first": summary["reference_first_throughput"],
            "throughput_unit": best.unit if best else None, "best_dsl": best.dsl if best else None,
            "best_iter": best.iter if best else None, "best_throughput": best.throughput if best else None,
            "wall_s_tuning": sum(r.wall_s for r in records),
            "records": [{"iter": r.iter, "status": r.status, "stage": r.stage, "category": r.category,
                         "throughput": r.throughput, "best_throughput": r.best_throughput, "cached": r.cached,
                         "wall_s": r.wall_s} for r in records]}


def _run_final(plan: dict, results: Path, unit: Unit) -> dict:
    from mapperopt.optimizer.compare import run_compare

    optimizers = [unit.optimizer] if unit.optimizer else usable_optimizers(plan)[0]
    summary = run_compare(unit.bench, _compare_opts(plan, results, unit, optimizers, plan["seeds"], True))
    return {"summary": {k: summary[k] for k in ("optimizers", "runs", "unit", "reference_throughput",
                                                "reference_first_throughput", "normalization")}}


def run_unit(plan: dict, results: Path, unit: Unit, sources: Path) -> dict:
    """Runs one unit and saves its outcome (status "ok" or "failed", with the error); returns it."""
    from mapperopt.errors import MapperoptError

    start = time.time()
    data = {"schema": SCHEMA, "unit": unit.id, "kind": unit.kind, "bench": unit.bench, "size": unit.size,
            "optimizer": unit.optimizer, "iters": unit.iters, "seed": unit.seed, "needs": list(unit.needs),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start))}
    try:
        if unit.kind == "limit":
            data.update(_run_limit(unit, sources))
        elif unit.kind == "base":
            data.update(_run_base(plan, results, unit))
        elif unit.kind == "cpu":
            data.update(_run_cpu(plan, results, unit))
        elif unit.kind == "tune":
            data.update(_run_tune(plan, results, unit))
        else:
            data.update(_run_final(plan, results, unit))
        data.setdefault("status", "ok")
    except (MapperoptError, subprocess.CalledProcessError, OSError, AttributeError) as exc:
        data.update(status="failed", error=f"{type(exc).__name__}: {exc}")
    data["wall_s"] = round(time.time() - start, 1)
    _save(results, unit.id, data)
    return data


def _child(plan: dict, results: Path, unit: Unit, sources: Path) -> None:
    os.setsid()  # its own process group: stopped at the limit with everything it started
    run_unit(plan, results, unit, sources)


def run(plan: dict, results: Path, sources: Path, stop_after: float, retry_failed: bool = False,
        only: str | None = None, say=print) -> list[str]:
    """Runs the plan's missing units in order until `stop_after` seconds have passed: a unit runs in a child process
    that is stopped (its process group killed) at the limit; its unit file is then not written, and a tuning run's
    finished iterations stay in its journal for the next call. Returns the ids of the units run to the end."""
    results.mkdir(parents=True, exist_ok=True)
    (results / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
    deadline = time.time() + stop_after
    done = load_units(results)
    finished = []
    context = multiprocessing.get_context("fork")
    for unit in work_list(plan):
        if only and not re.search(only, unit.id):
            continue
        if is_done(unit, done.get(unit.id)) or (unit.id in done and done[unit.id]["status"] == "failed"
                                                  and not retry_failed):
            continue
        if unit.kind in ("tune", "final") and expert_failed(done, unit.bench, unit.size):
            continue  # the report says why
        missing = [n for n in unit.needs if done.get(n, {}).get("status") != "ok"]
        if missing:
            say(f"{unit.id}: waits for {len(missing)} unit(s), e.g. {missing[0]}")
            continue
        left = deadline - time.time()
        if left < 20:
            say(f"Stopping: {left:.0f} s left of --stop-after {stop_after:g}.")
            break
        say(f"== {unit.id} (at most {left:.0f} s)")
        child = context.Process(target=_child, args=(plan, results, unit, sources))
        child.start()
        child.join(left)
        if child.is_alive():
            say(f"{unit.id}: stopped at the limit; it continues where it stopped on the next run.")
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(child.pid, sig)
                except ProcessLookupError:
                    break
                child.join(5)
            break
        done = load_units(results)
        outcome = done.get(unit.id, {"status": "failed", "error": f"the unit's process ended with {child.exitcode}"})
        say(f"{unit.id}: {outcome['status']} in {outcome.get('wall_s', '?')} s"
            + (f" ({outcome.get('error')})" if outcome["status"] != "ok" else ""))
        finished.append(unit.id)
    return finished


# ------------------------------------------------------------------------------------------------ the report


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if abs(x) >= 1e6:  # 4 significant figures: the 2-decimal ratios printed beside them can be recomputed
        return f"{x:.3e}"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.4g}"


def _short(text: str | None, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 3] + "..."


def _estimate(m: dict) -> float | None:
    return (m.get("estimate") or {}).get("value")


ANOTHER_SESSION = "§"  # a limits row whose reference unit was measured in another session than its ceiling
SESSION_GAP_S = 30 * 60  # without a record of the calls: units started this far apart are of two sessions


def _call_windows(results: Path) -> list[tuple[str, str]]:
    """(start, end) of each call of benchmarks/gpu/evaluate.sh that `<results>/calls.jsonl` records (UTC, as units'
    `started`)."""
    path = results / CALLS
    return [(c["start"], c["end"]) for c in (json.loads(line) for line in path.read_text().splitlines()
                                             if line.strip())] if path.exists() else []


def _same_session(one: str, other: str, windows: list[tuple[str, str]]) -> bool:
    """Whether two units, by their start times, were measured in one session: in one recorded call; where a call
    records only one of them, no; where none does, started less than SESSION_GAP_S (a lent machine's longest hold)
    apart."""
    from datetime import datetime

    def within(when: str) -> set[int]:
        return {i for i, (start, end) in enumerate(windows) if start <= when <= end}
    calls = within(one), within(other)
    if calls[0] or calls[1]:
        return bool(calls[0] & calls[1])
    seconds = abs((datetime.fromisoformat(one.replace("Z", "+00:00"))
                   - datetime.fromisoformat(other.replace("Z", "+00:00"))).total_seconds())
    return seconds < SESSION_GAP_S


def _when(started: str) -> str:
    """A unit's start time as the page writes it: "2026-12-02 03:30 UTC"."""
    return f"{started[:10]} {started[11:16]} UTC"


def _limits_section(units: dict, plan: dict, results: Path, out: Path) -> list[str]:
    """The limits table, and limits.png (each reference mapper's share of its ceiling) in `results`; a row whose
    reference unit was measured in another session than the ceiling it is divided by (`_same_session`) is marked
    ANOTHER_SESSION, and the mark explained under the table."""
    copy = units.get("limit-copybw", {})
    dgemm = units.get("limit-dgemm", {})
    windows = _call_windows(results)
    apart: dict[tuple[str, str], str] = {}  # (b, s): the sentence's part naming the two times

    def session_mark(b: str, s: str, base: dict, ceiling: dict, what: str) -> str:
        """ANOTHER_SESSION (noted for the line under the table) where `base` and `ceiling` are of two sessions."""
        if not (base.get("started") and ceiling.get("started")) or _same_session(base["started"], ceiling["started"],
                                                                                  windows):
            return ""
        apart[(b, s)] = f"{b} `{s}` ({_when(base['started'])}; {what} {_when(ceiling['started'])})"
        return f" {ANOTHER_SESSION}"
    lines = ["## Physical limits", ""]
    if copy.get("gpu"):
        lines += [f"GPU: {copy['gpu']} (nvidia-smi: name, top SM clock, memory, driver).", ""]
    rows, shares = [], []
    copy_gbs = copy.get("copy_gbs") if copy.get("status") == "ok" else None
    peak = copy.get("fp32_peak_gflops") if copy.get("status") == "ok" else None
    dg = (dgemm.get("dgemm_gflops") or {}) if dgemm.get("status") == "ok" else {}
    best_dgemm = max(dg.values()) if dg else None
    for b, s in pairs(plan):
        base = units.get(f"base-{b}-{s}")
        if not base:
            continue
        for name, m in base.get("mappers", {}).items():
            value = _estimate(m)
            if value is None:
                rows.append(f"| {b} | {s} | {name} | failed: {_short(m.get('reason'))} | | |")
                continue
            unit = _shown_unit(m.get("unit"))  # the application's own, as its unit file saved it
            if b == "stencil":
                bw = (m.get("printed", {}).get("BANDWIDTH") or {}).get("median")
                share = (f"{bw / copy_gbs:.1%} of the copy bandwidth {copy_gbs:,.0f} GB/s"
                         + session_mark(b, s, base, copy, "copy bandwidth") if bw and copy_gbs else "-")
                # at `tight` what does not fit in the framebuffer is read from zero-copy memory: no HBM ceiling
                target = s != "tight"
                rows.append(f"| {b} | {s} | {name} | {_fmt(bw)} GB/s | {share} | " + (
                    "target >= 80 % |" if target else
                    "no target: what does not fit in the framebuffer is read over the host link |"))
                if bw and copy_gbs:
                    shares.append((f"{b} {s} {name}", bw / copy_gbs, target))
            elif b == "circuit":
                share = (f"{value / peak:.1%} of FP32 peak {peak:,.0f} GFLOP/s"
                         + session_mark(b, s, base, copy, "FP32 peak") if peak and unit == "GFLOP/s" else "-")
                rows.append(f"| {b} | {s} | {name} | {_fmt(value)} {unit} | {share} | |")
                if share != "-":
                    shares.append((f"{b} {s} {name}", value / peak, False))
            elif b == "pennant":
                cpu = units.get("cpu-pennant-gpu", {})
                cpu_tp = cpu.get("throughput") if cpu.get("status") == "ok" else None
                # a speedup over one CPU run of the same deck, not a share of a ceiling
                share = (f"no ceiling: {value / cpu_tp:.1f}x a {cpu['cpus']}-CPU run ({_fmt(cpu_tp)} "
                         f"{_shown_unit(cpu.get('throughput_unit'))})" + session_mark(b, s, base, cpu, "CPU run")
                         if cpu_tp else "CPU run not done")
                rows.append(f"| {b} | {s} | {name} | {_fmt(value)} {unit} | {share} | |")
            else:
                n = str(max(int(k) for k in dg)) if dg else None
                share = (f"{value / dg[n]:.1%} of cuBLAS DGEMM n={n} ({dg[n]:,.0f} GFLOP/s)"
                         + session_mark(b, s, base, dgemm, "cuBLAS DGEMM") if n and unit == "GFLOP/s" else "-")
                rows.append(f"| {b} | {s} | {name} | {_fmt(value)} {unit} | {share} | target >= 80 % |")
                if share != "-":
                    shares.append((f"{b} {s} {name}", value / dg[n], True))
    ceilings = []
    if copy_gbs:
        ceilings.append(f"device-to-device copy {copy_gbs:,.0f} GB/s (benchmarks/gpu/copybw.cu, bytes read + written)")
    if peak:
        ceilings.append(f"FP32 peak {peak:,.0f} GFLOP/s = {copy['fp32_peak_source']}")
    if dg:
        ceilings.append("cuBLAS DGEMM " + ", ".join(f"n={n}: {g:,.0f} GFLOP/s" for n, g in dg.items())
                        + " (benchmarks/gpu/dgemm.cu)")
    cpu = units.get("cpu-pennant-gpu", {})
    if cpu.get("status") == "ok":
        from mapperopt.benchmarks import load_config

        deck = Path(load_config("pennant").size(cpu["size"]).args["-deck"]).name
        ceilings.append(f"and, not a ceiling, Pennant's CPU run: the `{cpu['size']}` size's deck ({deck}) with "
                        f"Legion's default mapper on {cpu['cpus']} CPUs (`{' '.join(cpu['args'])}`), "
                        f"{_fmt(cpu['throughput'])} {_shown_unit(cpu.get('throughput_unit'))} "
                        f"over {cpu['time_s']:.2f} s "
                        "timed")
    if best_dgemm is None and copy_gbs is None:
        ceilings.append("not measured yet (units limit-copybw, limit-dgemm)")
    when = copy.get("started", "")[:10]
    lines += [f"Ceilings{' measured ' + when if when else ''}: " + "; ".join(ceilings) + ".", ""]
    if rows:
        lines += ["| benchmark | size | mapper | achieved | against the ceiling (Pennant: against a CPU run) | |",
                  "|---|---|---|---|---|---|", *rows]
        if apart:
            rule = (f"calls: those `{CALLS}` records, else units started {SESSION_GAP_S // 60} minutes or more apart"
                    if windows else f"this results folder has no `{CALLS}`, so calls are told apart by the units' "
                    f"start times: {SESSION_GAP_S // 60} minutes or more apart, longer than a machine is held")
            lines += ["", f"{ANOTHER_SESSION} the reference unit was measured in another device call than the ceiling "
                      "it is divided by: " + ", ".join(apart.values()) + "; the share sets a figure of one call "
                      f"against one of another, possibly of another machine of the same card ({rule}; a session "
                      "of [How it was run](#how-it-was-run) may hold several calls)."]
    else:
        lines.append("No benchmark measured yet.")
    if shares:
        path = results / "limits.png"
        card = card_label(measured_on(plan, units)) if measured_on(plan, units) else None
        pennant = any(b == "pennant" and units.get(f"base-{b}-{s}") for b, s in pairs(plan))
        _plot_shares(shares, path, card, pennant)
        lines += ["", f"![share of the ceiling]({os.path.relpath(path, out.parent)})"]
    return lines + [""]


# Device time: a session's 30 minutes hold one machine start (about 90 s with the first transfer, measured 89 s) and the
# build of every benchmark (33 s measured), then calls that follow one another on the warm machine (each within its
# idle release), each of at most CALL_S and about WARM_S more of transfers (6.5-8 s measured on 2026-12-03).
CALL_S, BUILD_S, START_S, WARM_S = 590, 35, 90, 10
SESSION_S = 30 * 60  # device time of one session
CALLS_PER_SESSION = -(-(SESSION_S - START_S) // (CALL_S + WARM_S))
UNITS_PER_SESSION_S = SESSION_S - START_S - BUILD_S - CALLS_PER_SESSION * WARM_S


def _expert_wall(results: Path, bench: str, size: str) -> float | None:
    """The longest execution of the expert in the comparison of (bench, size) (its expert.json), seconds, or None."""
    for settings in sorted((results / "work" / bench).glob("compare-*/settings.json")):
        expert = settings.parent / "expert.json"
        if json.loads(settings.read_text()).get("size") == size and expert.exists():
            return json.loads(expert.read_text()).get("wall_s")
    return None


def _iterations_of_all(plan: dict) -> str:
    """The tuning iterations of one benchmark and size, as a sum that names its terms."""
    n, seeds, iters = len(usable_optimizers(plan)[0]), plan["seeds"], plan["iters"]
    text = f"{n} optimizers x {seeds} seeds x {iters}"
    if plan["long_iters"] and LONG_RUN[0] in usable_optimizers(plan)[0]:
        extra = plan["long_iters"] - iters
        return (f"{n * seeds * iters + seeds * extra} = {text} + {seeds} seeds x {extra} for {LONG_RUN[0]}'s "
                f"{plan['long_iters']}-iteration runs, which continue its {iters}-iteration ones (the first {iters} "
                "iterations are the same run)")
    return f"{n * seeds * iters} = {text}"


def _tuning_rates(units: dict, plan: dict, results: Path) -> dict[tuple[str, str], dict]:
    """Per (benchmark, size) whose one execution is known: "per_start" (seconds, the expert's in the size's comparison
    (`<results>/work`), else the reference unit's wall time over its executions: a fresh machine's first executions,
    slower), "source" (which), and per optimizer kind (True: reads the profile) the seconds per tuning iteration
    measured ("measured": the done tuning units' iterations' wall time summed over every device call that ran them,
    `wall_s_tuning`, over their iterations) and over how many iterations ("counted")."""
    from mapperopt.optimizer.base import optimizer_spec

    rates = {}
    for b, s in pairs(plan):
        base = units.get(f"base-{b}-{s}", {})
        starts = sum(len((m.get("estimate") or {}).get("values", ())) or 1 for m in base.get("mappers", {}).values())
        per_start, source = _expert_wall(results, b, s), "the expert's in the comparison"
        if per_start is None and base.get("wall_s"):
            per_start, source = base["wall_s"] / starts, "the reference unit's"
            if plan.get("tune_args", {}).get(f"{b}-{s}"):
                source += f", more than with the comparison's {' '.join(plan['tune_args'][f'{b}-{s}'])}"
        if per_start is None:
            continue
        measured: dict[bool, float] = {}
        counted: dict[bool, int] = {}
        for profiled in (True, False):
            done = [units[u.id] for u in work_list(plan) if u.kind == "tune" and u.bench == b and u.size == s
                    and optimizer_spec(u.optimizer).reads_profile == profiled and is_done(u, units.get(u.id))]
            if done:
                counted[profiled] = sum(len(u["records"]) for u in done)
                # over every call that ran the iterations: a unit's `wall_s` is only its last call's
                measured[profiled] = sum(u["wall_s_tuning"] for u in done) / counted[profiled]
        rates[(b, s)] = {"per_start": per_start, "source": source, "measured": measured, "counted": counted}
    return rates


def _other_cards(results: Path) -> list[tuple[str, dict]]:
    """The other results folders beside `results` (those with a plan.json): their card's label and `_tuning_rates`."""
    found = []
    for stored in sorted(results.parent.glob("*/plan.json")):
        if stored.parent.resolve() == results.resolve():
            continue
        plan, units = load_plan(stored.parent), load_units(stored.parent)
        found.append((card_label(measured_on(plan, units)), _tuning_rates(units, plan, stored.parent)))
    return found


def cost_estimate(units: dict, plan: dict, results: Path) -> list[str]:
    """The device time the units still missing need, per benchmark and size and for the work list's stages, as
    Markdown lines.

    One execution and the measured seconds per tuning iteration: `_tuning_rates`. An optimizer kind (reading the
    profile, one profiling execution more, or not) with no iteration measured here costs, in executions an iteration,
    what it cost at the same benchmark and size in another card's results folder beside `results` (its timeouts
    included); else the other kind's measured seconds here, one execution more or less; else `executions` executions
    (plus the profiling one) and no timeout: a lower bound. A final unit is `final_rounds` executions of the expert
    and of each run's best. The OpenTuner runs of `long_iters` extend the 10-iteration ones, so they cost the
    difference."""
    from mapperopt.optimizer.base import optimizer_spec

    todo = [u for u in work_list(plan) if not is_done(u, units.get(u.id)) and u.kind in ("tune", "final")]
    executions = plan.get("executions", EXECUTIONS)
    rates, others = _tuning_rates(units, plan, results), _other_cards(results)
    cost: dict[str, float] = {}
    lower: set[str] = set()  # units whose cost is a lower bound
    rows = []
    for b, s in pairs(plan):
        mine = [u for u in todo if u.bench == b and u.size == s]
        if not mine:
            continue
        if expert_failed(units, b, s):
            rows.append(f"| {b} | {s} | - | - | - | the expert failed at this size: not run |")
            continue
        if (b, s) not in rates:
            rows.append(f"| {b} | {s} | - | - | - | reference unit not done: no figure yet |")
            continue
        per_start, source, measured, counted = (rates[(b, s)][k] for k in ("per_start", "source", "measured",
                                                                             "counted"))

        def per_iter(profiled: bool) -> tuple[float, str, bool]:
            """Seconds per iteration, how they were found, and whether they are a lower bound."""
            if profiled in measured:
                n = counted[profiled]
                return measured[profiled], f"measured over {n} iteration{'s' * (n != 1)}", False
            for card, theirs in others:
                there = theirs.get((b, s))
                if there and profiled in there["measured"]:
                    ratio = there["measured"][profiled] / there["per_start"]
                    return (per_start * ratio, f"estimated: {ratio:.1f} executions an iteration, as measured on the "
                            f"{card} over {there['counted'][profiled]} iterations", False)
            if measured:  # the other kind's, one profiling execution more or less
                return (max(measured[not profiled] + (per_start if profiled else -per_start), per_start),
                        f"estimated: the other's {'+' if profiled else '-'} one execution", False)
            return (per_start * (executions + profiled),
                    f"estimated, a lower bound: {executions + profiled} execution{'s' * (executions + profiled != 1)}",
                    True)

        iters = finals = 0
        for u in mine:
            if u.kind == "tune":
                n = u.iters - (plan["iters"] if u.iters != plan["iters"] else 0)
                iters += n
                seconds, _, bound = per_iter(optimizer_spec(u.optimizer).reads_profile)
                cost[u.id] = n * seconds
                if bound:
                    lower.add(u.id)
            else:
                n = plan["final_rounds"] * (1 + len(u.needs))
                finals += n
                cost[u.id] = n * per_start
        seconds = sum(cost[u.id] for u in mine)
        (guided, how_guided, _), (others_s, how_others, _) = per_iter(True), per_iter(False)
        rates_cell = (f"{guided:.0f} s / {others_s:.0f} s ({how_guided})" if how_guided == how_others and
                      not how_guided.startswith("measured") else
                      f"{guided:.0f} s / {others_s:.0f} s (measured over {sum(counted.values())} iterations)"
                      if len(measured) == 2 else f"{guided:.0f} s ({how_guided}) / {others_s:.0f} s ({how_others})")
        rows.append(f"| {b} | {s} | {per_start:.1f} s ({source}) | {rates_cell} | {iters} | {finals} | "
                    f"{seconds / 3600:.1f} h |")
    per_call = CALL_S - BUILD_S

    def stage(name: str, ids: list[str]) -> str:
        total = sum(cost[i] for i in ids)
        calls, sessions = -(-total // per_call), -(-total // UNITS_PER_SESSION_S)
        device = total + sessions * (START_S + BUILD_S) + calls * WARM_S
        bound = " (a lower bound)" if lower & set(ids) else ""
        return (f"| {name} | {len(ids)} | {total / 3600:.1f} h{bound} | {calls:.0f} | {device / 3600:.1f} h{bound} | "
                f"{sessions:.0f}{bound} |")

    first = [u.id for u in todo if u.id in cost and u.kind == "tune" and u.seed == 0 and u.iters == plan["iters"]]
    short = [u.id for u in todo if u.id in cost and u.iters == plan["iters"]]
    return ["| benchmark | size | one execution | per tuning iteration: guided / others | iterations left | "
            "final executions left | device time |", "|---|---|---|---|---|---|---|", *rows, "",
            f"Iterations left per benchmark and size, with nothing done: {_iterations_of_all(plan)}; a tuning unit "
            "that `evaluate.py list` shows as started counts whole here, as in the tables above (the iterations in "
            "its journal are kept, and the next call resumes it, so it costs less). Final "
            f"executions: {plan['final_rounds']} rounds of the expert and of every run's best. "
            f"{_per_evaluation(executions).capitalize()}. A timed-out evaluation costs 5x the run's best execution, at "
            "least 30 s, and an optimizer's random points often time out: an iteration estimated from another card's "
            "measured iterations (in executions of each card) counts that card's timeouts; one estimated from "
            "executions alone counts none: where the table says a lower bound, its device time is one.", "",
            f"A session has {SESSION_S // 60} device minutes: a machine's start and first transfer ({START_S} s), "
            f"the build of every benchmark ({BUILD_S} s), then {CALLS_PER_SESSION} calls on the warm machine, each "
            f"with at most {per_call} s of units ({CALL_S} s less the build) and about {WARM_S} s of transfers, the "
            f"next one started before the machine's idle release: {UNITS_PER_SESSION_S:,} s of units per session. "
            f"Sessions = units' time / {UNITS_PER_SESSION_S:,} s, rounded up; a machine released between two calls "
            f"costs another start.", "",
            "| what is left | units | time of the units | device calls | device time | sessions (a lower bound where "
            "a row above is) |",
            "|---|---|---|---|---|---|",
            stage(f"seed 0 of every optimizer, {plan['iters']} iterations", first),
            stage(f"every seed, {plan['iters']} iterations, and their final units", short),
            stage("everything (with the long OpenTuner runs)", list(cost))]


def shares_figure(shares: list[tuple[str, float, bool]], card: str | None = None, pennant: bool = False):
    """One horizontal bar per (label, achieved / ceiling, has the 80 % target); the target dashed on the bars that
    have it; the card in the title; with `pennant`, a note that Pennant, which has no ceiling, is not drawn."""
    from mapperopt.figures import figure

    fig = figure(figsize=(6.4, 0.3 * len(shares) + 1.8), dpi=100)
    ax = fig.subplots()
    labels, values, targets = zip(*shares)
    ax.barh(range(len(shares)), values, color="tab:blue")
    ax.set_yticks(range(len(shares)), labels, fontsize="small")
    ax.invert_yaxis()
    for i in (i for i, target in enumerate(targets) if target):
        ax.plot([0.8, 0.8], [i - 0.45, i + 0.45], color="black", linestyle="--", linewidth=1, zorder=3,
                label="target 80 %" if i == targets.index(True) else None)
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("achieved / ceiling\n(stencil: copy bandwidth; circuit: FP32 peak; GEMMs: cuBLAS DGEMM)"
                  + ("\nPennant is not drawn: it has no ceiling (the table compares it with a CPU run)" if pennant
                     else ""), fontsize="small")
    ax.set_title(f"The reference mappers against the ceilings measured on the {card or 'GPU'}", fontsize="small",
                 pad=18 if any(targets) else 6)
    if any(targets):
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize="small", frameon=False)
    fig.tight_layout()
    return fig


def _plot_shares(shares: list[tuple[str, float, bool]], path: Path, card: str | None = None,
                 pennant: bool = False) -> None:
    """`shares_figure` as a PNG at `path`."""
    shares_figure(shares, card, pennant).savefig(path)


def _runs(units: dict, b: str, s: str, opt: str, iters: int, seeds: int) -> list[dict]:
    return [units[k] for k in (f"tune-{b}-{s}-{opt}-i{iters}-s{seed}" for seed in range(seeds))
            if units.get(k, {}).get("status") == "ok"]


def _shown_unit(unit: str | None) -> str:
    """A throughput unit as the report writes it: the applications print `GFLOPS`, a rate, written GFLOP/s."""
    return "GFLOP/s" if unit == "GFLOPS" else unit or ""


def _stats(scores: dict[str, float | None]) -> str:
    """Table cells mean | std | worst | median | best, as `mapperopt compare` prints them (`stat_cells`)."""
    from mapperopt.optimizer.compare import stat_cells

    return " | ".join(stat_cells(scores))


def _rounds(rounds: int) -> str:
    """How a reference unit's figure of each mapper is made from its `rounds` interleaved rounds."""
    return ("one execution of each mapper, measured together" if rounds == 1 else
            f"the {'median' if rounds <= 3 else 'trimmed mean'} of {rounds} interleaved rounds of each mapper")


def spread(units: dict, results: Path, b: str, s: str) -> float | None:
    """The largest relative difference (larger / smaller - 1) measured between two executions of one mapper at (b,
    s) in one session: the reference unit's rounds and its repeat (`units/repeats/base-<b>-<s>.json`); None where
    nothing was measured twice. Not the expert's first execution in a tuning comparison: measured in another
    session, possibly with another runtime, its difference is no noise. A ratio of two mappers no further from 1 is
    not a difference between them."""
    widest = _widest(units, results, b, s)
    return widest[0] if widest else None


def _widest(units: dict, results: Path, b: str, s: str) -> tuple[float, str, int] | None:
    """`spread`'s figure, the mapper whose executions gave it and how many they were; None as `spread`."""
    seen = {name: executions(units, results, b, s, name) for name in ("default", "expert")}
    gaps = {name: max(v) / min(v) - 1 for name, v in seen.items() if len(v) > 1 and min(v) > 0}
    if not gaps:
        return None
    name = max(gaps, key=gaps.get)
    return gaps[name], name, len(seen[name])


def _percent(noise: float) -> str:
    """A spread in percent: two significant figures below 1 % (COSMA's 0.03 % is not 0.0 %)."""
    percent = noise * 100
    return f"{percent:.1f} %" if percent >= 0.95 else f"{percent:.2g} %"


def _drift(own: float, across: float) -> str:
    """How far the expert's first execution in this comparison measured from its reference unit's (`own`, signed),
    beside the page's largest such distance (`across`): the largest alone read as this comparison's own."""
    said = "the expert's first execution in this comparison measured " + (
        "the same as its reference unit's" if own == 0 else
        f"{'+' if own > 0 else '-'}{_percent(abs(own))} from its reference unit's")
    if _percent(abs(own)) == _percent(across):
        return f"{said}, the most on this page"
    return f"{said}, and up to {_percent(across)} elsewhere on this page"


def largest_drift(units: dict) -> float | None:
    """How far the expert's first execution in a comparison measured from its reference unit's, at most (relative):
    what a ratio over a reference unit of another session may owe to the session alone; None where no comparison
    has executed the expert yet."""
    found = _largest_drift_at(units)
    return found[0] if found else None


def _largest_drift_at(units: dict) -> tuple[float, str, str] | None:
    """`largest_drift` and the benchmark and size it was measured at."""
    return max(((abs(u["reference_first"] / e - 1), u["bench"], u["size"]) for u in units.values()
                if u.get("kind") == "tune" and u.get("status") == "ok" and u.get("reference_first")
                for e in [_estimate(units.get(f"base-{u['bench']}-{u['size']}", {}).get("mappers", {})
                                    .get("expert", {}))] if e), default=None)


def _protocols(plan: dict, b: str, s: str) -> tuple[str, str] | None:
    """Where the comparisons of (b, s) run other application arguments than its reference unit (plan.json
    `tune_args`, e.g. Pennant's fewer cycles): the comparison's and the size's own values of those flags
    (configs/<b>.yaml), as "-cstop 30" and "-cstop 60"; None where they run the same."""
    args = plan.get("tune_args", {}).get(f"{b}-{s}")
    if not args:
        return None
    from mapperopt.benchmarks import load_config

    try:
        own = load_config(b).sizes[s].args
    except Exception:  # noqa: BLE001 - a benchmark or size this checkout lacks: its values unknown
        own = {}
    flags = [a for a in args if a.startswith("-")]
    return " ".join(args), " ".join(f"{f} {own.get(f, '(unset)')}" for f in flags)


def _drift_protocols(units: dict, plan: dict) -> str:
    """Where the largest drift between sessions (`largest_drift`) is also between protocols, the comparison having
    run other arguments than the reference unit (`_protocols`): "the largest, pennant `gpu`'s, is between protocols
    too: `-cstop 30` in the comparison, `-cstop 60` in the reference unit"; "" otherwise."""
    found = _largest_drift_at(units)
    ran = found and _protocols(plan, found[1], found[2])
    if not ran:
        return ""
    return (f"the largest, {found[1]} `{found[2]}`'s, is between protocols too: `{ran[0]}` in the comparison, "
            f"`{ran[1]}` in the reference unit")


def noise_note(units: dict, results: Path, b: str, s: str) -> str:
    """One line under a table: the threshold its "within noise" marks use and what it rests on (`spread`), or that
    nothing was measured twice, so that no ratio there is marked either way."""
    widest = _widest(units, results, b, s)
    if not widest:
        return ("Noise: not measured here (no mapper executed twice in one session): no ratio in this table is "
                "marked within noise, and none is shown to differ from 1 either.")
    noise, name, n = widest
    who = "Legion's default mapper" if name == "default" else "the expert"
    return (f"Noise: {_percent(noise)}, the range of {n} executions of {who} in one session"
            + (" (a range of two samples: a rough figure)" if n == 2 else "")
            + ": a ratio marked within noise is no further from 1 than that.")


def executions(units: dict, results: Path, b: str, s: str, mapper: str) -> list[float]:
    """Every execution of `mapper` ("default" or "expert") in the reference unit of (b, s) and in its repeat
    (`units/repeats/`, the same session), throughputs."""
    repeat = results / "units" / "repeats" / f"base-{b}-{s}.json"
    bases = [units.get(f"base-{b}-{s}", {})] + ([json.loads(repeat.read_text())] if repeat.exists() else [])
    return [v for base in bases for v in
            ((base.get("mappers", {}).get(mapper) or {}).get("estimate") or {}).get("values") or []]


def row_scores(units: dict, plan: dict, b: str, s: str, opt: str, iters: int) -> tuple[dict | None, int, bool]:
    """The scores of an optimizer's runs of `iters` iterations at (b, s) (mean, std, worst, median, best of the
    runs' best / expert; a failed run counts 0), how many runs, and whether they are provisional (each run's own
    best over the comparison's first execution of the expert, until the `final` unit measured them together); (None,
    0, True) without a run."""
    runs = _runs(units, b, s, opt, iters, plan["seeds"])
    unit = next((u for u in work_list(plan) if u.id == f"final-{b}-{s}-i{iters}"), None)
    final = units[unit.id]["summary"] if unit and is_done(unit, units.get(unit.id)) else None
    if final and opt in final["optimizers"]:
        return final["optimizers"][opt], final["optimizers"][opt]["runs"], False
    if not runs:
        return None, 0, True
    from mapperopt.optimizer.compare import score_stats

    return score_stats([(r["best_throughput"] or 0.0) / r["reference_first"] for r in runs]), len(runs), True


NOT_GEMMS = ("stencil", "circuit", "pennant")  # the other benchmarks multiply matrices: their ceiling is cuBLAS DGEMM


def ceiling_share(units: dict, b: str, s: str, mapper: str) -> str:
    """A reference mapper's figure against its ceiling, as the limits table gives it, in short: "89 %" (Stencil:
    its printed bandwidth / the copy bandwidth; Circuit: / the FP32 peak; the GEMMs: / cuBLAS DGEMM at the largest
    n), Pennant "10.1x CPU" (against its CPU run: no ceiling); "-" where either was not measured."""
    m = units.get(f"base-{b}-{s}", {}).get("mappers", {}).get(mapper) or {}
    value = _estimate(m)
    if value is None:
        return "failed" if m else "-"
    if b == "pennant":
        cpu = units.get("cpu-pennant-gpu", {})
        return f"{value / cpu['throughput']:.1f}x CPU" if cpu.get("status") == "ok" and cpu.get("throughput") else "-"
    share = ceiling_ratio(units, b, s, mapper)
    if share is None:
        return "-"
    return f"{share:.0%}".replace("%", " %") if share >= 0.095 else f"{share:.1%}".replace("%", " %")


def ceiling_ratio(units: dict, b: str, s: str, mapper: str) -> float | None:
    """`ceiling_share`'s figure as a fraction (not Pennant's, which has no ceiling); None where either was not
    measured or the mapper failed."""
    copy, dgemm = units.get("limit-copybw", {}), units.get("limit-dgemm", {})
    m = units.get(f"base-{b}-{s}", {}).get("mappers", {}).get(mapper) or {}
    value = _estimate(m)
    if value is None or b == "pennant":
        return None
    if b == "stencil":
        bw, top = (m.get("printed", {}).get("BANDWIDTH") or {}).get("median"), copy.get("copy_gbs")
    elif b == "circuit":
        bw, top = value, copy.get("fp32_peak_gflops")
    else:
        dg = (dgemm.get("dgemm_gflops") or {}) if dgemm.get("status") == "ok" else {}
        bw, top = value, dg[str(max(int(k) for k in dg))] if dg else None
    ok = (copy if b in ("stencil", "circuit") else dgemm).get("status") == "ok"
    return bw / top if bw and top and ok else None


CHANGES = "changes.json"  # in the results folder: what changed while the evaluation ran, by date (`load_changes`)
SUPERSCRIPT = dict(zip("abcdefghijklmnop", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ"))


def load_changes(results: Path) -> list[dict]:
    """`<results>/changes.json`, written by hand: a list of the changes made while the evaluation ran that concern
    its figures, each {"mark": a letter, "from": the start time (UTC, as units' `started`) of the first unit measured
    after it, "benchmarks": names or "*", optional "sizes", "what": a short description; a fix may say "dsl": true
    (it concerns the DSL mappers only, not Legion's default mapper) and "statement" (only mappers whose text has it;
    "InstanceLimit": one on a task of the timed loop, where TIMED_LOOP lists the benchmark's);
    "expert": true for an edit of the expert mapper}; none without the file."""
    path = results / CHANGES
    return json.loads(path.read_text()) if path.exists() else []


@dataclass(frozen=True)
class Execution:
    """One execution a summary figure rests on: when its unit started, its mapper's text (None: Legion's default
    mapper) and whether it is the expert."""
    started: str
    dsl: str | None
    expert: bool = False


# The tasks launched between begin_trace and end_trace in each application's timed loop
# (benchmarks/legion/<app>/<app>.cc); the others (initialisation, checks) run once, outside it.
TIMED_LOOP = {
    "circuit": ("calculate_new_currents", "distribute_charge", "update_voltages"),
    "stencil": ("stencil", "increment"),
    "pennant": ("init_step_points", "init_step_zones", "calc_global_dt", "adv_pos_half", "calc_centers",
                "calc_volumes", "calc_char_len", "calc_rho_half", "sum_point_mass", "calc_state_at_half",
                "calc_force_pgas_tts", "qcs_zone_center_velocity", "qcs_corner_divergence", "qcs_qcn_force",
                "qcs_force", "qcs_vel_diff", "sum_point_force", "apply_boundary_conditions", "adv_pos_full",
                "calc_centers_full", "calc_volumes_full", "calc_work", "calc_work_rate_energy_rho_full",
                "calc_dt_hydro"),
}


def _limits_a_loop_task(b: str, dsl: str) -> bool:
    """Whether an `InstanceLimit` of `dsl` names a task of `b`'s timed loop (TIMED_LOOP) or every task; where the
    loop is not listed, or the text does not parse, whether it has an `InstanceLimit` at all."""
    from mapperopt.dsl import ast as A
    from mapperopt.dsl import parse

    if b not in TIMED_LOOP:
        return "InstanceLimit" in dsl
    try:
        limits = [st.tasks.names for st in parse(dsl).statements if isinstance(st, A.InstanceLimitStmt)]
    except Exception:  # noqa: BLE001 - a text this checkout's parser refuses: judged by its words
        return "InstanceLimit" in dsl
    return any(names is None or {n.name for n in names} & set(TIMED_LOOP[b]) for names in limits)


def _concerns(change: dict, b: str, s: str, e: Execution) -> bool:
    statement = change.get("statement")
    return ((change["benchmarks"] == "*" or b in change["benchmarks"]) and s in change.get("sizes", [s])
            and (not change.get("dsl") or e.dsl is not None)
            and (not statement or (_limits_a_loop_task(b, e.dsl or "") if statement == "InstanceLimit"
                                   else statement in (e.dsl or ""))))


def change_marks(changes: list[dict], b: str, s: str, executions: list[Execution]) -> list[str]:
    """The marks of the changes a figure's executions predate (a fix) or, for an edit of the expert, of the edits
    its expert execution comes after."""
    return [c["mark"] for c in changes if any(
        _concerns(c, b, s, e) and (e.expert and e.started >= c["from"] if c.get("expert") else e.started < c["from"])
        for e in executions)]


def _separated(changes: list[dict], b: str, s: str, one: Execution, other: Execution) -> bool:
    """Whether a listed fix came between two executions and concerns the earlier one (its figure would differ
    now): their ratio is no comparison of two mappers under one runtime."""
    return any(not c.get("expert") and (one.started < c["from"]) != (other.started < c["from"])
               and _concerns(c, b, s, min(one, other, key=lambda e: e.started)) for c in changes)


def measured_by(units: dict, results: Path, run: dict) -> dict:
    """The unit whose execution measured a tuning run's best: the run's own, or that of an earlier run of its
    comparison whose stored measurement it re-read (`evaluations/<key>.json` names the run and iteration that
    measured it)."""
    stored = results / run.get("folder", "") / "evaluations"
    if run.get("folder") and run.get("best_dsl") and stored.is_dir():
        for path in sorted(stored.glob("*.json")):
            try:
                e = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if e.get("dsl") != run["best_dsl"] or e.get("throughput") != run["best_throughput"]:
                continue
            found = re.search(r"(?:^|/)([^/]+)-(\d+)/iter-\d+$", e.get("run_dir") or "")
            unit_id = found and f"tune-{run['bench']}-{run['size']}-{found[1]}-i{run['iters']}-s{int(found[2]) - 1}"
            if unit_id and units.get(unit_id, {}).get("started"):
                return units[unit_id]
    return run


def comparison_first(units: dict, run: dict) -> dict:
    """The unit that measured a comparison's first execution of the expert (the provisional scores' divisor): its
    first tuning unit."""
    same = [u for u in units.values() if u.get("kind") == "tune" and u.get("folder") == run.get("folder")
            and u.get("started")]
    return min(same, key=lambda u: u["started"], default=run)


def _figure(ratio: float, marks: list[str]) -> str:
    return f"{ratio:.2f}" + "".join(SUPERSCRIPT[m] for m in marks)


# A figure over the comparison's first execution of the expert where that execution measured further from the
# reference unit's expert than the noise (where no noise was measured: at all): how much it differs from the figure
# over the reference unit's expert comes from the divisor alone (H100 Stencil `tight`: guided's 1.09 over a first
# execution 8.1 % low, 1.00 within noise over the reference unit's; H200 Stencil `tight`, no noise measured: 1.07 over
# one 4.6 % low, 1.02 over the reference unit's). Not a letter: those are changes.json's marks.
OFF_DIVISOR = "‡"


def off_divisor(first: float, expert: float | None, noise: float | None) -> float | None:
    """How far the comparison's first execution of the expert (`first`) measured from the reference unit's expert
    (first / expert - 1) where that is further than the noise, or where no noise was measured (None) at all; None
    where it is not, or the expert is unknown."""
    if not expert:
        return None
    delta = first / expert - 1
    return delta if abs(delta) > (noise if noise is not None else 0.0) else None


def _thin(ratio: float, noise: float | None) -> str:
    """Where a ratio of two executions of one session is beyond the noise but rounds to 1.00 (unmarked, it claims a
    difference that its two decimals do not show): how far it is from 1 beside the noise, "+0.14 %, noise 0.13 %",
    with as many figures as tell the two apart; "" otherwise."""
    if noise is None or abs(ratio - 1) <= noise or f"{ratio:.2f}" != "1.00":
        return ""
    digits = next((d for d in (2, 3, 4) if f"{abs(ratio - 1) * 100:.{d}g}" != f"{noise * 100:.{d}g}"), 4)
    return f"{(ratio - 1) * 100:+.{digits}g} %, noise {noise * 100:.{digits}g} %"


def _against(figure: float, reference: float | None, noise: float | None, who: str = "",
             marks: tuple[list[str], list[str]] = ([], []), reference_first: bool = False, off: bool = False,
             one_session: bool = False) -> str:
    """A summary cell: `figure` over the tables' divisor; where that is the expert's first execution in a
    comparison, `reference` is the same over the reference unit's expert (None where the divisor is that expert):
    beside it where the two differ, marked within noise as the tables mark it; `who` the optimizers it is of;
    `marks` the two figures' change marks; `reference_first`: the reference unit's figure leads (measured in one
    session, or with no listed change between its executions), the other in brackets, labelled; `off`: the tables'
    divisor is further from the reference unit's expert than the noise (`off_divisor`), so `figure`, leading or in
    brackets, is marked OFF_DIVISOR where it reads otherwise than `reference`; `one_session`: the judged figure
    (`reference`, else `figure`) is of two executions of one session, and where it is beyond the noise but rounds to
    1.00 the cell gives its margin (`_thin`). Where the two figures read alike but only the figure over the reference
    unit's expert is judged (the other leads), both are given, so that the mark shows which it belongs to."""
    alike = reference is None or f"{reference:.2f}" == f"{figure:.2f}" and marks[0] == marks[1]
    judged = figure if reference is None else reference
    mark = "within noise" if noise is not None and abs(judged - 1) <= noise else \
        _thin(judged, noise) if one_session else ""
    same = alike and not (mark and reference is not None and not reference_first)
    if same:
        return _figure(figure, marks[0]) + (f" ({'; '.join(n for n in (who, mark) if n)})" if who or mark else "")
    if reference_first:
        notes = [who, mark, f"comparison's first: {_figure(figure, marks[0])}" + (OFF_DIVISOR if off else "")]
        head = _figure(reference, marks[1])
    else:
        notes = [who, f"reference unit: {_figure(reference, marks[1])}" + (f", {mark}" if mark else "")]
        head = _figure(figure, marks[0]) + (OFF_DIVISOR if off and not alike else "")
    return head + f" ({'; '.join(n for n in notes if n)})"


def _expert_text(b: str) -> str:
    """The expert mapper's text as the repository has it now (only what a change's `statement` looks for is read
    from it); "" where it cannot be read."""
    try:
        from mapperopt.benchmarks import load_config

        config = load_config(b)
        return config.expert_dsl() if config.expert else ""
    except Exception:  # noqa: BLE001 - a benchmark this checkout lacks: no statement found in its expert
        return ""


def _names(items: list[str]) -> str:
    """"a", "a and b", "a, b and c" (`joined_names`, imported when first needed, as the other mapperopt modules)."""
    from mapperopt.optimizer.store import joined_names

    return joined_names(items)


def _standing(units: dict, plan: dict, results: Path) -> tuple[list[dict], bool]:
    """Per benchmark and size, what the page's first lines say of it, and whether any score there is provisional:
    `state` ("tuned"; "unrun": no tuning run yet; "failed": the expert failed), the reference unit's `expert` and
    `default`, and per optimizer with a run, `runs` (each run's best over the reference unit's expert), `threshold`
    (a final score: the row's noise; a provisional one: the larger of that and how far the expert's executions
    differed between sessions, `largest_drift`), `won`: whether its best is faster than the expert by more than
    the threshold, over the comparison's first execution of the expert and over the reference unit's (the two
    figures the Summary gives), and `over_default`, `beat_default`: the same against Legion's default mapper."""
    optimizers, _ = usable_optimizers(plan)
    drift = largest_drift(units) or 0.0
    rows, provisional = [], False
    for b, s in pairs(plan):
        mappers = units.get(f"base-{b}-{s}", {}).get("mappers", {})
        expert, default = _estimate(mappers.get("expert", {})), _estimate(mappers.get("default", {}))
        scored = {o: row_scores(units, plan, b, s, o, plan["iters"]) for o in optimizers}
        row = {"bench": b, "size": s, "expert": expert, "default": default, "optimizers": {}}
        rows.append(row)
        if not expert or not any(n for _, n, _ in scored.values()):
            row["state"] = "unrun" if expert or not mappers else "failed"
            continue
        row["state"] = "tuned"
        row["noise"] = spread(units, results, b, s)  # None: nothing measured twice in one session
        noise = row["noise"] or 0.0
        for o, (sc, n, early) in scored.items():
            if not n:
                continue
            provisional |= early
            runs = [(r["best_throughput"] or 0.0) / expert for r in _runs(units, b, s, o, plan["iters"], plan["seeds"])]
            over = max(runs) if early else sc["best"]
            threshold = max(noise, drift) if early else noise
            # Legion's default mapper: over its execution in the reference unit, as the best-mapper section gives it
            over_default = max(runs) * expert / default if default else None
            row["optimizers"][o] = {"runs": runs, "over": over, "threshold": threshold, "early": early,
                                    "won": min(sc["best"], over) - 1 > threshold, "over_default": over_default,
                                    "beat_default": over_default is not None and over_default - 1 > threshold}
    return rows, provisional


def _headline(units: dict, plan: dict, results: Path) -> str | None:
    """Where an optimizer's best is faster than the expert beyond the noise, and where not (`_standing`). None before
    any tuning run."""
    drift = largest_drift(units) or 0.0
    rows, provisional = _standing(units, plan, results)
    faster, rest, unrun, failed = [], [], [], []
    for row in rows:
        b, s, expert, default = row["bench"], row["size"], row["expert"], row["default"]
        if row["state"] != "tuned":
            (unrun if row["state"] == "unrun" else failed).append(f"{b} `{s}`")
            continue
        won = [(x["over"], o, _seeds_beyond(x["runs"], x["threshold"]) if x["early"] else "")
               for o, x in row["optimizers"].items() if x["won"]]
        if not won:
            rest.append(f"{b} `{s}`")
            continue
        beside = ("Legion's default mapper fails at this size" if not default else
                  f"Legion's default mapper, measured together with the expert, is {default / expert:.2f}x it there")
        faster.append(f"{b} `{s}` (" + ", ".join(f"{o} {x:.2f}x{seeds}" for x, o, seeds in sorted(won, reverse=True))
                      + f"; {beside})")
    if not faster and not rest:
        return None
    noise = ("by more than the row's noise (the Summary's noise column: the largest relative difference between "
             "two executions of one reference mapper in one session)")
    protocols = _drift_protocols(units, plan)
    rule = (f"{noise} and, the scores being provisional, by more than the {_percent(drift)} the expert's own "
            "executions differed between sessions" + (f" ({protocols})" if protocols else "")
            if provisional else noise)
    return ("**Headline** (best over the expert's execution in its reference unit, the unit that measured Legion's "
            "default mapper and the expert together): "
            + (f"an optimizer found a mapper faster than the expert beyond the noise on {_names(faster)}"
               + (f"; on {_names(rest)}, no optimizer's best is shown faster than the expert" if rest else "")
               if faster else f"no optimizer's best is shown faster than the expert beyond the noise ({_names(rest)})")
            + (f"; not tuned yet: {_names(unrun)}" if unrun else "")
            + (f"; not tuned, the expert failed: {_names(failed)}" if failed else "")
            + f". Beyond the noise: {rule}."
            + (" Provisional: each a single execution of a run's best, not yet measured together with the expert (the "
               "`final` units do)." if faster and provisional else ""))


def _seeds_beyond(ratios: list[float], threshold: float) -> str:
    """In how many of several seeds' runs (`ratios`: each run's best over the expert) the gain is beyond
    `threshold`, and the others' ratios; "" for one run."""
    if len(ratios) < 2:
        return ""
    others = sorted(x for x in ratios if x - 1 <= threshold)
    if not others:
        return f", {min(ratios):.2f}-{max(ratios):.2f}x in {'both' if len(ratios) == 2 else f'all {len(ratios)}'} seeds"
    return (f" in {len(ratios) - len(others)} of {len(ratios)} seeds, the other{'s' * (len(others) > 1)} "
            + ", ".join(f"{x:.2f}x" for x in others))


def _progress(units: dict, plan: dict) -> dict:
    """How much of the work list is done: `done` and `todo` (unit ids, units), (done, total) pairs for the reference
    measurements (`refs`: the limits, reference units and Pennant's CPU run), the tuning runs of `iters` (`runs`) and
    `long_iters` iterations (`long`) and the final measurements (`finals`), and `seeds`, the fewest and most seeds
    done per benchmark, size and optimizer ("1" or "1-2")."""
    todo = work_list(plan)
    done = {u.id for u in todo if is_done(u, units.get(u.id))}

    def count(kinds: tuple[str, ...], iters: int | None = None) -> tuple[int, int]:
        those = [u for u in todo if u.kind in kinds and (iters is None or u.iters == iters)]
        return sum(u.id in done for u in those), len(those)
    optimizers, _ = usable_optimizers(plan)
    seeds = [n for b, s in pairs(plan) for o in optimizers for _, n, _ in [row_scores(units, plan, b, s, o,
                                                                                      plan["iters"])]]
    low, high = min(seeds, default=0), max(seeds, default=0)
    return {"done": done, "todo": todo, "refs": count(("limit", "base", "cpu")),
            "runs": count(("tune",), plan["iters"]), "long": count(("tune",), plan["long_iters"]),
            "finals": count(("final",)),
            "seeds": f"{low}" if low == high else f"{low}-{high}"}


def _started_units(results: Path, plan: dict, units: dict) -> dict[Unit, int]:
    """The tuning units that `list` shows as started (no unit file, a journal holding some of their iterations) and
    how many iterations each holds."""
    return {u: n for u in work_list(plan) if u.kind == "tune" and not units.get(u.id)
            for n in [iterations_done(results, u)] if n}


def _started(results: Path, plan: dict, units: dict, b: str, s: str, opt: str, iters: int) -> str:
    """A table row's runs that `list` shows as started: "started: seeds 0 and 1 at 10 of 100 iterations (the
    10-iteration runs')"; "" where none."""
    found: dict[int, list[int]] = {}
    for u, n in _started_units(results, plan, units).items():
        if (u.bench, u.size, u.optimizer, u.iters) == (b, s, opt, iters):
            found.setdefault(n, []).append(u.seed)
    parts = []
    for n, seeds in sorted(found.items()):
        several = len(seeds) > 1
        # a long run continues the short run of its seed: its first iterations are that run's
        shared = (f" (the {plan['iters']}-iteration run{'s' if several else ''}'{'' if several else 's'})"
                  if iters == plan["long_iters"] and n == plan["iters"] else "")
        parts.append(f"seed{'s' * several} {_names([str(x) for x in sorted(seeds)])} at {n} of {iters} "
                     f"iterations{shared}")
    return "started: " + "; ".join(parts) if parts else ""


def _one_gpu_gemms(units: dict, plan: dict) -> tuple[list[str], list[float]]:
    """The plan's GEMMs and the reference mappers' shares of cuBLAS DGEMM where every GEMM ran on one GPU (where their
    mappers can hardly differ); ([], []) otherwise."""
    gemms = [b for b, s in pairs(plan) if b not in NOT_GEMMS]
    shares = [x for b in gemms for m in ("default", "expert") for x in [ceiling_ratio(units, b, "gpu", m)] if x]
    if gemms and shares and all(units.get(f"base-{b}-gpu", {}).get("gpus") == 1 for b in gemms):
        return gemms, shares
    return [], []


def _size_words(s: str) -> str:
    """A size after a benchmark's name in the page's first lines: `gpu`, the evaluation's own, unsaid."""
    return "" if s == "gpu" else " (tight memory)" if s == "tight" else f" `{s}`"


def _where(rows: list[tuple[str, str]], plan: dict, gemms_note: str = "") -> str:
    """Benchmarks and sizes in few words, grouped by size: `tight` "(tight memory)", the `gpu` size unsaid where it
    is the only one ("(`gpu`)" beside another: "stencil; stencil (tight memory)" read as a typo), and all of the
    plan's GEMMs at a size, where more than two, "the 6 GEMMs" first (a `gemms_note` after it: theirs alone)."""
    gemms = sorted({b for b, s in pairs(plan) if b not in NOT_GEMMS})
    groups = []
    for s in plan["sizes"]:
        here = [b for b, t in rows if t == s]
        if len(gemms) > 2 and set(gemms) <= set(here):
            here = [f"the {len(gemms)} GEMMs{gemms_note}"] + [b for b in here if b not in gemms]
        if here:
            groups.append((_names(here), s))
    return "; ".join(names + (_size_words(s) or f" (`{s}`)" * (len(groups) > 1)) for names, s in groups)


SHORT_ENTRIES = 4  # gains a line of the page's first list names at most (the details below give them all)
# the optimizers as the page's first lines name them: the field's names, and what guided is where first named
SHORT_NAMES = {"opentuner": "OpenTuner", "optuna": "Optuna", "random": "random search"}
GUIDED_IS = "guided (mapperopt's rule-based search)"
TIGHT_IS = " (tight memory: framebuffer too small)"  # the `tight` size, where the first lines first name it


def _gains(rows: list[dict], key: str) -> str:
    """The optimizers' gains beyond the noise (`key`: "won", over the expert; "beat_default", over Legion's default
    mapper), largest first, grouped by optimizer: "guided 8.54x on circuit (tight memory), 4.46x on pennant (1 of 2
    seeds)"; "" where none."""
    found = []
    for r in rows:
        for o, x in r["optimizers"].items():
            if x[key]:
                scale = 1.0 if key == "won" else r["expert"] / r["default"]
                beyond = sum(v * scale - 1 > x["threshold"] for v in x["runs"])
                seeds = f" ({beyond} of {len(x['runs'])} seeds)" if x["early"] and beyond < len(x["runs"]) else ""
                over = x["over"] if key == "won" else x["over_default"]
                found.append((over, o, r["bench"] + _size_words(r["size"]) + seeds))
    found.sort(reverse=True)
    shown = found[:SHORT_ENTRIES]
    by = {o: [f"{x:.2f}x on {where}" for x, p, where in shown if p == o] for _, o, _ in shown}
    more = len(found) - len(shown)
    return ("; ".join(f"{SHORT_NAMES.get(o, o)} " + ", ".join(e) for o, e in by.items())
            + (f"; {more} more below" if more else ""))


def in_short(units: dict, plan: dict, results: Path) -> list[str]:
    """The page's first lines, few and short, in the field's words, for a reader new to the page: how much of the
    planned work ran, where an optimizer beat the expert mapper and Legion's default mapper beyond the noise and by
    how much, where none did, and the main caveat. Computed as the Headline below (`_standing`), from the units the
    Summary table reads."""
    progress, (rows, provisional) = _progress(units, plan), _standing(units, plan, results)
    (refs, refs_all), (runs, runs_all), (long, long_all), (finals, finals_all) = (
        progress[k] for k in ("refs", "runs", "long", "finals"))
    lines = ["## In short", "",
             f"- **Progress**: {len(progress['done'])} of {len(progress['todo'])} planned units done: "
             + ("all reference measurements" if refs == refs_all else f"reference measurements {refs} of {refs_all}")
             + f", tuning runs {runs} of {runs_all} ({progress['seeds']} of {plan['seeds']} seeds)"
             + (f", {plan['long_iters']}-iteration {SHORT_NAMES.get(LONG_RUN[0], LONG_RUN[0])} runs {long} of "
                f"{long_all}" if long_all else "")
             + f", final re-measurements {finals} of {finals_all}."]
    tuned = [r for r in rows if r["state"] == "tuned"]
    if tuned:
        lines.append(f"- **Faster than the expert mapper** (beyond noise): {_gains(tuned, 'won') or 'nowhere'}.")
        # where the expert was beaten but Legion's default mapper was not: the gain is the default mapper's own.
        # Over its execution in the reference unit, of another session: within noise only within the row's noise
        # (one session), else not shown to differ (sessions differ by more), as the page's rule for ratios says
        level: dict[bool, list[str]] = {True: [], False: []}
        for r in tuned:
            won = {o: x["over_default"] for o, x in r["optimizers"].items() if x["won"] and x["over_default"]}
            if won and not any(x["beat_default"] for x in r["optimizers"].values()):
                o = max(won, key=won.get)
                within = r["noise"] is not None and abs(won[o] - 1) <= r["noise"]
                level[within].append(f"{r['bench']}{_size_words(r['size'])} ({SHORT_NAMES.get(o, o)} {won[o]:.2f}x)")
        fails = [(r["bench"], r["size"]) for r in rows if r["default"] is None and r["expert"]]
        lines.append("- **Against Legion's default mapper**: "
                     + (_gains(tuned, "beat_default") or "faster nowhere beyond noise")
                     + (f"; within noise on {_names(level[True])}" if level[True] else "")
                     + (f"; not shown to differ on {_names(level[False])}" if level[False] else "")
                     + (f"; the default mapper fails on {_where(fails, plan)}" if fails else "") + ".")
    rest = [(r["bench"], r["size"]) for r in tuned if not any(x["won"] for x in r["optimizers"].values())]
    unrun = [(r["bench"], r["size"]) for r in rows if r["state"] == "unrun"]
    failed = [(r["bench"], r["size"]) for r in rows if r["state"] == "failed"]
    gemms_note = " (on one GPU their mappers can hardly differ)" if _one_gpu_gemms(units, plan)[0] else ""
    later = (f"not tuned yet: {_where(unrun, plan)}" if unrun else "",
             f"not tuned, the expert failed: {_where(failed, plan)}" if failed else "")
    if rest:
        lines.append(f"- **No gain beyond noise** over the expert: {_where(rest, plan, gemms_note)}"
                     + "".join(f"; {t}" for t in later if t) + ".")
    elif any(later):
        lines.append("- **Not tuned**: " + "; ".join(t for t in later if t) + ".")
    drift = largest_drift(units)
    model = [o for o, why in plan.get("excluded", {}).items() if why == NO_ENDPOINT]
    others = [o for o in plan.get("excluded", {}) if o not in model]
    state = " and ".join(w for w, shown in (("partial", len(progress["done"]) < len(progress["todo"])),
                                            ("provisional", provisional)) if shown)
    if provisional and drift is not None:
        # the Summary's cell opens with the comparison's figure: these are its "reference unit:" one
        state += (": each score is one execution over the reference unit's expert (another session"
                  + (" or protocol" if _drift_protocols(units, plan) else "") + f": up to {_percent(drift)} apart)")
    caveat = [t for t in (state, model and f"{_names(model)}, the paper's language-model optimizer, did not run",
                          others and f"{_names(others)} did not run") if t]
    if caveat:
        lines.append("- **Caveat**: " + "; ".join(caveat) + ".")
    first = next((i for i, line in enumerate(lines) if re.search(r"\bguided\b", line)), None)
    if first is not None:
        lines[first] = re.sub(r"\bguided\b", GUIDED_IS, lines[first], count=1)
    first = next((i for i, line in enumerate(lines) if _size_words("tight") in line), None)
    if first is not None:
        lines[first] = lines[first].replace(_size_words("tight"), TIGHT_IS, 1)
    return [*lines, ""]


def _long_started(results: Path, plan: dict, units: dict) -> str:
    """How many of the long runs `list` shows as started, and that they hold their short runs' iterations where
    that is all they hold; "" where none."""
    held = [n for u, n in _started_units(results, plan, units).items() if u.iters == plan["long_iters"]]
    if not held:
        return ""
    return f" ({len(held)} started" + (f", each holding the {plan['iters']} iterations of its {plan['iters']}-"
                                       "iteration run, which it continues)" if set(held) == {plan["iters"]} else ")")


def at_a_glance(units: dict, plan: dict, results: Path, label: str, paper: str | None = None) -> list[str]:
    """The details under the page's first lines (`in_short`): what ran on what card, how much of the work list is
    done, whether the scores are final, what was not run and why, the headline (`_headline`), why the GEMM rows read
    1.00 where they ran on one GPU, and `paper` (notes.json's, set against the paper's claims) last."""
    optimizers, _ = usable_optimizers(plan)
    progress = _progress(units, plan)
    both = pairs(plan)
    sizes = {s: [b for b, t in both if t == s] for s in plan["sizes"]}
    gpus = {units.get(f"base-{b}-{s}", {}).get("gpus") for b, s in both} - {None}
    on = "" if gpus <= {1} else f" ({_names([str(g) for g in sorted(gpus)])} GPUs per run)"
    lines = ["## What ran and what it shows", "",
             f"- **Planned**: on one {label}{on}, "
             + "; ".join((f"all {len(bs)} benchmarks" if len(bs) == len(plan["benchmarks"]) > 2 else _names(bs))
                         + f" at size `{s}`" + (" (data exceeding the framebuffer)" if s == "tight" else "")
                         for s, bs in sizes.items() if bs)
             + ": Legion's default mapper and the expert mapper (the hand-written one each benchmark ships with)"
             + (" against the card's physical limits" if plan["gpus"] != 0 else "") + ", then "
             + f"{_names(optimizers)} tuning from a random start, {plan['iters']} iterations x {plan['seeds']} "
             "seeds each" + (f" ({LONG_RUN[0]} also {plan['long_iters']} iterations)"
                             if plan["long_iters"] and LONG_RUN[0] in optimizers else "") + "."]
    runs, long_runs, finals = progress["runs"], progress["long"], progress["finals"]
    lines.append(f"- **Done**: {len(progress['done'])} of the work list's {len(progress['todo'])} units (a unit is "
                 "one piece of work: a ceiling, Legion's default mapper and the expert mapper measured together, "
                 "Pennant's CPU run, a tuning run, or a final measurement, its outcome saved as "
                 "`units/<unit id>.json`): the limits and reference "
                 f"measurements: {progress['refs'][0]} of {progress['refs'][1]}; tuning runs of {plan['iters']} "
                 f"iterations: {runs[0]} of {runs[1]} (seeds done per benchmark, size and optimizer: "
                 f"{progress['seeds']} of {plan['seeds']})"
                 + (f"; {LONG_RUN[0]}'s runs of {plan['long_iters']} iterations: {long_runs[0]} of {long_runs[1]}"
                    + _long_started(results, plan, units) if long_runs[1] else "")
                 + f"; final measurements: {finals[0]} of {finals[1]}.")
    drift = largest_drift(units)
    lines.append("- **Final or provisional**: "
                 + ("every tuning score is provisional (no `final` unit has run)" if not finals[0] else
                    f"the scores of {finals[0]} final measurements are final, the others provisional")
                 + ": a provisional score is one execution of a run's best over one execution of the expert, "
                 "mostly of another session"
                 + (f" (the expert's own executions differed by up to {_percent(drift)} between sessions"
                    + (f"; {protocols}" if (protocols := _drift_protocols(units, plan)) else "") + ")"
                    if drift is not None else "")
                 + "; a `final` unit measures every run's best together with the expert, "
                 f"{plan['final_rounds']} interleaved rounds each.")
    if plan.get("excluded"):
        lines.append("- **Not run**: " + "; ".join(f"{o}, because {why}" for o, why in plan["excluded"].items())
                     + ". So no figure here is of the paper's method, a language model proposing mappers"
                     + ("; guided is mapperopt's own rule-based search without one" if "guided" in optimizers else "")
                     + (f"; {_names(others)} {'is the baseline' if len(others) == 1 else 'are the baselines'}"
                        if (others := [o for o in optimizers if o != "guided"]) else "") + ".")
    headline = _headline(units, plan, results)
    if headline:
        lines.append(f"- {headline}")
    gemms, shares = _one_gpu_gemms(units, plan)
    if gemms:
        lines.append(f"- **The {len(gemms)} GEMM rows** ({_names(gemms)}) read about 1.00 by their setting, not as "
                     "a finding: each runs on one GPU, where every tile lives in the one framebuffer and the "
                     "algorithms move no data, so their mappers can hardly differ; Legion's default mapper and the "
                     f"expert already run them at {min(shares) * 100:.0f}-{max(shares) * 100:.0f} % of cuBLAS DGEMM. "
                     "These rows test only that tuning finds a mapper that runs without losing speed; GEMM mapping on "
                     "several GPUs, where the algorithms differ, is not measured.")
    if paper:
        lines.append(f"- {paper}")
    return [*lines, ""]


def summary_table(units: dict, plan: dict, results: Path, tuning_doc: str | None = "docs/tuning.md",
                  history: bool = False) -> list[str]:
    """The page's first table: per benchmark and size, the reference mappers' share of the physical ceiling, Legion's
    default mapper, guided's best and the baselines' best against the expert (the tables' divisor; while it is the
    expert's first execution in the comparison, the same over the reference unit's expert beside it, marked within
    noise as the tables mark it), the noise, the seeds done, and whether the scores are provisional."""
    optimizers, _ = usable_optimizers(plan)
    changes = load_changes(results)
    repeated = any((results / "units" / "repeats").glob("base-*.json"))
    used = set()  # the marks the table shows
    off_rows: dict[tuple[str, str], tuple[float, float]] = {}  # (b, s): how far the divisor is, the noise
    rows = []
    for b, s in pairs(plan):
        base = units.get(f"base-{b}-{s}", {})
        if not base:
            continue
        mappers = base.get("mappers", {})
        expert, default = _estimate(mappers.get("expert", {})), _estimate(mappers.get("default", {}))
        scored = {o: row_scores(units, plan, b, s, o, plan["iters"]) for o in optimizers}
        firsts = sorted({r["reference_first"] for o in optimizers
                         for r in _runs(units, b, s, o, plan["iters"], plan["seeds"])})
        provisional = any(p for sc, n, p in scored.values() if n)
        noise = spread(units, results, b, s)
        expert_dsl = _expert_text(b)
        # the executions each figure rests on: the reference unit's two, the comparison's first of the expert
        in_base = (Execution(base.get("started", ""), None), Execution(base.get("started", ""), expert_dsl, True))

        def marked(*executions: Execution) -> list[str]:
            found = change_marks(changes, b, s, list(executions))
            used.update(found)
            return found

        def first_of(run: dict) -> Execution:
            return Execution(comparison_first(units, run).get("started", ""), expert_dsl, True)

        def reference(opt: str) -> float | None:
            """An optimizer's best over the reference unit's expert while its scores are provisional (the figure
            its table's last column gives); None once final (measured together with the expert)."""
            runs = _runs(units, b, s, opt, plan["iters"], plan["seeds"])
            return max(r["best_throughput"] or 0.0 for r in runs) / expert if scored[opt][2] and expert else None

        def best_cell(opts: list[str], figure: float, ref: float | None, who: str = "") -> str:
            """An optimizers' best: the ratio whose two executions were measured in one unit, or with no listed
            change between them, first."""
            if ref is None:  # final: measured together with the expert
                final = units.get(f"final-{b}-{s}-i{plan['iters']}", {})
                together = Execution(final.get("started", ""), "", False), Execution(final.get("started", ""),
                                                                                      expert_dsl, True)
                return _against(figure, None, noise, who, (marked(*together), []), one_session=True)
            run = max((r for o in opts for r in _runs(units, b, s, o, plan["iters"], plan["seeds"])),
                      key=lambda r: (r["best_throughput"] or 0.0) / r["reference_first"])
            by, first = measured_by(units, results, run), comparison_first(units, run)
            best = Execution(by.get("started", ""), run.get("best_dsl") or "")
            leads = by is not first and (_separated(changes, b, s, best, first_of(run))
                                         and not _separated(changes, b, s, best, in_base[1]))
            off = off_divisor(run["reference_first"], expert, noise)
            cell = _against(figure, ref, noise, who, (marked(best, first_of(run)), marked(best, in_base[1])),
                            reference_first=leads, off=off is not None)
            if OFF_DIVISOR in cell:
                off_rows[(b, s)] = (off, noise)
            return cell
        if not expert:
            versus = "expert failed"
        elif not default:
            versus = "failed"
        elif provisional and len(firsts) == 1:  # the table's divisor, the comparison's first execution, in brackets
            run = next(r for o in optimizers for r in _runs(units, b, s, o, plan["iters"], plan["seeds"]))
            off = off_divisor(firsts[0], expert, noise)
            versus = _against(default / firsts[0], default / expert, noise,
                              marks=(marked(in_base[0], first_of(run)), marked(*in_base)), reference_first=True,
                              off=off is not None, one_session=True)
            if OFF_DIVISOR in versus:
                off_rows[(b, s)] = (off, noise)
        else:
            versus = _against(default / expert, None, noise, marks=(marked(*in_base), []), one_session=True)
        guided = scored.get("guided", (None, 0, True))
        others = {o: sc["best"] for o, (sc, n, p) in scored.items() if o != "guided" and sc}
        high = max(others.values(), default=None)
        # every optimizer whose best rounds to the highest; none where no run found a mapper that finished within
        # the timeout
        tied = [o for o, v in others.items() if f"{v:.2f}" == f"{high:.2f}"] if high else []
        not_run = [o for o in optimizers if o != "guided" and o not in others]
        none_found = "none found (" + ", ".join(others) + (f"; {', '.join(not_run)} not run yet" if not_run else "") \
            + ")"
        counts = [n for sc, n, p in scored.values()]
        done = (f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}-{max(counts)}") + \
            f" of {plan['seeds']}"
        guided_best = ("-" if not guided[0] else "none found" if not guided[0]["best"] else
                       best_cell(["guided"], guided[0]["best"], reference("guided")))
        mine = [reference(o) for o in tied]
        others_best = ("-" if high is None else none_found if not tied else
                       best_cell(tied, high, None if None in mine else max(mine), ", ".join(tied)))
        state = ("provisional" if provisional else "final") if any(counts) else "not run yet"
        shares = [ceiling_share(units, b, s, name) for name in ("default", "expert")]
        shares = [share + ("".join(SUPERSCRIPT[m] for m in marked(execution))
                           if share not in ("-", "failed") else "") for share, execution in zip(shares, in_base)]
        rows.append(f"| {b} | `{s}` | {shares[0]} | {shares[1]} "
                    f"| {versus} | {guided_best} | {others_best} | "
                    f"{_percent(noise) if noise is not None else 'not measured'} | {done} | {state} |")
    legend = [f"{SUPERSCRIPT[c['mark']]} " + (f"against the expert as edited during the evaluation: {c['what']}"
                                              if c.get("expert") else f"measured before {c['what']}")
              + (" (on " + ", ".join(f"{b.capitalize()}" for b in TIMED_LOOP) + ": an `InstanceLimit` on a task of "
                 "the timed loop; a limit on a set-up or check task, run once outside it, is not marked)"
                 if c.get("statement") == "InstanceLimit" else "")
              + f" ({c['from'][:10]})" for c in changes if c["mark"] in used]
    if not rows:
        return []
    off_note = [f"{OFF_DIVISOR} the figure's divisor, the expert's first execution in the comparison, measured further "
                "from the reference unit's expert than the noise"
                + (", or differed from it where no noise was measured"
                   if any(noise is None for _, noise in off_rows.values()) else "") + " ("
                + "; ".join(f"{b} `{s}`: {delta * 100:+.1f} %, "
                            + (f"noise {_percent(noise)}" if noise is not None else "no noise measured")
                            + (f", `{ran[0]}` against the reference unit's `{ran[1]}`"
                               if (ran := _protocols(plan, b, s)) else "")
                            for (b, s), (delta, noise) in off_rows.items())
                + "): read the cell's other figure, over the reference unit's expert; the two share their numerator "
                "and differ by the divisor alone.", ""] if off_rows else []
    return ["## Summary", "", "Per benchmark and size (the columns are explained under the table):", "",
            "| benchmark | size | default / ceiling | expert / ceiling | default / expert | guided's best / expert | "
            "others' best / expert | noise | seeds done | scores |", "|---" * 10 + "|", *rows, "",
            *([("Marks (from `changes.json` in the results folder, against the units' start times"
                + ("; [Changes during the evaluation](#changes-during-the-evaluation) tells each" if history else "")
                + "): " + "; ".join(legend) + "."), ""] if legend else []),
            *off_note,
            "Columns:", "",
            "- default / ceiling, expert / ceiling: Legion's default mapper and the expert against the physical "
            "ceiling (Stencil: the copy bandwidth; Circuit: the FP32 peak; the GEMMs: cuBLAS DGEMM; Pennant has no "
            "ceiling: against its CPU run; see [Physical limits](#physical-limits)).",
            "- default / expert, guided's best / expert, others' best / expert: Legion's default mapper, guided's "
            "best run and the best run of the other optimizers against the expert. Guided is mapperopt's own "
            "rule-based search without a language model (" + (f"[{os.path.basename(tuning_doc)}]({tuning_doc})"
                                                              if tuning_doc else "`docs/tuning.md` in the repository")
            + "), not one of the paper's optimizers.",
            "- Two figures in a cell: the tuning tables below divide by the expert's first execution in the tuning "
            "comparison while the scores are provisional (each table's header gives it; it may be of another "
            "session and another runtime). Where the figure differs, a cell gives it over that execution "
            "(\"comparison's first\") and over the reference unit's expert (\"reference unit\", the figure each "
            "table's last column gives).",
            "- Which comes first: the figure measured in one session where there is one. Legion's default mapper: "
            "over the expert measured together with it. "
            + ("An optimizer's best: over the comparison's first where the same unit measured both; else over the "
               "reference unit's where a listed change " + ("(the marks above)" if legend else f"(`{CHANGES}`)")
               + " came between the best and the comparison's first but not between the best and the reference "
               "unit; else over the tables' divisor (the comparison's first)." if changes else
               "An optimizer's best: over the comparison's first execution of the expert (the tables' divisor).")
            + " The other figure follows in brackets, labelled.",
            "- within noise: a ratio is marked so as the tables mark it. An unmarked ratio of one session that "
            "rounds to 1.00 gives beside it how far it is from 1 and the noise it exceeds.",
            "- noise: the noise column gives the threshold, said under each table: the largest relative difference "
            "(larger / smaller - 1) between two executions of Legion's default mapper or of the expert in the "
            "reference unit" + (" and its repeat in `units/repeats/`, where there is one" if repeated else "")
            + ". A unit file's `spread` (in each mapper's "
            "`estimate`) is another figure: (largest - smallest) / median of that mapper's executions in that unit "
            "alone. \"not measured\": no mapper executed twice; no ratio of that row is marked either way.",
            "- \"none found\": the runs that ended (the optimizers named in brackets) found no mapper that finished "
            "within the timeout (each of their evaluations failed or timed out); those \"not run yet\" have no run.",
            "- seeds done: per optimizer.",
            "- scores: provisional (each a single execution of the run's best over a single execution of the "
            "expert, often of another session) or final (measured together with the expert).", ""]


def _marked(ratio: float, noise: float | None, one_session: bool = False) -> str:
    """A ratio as a table cell: 2 decimals, marked where it is within the measured spread (`spread`); a ratio of two
    executions of one session (`one_session`) beyond it that rounds to 1.00 with its margin (`_thin`)."""
    if noise is None:
        return f"{ratio:.2f} (noise not measured)"
    thin = _thin(ratio, noise) if one_session else ""
    return f"{ratio:.2f}" + (" (within noise)" if abs(ratio - 1) <= noise else f" ({thin})" if thin else "")


def new_measurements(results: Path, unit: dict) -> set[int] | None:
    """The iterations of a tuning unit's run that measured their program anew, from its comparison's stored
    outcomes (`evaluations/<key>.json`, each naming in `run_dir` the run and iteration that measured it, relative to
    the comparison's folder or, in older ones, to the results folder); its other iterations re-read an outcome some
    run of the comparison measured before (a program evaluated once per comparison). None where the comparison's
    outcomes are not stored."""
    folder = results / unit.get("folder", "")
    stored = folder / "evaluations"
    if not unit.get("folder") or not stored.is_dir():
        return None
    run = f"{unit['optimizer']}-{unit['seed'] + 1}"
    mine = set()
    for path in stored.glob("*.json"):
        try:
            where = json.loads(path.read_text()).get("run_dir") or ""
        except (OSError, ValueError):
            continue
        found = re.search(r"(?:^|/)([^/]+)/iter-(\d+)$", where)
        if found and found.group(1) == run:
            mine.add(int(found.group(2)))
    return {r["iter"] for r in unit.get("records", ()) if r["iter"] in mine}


def _per_evaluation(executions: int) -> str:
    return ("one measured execution per evaluation" if executions == 1 else
            f"{executions} calibrated executions per evaluation, trimmed mean")


def _protocol(plan: dict, shown: Path) -> list[str]:
    """How a tuning unit measures, against `mapperopt compare` run by hand: what is the same, what differs (one
    execution per evaluation, which the command line can ask for; `dedicated`, which it cannot), and the commands
    that reproduce a unit."""
    e = plan.get("executions", EXECUTIONS)
    dedicated = plan.get("dedicated", False)
    return [f"Protocol: each tuning unit calls `run_compare`, the function behind `mapperopt compare`, with "
            f"{_per_evaluation(e)} (on the command line `--repeats {e} --max-repeats {e}`; `mapperopt compare`'s "
            "defaults are 3 to 7). Its timeout is compare's own: 5x the run's best execution, or the expert's before "
            "a success (at least 30 s, at most the size's timeout)."
            + (" The evaluation also sets compare's `dedicated` (plan.json), which the command line does not offer: "
               "nothing else runs on the machine, so an execution that times out or is killed is final, not run "
               "again, and the comparison stores that outcome like any other. Without it `mapperopt compare` runs "
               "such an execution once more, and measures the program again when another run proposes it."
               if dedicated else ""),
            "",
            f"To reproduce a unit (on a machine set up as [How it was run](#how-it-was-run) says): "
            f"`python3 benchmarks/gpu/evaluate.py run --results {OWN} --only "
            f"'^tune-circuit-gpu-opentuner-i{plan['iters']}-s0$'` (any unit id of the work list; a unit of seed k "
            "runs, or resumes, the comparison's seeds 0 to k-1 of its optimizer first). The nearest `mapperopt "
            f"compare` command: `mapperopt compare circuit --size gpu --optimizers opentuner --iters {plan['iters']} "
            f"--runs 1 --seed 0 --repeats {e} --max-repeats {e}` (for seed k `--runs k+1`; Pennant's units add their "
            "plan.json `tune_args` after `--`, e.g. `-- -cstop 30`)"
            + (". It differs in `dedicated` and in ending with compare's final measurement of its runs, which the "
               "evaluation makes in its `final` units over every optimizer's runs; "
               if dedicated else ". It differs in ending with compare's final measurement of its runs, which the "
               "evaluation makes in its `final` units over every optimizer's runs; ")
            + "it writes a new folder under `runs/`. `mapperopt compare --resume <folder>` continues a comparison "
            f"(a folder under `{shown}`'s `work`) with the settings it stored"
            + (", `dedicated` included." if dedicated else ".")
            + " To read one on a machine without a GPU, measuring nothing: `mapperopt compare <benchmark> --resume "
            f"<folder> --report-only --optimizers {','.join(usable_optimizers(plan)[0])}`, on a copy of the "
            f"comparison's folder (the command leaves its lock file there) made once `python3 "
            f"benchmarks/gpu/evaluate.py list --results {shown}` has restored its journals from their `.xz` (without "
            "`--optimizers` it reports only the optimizer its last unit tuned, each unit tuning one)."]


def _table(units: dict, plan: dict, b: str, s: str, resume: str, results: Path) -> tuple[list[str], dict | None]:
    """The paper's table for (b, s) and the best tuning run found (its unit)."""
    optimizers, skipped = usable_optimizers(plan)
    card = card_label(measured_on(plan, units)) if measured_on(plan, units) else None  # the one `run` continues on
    base = units.get(f"base-{b}-{s}", {})
    lines = [f"### {b}, size `{s}`", ""]
    mappers = base.get("mappers", {})
    expert = _estimate(mappers.get("expert", {}))
    default = _estimate(mappers.get("default", {}))
    unit = _shown_unit(mappers.get("expert", {}).get("unit"))
    firsts = sorted({r["reference_first"] for o in optimizers for r in _runs(units, b, s, o, plan["iters"],
                                                                                 plan["seeds"])})
    noise = spread(units, results, b, s)
    if expert:
        rounds = base["rounds"]

        def ranged(m: dict) -> str:  # the rounds' lowest and highest beside the figure
            low, high = (m.get("estimate") or {}).get("low"), (m.get("estimate") or {}).get("high")
            return f" ({_fmt(low)}-{_fmt(high)})" if rounds > 1 and low is not None and high is not None else ""
        lines.append(f"Reference unit: expert {_fmt(expert)} {unit}{ranged(mappers['expert'])}, Legion's default "
                     "mapper " + (f"{_fmt(default)} {unit}{ranged(mappers['default'])}" if default else "failed")
                     + (" (one execution each, measured together: no spread)." if rounds == 1 else
                        f" ({_rounds(rounds).removeprefix('the ').removesuffix(' of each mapper')}, range in "
                        "brackets)."))
        bandwidth = mappers["expert"].get("printed", {}).get("BANDWIDTH")
        if bandwidth:  # the stencil prints its memory traffic too: the limits table's figure
            lines[-1] += (f" The expert's execution also printed BANDWIDTH = {_fmt(bandwidth['median'])} "
                          f"{bandwidth['unit']} ({bandwidth['median'] / expert:.2f} bytes per flop).")
        if firsts:  # the provisional scores' divisor: another single execution of the same expert
            lines[-1] += (" The expert's first execution in the tuning comparison, the provisional scores' divisor: "
                          + ", ".join(f"{_fmt(f)} {unit} ({f / expert - 1:+.1%} against the reference unit's)"
                                      for f in firsts) + "."
                          + (f" The comparison ran `{ran[0]}`, the reference unit `{ran[1]}`."
                             if (ran := _protocols(plan, b, s)) else ""))
        lines.append("")
    lines += ["| optimizer | iterations | runs | mean | std | worst | median | best | best / Legion default | "
              "failed evaluations | tuning time per run (all calls) | normalised by |", "|---" * 12 + "|"]
    finals = [u for u in work_list(plan) if u.kind == "final" and u.bench == b and u.size == s
              and is_done(u, units.get(u.id))]
    # the provisional divisors further from the reference unit's expert than the noise: the rows over them are marked
    offs = {f: off_divisor(f, expert, noise) for f in firsts if off_divisor(f, expert, noise) is not None}
    if expert and default and len(firsts) == 1 and not finals:
        # the divisor of every provisional row below, so that the rows compare with one another
        shift = firsts[0] in offs and f"{default / firsts[0]:.2f}" != f"{default / expert:.2f}"
        lines.append(f"| Legion default mapper | - | 1 | {default / firsts[0]:.2f}{OFF_DIVISOR if shift else ''} "
                     "| | | | | 1.00 | | | "
                     f"the expert's first ({_fmt(firsts[0])} {unit}), as every row here; measured together with "
                     f"the expert: {_marked(default / expert, noise, one_session=True)} |")
    elif expert and default:
        lines.append(f"| Legion default mapper | - | 1 | {default / expert:.2f} | | | | | 1.00 | | | "
                     + ("the expert in the reference unit, the same execution round |" if base["rounds"] == 1 else
                        "the expert in the reference unit, the same rounds |"))
    elif expert:
        reason = mappers.get("default", {}).get("reason")
        lines.append(f"| Legion default mapper | - | 1 | failed: {_short(reason)} | | | | | | | | |")
    elif base:
        lines.append(f"| default / expert | - | - | failed: {_short(_error(base))} | | | | | | | | |")
    best_run = None
    jobs = [(o, plan["iters"]) for o in optimizers]
    if plan["long_iters"] and LONG_RUN[0] in optimizers:
        jobs.append((LONG_RUN[0], plan["long_iters"]))
    # a row of fewer runs than another (one run: its mean is that run's score) is marked, not read like the others
    most = max((len(_runs(units, b, s, o, i, plan["seeds"])) for o, i in jobs), default=0)
    fewer = False
    for opt, iters in jobs:
        runs = _runs(units, b, s, opt, iters, plan["seeds"])
        started = _started(results, plan, units, b, s, opt, iters)
        if not runs:
            lines.append(f"| {opt} | {iters} | 0 of {plan['seeds']} | {started or 'not run yet'} | | | | | | | | |")
            continue
        scores, n, provisional = row_scores(units, plan, b, s, opt, iters)
        stats = _stats(scores)
        if not provisional:
            final = units[f"final-{b}-{s}-i{iters}"]["summary"]
            top = max((x["final_throughput"] or 0.0 for x in final["runs"] if x["optimizer"] == opt), default=0.0)
            how = "final measurement (together with the expert)"
        else:  # provisional: each run's own best against the comparison's first expert measurement
            top = max(r["best_throughput"] or 0.0 for r in runs)
            divisors = ", ".join(sorted({_fmt(r["reference_first"]) for r in runs}))
            # the sentence above the tables says what a provisional score is; the cell gives only its figures
            how = (f"provisional, / {divisors} {unit}; best / reference unit's expert: "
                   f"{_marked(top / expert, noise)}")
            # the best over an off divisor, where it reads otherwise than over the reference unit's expert
            if any(r["reference_first"] in offs for r in runs) and f"{scores['best']:.2f}" != f"{top / expert:.2f}":
                stats += OFF_DIVISOR
        versus = _marked(top / default, noise) if default else "n/a: default failed"
        evals = sum(len(r["records"]) for r in runs)
        failed = sum(x["status"] != "ok" for r in runs for x in r["records"])
        walls = ", ".join(f"{r['wall_s_tuning'] / 60:.1f}" for r in runs)
        anew = [new_measurements(results, r) for r in runs]
        if all(a is not None for a in anew) and any(len(a) < len(r["records"]) for a, r in zip(anew, runs)):
            counts = [f"{len(a)} of {len(r['records'])}" for a, r in zip(anew, runs)]
            walls += f" min (measured anew: {', '.join(counts)})"
        else:
            walls += " min"
        count = f"{len(runs)} of {plan['seeds']}"
        if len(runs) < most:
            count, fewer = f"**{count}** †", True
        lines.append(f"| {opt} | {iters} | {count} | {stats} | {versus} | "
                     f"{failed / evals:.0%} of {evals} | {walls} | {how}{f'; {started}' if started else ''} |")
        for r in runs:
            if r["best_throughput"] and (best_run is None or r["best_throughput"] / r["reference_first"]
                                         > best_run["best_throughput"] / best_run["reference_first"]):
                best_run = r
    for opt, why in skipped.items():
        lines.append(f"| {opt} | {plan['iters']} | skipped: {why} | | | | | | | | | |")
    if fewer:
        lines += ["", "† fewer runs than another row of this table: its mean is the mean of fewer runs (of one run, "
                  "that run's score), not comparable with a mean of more."]
    if expert:
        lines += ["", noise_note(units, results, b, s)]
    if offs and any(OFF_DIVISOR in line for line in lines if line.startswith("| ")):
        measured = (f"measured {next(iter(offs.values())) * 100:+.1f} % from" if len(offs) == 1 else
                    "measured that far from")
        lines += ["", f"{OFF_DIVISOR} the divisor, the expert's first execution in the comparison ("
                  + "; ".join(_fmt(f) + f" {unit}" + (f": {delta * 100:+.1f} %" if len(offs) > 1 else "")
                              for f, delta in offs.items())
                  + f"), {measured} the reference unit's expert, "
                  + (f"more than the noise ({_percent(noise)})" if noise is not None else
                     "where no noise was measured")
                  + ": read the figure over the reference unit's expert, in the last column."]
    missing = [u.id for u in work_list(plan) if u.bench == b and u.size == s and not is_done(u, units.get(u.id))]
    if expert_failed(units, b, s):
        lines += ["", "The expert mapper failed at this size, so nothing can be normalised to it: its tuning units are "
                  "not run."]
    elif missing:
        lines += ["", f"{len(missing)} unit(s) of this benchmark not done yet (first: `{missing[0]}`); `{resume}` "
                  + (f"continues, on an {card} only (the card this folder records: `run` refuses another; see "
                     "[How it was run](#how-it-was-run))." if card else "continues.")]
    return lines + [""], best_run


def describe_change(expert: str, best: str) -> list[str]:
    """The best program against the expert as a unified diff (normalised text, comments out): the statements it
    adds (`+`) and removes (`-`), with two unchanged lines of context (` `) around each change and `@@` where
    unchanged lines are left out, so that a changed function's unchanged closing brace still shows."""
    from mapperopt.optimizer.base import normalize_dsl

    # blank lines (where the formatter separates groups, or a comment was) are no statement
    a, b = ([line for line in normalize_dsl(text).splitlines() if line.strip()] for text in (expert, best))
    # a hunk's line numbers count normalised lines, which the reader does not see: `@@` alone marks a gap
    return ["@@" if line.startswith("@@") else line for line in difflib.unified_diff(a, b, lineterm="", n=2)
            if not line.startswith(("+++", "---"))]


# guided's note of the program that writes Legion's default mapper's choices in the DSL (`the default` of a program
# without a mapper of its own; one with its own says "Legion's default", which is not its reference unit's default)
DEFAULT_BEHAVIOUR = "the default mapper's behaviour"


def default_in_comparison(results: Path, run: dict) -> list[tuple[int, int, float, str]]:
    """Legion's default mapper's choices written in the DSL as guided measured them in a tuning run's comparison:
    (guided's seed, iteration, throughput, the run that measured it: its own or the one its `cached_from` names,
    e.g. "guided-1") of each guided run whose `history.csv` has such a row that ran, by seed; none where guided's
    start ran, or no guided run is there yet."""
    import csv

    folder = results / run.get("folder", "")
    if not run.get("folder") or not folder.is_dir():
        return []
    found = []
    for history in sorted(folder.glob("guided-*/history.csv"), key=lambda p: int(p.parent.name.rpartition("-")[2])):
        with open(history, newline="") as f:
            for row in csv.DictReader(f):
                if (row.get("note") or "").startswith(DEFAULT_BEHAVIOUR) and row.get("status") == "ok" \
                        and row.get("throughput"):
                    found.append((int(history.parent.name.rpartition("-")[2]) - 1, int(row["iter"]),
                                  float(row["throughput"]),
                                  (row.get("cached_from") or "").partition("/")[0] or history.parent.name))
                    break
    return found


def tuning_doc_link(results: Path, out: Path) -> str | None:
    """The link to docs/tuning.md from the page at `out`: the repository the results folder is in (reports/<card>-eval
    of a checkout: its grandparent), else the repository of this script (a results folder copied elsewhere); None
    where neither has the file (the page then names it without a link)."""
    for root in (results.resolve().parents[1], Path(__file__).resolve().parents[1]):
        doc = root / "docs" / "tuning.md"
        if doc.is_file():
            return os.path.relpath(doc, out.parent)
    return None


def write_report(results: Path, out: Path, notes: dict[str, str] | None = None, shown: Path | None = None) -> str:
    """Writes the report (Markdown, with PNG plots beside it in `results`) from the saved units; returns its text.
    `notes` (default: `<results>/notes.json`): a person's text: "summary" (after the header), "limits" (after the
    limits table), "paper" (the last item of "What ran and what it shows", under the page's first lines: the paper's
    claims against what was measured), per benchmark (or "<bench>-<size>") why its best mapper is faster, "history"
    (what changed while the evaluation ran: its own section, after the results) and "log" (the device calls, under
    "How it was run"), each printed as written (blank lines between its paragraphs);
    `shown`: the results folder as the commands in the report name it (default `results`)."""
    from mapperopt.benchmarks import load_config

    plan = load_plan(results)
    units = load_units(results)
    if notes is None and (results / "notes.json").exists():
        notes = json.loads((results / "notes.json").read_text())
    notes = notes or {}
    todo = work_list(plan)
    done = [u for u in todo if is_done(u, units.get(u.id))]
    failed = [u for u in todo if u not in done and units.get(u.id, {}).get("status") == "failed"]
    rel = os.path.relpath(results, out.parent)
    shown = shown or results
    resume = f"python3 benchmarks/gpu/evaluate.py run --results {shown}"
    sessions = sorted({u["started"][:10] for u in units.values()})
    # a reference unit saved as failed where only Legion's default mapper failed is done: a result, not a failure
    default_failed = sum(u.kind == "base" and units[u.id].get("status") == "failed" for u in done)
    label = card_label(measured_on(plan, units))
    # how many executions the noise lines under the tables count
    counted = sorted({w[2] for w in (_widest(units, results, b, s) for b, s in pairs(plan)) if w})
    repeats = sorted((results / "units" / "repeats").glob("base-*.json"))
    lines = [f"# Evaluation on one {label}", "", *in_short(units, plan, results),
             *at_a_glance(units, plan, results, label, notes.get("paper")),
             f"Work list: {len(done)} of {len(todo)} units done"
             + (f" ({default_failed} of them record that Legion's default mapper fails at that size)"
                if default_failed else "")
             + f", {len(failed)} could not run{' (dates: ' + ', '.join(sessions) + ')' if sessions else ''}; "
             "the expert mapper is the hand-written DSL mapper each benchmark ships with (the file that `expert:` "
             "names in configs/<benchmark>.yaml).", ""]
    # the summary table right after this short intro, what explains its figures under it
    lines += summary_table(units, plan, results, tuning_doc_link(results, out), bool(notes.get("history")))
    lines += [f"Reference units (plan.json `base_rounds`: {plan['base_rounds']}): {_rounds(plan['base_rounds'])}"
             + ("; a single execution has no spread (units of earlier versions of this script store `\"spread\": 0.0` "
                "for it, which measures nothing; later ones null and `no_spread`). " if plan["base_rounds"] == 1 else
                ". ")
             + "A ratio marked within noise differs from 1 by no more than the largest relative difference measured "
             "between two executions of one mapper at its benchmark and size in one session (the reference unit's "
             + ("rounds and its repeat in `units/repeats/` where there is one" if repeats else
                "rounds, as no reference unit was repeated here")
             + "; not the expert's first execution in a tuning comparison, "
             "measured in another session, possibly with another runtime): it is no difference between the "
             "mappers. A range is within noise only as a whole. An unmarked ratio of two executions of one session "
             "(Legion's default mapper over the expert measured together with it; a final score) differs from 1 by "
             "more than the noise (where it rounds to 1.00, its cell gives by how much). An unmarked provisional "
             "score, or any other ratio over an execution of the expert from another session, is not shown to differ "
             "from 1: the threshold is the spread within one session ("
             + (f"a range of {' or '.join(map(str, counted))} executions, said under each table" if counted else
                "said under each table")
             + ("), and the expert's executions in two sessions differed by up to "
                f"{_percent(drift)} ("
                + (f"{protocols}; " if (protocols := _drift_protocols(units, plan)) else "")
                + "each table's header gives the comparison's first)"
                if (drift := largest_drift(units)) is not None else
                "), and the expert's executions in two sessions may differ by more (no tuning comparison has "
                "executed the expert here yet)")
             + "; where no mapper was executed twice the ratios say \"noise not measured\".", "",
             f"The tables and plots are computed by `benchmarks/gpu/evaluate.py` from the units saved in "
             f"`{rel}/units/`"
             + ("; the notes (the status, the findings and the text under the tables and in the sections on "
                "changes and calls) are written by hand from them" if notes else "")
             + "; how to reproduce or continue it, and the device calls that ran it: "
             "[How it was run](#how-it-was-run).", ""]
    contents_at = len(lines)  # the sections' list goes here once they are all written
    if notes.get("summary"):
        lines += [notes["summary"], ""]
    lines += _limits_section(units, plan, results, out)
    if notes.get("limits"):
        lines += [notes["limits"], ""]
    lines += ["## Tuning: best throughput normalised to the expert mapper", "",
              f"Plan: {plan['iters']} iterations x {plan['seeds']} seeds per optimizer (start: a random point of the "
              f"search space per seed, the same for every optimizer), {LONG_RUN[0]} also {plan['long_iters']} "
              "iterations.", "", *_protocol(plan, shown), "",
              "Scores: mean, population std, worst, median and best of the runs' best / expert (as `mapperopt "
              "compare` prints them: of one run, std n/a and worst, median and best its score; of two, the median "
              "their mean); a failed run counts 0; best / Legion default: the "
              "highest throughput of the runs over Legion's default mapper's in the "
              "reference unit (another execution; about 1.00 where the best found is as fast as the default mapper). "
              "Until a benchmark's `final` unit has measured every run's best together with the expert, the "
              "scores are provisional (each run's own measurement / the expert's first measurement in the "
              "comparison, the figure the last column gives, with the best over the reference unit's expert beside "
              "it).", "",
              "Tuning time per run: the wall time of its iterations summed over every device call that ran them "
              "(a saved unit's `wall_s` is only its last call's); where some of a run's iterations re-read a "
              "program's outcome that another run of the comparison measured before (each program is measured once "
              "per comparison: each outcome in the comparison's `evaluations/` names in `run_dir` the run and "
              "iteration that measured it (a `history.csv` row's own iteration, `<run>/iter-NNN`, or its "
              "`cached_from`); a row's `key` names that file only in guided's runs: `evaluations/` keys every program "
              "with the task profile, which guided reads and the baselines skip), they took 0.02-0.2 s each, and "
              "the cell says how many of each run's iterations were measured "
              "anew. Every seed's random start is shared by the optimizers: its cost (a 30-50 s timeout where the "
              "start times out) falls on whichever optimizer runs it first (guided, in the work list's order), and "
              "the others re-read it.", "",
              "A row's files: its comparison's folder, `work/<benchmark>/compare-*` in the results folder (the one "
              "whose settings.json names its size), keeps each run in `<optimizer>-<seed + 1>/` (its `history.csv` "
              "and `best.dsl`); its `runs.csv`, `summary.csv`, `summary.json`, `table.md` and `compare.png` hold only "
              "the optimizers of the last command that ran the comparison: a tuning unit runs one optimizer, so until "
              "the `final` unit, which runs them all, they show one optimizer's runs. The tables and plots here read "
              "every run's unit file.", ""]
    if plan.get("excluded"):
        lines += [_excluded(plan), ""]
    best_runs = {}
    changes = load_changes(results)
    for b, s in pairs(plan):
        table, best = _table(units, plan, b, s, resume, results)
        lines += table
        if best:
            best_runs[(b, s)] = best
        png = _plot(units, plan, b, s, results)
        if png:
            lines += [f"![{b} {s}]({os.path.relpath(png, out.parent)})", ""]
    lines += ["## Best mapper found per benchmark", ""]
    across = largest_drift(units)
    if not best_runs:
        lines += ["No tuning run has found a mapper that finished within the timeout yet.", ""]
    for (b, s), r in best_runs.items():
        config = load_config(b)
        expert_dsl = config.expert_dsl() if config.expert else ""
        change = describe_change(expert_dsl, r["best_dsl"])
        ratio = r["best_throughput"] / r["reference_first"]
        unit = _shown_unit(r["throughput_unit"])
        default = _estimate(units[f"base-{b}-{s}"]["mappers"].get("default", {}))
        # against the two mappers measured with the same runtime, the reference unit (the comparison's first
        # execution of the expert may be days older); Legion's default mapper first where it ran: the expert may be
        # the weaker reference
        expert = _estimate(units[f"base-{b}-{s}"]["mappers"]["expert"])
        versus = {"default": r["best_throughput"] / default if default else None,
                  "expert": r["best_throughput"] / expert}
        noise = spread(units, results, b, s)
        runs = executions(units, results, b, s, "default")
        # the default mapper's ratio is within only over each of its executions (the range the heading shows)
        ratios = {"default": [r["best_throughput"] / x for x in runs or [default] if x] if default else [None],
                  "expert": [versus["expert"]]}
        within = {k: all(v is not None and noise is not None and abs(v - 1) <= noise for v in ratios[k])
                  for k in versus}
        said = {k: "" if all(within.values()) or not within[k] else
                f" (within the {noise * 100:.1f} % two executions of one mapper differ by here)" for k in versus}
        # over each of the default mapper's executions where it has several: the reference figure is one of them
        low, high = (f"{r['best_throughput'] / x:.2f}" for x in (max(runs, default=1), min(runs, default=1)))
        shown_default = f"{versus['default'] or 0:.2f}" if len(runs) < 2 else low if low == high else f"{low}-{high}"
        # the default mapper's choices as guided measured them in this comparison: a divisor of the same comparison
        by = measured_by(units, results, r)

        def same_runtime(measured: str) -> bool:
            """Whether no listed change came between the best's execution and the default mapper's choices that
            guided's run `measured` measured (in the DSL: a fix of the DSL runtime concerns both)."""
            unit_id = f"tune-{b}-{s}-guided-i{plan['iters']}-s{int(measured.rpartition('-')[2]) - 1}"
            when = units.get(unit_id, {}).get("started")
            return bool(when) and not _separated(changes, b, s, Execution(by.get("started", ""), r["best_dsl"]),
                                                 Execution(when, ""))
        here = next((h for h in default_in_comparison(results, r) if same_runtime(h[3])), None) if default else None
        in_comparison = "" if not here else (
            f", which is the default mapper's behaviour written in the DSL (guided, seed {here[0]}, iteration "
            f"{here[1]})" if r["best_throughput"] == here[2] else
            f", {(r['best_throughput'] / here[2] - 1) * 100:+.2f} % over the default mapper's behaviour written in "
            f"the DSL and measured in this comparison (guided, seed {here[0]}, iteration {here[1]}: {_fmt(here[2])} "
            f"{unit}; single executions)")
        # unmarked ratios over a reference unit of another session than the best's execution: not shown to differ
        base = units[f"base-{b}-{s}"]
        apart = bool(by.get("started") and base.get("started")) and not _same_session(
            by["started"], base["started"], _call_windows(results))
        figures = {"default": f"{shown_default}x", "expert": f"{versus['expert']:.2f}x"}
        unshown = [figures[k] for k in versus if versus[k] is not None and not within[k]
                   and all(v is not None and abs(v - 1) <= across for v in ratios[k])] if apart and across else []
        heading = ((f"{shown_default}x Legion's default mapper (its "
                    f"reference unit's {_fmt(default)} {unit}"
                    + (f"; its {len(runs)} executions here {_fmt(min(runs))}-{_fmt(max(runs))}" if len(runs) > 1
                       else "") + f"){said['default']}{in_comparison}, " if default else "")
                   + f"{versus['expert']:.2f}x the expert in its reference unit{said['expert']} ({ratio:.2f}x its "
                   "first execution in the comparison)"
                   + ("" if default else " (Legion's default mapper failed at this size)")
                   + (f"; {shown_default}x and {versus['expert']:.2f}x are within the {noise * 100:.1f} % two "
                      "executions of one mapper differ by here: not a difference" if all(within.values()) else "")
                   + (f"; {' and '.join(unshown)} {'is' if len(unshown) == 1 else 'are'} over a reference unit of "
                      f"another session: not shown to differ ({_drift(r['reference_first'] / expert - 1, across)})"
                      if unshown else ""))
        lines += [f"### {b}, size `{s}`: best mapper found", "", f"{heading}.", "",
                  f"{r['optimizer']}, seed {r['seed']}, iteration {r['best_iter']}: {_fmt(r['best_throughput'])} "
                  f"{unit} (the run's own measurement) / {_fmt(r['reference_first'])} {unit} (the expert's first in "
                  "the comparison).", "",
                  notes.get(b) or notes.get(f"{b}-{s}") or "(no sentence written yet: the lines below are the change)",
                  "", "The best mapper:", "", "```", *r["best_dsl"].rstrip().splitlines(), "```", "",
                  "Against the expert (a unified diff: `-` expert only, `+` best only, a leading space unchanged; "
                  "`@@` where unchanged lines are left out):", "", "```", *change, "```", ""]
    if notes.get("history"):
        lines += ["## Changes during the evaluation", "", notes["history"], ""]
    lines += ["## How it was run", "",
              "On a machine of your own with an NVIDIA Hopper GPU (H100, H200: the ceilings' programs are built for "
              "sm_90), the CUDA toolkit's nvcc and cuBLAS (`mapperopt doctor` says whether both are found), g++, "
              "Python 3.11+ and network for the install, from the repository root:", "",
              "    python3 -m venv .venv && .venv/bin/pip install '.[baselines]' && source .venv/bin/activate",
              f"    RESULTS={OWN} bash benchmarks/gpu/evaluate.sh",
              f"    python3 benchmarks/gpu/evaluate.py list --results {OWN}", "",
              "repeating the last two until the list shows every unit ok (or failed: `EVAL_ARGS=--retry-failed` "
              f"runs those again), then write your page, `{OWN.removesuffix('-eval')}-evaluation.md`, with", "",
              f"    python3 benchmarks/gpu/evaluate.py report --results {OWN}", "",
              f"`RESULTS={OWN}` starts a folder of your own: without it evaluate.sh continues `reports/<card>-eval`, "
              f"on an {label} this page's folder, measured on the project's lent machines (below), and your "
              "machine's timings would be divided by theirs. Each call of evaluate.sh builds every benchmark, then "
              "runs the units left for STOP_AFTER seconds (default 500; a unit still running then continues on the "
              "next call), and packs the folder into `gpu-out/` for the lent machines (not needed on your own).", "",
              f"On a lent {label} of the project (no network): here, with the environment above activated, `bash "
              "benchmarks/gpu/pack.sh` (it needs network) puts what the machine lacks into `.carry/`; with `.carry/` "
              "copied beside the working tree, the machine runs, from the repository root:", "",
              "    source benchmarks/gpu/setup.sh; STOP_AFTER=500 bash benchmarks/gpu/evaluate.sh", "",
              f"(it builds every benchmark, then runs `{resume}` for what is left of STOP_AFTER seconds),",
              "then, here, with mapperopt installed (the README's install; `python3` here and in the notes is that "
              "environment's: `benchmarks/gpu/evaluate.py` and `benchmarks/gpu/timeouts.py` import the installed "
              "package, and a Python without it stops and says so), unpack the returned "
              f"`{shown.name}.tar.gz` (`tar -xzf {shown.name}.tar.gz -C {shown.parent}`), write this page with",
              "", f"    python3 benchmarks/gpu/evaluate.py report --results {shown} --out {os.path.relpath(out)}", "",
              f"and commit `{shown}` (its `work/` folder holds the comparisons' journals the next call resumes).", "",
              "The journals (each tuning run's `state.jsonl`, OpenTuner's `opentuner.db` and `opentuner.db-journal`) "
              "are committed compressed, as `<file>.xz` beside the plain file, which git ignores: `evaluate.py run`, "
              "`list` and `report` restore the plain files first (`run` compresses them again when it ends), so "
              "before browsing a comparison's folder or resuming it by hand (`mapperopt compare --resume <its "
              f"folder>`), run `python3 benchmarks/gpu/evaluate.py list --results {shown}`.", ""]
    if any(u.kind in ("tune", "final") for u in todo if u not in done):  # the section is on the page
        lines += ["[Device time of what is left](#device-time-of-what-is-left) also reads the other cards' results "
                  f"folders beside the one `--results` names (those with a plan.json in `{shown.parent}`, e.g. "
                  "reports/h200-eval beside reports/h100-eval): an iteration not measured on this card yet is "
                  "estimated from what it cost there, so a page written from a copy of the folder without them "
                  "estimates otherwise.", ""]
    if notes.get("log"):
        lines += [notes["log"], ""]
    lines += _calls_section(results)
    missing = [u for u in todo if u not in done]
    if any(u.kind in ("tune", "final") for u in missing):
        lines += ["## Device time of what is left", "", *cost_estimate(units, plan, results), ""]
    lines += ["## Not run yet", ""]
    if missing:
        lines += [f"{len(missing)} units, in the order the script runs them (continue with `{resume}`):", ""]
        lines += [f"- `{u.id}`" + (f": failed ({_short(_error(units[u.id]))})" if u in failed else
                                   ": not run, the expert failed at this size" if expert_failed(units, u.bench, u.size)
                                   else "")
                  for u in missing[:40]]
        if len(missing) > 40:
            lines.append(f"- ... and {len(missing) - 40} more (`python3 benchmarks/gpu/evaluate.py list --results "
                         f"{shown}`)")
    else:
        lines.append("Nothing: the work list is complete.")
    sections = [line[3:] for line in lines[contents_at:] if line.startswith("## ")]
    lines[contents_at:contents_at] = ["Contents: " + " · ".join(f"[{t}](#{anchor(t)})" for t in sections), ""]
    text = "\n".join(lines) + "\n"
    out.write_text(text)
    return text


def _excluded(plan: dict) -> str:
    """The plan's exclusions as a sentence: which optimizers, why, and how a plan includes them."""
    from mapperopt.optimizer.compare import DEFAULT_OPTIMIZERS

    named = [o for o in DEFAULT_OPTIMIZERS if o in plan["optimizers"] or o in plan["excluded"]]
    return ("Outside the plan (plan.json `excluded`): no runs in the tables, no units in the work list, no share of "
            "the device time left: " + "; ".join(f"{o}, because {why}" for o, why in plan["excluded"].items())
            + ". A plan includes it only where named: `evaluate.py run --optimizers "
            f"{','.join(named)}` with a new results folder (`--results`), on a machine where "
            "MAPPEROPT_LLM_BASE_URL and MAPPEROPT_LLM_MODEL name an endpoint it reaches (`run` refuses such a plan "
            "where they are not set).")


# a reader's own machine measures into a folder of its own (the page's commands), not the project's
OWN = "reports/my-eval"
CALLS = "calls.jsonl"  # in the results folder: one line per call of benchmarks/gpu/evaluate.sh, which appends it


def _calls_section(results: Path) -> list[str]:
    """The calls of benchmarks/gpu/evaluate.sh recorded in `<results>/calls.jsonl`, as Markdown lines (none without
    the file): each call's start and end (UTC), STOP_AFTER, build seconds and failed builds, card, units finished
    and exit status, and their sums."""
    from datetime import datetime

    path = results / CALLS
    calls = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    if not calls:
        return [f"No `{CALLS}` in this results folder: benchmarks/gpu/evaluate.sh did not record its calls yet when "
                "they ran; the text above is their only record.", ""]

    def seconds(call: dict) -> float:
        return (datetime.fromisoformat(call["end"]) - datetime.fromisoformat(call["start"])).total_seconds()

    finished = sum(len(c["units_finished"]) for c in calls)
    rows = [f"| {c['start']} | {c['end']} | {seconds(c):.0f} | {c['stop_after_s']} | {c['build_s']} | "
            f"{', '.join(c['builds_failed']) or '-'} | {c['gpu']} | {len(c['units_finished'])} | {c['exit_status']} |"
            for c in calls]
    return [f"Calls of `benchmarks/gpu/evaluate.sh` as it records them, one line each, in `{CALLS}` of the results "
            f"folder (calls before it kept the file are in the text above): {len(calls)} call"
            f"{'s' * (len(calls) != 1)}, {sum(map(seconds, calls)):,.0f} s from the script's start to its packing "
            f"in all, {sum(c['build_s'] for c in calls):,} s of it building, "
            f"{finished} unit{'s' * (finished != 1)} finished (a machine's start and the transfers are outside these "
            "times).", "",
            "| started (UTC) | ended (UTC) | seconds | STOP_AFTER | building, s | builds failed | GPU | units "
            "finished | exit status |", "|---|---|---|---|---|---|---|---|---|", *rows, ""]


def anchor(heading: str) -> str:
    """The link target GitHub gives a Markdown heading: lower case, punctuation out but hyphens and underscores,
    spaces to hyphens ("Tuning: best throughput" -> "tuning-best-throughput")."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


MARKERS = ("o", "s", "^", "v", "D", "P")


def tuning_figure(units: dict, plan: dict, b: str, s: str):
    """compare.png's figure of the (b, s) tuning runs (normalised best-so-far per iteration), or None without runs;
    with Legion's default mapper dashed where it ran (over the curves' divisor: the comparison's first execution of
    the expert where every run has that one, else the reference unit's expert), "provisional" in the title until
    the final unit measured the runs, one marker shape per optimizer, and a curve identical to one drawn before it
    raised by a hundredth of the axis per copy (said in its legend), so that lines lying on one another all show."""
    from mapperopt.optimizer.compare import compare_figure
    from mapperopt.optimizer.store import clear_of_data

    optimizers, _ = usable_optimizers(plan)
    curves, firsts = {}, set()
    for opt in optimizers:
        runs = _runs(units, b, s, opt, plan["iters"], plan["seeds"])
        if runs:
            curves[opt] = [[x["best_throughput"] / r["reference_first"] for x in r["records"]] for r in runs]
            firsts |= {r["reference_first"] for r in runs}
    if not curves:
        return None
    fig = compare_figure({"curves": curves, "bench": f"{b} ({s})", "reference": "expert"})
    ax = fig.axes[0]
    mappers = units.get(f"base-{b}-{s}", {}).get("mappers", {})
    default, expert = _estimate(mappers.get("default", {})), _estimate(mappers.get("expert", {}))
    if default:
        divisor, over = ((min(firsts), "the runs' divisor") if len(firsts) == 1 else
                         (expert, "the reference unit's expert"))
        if divisor:
            ax.axhline(default / divisor, color="black", linestyle="--", linewidth=1,
                       label=f"Legion's default mapper ({default / divisor:.2f}, over {over})")
    elif mappers.get("default"):
        ax.plot([], [], " ", label="Legion's default mapper: failed at this size")
    drawn = [line for line in ax.get_lines() if " (mean of " in line.get_label()]
    seen: list[tuple[str, list]] = []
    step = 0.025 * max(ax.dataLim.y1, 1.0)
    for i, line in enumerate(drawn):
        line.set_marker(MARKERS[i % len(MARKERS)])
        line.set_markersize(5)
        y = list(line.get_ydata())
        same = [name for name, other in seen if other == y]
        seen.append((line.get_label().split(" (")[0], y))
        if same:
            line.set_ydata([v + len(same) * step for v in y])
            line.set_label(f"{line.get_label()}: the same curve as {same[0]}, drawn {len(same) * step:.2g} higher")
    provisional = any(row_scores(units, plan, b, s, o, plan["iters"])[2] for o in curves)
    ax.set_title(f"{b} ({s}): best so far / the expert's first execution in the comparison (band: min to max)"
                 + ("\nprovisional: single executions, not yet measured together with the expert" if provisional
                    else ""), fontsize="small")
    clear_of_data(ax)
    low, high = ax.get_ylim()
    ax.set_ylim(-0.04 * high, high)  # a curve at 0 shows above the axis, not on it
    fig.tight_layout()
    return fig


def _plot(units: dict, plan: dict, b: str, s: str, results: Path) -> Path | None:
    """`tuning_figure` as `<results>/<b>-<s>.png`, or None without runs."""
    fig = tuning_figure(units, plan, b, s)
    if fig is None:
        return None
    path = results / f"{b}-{s}.png"
    fig.savefig(path)
    return path


# ------------------------------------------------------------------------------------------------ command line


def _restored(results: Path, shown: Path) -> bool:
    """`restore_journals`, saying why where a journal's .xz cannot be read."""
    try:
        restore_journals(results)
    except OSError as exc:
        print(f"error: in {shown}: {exc}", file=sys.stderr)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("run", "report", "list", "compress"),
                        help="compress: the comparisons' journals to their .xz, as run does when it ends "
                        "(benchmarks/gpu/evaluate.sh, before it packs the folder)")
    parser.add_argument("--results", type=Path, default=Path(OWN), help=f"the results folder (default: {OWN}, a "
                        "folder of your own; the project's, reports/<card>-eval, are continued by evaluate.sh on "
                        "its lent machines)")
    parser.add_argument("--out", type=Path, help="the page (report; default: beside the results folder, named "
                        "after it: my-evaluation.md in reports/ for --results reports/my-eval; a folder: that name in "
                        "it; a relative path is from the current directory, as --results is)")
    parser.add_argument("--stop-after", type=float, default=480, help="seconds; no unit starts after (run)")
    parser.add_argument("--benchmarks", help="comma-separated (default: all)")
    parser.add_argument("--sizes", help=f"comma-separated, those a benchmark has (default: {','.join(SIZES)})")
    parser.add_argument("--gpus", type=int, help="GPUs (default: the size's; 0 drops the GPU limits)")
    parser.add_argument("--optimizers", help="comma-separated, the plan's (default: "
                        f"{','.join(default_plan()['optimizers'])}; those that need a language model, "
                        f"{','.join(default_plan()['excluded'])}, only where named, with an endpoint configured)")
    parser.add_argument("--iters", type=int)
    parser.add_argument("--seeds", type=int)
    parser.add_argument("--long-iters", type=int, help=f"{LONG_RUN[0]}'s long run (0: none)")
    parser.add_argument("--base-rounds", type=int)
    parser.add_argument("--final-rounds", type=int)
    parser.add_argument("--sources", type=Path, default=Path("benchmarks/gpu"), help="copybw.cu and dgemm.cu")
    parser.add_argument("--only", help="run only the units whose id matches this regular expression")
    parser.add_argument("--retry-failed", action="store_true")
    parser.add_argument("--check", action="store_true", help="run: only check that this machine can run the plan "
                        "(a GPU where it measures on one, the folder's card, a model endpoint where it needs one); "
                        "exit 2 with the reason where not; nothing is run or written")
    args = parser.parse_args(argv)
    results = args.results.resolve()
    split = (lambda v: v.split(",") if v else None)
    given = {"benchmarks": split(args.benchmarks), "sizes": split(args.sizes), "gpus": args.gpus,
             "optimizers": split(args.optimizers), "iters": args.iters, "seeds": args.seeds,
             "long_iters": args.long_iters, "base_rounds": args.base_rounds, "final_rounds": args.final_rounds}
    stored = results / "plan.json"
    # the plan a refusal of `run` is about: the folder's, or the one `run` would start in a folder without one
    whose = (f"the plan of {args.results}" if stored.exists() else f"the plan `run` would start in {args.results} ("
             + ("a folder without a plan.json yet" if results.exists() else "a folder that does not exist yet") + ")")
    if args.command == "run":
        # a run without options continues the stored plan; options given replace its values
        plan = load_plan(results) if stored.exists() else default_plan()
        plan = _named_is_planned({**plan, **{k: v for k, v in given.items() if v is not None}})
        if missing_endpoint(plan):
            print(f"error: {whose} includes {', '.join(missing_endpoint(plan))}, which proposes "
                  "with a language model, and no endpoint is configured here: nothing was run", file=sys.stderr)
            print("hint: set MAPPEROPT_LLM_BASE_URL and MAPPEROPT_LLM_MODEL (an endpoint this machine reaches); or "
                  "give --optimizers without it", file=sys.stderr)
            return 2
        recorded, card = measured_on(plan, load_units(results)), this_gpu()
        if card is None and plan["gpus"] != 0:  # every unit would fail (and be recorded so) on this machine
            print(f"error: no NVIDIA GPU on this machine (nvidia-smi is missing, or finds no driver or GPU), and "
                  f"{whose} measures on one: nothing was run and no unit was recorded",
                  file=sys.stderr)
            page = args.results if stored.exists() else "<a folder measured on a GPU, e.g. reports/h100-eval>"
            print("hint: run it on a machine with an NVIDIA GPU and its driver (`mapperopt doctor` checks this "
                  f"machine); to write the page from results measured already: python3 benchmarks/gpu/evaluate.py "
                  f"report --results {page}", file=sys.stderr)
            return 2
        if recorded and card != recorded:
            print(f"error: {args.results} holds units measured on {recorded}; this machine's GPU is "
                  f"{card or 'none'}: the timings of two cards are not mixed, nothing was run", file=sys.stderr)
            if card:
                print(f"hint: give this card's evaluation its own folder: --results "
                      f"{args.results.parent / (card_label(card).lower() + '-eval')}", file=sys.stderr)
            return 2
        if args.check:  # what `run` would refuse, said before anything is built (benchmarks/gpu/evaluate.sh)
            return 0
        plan["gpu"] = recorded or card
        if not _restored(results, args.results):
            return 2
        try:
            run(plan, results, args.sources.resolve(), args.stop_after, args.retry_failed, args.only)
        finally:  # also where a unit failed or was stopped at the limit: what the folder commits is the .xz
            compress_journals(results)
    elif not stored.exists():
        print(f"error: {args.results / 'plan.json'} not found: nothing was run with --results {args.results}",
              file=sys.stderr)
        found = sorted(p.parent.name for p in results.parent.glob("*/plan.json"))
        if found:
            print(f"hint: give --results: {', '.join(str(args.results.parent / f) for f in found)} "
                  f"{'is' if len(found) == 1 else 'are'} there", file=sys.stderr)
        return 2
    if args.command != "run" and not _restored(results, args.results):
        return 2
    if args.command == "compress":
        compress_journals(results)
    if args.command == "list":
        units = load_units(results)
        for u in work_list(load_plan(results)):
            saved = units.get(u.id)
            done = iterations_done(results, u) if not saved and u.kind == "tune" else None
            state = "started" if done is not None else "missing" if not saved else "ok" if is_done(u, saved) \
                else "stale" if saved["status"] == "ok" else saved["status"]
            print(f"{state:8} {u.id}" + (f" ({done} of {u.iters} iterations done)" if done is not None else ""))
    if args.command == "report":
        name = args.results.resolve().name.removesuffix("-eval") + "-evaluation.md"
        out = args.out / name if args.out and args.out.is_dir() else args.out or args.results.parent / name
        write_report(results, out.resolve(), shown=args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
