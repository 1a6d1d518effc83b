#!/usr/bin/env bash
# Which statement of the mapper that gave Johnson, COSMA and Solomonik a wrong result on one H200 (random search,
# seed 0, iteration 2 of the H200 evaluation: "A(0, 0) = 0, expected 31751", every element of A zero) causes it:
# johnson at its gpu size (n = 16384, grid 2 x 2 x 2, one GPU, one execution each) with that mapper and with
# variants that each drop one group of its statements. On a lent machine with one H200 (device kind nvidia-h200),
# from the repository root after `bash benchmarks/gpu/pack.sh` here:
#   source benchmarks/gpu/setup.sh; bash benchmarks/gpu/bisect-johnson.sh
# Prints the runtime (whether the installed mapperopt keeps CollectMemory's read-only requirements tracked on
# fields that receive reductions, note R457), then one line per variant: verified or not, GFLOP/s, and the
# first mismatch or the reason of a failure. Without that fix only the variants without `CollectMemory task_1 *`
# verify: task_1 after the product is the read-only placement of A into which Legion folds task_4's partial sums,
# and untracked it leaves A without a valid copy, so taco_validate (CPU, system memory) copies nothing.
# Without a GPU the same variants run on 2 CPUs at -n 256, taco_validate reading A from registered memory (RDMEM,
# -ll:rsize) so that its check needs a copy of A, as on the GPU (on CPUs alone it would reuse task_1's instance).
# Writes $OUT (default ./gpu-out): bisect.txt and the run folders (runs.tar.gz).
set -uo pipefail
out=${OUT:-gpu-out}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
cat > "$work/base.dsl" <<'EOF'
Task * GPU,CPU;
Region * * GPU FBMEM;
Region * * CPU SYSMEM;
Region taco_fill A_tiles GPU FBMEM,ZCMEM;
Region taco_fill B_tiles GPU ZCMEM,FBMEM;
Region taco_fill C_tiles GPU ZCMEM,FBMEM;
Region taco_fill A_tiles CPU ZCMEM,SYSMEM;
Region taco_fill C_tiles CPU ZCMEM,SYSMEM;
Region task_1 A_tiles GPU FBMEM,ZCMEM;
Region task_2 B_tiles CPU ZCMEM,SYSMEM;
Region task_3 C_tiles GPU ZCMEM,FBMEM;
Region task_3 C_tiles CPU ZCMEM,SYSMEM;
Region task_4 B_tiles GPU FBMEM,ZCMEM;
Region task_4 C_tiles GPU FBMEM,ZCMEM;
Region task_4 A_tiles CPU SYSMEM,ZCMEM;
Region task_4 C_tiles CPU ZCMEM,SYSMEM;
Region taco_validate A_tiles CPU SYSMEM,ZCMEM;
CollectMemory task_1 *;
CollectMemory task_2 *;
CollectMemory task_3 *;
CollectMemory task_4 *;
Layout * * * SOA C_order Align==128;
InstanceLimit taco_fill 4;
InstanceLimit task_1 4;
InstanceLimit init_cublas 4;
InstanceLimit taco_validate 1;
mcpu = Machine(CPU);
def block_cpu2d(Task task) {  # block over all processors, nodes first
    lin = task.ipoint[0] * task.ispace[1] + task.ipoint[1];
    n = task.ispace[0] * task.ispace[1];
    q = lin * mcpu.volume / n;
    return mcpu[q / mcpu.size[1], q % mcpu.size[1]];
}
IndexTaskMap taco_validate block_cpu2d;
EOF
# variant name -> sed script applied to the mapper (one group of statements dropped or changed)
# (only-collect-task_1: the smallest mapper that shows it, the whole Task, Region * * and Layout statements kept)
names=(mapper no-collect-task_1 no-collect no-collect-task_2-4 no-instance-limit no-align no-task-regions
       no-validate-map only-collect-task_1)
edits=('' '/^CollectMemory task_1 /d' '/^CollectMemory /d' '/^CollectMemory task_[234] /d' '/^InstanceLimit /d'
       's/ Align==128//' '/^Region [a-z_0-9]* [A-Z]_tiles /d' '/^IndexTaskMap /d'
       '/^Task \|^Region \* \* \|^Layout \|^CollectMemory task_1 /!d; s/ Align==128//')
if nvidia-smi -L > /dev/null 2>&1; then
  nvidia-smi -L
  mapperopt build johnson --cuda on > /dev/null || exit 1
  run_args=(--size gpu --gpus 1)
  app_args=()
else
  echo "no GPU: 2 CPUs, -n 256, taco_validate reading A from RDMEM"
  run_args=(--size ci --cpus 2)
  app_args=(-- -n 256 -ll:rsize 64)
  extra='Region taco_validate A_tiles CPU RDMEM;'  # added to every variant, after its edit
fi
# (from / : in the repository root, the source folder `compiler/` is not the installed package)
(cd / && python3 -c 'from mapperopt.compiler.build import RUNTIME_DIR
fixed = "R457" in (RUNTIME_DIR / "dsl_mapper.cc").read_text()
print("runtime:", "CollectMemory keeps reduced fields tracked (R457)" if fixed else "without the R457 fix")') \
  | tee "$out/bisect.txt"
for k in "${!names[@]}"; do
  name=${names[$k]}
  { sed "${edits[$k]}" "$work/base.dsl"; echo "${extra-}"; } > "$work/$name.dsl"
  mapperopt run johnson --mapper "$work/$name.dsl" "${run_args[@]}" --once --min-time 0 --no-profile \
    --out "$work/runs/$name" --json "${app_args[@]}" > /dev/null
  # the execution's own result line: its GFLOP/s and check also when the check failed
  python3 -c 'import json, re, sys
r = json.load(open(sys.argv[1]))
own = (r["attempts"] or [{}])[-1].get("result") or {}
ok = r["status"] == "ok" and own.get("verified") is True
why = json.dumps(own["check"].get("first_mismatch")) if "check" in own and not ok else ""
why = why or ("" if ok else re.sub(r"\s+", " ", r["reason"] or "")[:200])
print("%-20s %-12s %10s GFLOP/s  %s" % (sys.argv[2], "verified" if ok else "NOT verified", own.get("throughput"),
                                       why))' \
    "$work/runs/$name/result.json" "$name" | tee -a "$out/bisect.txt"
done
tar -C "$work/runs" -czf "$out/runs.tar.gz" .
