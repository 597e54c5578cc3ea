#!/usr/bin/env bash
# Configures and builds dtnn into build/ (Release, Ninja, ccache when present).
#   scripts/build.sh [extra cmake arguments, e.g. -DDTNN_ENABLE_CUDA=OFF]
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
cmake -S . -B build -G Ninja "${launcher[@]}" "$@"
cmake --build build --parallel "$(nproc)"
