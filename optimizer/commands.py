"""`mapperopt tune`: tune a mapper for a benchmark, showing progress, and keep the best."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import click

from mapperopt.benchmarks.commands import size_options
from mapperopt.errors import MapperoptError
from mapperopt.optimizer.base import OPTIMIZERS, IterationRecord, make_optimizer
from mapperopt.optimizer.llm import LLMConfig
from mapperopt.optimizer.loop import BenchmarkEvaluator, measure_baselines, tune as run_loop
from mapperopt.optimizer.store import TuneStore

CONFIRM_REPEATS = 3  # interfaces.md §7: the final best is re-measured with at least 3 repeats
BASELINES = {"expert": ["expert"], "default": ["default"], "both": ["expert", "default"], "none": []}


def _start_program(start: str, space: Any, seed: int) -> tuple[str, dict | None]:
    """(DSL text, point or None) of the start program: the default mapper's behaviour, a random point of the
    space, or a DSL file."""
    if start == "default":
        point = space.default_point()
    elif start == "random":
        point = space.random_point(random.Random(f"start:{seed}"))
    else:
        path = Path(start)
        if not path.is_file():
            raise MapperoptError(f"start program {path} not found", hint="use --start default, random or a DSL file")
        return path.read_text(), None
    return space.render(point), point


def _new_run(bench: str, opts: dict) -> tuple[TuneStore, dict]:
    """Describes the application and the machine, builds the start program, measures the baselines and creates
    the tuning folder. Returns the store and the settings it was created with."""
    from mapperopt.benchmarks import describe_app, load_config
    from mapperopt.commands import probe_machine
    from mapperopt.optimizer.space import SearchSpace

    size = load_config(bench).size(opts["size"])
    cpus = size.cpus if opts["cpus"] is None else opts["cpus"]
    gpus = size.gpus if opts["gpus"] is None else opts["gpus"]
    app = describe_app(bench, opts["size"])
    machine = probe_machine(cpus, gpus).to_json()
    space = SearchSpace(app, machine)
    start_dsl, start_point = _start_program(opts["start"], space, opts["seed"])
    settings = {
        "size": opts["size"], "cpus": cpus, "gpus": gpus, "repeats": opts["repeats"], "timeout_s": opts["timeout_s"],
        "optimizer": opts["optimizer"], "seed": opts["seed"], "iters": opts["iters"], "start": opts["start"],
        "start_dsl": start_dsl, "start_point": start_point, "feedback_level": opts["feedback_level"],
        "llm": opts["llm"].public() if opts["optimizer"] == "trace" else None,
        "app_args": list(opts["app_args"]), "app_description": app, "machine": machine,
    }
    store = TuneStore.create(opts["runs_dir"], bench, settings)
    evaluator = _evaluator(bench, store.settings)
    if BASELINES[opts["baseline"]]:
        baselines, failed = measure_baselines(bench, BASELINES[opts["baseline"]], evaluator, store.root)
        store.settings.update(baselines=baselines, baseline_failures=failed)
        store.write_settings()
    return store, store.settings


def _evaluator(bench: str, s: dict) -> BenchmarkEvaluator:
    return BenchmarkEvaluator(bench, size=s["size"], cpus=s["cpus"], gpus=s["gpus"], repeats=s["repeats"],
                              timeout_s=s["timeout_s"], baselines=s.get("baselines") or {},
                              level=s["feedback_level"], extra_args=tuple(s.get("app_args", ())))


def _row(r: IterationRecord) -> tuple[str, ...]:
    from rich.markup import escape

    status = "[green]ok[/]" if r.ok else f"[red]failed[/] ({r.stage})"
    this = f"{r.throughput:.4g}" if r.throughput is not None else "-"
    tokens = (r.llm or {}).get("total_tokens")
    return (str(r.iter), status + (" [dim]cached[/]" if r.cached else ""), this, f"{r.best_throughput:.4g}",
            escape(r.category), escape(r.note or "") + (f" [dim]({tokens} tokens)[/]" if tokens else ""))


@click.command()
@click.argument("bench")
@click.option("--iters", type=click.IntRange(min=1), default=None,
              help="Total iterations (each proposes and evaluates one mapper) [default: 10; on --resume, the run's].")
@click.option("--optimizer", type=click.Choice(sorted(OPTIMIZERS)), default=None,
              help="`trace`: OptoPrime with a language model (needs an endpoint); `guided`: rule-based search, no "
                   "model; `opentuner`, `optuna`, `random`: baselines (docs/tuning.md) [default: trace when an "
                   "endpoint is configured, else guided].")
@size_options
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True,
              help="Measured executions per mapper; the optimizer sees the median.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds per execution [default: the size's].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice of the search.")
@click.option("--start", default="default", show_default=True,
              help="Start program: `default` (Legion's default mapper in the DSL), `random` (a random point of the "
                   "search space) or a DSL file.")
@click.option("--baseline", type=click.Choice(sorted(BASELINES)), default="expert", show_default=True,
              help="Reference mappers measured first; AutoGuide compares every mapper with them.")
@click.option("--feedback-level", type=click.Choice(["raw", "explain", "suggest"]), default="suggest",
              show_default=True, help="How much of AutoGuide's feedback the optimizer gets (the paper's ablation).")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Continue the tuning run in this folder (runs/BENCH/tune-...); finished iterations are not rerun.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"),
              show_default=True, help="Where tuning folders are created.")
@click.option("--llm-base-url", default=None, help="OpenAI-compatible endpoint [env MAPPEROPT_LLM_BASE_URL].")
@click.option("--llm-model", default=None, help="Model name [env MAPPEROPT_LLM_MODEL; default gpt-4o].")
@click.option("--llm-api-key", default=None, help="API key [env MAPPEROPT_LLM_API_KEY]; never stored.")
@click.option("--llm-timeout", type=float, default=None,
              help="Seconds per model request [env MAPPEROPT_LLM_TIMEOUT; 120].")
@click.option("--llm-retries", type=int, default=None, help="Retries per model request [env MAPPEROPT_LLM_RETRIES; 2].")
@click.argument("app_args", nargs=-1, type=click.UNPROCESSED)
def tune(bench, iters, optimizer, size, cpus, gpus, repeats, timeout_s, seed, start, baseline, feedback_level,
         resume_dir, runs_dir, llm_base_url, llm_model, llm_api_key, llm_timeout, llm_retries, app_args):
    """Tune a mapper for BENCH: propose a DSL mapper, compile and run it, feed AutoGuide's feedback to the
    optimizer, repeat; keep the best.

    Writes runs/BENCH/tune-<time>-<hex>/ with settings.json, state.jsonl (one line per iteration), iter-NNN/ run
    folders, best.dsl, history.csv and progress.png. Interrupt at any time; --resume DIR continues.
    APP_ARGS (after `--`) are passed to the application; a flag the size already sets takes the new value.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=True)  # long lines (paths, notes) stay whole when piped
    llm = LLMConfig.from_env(base_url=llm_base_url, model=llm_model, api_key=llm_api_key, timeout_s=llm_timeout,
                             max_retries=llm_retries)
    if resume_dir is not None:
        store = TuneStore.open(resume_dir)
        settings = store.settings
        if settings.get("app") != bench:
            raise MapperoptError(f"{resume_dir} tunes {settings.get('app')}, not {bench}")
        iters = iters or settings["iters"]
        if settings["optimizer"] == "trace" and not llm.configured:
            raise MapperoptError(f"{resume_dir} was tuned with the trace optimizer, which needs a language-model "
                                 "endpoint", hint="set MAPPEROPT_LLM_BASE_URL and MAPPEROPT_LLM_MODEL again")
        console.print(f"Resuming {store.root}: {len(store.records)} of {iters} iterations done; the run's own "
                      "settings apply.")
    else:
        optimizer = optimizer or ("trace" if llm.configured else "guided")
        if optimizer == "trace" and not llm.configured:
            raise MapperoptError("the trace optimizer needs a language-model endpoint",
                                 hint="set MAPPEROPT_LLM_BASE_URL and MAPPEROPT_LLM_MODEL (or --llm-base-url, "
                                      "--llm-model), or use --optimizer guided")
        opts = {"size": size, "cpus": cpus, "gpus": gpus, "repeats": repeats, "timeout_s": timeout_s, "seed": seed,
                "start": start, "baseline": baseline, "feedback_level": feedback_level, "runs_dir": runs_dir,
                "optimizer": optimizer, "iters": iters or 10, "llm": llm, "app_args": app_args}
        with console.status(f"Describing {bench} and the machine, measuring baselines..."):
            store, settings = _new_run(bench, opts)
        iters = settings["iters"]
    from mapperopt.optimizer.space import SearchSpace

    space = SearchSpace(settings["app_description"], settings["machine"])
    opt = make_optimizer(settings["optimizer"], space=space, start=settings["start_dsl"], seed=settings["seed"],
                         start_point=settings.get("start_point"), llm=llm, workdir=store.root)
    console.print(f"Tuning [bold]{bench}[/] (size {settings['size']}, {settings['cpus']} CPU, {settings['gpus']} "
                  f"GPU) for {iters} iterations with {opt.describe()}.")
    if settings.get("baselines"):
        console.print("Baselines: " + ", ".join(f"{k} {v:.4g}" for k, v in settings["baselines"].items()))
    for name, reason in (settings.get("baseline_failures") or {}).items():
        console.print(f"[yellow]No {name} baseline[/] ({escape(reason)}).")
    console.print(f"Folder: {store.root}")
    unit = next((r.unit for r in store.records if r.unit), "")
    for r in store.records:
        console.print("  " + "  ".join(_row(r)) + "  [dim](from the journal)[/]")
    status = console.status("")

    def on_start(i: int) -> None:
        status.update(f"iteration {i}/{iters}: proposing and evaluating a mapper...")
        status.start()

    def on_record(r: IterationRecord) -> None:
        status.stop()
        console.print(f"  iter {r.iter}/{iters}  " + "  ".join(_row(r)[1:]))

    try:
        run_loop(store, opt, _evaluator(bench, settings), iters, on_start=on_start, on_record=on_record)
    except KeyboardInterrupt:
        status.stop()
        console.print(f"[yellow]Interrupted after {len(store.records)} iterations.[/] Continue with: "
                      f"mapperopt tune {bench} --resume {store.root} --iters {iters}")
        raise click.exceptions.Abort() from None
    finally:
        status.stop()
    unit = next((r.unit for r in store.records if r.unit), unit)
    table = Table(title=f"{bench}: {len(store.records)} iterations ({settings['optimizer']})")
    for col in ("iter", "status", f"throughput ({unit})", f"best ({unit})", "feedback category"):
        table.add_column(col)
    for r in store.records:
        table.add_row(*_row(r)[:5])  # how each program was proposed is printed in full above
    console.print(table)
    tokens = sum((r.llm or {}).get("total_tokens", 0) for r in store.records)
    if tokens:
        console.print(f"Language-model tokens: {tokens} in total.")
    best = store.best()
    if best is None:
        raise MapperoptError(f"no iteration produced a working mapper; see {store.root / 'history.csv'}",
                             hint="look at the feedback in iter-NNN/feedback.txt")
    first = store.records[0]
    start_text = f"{first.throughput:.4g} {unit}" if first.ok else f"failed ({first.stage})"
    gain = f" ({best.throughput / first.throughput:.2f}x)" if first.ok and first.throughput else ""
    console.print(f"Start (iteration 1): {start_text}; best (iteration {best.iter}): "
                  f"[bold green]{best.throughput:.4g} {unit}[/]{gain}.")
    if first.ok and best.iter != first.iter:
        with console.status(f"Re-measuring the start and the best mapper ({CONFIRM_REPEATS} repeats each)..."):
            start_run, best_run = (_remeasure(bench, settings, rec.dsl, store.root / f"confirm-{name}")
                                   for name, rec in (("start", first), ("best", best)))
        console.print(_confirmation(start_run, best_run, unit))
    console.print(f"Best mapper ({store.root / 'best.dsl'}):")
    console.print(best.dsl.rstrip("\n"), markup=False, soft_wrap=True)
    console.print(f"History: {store.root / 'history.csv'}; plot: {store.root / 'progress.png'}")


def _remeasure(bench: str, settings: dict, dsl: str, out_dir: Path):
    """`dsl` run again with `CONFIRM_REPEATS` repeats under the tuning run's settings (a RunResult)."""
    from mapperopt.benchmarks import run_benchmark

    return run_benchmark(bench, dsl, size=settings["size"], cpus=settings["cpus"], gpus=settings["gpus"],
                         repeats=CONFIRM_REPEATS, out_dir=out_dir, timeout_s=settings.get("timeout_s"),
                         extra_args=settings.get("app_args") or ())


def _confirmation(start, best, unit: str) -> str:
    """One line saying whether the best mapper's gain over the start holds up beyond the measurement spread."""
    if not (start.ok and best.ok):
        failed = start if not start.ok else best
        return f"[yellow]Re-measuring failed[/] ({failed.reason}); see {failed.run_dir}."
    ratio = best.throughput / start.throughput
    spread = max(start.spread or 0.0, best.spread or 0.0)
    line = (f"Re-measured ({CONFIRM_REPEATS} repeats, median): start {start.throughput:.4g} {unit}, best "
            f"{best.throughput:.4g} {unit}: {ratio:.2f}x")
    if abs(ratio - 1) <= spread:
        return line + f"[yellow], within the spread of the repeats ({spread:.0%}): not a significant difference.[/]"
    return line + f", beyond the spread of the repeats ({spread:.0%})."

