# Sourced on a lent GPU machine, in the repository root: installs mapperopt into the machine's own python3
# environment (which holds numpy and matplotlib) from what benchmarks/gpu/pack.sh put in .carry/: the Legion headers
# and libraries, and wheels (mapperopt itself and pure-Python packages the machine may lack). The machine has no
# network; it has nvcc and the NVIDIA driver. It is thrown away after use.
set -e
legion_root=$(mktemp -d)
tar -C "$legion_root" -xJf .carry/legion.tar.xz
export MAPPEROPT_LEGION_PREFIX="$legion_root/legion"
python3 -m pip install -q --no-index --find-links .carry/wheels lark click jinja2 pyyaml rich scipy-openblas32 \
  opentuner optuna
python3 -m pip install -q --no-deps --no-index .carry/wheels/mapperopt-*.whl
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
set +e
