#!/usr/bin/env bash
# The CPU comparison of reports/compare-cpu.md on a lent GPU machine's idle cores (the GPU hidden from these runs),
# from the repository root after `bash benchmarks/gpu/pack.sh` here:
#   source benchmarks/gpu/setup.sh; bash benchmarks/gpu/compare-cpu.sh
# Runs `mapperopt compare` of Circuit and Stencil (size small, 10 iterations x 5 repeats of guided, OpenTuner, Optuna
# and random search; 3 executions per evaluation, 5 final rounds) side by side: each benchmark on its own host cores
# (SPECS, default "circuit:0-5 stencil:6-11"), as jobs of 2 cores (1 CPU processor + 1 utility processor) pinned to
# them. Resumes the comparisons in RESULTS (default .carry/compare-cpu, carried from the previous call) and
# interrupts them STOP_AFTER seconds (default 500) after this script started: finished iterations and final
# measurement groups are kept; the next call continues. Writes to $OUT (default ./gpu-out):
#   compare-cpu.tar.gz   RESULTS without the executions' own folders: what the next call resumes from and the
#                        report is built from (here: `tar -xzf compare-cpu.tar.gz -C .carry`)
#   compare-logs.tar.gz  every execution's files (not committed)
#   <bench>.log          compare's output
set -uo pipefail
out=${OUT:-gpu-out}
results=${RESULTS:-.carry/compare-cpu}
stop=${STOP_AFTER:-500}
mkdir -p "$out" "$results"
export CUDA_VISIBLE_DEVICES=  # CPU only: these runs see no GPU
echo "cores: $(nproc); $(uptime)"
for spec in ${SPECS:-circuit:0-5 stencil:6-11}; do
  bench=${spec%%:*} cores=${spec#*:}
  jobs=$(( $(taskset -c "$cores" nproc) / 2 ))
  (PYTHONUNBUFFERED=1 timeout -s INT $(( stop - SECONDS )) taskset -c "$cores" mapperopt compare "$bench" \
     --size small --iters 10 --runs 5 --optimizers guided,opentuner,optuna,random --repeats "${EXECUTIONS:-3}" \
     --max-repeats "${EXECUTIONS:-3}" --final-rounds 5 --cpus 1 --jobs "$jobs" --cpus-per-job 2 --runs-dir "$results" \
     > "$out/$bench.log" 2>&1
   echo "$bench (cores $cores, $jobs jobs): exit $? at $SECONDS s") &
done
wait
echo "$(uptime)"
parent=$(dirname "$results") name=$(basename "$results")
tar -C "$parent" -czf "$out/compare-cpu.tar.gz" --exclude="*/iter-*" --exclude="*/final-*" --exclude="*/baseline-*" \
  --exclude="*/tune.lock" --exclude="*/owner.json" "$name"
tar -C "$parent" -czf "$out/compare-logs.tar.gz" "$name"
ls -l "$out"
