#!/usr/bin/env bash
# The figures of reports/gemm-h200.md, on a lent machine with one H200 (device kind nvidia-h200), from the
# repository root after `bash benchmarks/gpu/pack.sh` here:
#   source benchmarks/gpu/setup.sh; bash benchmarks/gpu/gemm.sh
# 1. cuBLAS DGEMM alone (benchmarks/gpu/dgemm.cu) on the tile sizes and on the whole matrix of the gpu size;
# 2. the leaf: `cannon -g 1` (every timed product is one task_4 on one tile) at those tile sizes;
# 3. the GPU leaf's layout check: the expert mapper with F_order tiles at the ci size fails with DGEMM's message,
#    the expert itself verifies (full product);
# 4. cannon, summa and pumma at their gpu size (n = 16384, 4 x 4 tiles of 4096) with the expert mapper
#    (3 repeats) and Legion's default mapper (1 repeat), on one GPU; APPS="johnson solomonik cosma" does the same
#    for the 3-D algorithms (grids 2 x 2 x 2, tiles of 8192).
# LEAF=0 skips steps 2 and 3 (and builds only $APPS).
# Writes to $OUT (default ./gpu-out): dgemm.txt, leaf.txt (steps 2 and 3), summary.jsonl, runs.tar.gz.
set -uo pipefail
out=${OUT:-gpu-out}
work=$(mktemp -d)
mkdir -p "$out"
nvidia-smi -L
nvcc -O3 -arch=sm_90 benchmarks/gpu/dgemm.cu -lcublas -o "$work/dgemm" || exit 1
"$work/dgemm" 4096 8192 16384 | tee "$out/dgemm.txt"
leaf=${LEAF-1}
apps=${APPS-cannon summa pumma}
mapperopt build --cuda on $([ "$leaf" = 1 ] && echo cannon summa) $apps || exit 1
runs=$work/runs
# (from / : in the repository root, the source folder `mapperopt/` would shadow the installed package)
if [ "$leaf" = 1 ]; then
exe=$(cd / && python3 -c 'from mapperopt.benchmarks import build_app; print(build_app("cannon", cuda="on"))')
env=$(cd / && python3 -c 'from mapperopt import toolchain; print(toolchain.runtime_env()["LD_LIBRARY_PATH"])')
: > "$out/leaf.txt"
for tile in 4096 8192; do
  LD_LIBRARY_PATH=$env "$exe" -n $tile -g 1 -iters 40 -warmup 3 -check structured -ll:gpu 1 -ll:cpu 1 -ll:util 1 \
    -ll:fsize 8192 -ll:csize 4096 -logfile stderr | grep MAPPEROPT_RESULT | sed "s/^/tile $tile: /" |
    tee -a "$out/leaf.txt"
done
sed 's/SOA C_order/SOA F_order/' configs/gemm2d.dsl > "$work/f_order.dsl"
for mapper in "$work/f_order.dsl" expert; do
  mapperopt run summa --mapper "$mapper" --gpus 1 --out "$runs/summa-ci-$(basename "$mapper" .dsl)" --json \
    | python3 -c 'import json, sys; r = json.load(sys.stdin)
print("ci size, 1 GPU:", r["mapper"], r["status"], r["throughput"], r["reason"])' | tee -a "$out/leaf.txt"
done
fi
: > "$out/summary.jsonl"
for app in $apps; do  # APPS="" skips step 4
  for mapper in expert default; do
    repeats=$([ $mapper = expert ] && echo 3 || echo 1)
    mapperopt run "$app" --mapper "$mapper" --size gpu --gpus 1 --repeats "$repeats" --out "$runs/$app-$mapper" --json \
      | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' >> "$out/summary.jsonl"
    tail -n 1 "$out/summary.jsonl" | python3 -c 'import json, sys; r = json.load(sys.stdin)
print(r["app"], r["mapper"], r["status"], r["throughput"], r["unit"], "spread", r["spread"], r["reason"])'
  done
done
tar -C "$runs" -czf "$out/runs.tar.gz" .
