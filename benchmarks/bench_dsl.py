"""Time parsing and checking a generated 500-line policy (target: under 100 ms on a 2-core machine).

    .venv/bin/python benchmarks/bench_dsl.py [--lines 500] [--repeats 20]

Prints the median over the repeats of parse + check against the Circuit description on a 1x4 machine (static
evaluation included), after one warm-up run that also builds the parser tables.
"""

from __future__ import annotations

import argparse
import statistics
import time
from importlib import resources

from mapperopt.descriptions import AppDescription, parse_machine_spec
from mapperopt.dsl import check, parse

TASKS = ("calculate_new_currents", "distribute_charge", "update_voltages", "init_piece", "init_pointers")
REGIONS = ("rp_private", "rp_shared", "rp_ghost", "rp_wires", "all_nodes")


def generate(lines: int) -> str:
    """A valid Circuit policy of about `lines` lines: mapping statements and multi-line helper functions."""
    out = ["Task * GPU,CPU;", "Region * * GPU FBMEM;", "Region * * CPU SYSMEM;", "Layout * * * SOA C_order;",
           "mcpu = Machine(CPU);", "mgpu = Machine(GPU);", "mall = mgpu.merge(0, 1);"]
    i = 0
    while len(out) < lines - 9:
        t, r = TASKS[i % len(TASKS)], REGIONS[i % len(REGIONS)]
        out += [
            f"# block {i}",
            f"def f{i}(Task task) {{",
            f"    lin = task.ipoint[0] * mgpu.volume / task.ispace[0] + {i} % 3;",
            f"    off = tuple(x * 2 + {i} for x in (task.ipoint[0], {i}, 1))[1:];",
            "    hi = lin / mgpu.size[1] % mgpu.size[0];",
            f"    return off[0] >= 0 && lin > -1 ? mgpu[hi, lin % mgpu.size[1]] : mall[{i} % mall.size[0]];",
            "}",
            f"g{i} = (mgpu.volume + {i}, mcpu.size[0] * 2, -{i});",
            f"Region * {r} GPU ZCMEM,FBMEM;",
            f"Layout {t} 0 FBMEM AOS F_order Align==128;",
        ]
        i += 1
    out += ["IndexTaskMap calculate_new_currents,distribute_charge,update_voltages f0;",
            "def on_cpu(Task task) { return mcpu[task.ipoint[0] % mcpu.size[0], 0]; }",
            "IndexTaskMap init_piece,init_pointers on_cpu;", "CollectMemory calculate_new_currents *;",
            "InstanceLimit distribute_charge GPU 2;", "SingleTaskMap check_circuit on_cpu;"]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    app = AppDescription.from_json((resources.files("mapperopt.configs") / "circuit.app.json").read_text())
    machine = parse_machine_spec("1x4")
    text = generate(args.lines)
    n_lines = text.count("\n")

    start = time.perf_counter()
    diags = check(parse(text, "bench.dsl"), app, machine)
    cold = time.perf_counter() - start
    errors = [d for d in diags if d.is_error]
    if errors:
        raise SystemExit(f"the generated program has errors: {errors[0]}")

    parse_s, check_s = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        program = parse(text, "bench.dsl")
        t1 = time.perf_counter()
        check(program, app, machine)
        t2 = time.perf_counter()
        parse_s.append(t1 - t0)
        check_s.append(t2 - t1)
    total = [p + c for p, c in zip(parse_s, check_s)]
    print(f"{n_lines} lines: parse {statistics.median(parse_s) * 1e3:.1f} ms + check "
          f"{statistics.median(check_s) * 1e3:.1f} ms = {statistics.median(total) * 1e3:.1f} ms "
          f"(median of {args.repeats}; first run incl. parser construction {cold * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
