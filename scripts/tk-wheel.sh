# Sourced by scripts/gpu-bench and scripts/gpu-tests: installs one tile-kernels wheel from .whl/ (the GPU machine
# has no package index) into a temporary folder and puts it first on PYTHONPATH.
# Which wheel: $TK_WHEEL when set (a path, or a version such as 1.0.0 for .whl/tile_kernels-1.0.0-py3-none-any.whl,
# or `none` for no TileKernels), else the newest version in .whl/ (sort -V on the file names).
# tile-kernels 2.x declares Requires-Python >=3.12 and torch>=2.13; it is installed with --no-deps and
# --ignore-requires-python, so a machine below either says so in the path's own row, not here.
tk_install() {
  local whl=${TK_WHEEL:-}
  if [ "$whl" = none ]; then echo "tile-kernels: none (TK_WHEEL=none)"; return 0; fi
  if [ -n "$whl" ] && [ ! -f "$whl" ]; then whl=.whl/tile_kernels-$whl-py3-none-any.whl; fi
  if [ -z "$whl" ]; then whl=$(ls .whl/tile_kernels-*.whl 2> /dev/null | sort -V | tail -1); fi
  if [ -z "$whl" ]; then echo "tile-kernels: no wheel in .whl/"; return 0; fi
  if [ ! -f "$whl" ]; then echo "tile-kernels: TK_WHEEL=$TK_WHEEL: no $whl" >&2; return 2; fi
  local tk
  tk=$(mktemp -d)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --ignore-requires-python \
    --target "$tk" "$whl" || return 1
  python3 -m compileall -q -j 0 "$tk" > /dev/null
  export PYTHONPATH=$tk:$PYTHONPATH
  echo "tile-kernels: $whl"
}
