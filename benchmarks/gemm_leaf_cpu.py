"""The CPU leaf GEMM (task_4 of the matrix multiplies) against the BLAS library's own DGEMM on the same tile.

    .venv/bin/python benchmarks/gemm_leaf_cpu.py [--tile 1024] [--iters 5] [--repeats 3]

The leaf rate comes from the `cannon` application with a 1 x 1 tile grid (`-g 1`): every timed product is one
task_4 on one CPU processor, so it counts Legion's launch, mapping and fence overheads too. The library rate calls
`scipy_cblas_dgemm` of the same OpenBLAS (the `scipy-openblas32` wheel) through ctypes, single-threaded like the
leaf, on row-major float64 matrices of the same size. Prints both in GFLOP/s (2 n³ per product), the median of the
repeats with their spread, and the ratio, then what makes them unreliable as `mapperopt run` says it (a noisy
measurement, too few repeats).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import subprocess
import textwrap
import time

import numpy as np

from mapperopt import toolchain
from mapperopt.benchmarks import build_app, protocol

ROW_MAJOR, NO_TRANS = 101, 111  # CBLAS enum values


def leaf_rate(n: int, iters: int) -> float:
    exe = build_app("cannon")
    cmd = [str(exe), "-n", str(n), "-g", "1", "-iters", str(iters), "-warmup", "1", "-check", "structured",
           "-ll:cpu", "1", "-ll:util", "1", "-ll:csize", str(max(256, 3 * 8 * n * n // 2**20 * 2 + 64)),
           "-logfile", "stderr"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=toolchain.runtime_env(), timeout=600)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("MAPPEROPT_RESULT ")), None)
    if done.returncode != 0 or line is None:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    result = json.loads(line[len("MAPPEROPT_RESULT "):])
    if not result["verified"]:
        raise SystemExit(f"the leaf's product did not verify: {result['check']}")
    return result["throughput"]


def library_rate(n: int, iters: int) -> float:
    blas = toolchain.find_blas()
    lib = ctypes.CDLL(str(blas.lib_dir / f"lib{blas.lib}.so"))
    lib.scipy_openblas_set_num_threads(1)
    rng = np.random.default_rng(0)
    b, c = rng.integers(-4, 5, (n, n)).astype(np.float64), rng.integers(-4, 5, (n, n)).astype(np.float64)
    a = np.zeros((n, n))
    dp = ctypes.POINTER(ctypes.c_double)
    args = [ctypes.c_int(ROW_MAJOR), ctypes.c_int(NO_TRANS), ctypes.c_int(NO_TRANS), ctypes.c_int(n), ctypes.c_int(n),
            ctypes.c_int(n), ctypes.c_double(1.0), b.ctypes.data_as(dp), ctypes.c_int(n), c.ctypes.data_as(dp),
            ctypes.c_int(n), ctypes.c_double(1.0), a.ctypes.data_as(dp), ctypes.c_int(n)]
    lib.scipy_cblas_dgemm(*args)  # warm-up, as the leaf's run has one
    start = time.perf_counter()
    for _ in range(iters):
        lib.scipy_cblas_dgemm(*args)
    return 2.0 * n**3 * iters / (time.perf_counter() - start) / 1e9


def noise(measured: dict[str, list[float]]) -> list[tuple[str, str]]:
    """What makes the figures of `measured` (name -> GFLOP/s of each repeat) unreliable, as (title, text), as the
    commands warn of it (`protocol.noise_warnings`: an interval wider than ±10 %, or too few repeats for one)."""
    return protocol.noise_warnings({name: (protocol.estimate(values), None) for name, values in measured.items()},
                                   "a higher --repeats", 0, larger="a larger --iters")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tile", type=int, default=1024, help="tile size n (n x n tiles)")
    parser.add_argument("--iters", type=int, default=5, help="products per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements of each")
    opts = parser.parse_args()
    leaf, library = [], []
    for _ in range(opts.repeats):  # interleaved, so that a change in the machine's load hits both
        library.append(library_rate(opts.tile, opts.iters))
        leaf.append(leaf_rate(opts.tile, opts.iters))

    def show(name: str, values: list[float]) -> float:
        med = statistics.median(values)
        print(f"{name:<34} {med:8.2f} GFLOP/s  (spread {(max(values) - min(values)) / med:5.1%}, "
              f"{', '.join(f'{v:.2f}' for v in values)})")
        return med

    print(f"tile {opts.tile} x {opts.tile}, float64, one core, {opts.iters} products x {opts.repeats} repeats")
    lib_med = show("OpenBLAS scipy_cblas_dgemm", library)
    leaf_med = show("task_4 (cannon -g 1, one CPU)", leaf)
    warnings = noise({"OpenBLAS scipy_cblas_dgemm": library, "task_4 (cannon -g 1, one CPU)": leaf})
    print(f"leaf / library: {leaf_med / lib_med:.1%}" + (" (from noisy figures: see below)" if warnings else ""))
    for title, text in warnings:
        print(textwrap.fill(f"{title}: {text}", 100, break_long_words=False, break_on_hyphens=False))


if __name__ == "__main__":
    main()
