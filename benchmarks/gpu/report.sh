#!/usr/bin/env bash
# The GPU figures of reports/gpu-h200.md, on a lent machine with two H200s (device kind nvidia-h200-x2), from the
# repository root after `bash benchmarks/gpu/pack.sh` here:
#   source benchmarks/gpu/setup.sh; bash benchmarks/gpu/report.sh
# 1. device-to-device copy bandwidth (the ceiling for the stencil's bandwidth);
# 2. `mapperopt tune circuit` at the gpu size on one GPU with the offline default, measuring the default and expert
#    mappers first (--baseline both);
# 3. both benchmarks at their gpu size with the default and expert mappers on one and on two GPUs (the same problem:
#    strong scaling); circuit on one GPU is covered by step 2's baselines.
# Writes to $OUT (default ./gpu-out), as it goes: gpus.txt, copybw.txt, tune.tar.gz, summary.jsonl, runs.tar.gz.
set -uo pipefail
out=${OUT:-gpu-out}
iters=${ITERS:-4}
work=$(mktemp -d)
mkdir -p "$out"
nvidia-smi -L | tee "$out/gpus.txt"
nvcc -O2 -arch=sm_90 benchmarks/gpu/copybw.cu -o "$work/copybw" && "$work/copybw" | tee "$out/copybw.txt"
mapperopt build --cuda on || exit 1
tune=$work/tune
mapperopt tune circuit --size gpu --gpus 1 --iters "$iters" --baseline both --runs-dir "$tune"
tar -C "$tune" -czf "$out/tune.tar.gz" .
runs=$work/runs
: > "$out/summary.jsonl"
for job in stencil:1 circuit:2 stencil:2; do
  app=${job%:*} gpus=${job#*:}
  for mapper in default expert; do
    mapperopt run "$app" --mapper "$mapper" --size gpu --gpus "$gpus" --out "$runs/$app-$mapper-${gpus}gpu" --json \
      | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' >> "$out/summary.jsonl"
    tail -n 1 "$out/summary.jsonl" | python3 -c 'import json, sys; r = json.load(sys.stdin)
print(r["app"], r["mapper"], r["settings"]["gpus"], r["status"], r["throughput"], r["unit"], r["reason"])'
    tar -C "$runs" -czf "$out/runs.tar.gz" .
  done
done
