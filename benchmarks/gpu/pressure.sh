#!/usr/bin/env bash
# The figures of reports/memory-pressure-h200.md, on a lent machine with one H200 (device kind nvidia-h200), from the
# repository root after `bash benchmarks/gpu/pack.sh` here:
#   source benchmarks/gpu/setup.sh; bash benchmarks/gpu/pressure.sh
# For circuit and stencil at size `tight` (working set larger than the framebuffer) on one GPU:
# 1. builds the benchmark with its CUDA variants;
# 2. `mapperopt tune APP --size tight --gpus 1 --iters ITERS` (offline guided search from Legion's default mapper in
#    the DSL, which fails for lack of framebuffer), both benchmarks at once (TUNE_ARGS are added: e.g. fewer
#    repeats to fit a time budget);
# 3. then, one benchmark at a time, Legion's default mapper, the all-zero-copy mapper (configs/APP-zerocopy.dsl) and
#    the tuned best.dsl measured together in ROUNDS interleaved rounds (benchmarks/pressure.py): ratio to zero-copy.
# Environment: APPS (default "circuit stencil"), ITERS (10), ROUNDS (3), TUNE_ARGS (none), SIZE (tight), GPUS (1),
# TUNE_TIMEOUT (seconds per tuning run, default none: a run stopped early keeps the best.dsl of its finished
# iterations, and its log says how many there were), TUNED (a folder holding best-APP.dsl from an earlier run of
# this script, e.g. its OUT: the tuning is skipped and those mappers are compared).
# Writes to $OUT (default ./gpu-out): gpus.txt, tune-APP.log, pressure.txt, pressure.json, runs.tar.gz.
set -uo pipefail
out=${OUT:-gpu-out}
apps=${APPS:-circuit stencil}
iters=${ITERS:-10}
rounds=${ROUNDS:-3}
size=${SIZE:-tight}
gpus=${GPUS:-1}
work=$(mktemp -d)
mkdir -p "$out"
nvidia-smi -L > "$out/gpus.txt" 2>&1
cuda=$([ "$gpus" -gt 0 ] && echo on || echo auto)
for app in $apps; do
  mapperopt build "$app" --cuda "$cuda" || exit 1
done
for app in $apps; do
  [ -n "${TUNED:-}" ] && break
  # shellcheck disable=SC2086  # TUNE_ARGS is a list of options
  timeout "${TUNE_TIMEOUT:-0}" mapperopt tune "$app" --size "$size" --gpus "$gpus" --iters "$iters" --baseline none \
    ${TUNE_ARGS:-} --runs-dir "$work/tune" > "$out/tune-$app.log" 2>&1 &
done
wait
: > "$out/pressure.txt"
for app in $apps; do
  if [ -n "${TUNED:-}" ]; then
    best=$TUNED/best-$app.dsl
  else
    tail -n 25 "$out/tune-$app.log"
    best=$(ls -d "$work/tune/$app"/tune-*/ | tail -n 1)best.dsl
  fi
  # -P: the repository root holds a folder named mapperopt that must not shadow the installed package
  python3 -P -m mapperopt.benchmarks.pressure "$app" --tuned "$best" --size "$size" --gpus "$gpus" --rounds "$rounds" \
    --out "$work/pressure" 2>&1 | tee -a "$out/pressure.txt"
  [ -n "${TUNED:-}" ] || cp "$best" "$out/best-$app.dsl"
done
cp "$work/pressure/pressure.json" "$out/" 2>/dev/null
tar -C "$work" --exclude='*.so' -czf "$out/runs.tar.gz" $(cd "$work" && ls -d tune pressure 2>/dev/null)
