#!/usr/bin/env bash
# The Pennant figures of reports/pennant-h200.md, on a lent machine with one H200 (device kind nvidia-h200), from the
# repository root after `bash benchmarks/gpu/pack.sh` here:
#   source benchmarks/gpu/setup.sh; bash benchmarks/gpu/pennant.sh
# 1. builds pennant with its CUDA variants;
# 2. the gpu size (leblanc_long4x30, 7.4 M zones, one piece) on one GPU with Legion's default mapper and with the
#    expert mapper; every run verifies (total energy conserved to 1e-6);
# 3. the same deck on CPUs only, for scale: CPUS CPU processors (default 12), one piece each, 3 timed cycles.
# TIMEOUT (seconds, default: the size's) limits each execution.
# Writes to $OUT (default ./gpu-out), as it goes: gpus.txt, summary.jsonl (one result.json per run), runs.tar.gz.
set -uo pipefail
out=${OUT:-gpu-out}
cpus=${CPUS:-12}
runs=$(mktemp -d)
mkdir -p "$out"
nvidia-smi -L | tee "$out/gpus.txt"
mapperopt build pennant --cuda on || exit 1
: > "$out/summary.jsonl"
record() {  # run folder name, then `mapperopt run` arguments
  local name=$1
  shift
  mapperopt run pennant ${TIMEOUT:+--timeout "$TIMEOUT"} --out "$runs/$name" --json "$@" \
    | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' >> "$out/summary.jsonl"
  tail -n 1 "$out/summary.jsonl" | python3 -c 'import json, sys; r = json.load(sys.stdin); s = r["settings"]
print(r["mapper"], "gpus", s["gpus"], "cpus", s["cpus"], r["status"], r["throughput"], r["unit"], "time_s",
      r["time_s"], "cycles", s.get("iterations"), r["reason"])'
  tar -C "$runs" -czf "$out/runs.tar.gz" .
}
for mapper in expert default; do
  record "gpu-$mapper" --mapper "$mapper" --size gpu --gpus 1
done
record cpu-default --mapper default --size gpu --gpus 0 --cpus "$cpus" --min-time 0 -- -npieces "$cpus" -numpcx 1 \
  -cstop 5
