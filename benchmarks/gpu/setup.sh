# Sourced on a lent GPU machine, in the repository root: installs mapperopt from this tree with the Legion and
# wheels that benchmarks/gpu/pack.sh put in .carry/ (the machine has no network; it has python3 with numpy, jinja2,
# pyyaml, click, rich and matplotlib, nvcc and the NVIDIA driver).
set -e
mkdir -p /tmp/mapperopt-legion
tar -C /tmp/mapperopt-legion -xJf .carry/legion.tar.xz
export MAPPEROPT_LEGION_PREFIX=/tmp/mapperopt-legion/legion
python3 -m venv --system-site-packages /tmp/mapperopt-venv
/tmp/mapperopt-venv/bin/pip install -q --no-index --find-links .carry/wheels lark
/tmp/mapperopt-venv/bin/pip install -q --no-deps --no-build-isolation --no-index -e .
export PATH=/tmp/mapperopt-venv/bin:$PATH
set +e
