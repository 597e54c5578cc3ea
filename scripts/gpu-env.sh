#!/bin/sh
# On the GPU machine: runs a command with the packed build (scripts/gpu-bundle.sh) and that
# machine's own CUDA libraries (found wherever its image keeps them) on the loader path.
#   scripts/gpu-env.sh .gpu/bin/dtnn info
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
dirs=""
for lib in libcudnn.so.9 libcublas.so.13 libnccl.so.2 libcudart.so.13; do
  d=$(find /usr/local/cuda/lib64 /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1 || true)
  [ -n "$d" ] && dirs="$dirs:$(dirname "$d")"
done
export LD_LIBRARY_PATH="$here/.gpu/lib:$here/.gpu/deps$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DTNN_PLUGIN_PATH="$here/.gpu/lib/dtnn/plugins"
# The packed Fashion-MNIST files, for the GPU tests (that machine has no Debian datasets).
[ -d "$here/.gpu/data/fashion-mnist" ] && export DTNN_FASHION_MNIST_PATH="$here/.gpu/data/fashion-mnist"
exec "$@"
