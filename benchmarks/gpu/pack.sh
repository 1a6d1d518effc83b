#!/usr/bin/env bash
# Packs what a lent GPU machine (no network) needs into .carry/ (git-ignored): the Legion headers and libraries of
# the installed legate wheel (~14 MB with xz), mapperopt's own wheel and those of pure-Python packages the machine
# may lack. Run here, then name .carry in the device call's
# `carry` and start the command with `source benchmarks/gpu/setup.sh`.
set -euo pipefail
cd "$(dirname "$0")/../.."
legate=$(python3 -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("legate").origin).parent)')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/legion/include" "$tmp/legion/lib64" .carry/wheels
cp -a "$legate/include/legate/deps/." "$tmp/legion/include/"
cp "$legate/lib64/liblegion-legate.so.1" "$legate/lib64/librealm-legate.so.25" "$tmp/legion/lib64/"
ln -s liblegion-legate.so.1 "$tmp/legion/lib64/liblegion-legate.so"
ln -s librealm-legate.so.25 "$tmp/legion/lib64/librealm-legate.so"
tar -C "$tmp" -cf - legion | xz -6 -T0 > .carry/legion.tar.xz
python3 -m pip download -q --only-binary=:all: --python-version 3.12 -d .carry/wheels lark click jinja2 pyyaml rich \
  filelock scipy-openblas32
# the [baselines] extra (compare's OpenTuner and Optuna) without numpy and packaging, which the machine has;
# opentuner, argparse and future come as sources only: built into wheels here (pure Python)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 -d .carry/wheels optuna sqlalchemy \
  alembic mako colorlog tqdm typing-extensions
python3 -m pip wheel -q --no-deps -w .carry/wheels opentuner argparse future
rm -f .carry/wheels/mapperopt-*.whl
python3 -m pip wheel -q --no-deps -w .carry/wheels .
du -sh .carry
