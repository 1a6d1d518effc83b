#!/usr/bin/env bash
# The evaluation of reports/h200-evaluation.md on a lent machine with one GPU (device kind nvidia-h200, or
# nvidia-h100-x1: each card's units go to their own folder, reports/h200-eval or reports/h100-eval, and report), from
# the repository root after `bash benchmarks/gpu/pack.sh` here:
#   source benchmarks/gpu/setup.sh; bash benchmarks/gpu/evaluate.sh
# 1. builds every benchmark with its CUDA variants (in parallel; their logs, one after the other, in build.log);
# 2. runs the units of the work list in RESULTS (default reports/<card>-eval, the card's model from nvidia-smi's
#    name in lower case) that are not done yet
#    (benchmarks/evaluate.py; EVAL_ARGS adds options, e.g. "--only base-"), until STOP_AFTER seconds (default 500)
#    have passed since this script started: a unit still running then is stopped and continues on the next call;
# 3. writes $OUT (default ./gpu-out)/<card>-eval.tar.gz (named as the results folder): the results folder without the executions' own folders
#    (the unit files, the plan, the comparisons' journals and stored outcomes: what the next call resumes from), to
#    unpack here into the results folder's parent (`tar -xzf h200-eval.tar.gz -C reports`) and commit; and
#    runs.tar.gz, every execution's files (logs; not committed).
set -uo pipefail
out=${OUT:-gpu-out}
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | grep -o -E '\b[A-Z][0-9]{2,4}\b' |
  head -n 1 | tr '[:upper:]' '[:lower:]')
results=${RESULTS:-reports/${card:-gpu}-eval}
logs=$(mktemp -d)
mkdir -p "$out"
nvidia-smi -L
for yaml in configs/*.yaml; do
  app=$(basename "$yaml" .yaml)
  mapperopt build --cuda on "$app" > "$logs/$app.log" 2>&1 &
done
wait
tail -n +1 "$logs"/*.log > "$out/build.log"
echo "built in $SECONDS s"
PYTHONUNBUFFERED=1 python3 benchmarks/gpu/evaluate.py run --results "$results" \
  --stop-after $(( ${STOP_AFTER:-500} - SECONDS )) ${EVAL_ARGS:-}
status=$?
parent=$(dirname "$results") name=$(basename "$results")
# the stored outcomes name this machine's paths: relative to the results folder and ~, as committed
grep -rlZ -e "$PWD/$results/" -e "$HOME/" "$results/work" --include="*.json" --include="*.jsonl" 2>/dev/null |
  xargs -0 -r sed -i -e "s#$PWD/$results/##g" -e "s#$HOME/#~/#g"
tar -C "$parent" -czf "$out/$name.tar.gz" --exclude="$name/work/*/base-*" --exclude="$name/work/*/cpu-*" \
  --exclude="$name/work/*/compare-*/*-*/iter-*" --exclude="$name/work/*/compare-*/final-*" \
  --exclude="$name/work/*/compare-*/baseline-*" --exclude="*/tune.lock" --exclude="*/owner.json" "$name"
tar -C "$parent" -czf "$out/runs.tar.gz" "$name/work"
python3 benchmarks/gpu/evaluate.py list --results "$results" | awk '{print $1}' | sort | uniq -c
exit $status
