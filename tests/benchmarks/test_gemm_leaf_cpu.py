"""benchmarks/gemm_leaf_cpu.py: the leaf GEMM against the library's DGEMM, and the noise warning its ratio needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_ratio_of_a_single_repeat_is_not_stated_flatly():
    """`leaf / library: 87.6%` came with no caveat: the measurements' noise is warned of as the commands warn of it
    (one repeat: no spread estimate)."""
    done = subprocess.run([sys.executable, "benchmarks/gemm_leaf_cpu.py", "--tile", "96", "--iters", "1",
                           "--repeats", "1"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    out = " ".join(done.stdout.split())
    assert "leaf / library: " in out, out
    assert ("No spread estimate: OpenBLAS scipy_cblas_dgemm, task_4 (cannon -g 1, one CPU) measured by a single "
            "execution each, which gives no interval") in out, out
    assert "measure again with a higher --repeats" in out, out


def test_a_noisy_side_gets_the_noisy_measurement_warning():
    """The user's run: OpenBLAS 72.34, 42.23, 37.33 GFLOP/s (spread 83 %), the leaf 37.01 GFLOP/s with a spread of
    23 %: the ratio is marked and the noisy sides named, with the protocol's interval."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import gemm_leaf_cpu
    finally:
        sys.path.pop(0)
    said = gemm_leaf_cpu.noise({"OpenBLAS scipy_cblas_dgemm": [72.34, 42.23, 37.33],
                                "task_4 (cannon -g 1, one CPU)": [37.01, 45.4, 36.99]})
    [(title, text)] = said
    assert title == "Noisy measurement" and text.startswith("the 90 % interval of the trimmed mean is OpenBLAS "
                                                            "scipy_cblas_dgemm ±"), said
    assert gemm_leaf_cpu.noise({"a": [10.0, 10.1, 10.05], "b": [20.0, 20.2, 20.1]}) == []
