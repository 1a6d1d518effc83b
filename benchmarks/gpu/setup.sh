# Sourced on a lent GPU machine, in the repository root: installs mapperopt from this tree into the machine's own
# python3 environment (which holds numpy and matplotlib), with the Legion and wheels that benchmarks/gpu/pack.sh put
# in .carry/ (the machine has no network; it has nvcc and the NVIDIA driver). The machine is thrown away after use.
set -e
mkdir -p /tmp/mapperopt-legion
tar -C /tmp/mapperopt-legion -xJf .carry/legion.tar.xz
export MAPPEROPT_LEGION_PREFIX=/tmp/mapperopt-legion/legion
python3 -m pip install -q --no-index --find-links .carry/wheels lark click jinja2 pyyaml rich
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e .
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
set +e
