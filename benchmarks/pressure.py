"""Memory pressure: a tuned mapper against the all-zero-copy mapper, measured together
(reports/memory-pressure-h200.md).

    python -m mapperopt.benchmarks.pressure circuit --tuned runs/circuit/tune-.../best.dsl [--size tight] [--gpus 1]
        [--rounds 3] [--out DIR]

Runs Legion's default mapper, the all-zero-copy mapper (configs/<app>-zerocopy.dsl) and the tuned mapper in
interleaved rounds (`protocol.measure_together`: round 1 calibrates each mapper's iteration count, later rounds
reuse it), then prints one line per mapper: status, trimmed-mean throughput with its 90 % interval, and the ratio to
the all-zero-copy mapper. At the `tight` size on one GPU Legion's default mapper is expected to fail (its working set
exceeds the framebuffer); the zero-copy mapper always fits. Writes `pressure.json` to --out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from mapperopt.benchmarks.apps import _config_text
from mapperopt.benchmarks.protocol import measure_together


@click.command()
@click.argument("app", type=click.Choice(["circuit", "stencil"]))
@click.option("--tuned", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="The tuned mapper (a tune run's best.dsl).")
@click.option("--size", default="tight", show_default=True)
@click.option("--gpus", type=click.IntRange(0), default=1, show_default=True)
@click.option("--rounds", type=click.IntRange(1), default=3, show_default=True, help="Executions per mapper.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("runs/pressure"),
              show_default=True)
def main(app: str, tuned: Path, size: str, gpus: int, rounds: int, out: Path) -> None:
    zerocopy = _config_text(f"{app}-zerocopy.dsl", f"the all-zero-copy mapper of {app}")
    mappers = {"default": "default", "zerocopy": zerocopy, "tuned": tuned}
    measured = measure_together(app, mappers, rounds, out / app, size=size, gpus=gpus)
    base = measured["zerocopy"].estimate
    rows = []
    for name, m in measured.items():
        est = m.estimate
        ratio = est.value / base.value if est is not None and base is not None else None
        rows.append({"app": app, "size": size, "gpus": gpus, "mapper": name, "ok": est is not None,
                     "throughput": est.value if est else None, "interval": [est.low, est.high] if est else None,
                     "executions": len(est.values) if est else 0, "unit": m.unit, "vs_zerocopy": ratio,
                     "reason": m.reason})
        value = (f"{est.value:10.4g} {m.unit or ''} [{est.low:.4g}, {est.high:.4g}] n={len(est.values)}  "
                 f"{ratio:.2f}x zero-copy" if est is not None and ratio is not None else
                 f"failed: {m.reason}" if est is None else f"{est.value:10.4g} {m.unit or ''}")
        print(f"{app:8} {size:6} gpus={gpus} {name:9} {value}")
    out.mkdir(parents=True, exist_ok=True)
    with (out / "pressure.json").open("a") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    sys.exit(0 if base is not None and measured["tuned"].estimate is not None else 1)


if __name__ == "__main__":
    main()
