#!/usr/bin/env bash
# Packs what a lent GPU machine (no network) needs into .carry/ (git-ignored): the Legion headers and libraries of
# the installed legate wheel (~14 MB with xz), mapperopt's own wheel and those of the packages the machine lacks. Run
# here, then name .carry in the device call's `carry` and start the command with `source benchmarks/gpu/setup.sh`.
# Kept small: a device call carries the whole working tree and .carry/ within 64 MiB, and the committed evaluation
# folders grow with every session, so packages the machine's image already holds (click, jinja2, pyyaml, rich,
# filelock and their dependencies; setup.sh checks them) are not packed.
# Needs: network (pip downloads and builds wheels from PyPI); a `python3` that imports legate, i.e. run with the
# environment mapperopt is installed in activated (`source .venv/bin/activate` after the README's install); the
# installed legate's libraries named liblegion-legate.so.1 and librealm-legate.so.25 (copied by these names). The
# wheels are for Python 3.12, the GPU machine's python3, which must hold numpy and matplotlib already (setup.sh
# installs without an index). On a GPU machine with network none of this is needed: install as the README says and
# run benchmarks/gpu/evaluate.sh there.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("legate") is None)'; then
  echo "error: $(command -v python3) does not import legate: activate the environment mapperopt is installed in" \
    "(source .venv/bin/activate), then run again" >&2
  exit 1
fi
legate=$(python3 -c 'import importlib.util, pathlib
print(pathlib.Path(importlib.util.find_spec("legate").origin).parent)')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/legion/include" "$tmp/legion/lib64" .carry/wheels
cp -a "$legate/include/legate/deps/." "$tmp/legion/include/"
cp "$legate/lib64/liblegion-legate.so.1" "$legate/lib64/librealm-legate.so.25" "$tmp/legion/lib64/"
ln -s liblegion-legate.so.1 "$tmp/legion/lib64/liblegion-legate.so"
ln -s librealm-legate.so.25 "$tmp/legion/lib64/librealm-legate.so"
tar -C "$tmp" -cf - legion | xz -9e -T0 > .carry/legion.tar.xz  # -9e: 0.45 MB less than -6, a minute longer
rm -rf .carry/wheels && mkdir .carry/wheels  # no wheel left over from an earlier, larger pack
# lark and the BLAS, then the [baselines] extra (compare's OpenTuner and Optuna) without what the machine has (numpy,
# packaging, pyyaml, markupsafe); opentuner, argparse and future come as sources only: built into wheels here
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 -d .carry/wheels lark scipy-openblas32 \
  optuna sqlalchemy alembic mako colorlog tqdm typing-extensions
python3 -m pip wheel -q --no-deps -w .carry/wheels opentuner argparse future
python3 -m pip wheel -q --no-deps -w .carry/wheels .
du -sh .carry
