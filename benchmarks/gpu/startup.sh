#!/usr/bin/env bash
# What one execution costs besides its measured loop, on a lent H200 (reports/h200-evaluation.md's device-time
# estimate): the stencil on a tiny grid (1004 x 1004, 10 steps: nothing to compute or check) with the memory sizes
# of its `gpu` size and with small ones, each configuration twice (the first run of a fresh machine also grows its
# memory). From the repository root after `source benchmarks/gpu/setup.sh`:
#   bash benchmarks/gpu/startup.sh        # prints "<csize> <fsize> <zsize> MB: <wall s> <wall s>"
# Each wall time is the execution's own (`attempts[].wall_s` of result.json: process start to exit), Legion's
# start-up and shut-down included.
set -uo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapperopt build stencil --cuda on > /dev/null
for round in 1 2; do
  for mem in "16384 16384 1024" "1024 16384 1024" "16384 1024 1024" "1024 1024 64"; do
    read -r c f z <<< "$mem"
    out="$tmp/$round-$c-$f-$z"
    mapperopt run stencil --mapper default --size gpu --gpus 1 --min-time 0 --repeats 1 --max-repeats 1 \
      --out "$out" --json -- -nx 1004 -ny 1004 -tsteps 10 -ll:csize "$c" -ll:fsize "$f" -ll:zsize "$z" > /dev/null
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(sys.argv[2], "MB:", r["status"],
      *(a["wall_s"] for a in r["attempts"]))' "$out/result.json" "$c $f $z"
  done
done
