#!/usr/bin/env bash
# The evaluation of reports/h200-evaluation.md on a machine with one GPU, from the repository root: each card's units
# go to their own folder (reports/h200-eval, reports/h100-eval, ...) and report.
#   On a machine of your own (network for the install; nvcc and cuBLAS, `mapperopt doctor` says), into a folder of
#   your own (without RESULTS it continues the project's reports/<card>-eval, measured on its lent machines):
#     python3 -m venv .venv && .venv/bin/pip install '.[baselines]' && source .venv/bin/activate
#     RESULTS=reports/my-eval bash benchmarks/gpu/evaluate.sh  # again until `python3 benchmarks/gpu/evaluate.py
#                                                              # list --results reports/my-eval` shows every unit ok
#     python3 benchmarks/gpu/evaluate.py report --results reports/my-eval  # writes reports/my-evaluation.md
#   On the project's lent machines without network (device kind nvidia-h200 or nvidia-h100-x1), continuing the
#   committed folder of their card, after `bash benchmarks/gpu/pack.sh` here, with .carry/ copied beside the
#   working tree:
#     source benchmarks/gpu/setup.sh; bash benchmarks/gpu/evaluate.sh
# 1. builds every benchmark with its CUDA variants (in parallel; their logs, one after the other, in build.log; a
#    benchmark that fails to build is named, and the others go on);
# 2. runs the units of the work list in RESULTS (default reports/<card>-eval, the card's model from nvidia-smi's
#    name in lower case) that are not done yet
#    (benchmarks/gpu/evaluate.py run; EVAL_ARGS adds options, e.g. "--only base-"), until STOP_AFTER seconds
#    (default 500) have passed since this script started: a unit still running then is stopped and continues on the
#    next call;
# 3. appends one line to RESULTS/calls.jsonl (committed with the folder): this call's start and end (UTC, the end
#    before the packing), STOP_AFTER, seconds building and the benchmarks that failed to build, the GPU (nvidia-smi's
#    name), EVAL_ARGS, the units finished (saved, ok or failed) and evaluate.py's exit status;
# 4. writes $OUT (default ./gpu-out)/<card>-eval.tar.gz (named as the results folder): the results folder without
#    the executions' own folders (the unit files, the plan, the calls, the comparisons' journals and stored outcomes:
#    what the next call resumes from; the journals as their .xz only, `evaluate.py compress`), to unpack where the
#    results folder is missing or older (`tar -xzf h200-eval.tar.gz -C reports`) and commit (`evaluate.py list`,
#    `report` and `run` restore the plain journals from their .xz); and runs.tar.gz, every execution's files (logs;
#    not committed).
# Refuses up front, exit status 2, where evaluate.py run would (`evaluate.py run --check`): no NVIDIA GPU (no
# driver or no nvidia-smi), a results folder measured on another card, a plan that needs a model endpoint not set.
# Exits with evaluate.py's status.
set -uo pipefail
out=${OUT:-gpu-out}
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
card=$(echo "$gpu" | grep -o -E '\b[A-Z][0-9]{2,4}\b' | head -n 1 | tr '[:upper:]' '[:lower:]')
results=${RESULTS:-reports/${card:-gpu}-eval}
# before building anything: what `run` refuses (no GPU, a folder of another card, a model endpoint it needs), said
# with how to go on; nothing is built, run, recorded or packed
python3 benchmarks/gpu/evaluate.py run --results "$results" --check ${EVAL_ARGS:-} || exit $?
logs=$(mktemp -d)
since="$logs/since"  # the unit files newer than it are this call's
touch "$since"
mkdir -p "$out"
nvidia-smi -L
apps=() pids=()
for yaml in configs/*.yaml; do
  app=$(basename "$yaml" .yaml)
  mapperopt build --cuda on "$app" > "$logs/$app.log" 2>&1 &
  apps+=("$app") pids+=($!)
done
failed=()
for i in "${!apps[@]}"; do
  wait "${pids[$i]}" || failed+=("${apps[$i]}")
done
tail -n +1 "$logs"/*.log > "$out/build.log"
build_s=$SECONDS
echo "built in $build_s s"
for app in ${failed[@]+"${failed[@]}"}; do
  echo "build failed: $app (its log: $out/build.log, under ==> $logs/$app.log <==); its units build it again" \
    "when they run, the other benchmarks' units go on"
done
PYTHONUNBUFFERED=1 python3 benchmarks/gpu/evaluate.py run --results "$results" \
  --stop-after $(( ${STOP_AFTER:-500} - SECONDS )) ${EVAL_ARGS:-}
status=$?
if [ -d "$results" ]; then
  finished=$(find "$results/units" -maxdepth 1 -name '*.json' -newer "$since" 2>/dev/null | sort)
  CALL_START=$started CALL_STOP_AFTER=${STOP_AFTER:-500} CALL_BUILD_S=$build_s CALL_FAILED="${failed[*]-}" \
    CALL_GPU=$gpu CALL_FINISHED=$finished CALL_STATUS=$status python3 -c '
import json, os, sys, time
from pathlib import Path
e = os.environ
call = {"start": e["CALL_START"], "end": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "stop_after_s": int(e["CALL_STOP_AFTER"]), "build_s": int(e["CALL_BUILD_S"]),
        "builds_failed": e["CALL_FAILED"].split(), "gpu": e["CALL_GPU"], "eval_args": e.get("EVAL_ARGS", ""),
        "units_finished": [Path(p).stem for p in e["CALL_FINISHED"].split()], "exit_status": int(e["CALL_STATUS"])}
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(call) + "\n")' "$results/calls.jsonl"
fi
parent=$(dirname "$results") name=$(basename "$results")
# the stored outcomes name this machine's paths: relative to the results folder and ~, as committed
grep -rlZ -e "$PWD/$results/" -e "$HOME/" "$results/work" --include="*.json" --include="*.jsonl" 2>/dev/null |
  xargs -0 -r sed -i -e "s#$PWD/$results/##g" -e "s#$HOME/#~/#g"
# the comparisons' journals (state.jsonl, OpenTuner's *.db and *.db-journal) travel and are committed as their .xz
# (run compressed them when it ended; again here, after the paths in them were made relative): the plain ones stay out
[ ! -f "$results/plan.json" ] || python3 benchmarks/gpu/evaluate.py compress --results "$results" || status=$?
tar -C "$parent" -czf "$out/$name.tar.gz" --exclude="$name/work/*/base-*" --exclude="$name/work/*/cpu-*" \
  --exclude="$name/work/*/compare-*/*-*/iter-*" --exclude="$name/work/*/compare-*/final-*" \
  --exclude="$name/work/*/compare-*/baseline-*" --exclude="*/tune.lock" --exclude="*/owner.json" \
  --exclude="$name/work/*/state.jsonl" --exclude="$name/work/*.db" --exclude="$name/work/*.db-journal" "$name"
tar -C "$parent" -czf "$out/runs.tar.gz" "$name/work"
python3 benchmarks/gpu/evaluate.py list --results "$results" | awk '{print $1}' | sort | uniq -c
exit $status
