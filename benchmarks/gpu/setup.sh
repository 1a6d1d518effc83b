# Sourced on a lent GPU machine, in the repository root: installs mapperopt into the machine's own python3
# environment (which holds numpy and matplotlib) from what benchmarks/gpu/pack.sh put in .carry/: the Legion headers
# and libraries, and wheels (mapperopt itself and the packages the machine lacks). The machine has no
# network; it has nvcc and the NVIDIA driver. It is thrown away after use.
set -e
# one fixed place: the build cache is keyed by the Legion install's path, so a second call on a warm machine reuses
# the applications built by the first
legion_root="$(dirname "$(mktemp -u)")/mapperopt-legion"  # the system's temporary folder
if [ ! -d "$legion_root/legion" ]; then  # unpacked beside it, then moved: a stopped unpack leaves no half folder
  unpacked=$(mktemp -d) && tar -C "$unpacked" -xJf .carry/legion.tar.xz && mkdir -p "$legion_root" &&
    mv "$unpacked/legion" "$legion_root/"
fi
export MAPPEROPT_LEGION_PREFIX="$legion_root/legion"
# pack.sh leaves out what the machine's image holds: say which one is missing rather than fail in pip
python3 -c 'import click, jinja2, yaml, rich, filelock, markupsafe' ||
  { echo "error: $(command -v python3) lacks a package that benchmarks/gpu/pack.sh expects the GPU machine to hold" \
      "(the import above names it): add it to pack.sh's downloads and pack again" >&2; return 1 2>/dev/null || exit 1; }
python3 -m pip install -q --no-index --find-links .carry/wheels lark click jinja2 pyyaml rich filelock \
  scipy-openblas32 opentuner optuna
python3 -m pip install -q --no-deps --no-index .carry/wheels/mapperopt-*.whl
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
set +e
