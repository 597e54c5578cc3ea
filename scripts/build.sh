#!/usr/bin/env bash
# Configures and builds dtnn into build/ (Release, Ninja, ccache when present).
#   scripts/build.sh [--run] [extra cmake arguments, e.g. -DDTNN_ENABLE_CUDA=OFF]
#   --run: only the command and the CPU plugins the default experiment loads (the target
#          dtnn_run, DTNN_FIRST_RUN_PLUGINS in CMakeLists.txt), the README's first command;
#          without it, everything (every plugin, tests, benchmarks, fuzz targets' sources, CUDA
#          twins, the Python module).
set -euo pipefail
cd "$(dirname "$0")/.."
target=()
if [ "${1:-}" = "--run" ]; then
  target=(--target dtnn_run)
  shift
fi
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
cmake -S . -B build -G Ninja "${launcher[@]}" "$@"
cmake --build build --parallel "$(nproc)" "${target[@]}"
if [ ${#target[@]} -gt 0 ]; then
  echo "build.sh: built dtnn with the default experiment's plugins only; scripts/build.sh builds the rest"
fi

# `import dtnn` from any folder: a .pth file naming build/python in the site-packages of python3
# and of the interpreter the module was built for, where they are that Python version and the
# folder is writable (as pip install -e would); elsewhere, PYTHONPATH=build/python.
if [ -d build/python/dtnn ]; then
  module=$(ls build/python/dtnn/_dtnn.*.so 2>/dev/null | head -1 || true)  # none after --run
  built_for=$(sed -n 's/^DTNN_PYTHON_EXECUTABLE:FILEPATH=//p' build/CMakeCache.txt)
  for python in "$built_for" python3; do
    command -v "$python" >/dev/null 2>&1 || continue
    tag=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null) || continue
    [ -n "$module" ] && [ "${module%"$tag"}" != "$module" ] || continue  # another Python version
    site=$("$python" -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null) || continue
    if mkdir -p "$site" 2>/dev/null && [ -w "$site" ]; then
      echo "$PWD/build/python" > "$site/dtnn-build.pth"
      echo "build.sh: $(command -v "$python") imports dtnn from build/python ($site/dtnn-build.pth)"
    fi
  done
fi
