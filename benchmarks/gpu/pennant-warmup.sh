#!/usr/bin/env bash
# Whether the Pennant `gpu` mapper that the H200 evaluation measured at 4.1x the expert mapper (guided search, seed 1,
# iteration 8 of the comparison compare-e786742623 in reports/h200-eval) runs its cycles faster, or only moves a
# one-time cost out of the timed window. Iteration 8 differs from iteration 6 (2.0e8 zone-cycles/s) by one statement,
# `Region init_step_points rp_all_shared_p GPU ZCMEM,FBMEM;`, on a region that is empty at one piece; yet at 30 cycles
# (2 untimed) iteration 6 timed 1.01 s and iteration 8 0.29 s, while their whole executions differed by 0.2 s.
# Measures Legion's default mapper, the expert mapper and both iterations (their DSL read from the committed
# journal), one execution each, interleaved for ROUNDS rounds (default 2), at three cycle settings:
#   -cstop 30               as the comparison measured (28 timed cycles after 2 untimed)
#   -cstop 155              as iteration 8's calibrated measurement (153 timed)
#   -cstop 40 -warmup 12    28 timed cycles after 12 untimed
# Each line also counts, in the measured execution's stderr.txt, Legion's warnings by their first words and the
# mapper's notes and warnings by code (a trace Legion fails to memoize would show there).
# If the timed cycles cost the same per cycle once the first cycles are untimed, the difference at 30 cycles is a
# one-time cost that the faster mapper pays before the timed window. On a lent machine with one GPU (device kind
# nvidia-h200), from the repository root after `bash benchmarks/gpu/pack.sh` here:
#   source benchmarks/gpu/setup.sh; bash benchmarks/gpu/pennant-warmup.sh
# Writes $OUT (default ./gpu-out)/pennant-warmup.txt (one line per execution, then per mapper and setting the
# medians; on an H100 on 2026-12-07: reports/h100-eval/pennant-warmup-2026-12-07.txt) and runs.tar.gz (the
# executions' folders). REPORT_FROM=runs.tar.gz writes the text again from such a
# file, measuring nothing.
set -uo pipefail
out=${OUT:-gpu-out}
rounds=${ROUNDS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/runs"
report=$out/pennant-warmup.txt
write_report() {  # one line per execution folder of $work/runs (<round>-<setting>-<mapper>), then the medians
  python3 - "$work/runs" > "$report" <<'EOF'
import collections, json, re, statistics, sys
from pathlib import Path
rows = collections.defaultdict(list)
for folder in sorted(Path(sys.argv[1]).iterdir(), key=lambda f: f.name.split("-", 2)):
    round_, _, mapper = folder.name.split("-", 2)
    try:
        r = json.loads((folder / "result.json").read_text())
    except (OSError, ValueError) as e:  # an execution that left no result: say so, go on
        print(f"round {round_} | {mapper:7} | no result ({e})")
        continue
    args = r["settings"]["extra_args"]
    setting = " ".join(f"{f} {args[args.index(f) + 1]}" for f in ("-cstop", "-warmup") if f in args)
    stderr = folder / "stderr.txt"
    text = stderr.read_text() if stderr.is_file() else ""
    found = collections.Counter(" ".join(re.sub(r"\d+", "N", m[1]).split()[:6])  # the same warning of other tasks
                              for m in re.finditer(r"LEGION WARNING: (.*)", text))
    found.update(m[1] for m in re.finditer(r"\[mapperopt\] (\w+ R\d+)", text))
    warnings = "; ".join(f"{w} x{n}" for w, n in sorted(found.items())) or "none"
    a = r["attempts"][-1]
    res = a.get("result") or {}
    if r["status"] == "ok" and res.get("iterations"):
        ms = 1e3 * res["time_s"] / res["iterations"]
        rows[mapper, setting].append((ms, a["wall_s"]))
        print(f"round {round_} | {mapper:7} | {setting:20} | ok | timed {res['time_s']} s, {res['iterations']} cycles, "
              f"{ms:.2f} ms/cycle | whole execution {a['wall_s']} s | verified {res.get('verified')} | {warnings}")
    else:
        print(f"round {round_} | {mapper:7} | {setting:20} | {r['status']} | {r.get('reason')} | {warnings}")
print("medians: mapper | setting | ms per timed cycle | whole execution s")
for (mapper, setting), v in sorted(rows.items()):
    print(f"{mapper:7} | {setting:20} | {statistics.median(x for x, _ in v):8.2f} | "
          f"{statistics.median(w for _, w in v):6.2f} | n={len(v)}")
EOF
}
if [ -n "${REPORT_FROM:-}" ]; then
  tar -xzf "$REPORT_FROM" -C "$work" && write_report && cat "$report"
  exit
fi
journal=$(find reports/h200-eval -path '*/pennant/compare-e786742623/guided-2/state.jsonl.xz')  # its seed-1 run
python3 - "$journal" "$work" <<'EOF' || exit 1
import json, lzma, sys
with lzma.open(sys.argv[1], "rt") as f:
    dsl = {r["iter"]: r["dsl"] for r in map(json.loads, f) if r.get("iter") in (6, 8)}
for i in (6, 8):
    open(f"{sys.argv[2]}/iter-{i}.dsl", "w").write(dsl[i])
EOF
mapperopt build pennant --cuda on > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
settings=("-cstop 30" "-cstop 155" "-cstop 40 -warmup 12")
for round in $(seq "$rounds"); do
  for s in "${!settings[@]}"; do
    for mapper in default expert iter-6 iter-8; do
      m=$mapper
      [ -f "$work/$mapper.dsl" ] && m=$work/$mapper.dsl
      # shellcheck disable=SC2086  # the setting is several flags
      mapperopt run pennant --size gpu --gpus 1 --once --min-time 0 --mapper "$m" --out "$work/runs/$round-$s-$mapper" \
        --json -- ${settings[$s]} > /dev/null 2> "$work/run.err"
      write_report
      grep "^round $round | $mapper " "$report" | tail -n 1
    done
  done
  tar -C "$work" -czf "$out/runs.tar.gz" runs
done
tail -n 13 "$report"
