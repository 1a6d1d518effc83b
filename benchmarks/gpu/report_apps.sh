#!/usr/bin/env bash
# The GPU figures of reports/apps-h200.md, on a lent machine with two H200s (device kind nvidia-h200-x2), from the
# repository root:  source benchmarks/gpu/setup.sh; bash benchmarks/gpu/report_apps.sh
# Each benchmark runs at its `gpu` size (configs/*.yaml) with the default and the expert mapper on one and on two
# GPUs (the same problem: strong scaling), 3 repeats each, after a device-to-device copy-bandwidth measurement.
# Writes to $OUT (default ./gpu-out): copybw.txt, summary.jsonl (one result.json per run), runs.tar.gz.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
nvidia-smi -L | tee "$out/gpus.txt"
nvcc -O2 -arch=sm_90 benchmarks/gpu/copybw.cu -o /tmp/copybw && /tmp/copybw | tee "$out/copybw.txt"
mapperopt build --cuda on || exit 1
runs=/tmp/mapperopt-gpu-runs
rm -rf "$runs" && : > "$out/summary.jsonl"
for app in circuit stencil; do
  for gpus in 1 2; do
    for mapper in default expert; do
      mapperopt run "$app" --mapper "$mapper" --size gpu --gpus "$gpus" --repeats 3 \
        --out "$runs/$app-$mapper-${gpus}gpu" --json | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' \
        >> "$out/summary.jsonl"
      tail -n 1 "$out/summary.jsonl" | python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["app"], r["mapper"], r["settings"]["gpus"], r["status"], r["throughput"], r["reason"])'
    done
  done
done
tar -C "$runs" -czf "$out/runs.tar.gz" .
