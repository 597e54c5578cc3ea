#!/bin/sh
# Packs what a GPU machine without Debian's libraries needs to run this build: the dtnn binaries,
# libdtnn_core/libdtnn_cuda and every plugin, and the Debian shared libraries they link (BLIS,
# Boost.Program_options, OpenMP, zlib, libjpeg, libpng), into .gpu/ (ignored by git, small
# enough for the device tool's carry), and the Fashion-MNIST files (30 MiB; --no-data leaves them
# out). CUDA, cuDNN, cuBLAS and NCCL are NOT packed: the GPU machine has its own;
# scripts/gpu-env.sh finds them there. See docs/gpu.md.
#   scripts/gpu-bundle.sh [--no-data] [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
data=yes
if [ "${1:-}" = "--no-data" ]; then data=no; shift; fi
build=${1:-build}
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib .gpu/deps
cp "$build"/bin/dtnn "$build"/bin/dtnn_gpu_tests "$build"/bin/dtnn_bench .gpu/bin/
cp -a "$build"/lib/. .gpu/lib/
for f in .gpu/bin/* .gpu/lib/*.so* .gpu/lib/dtnn/plugins/*.so; do
  ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | grep -v -E 'libcuda|libcudart|libcudnn|libcublas|libnccl|libnvrtc|libdtnn_|libc\.so|libm\.so|libdl\.so|libpthread|librt\.so|ld-linux' |
  while read -r lib; do cp -L "$lib" .gpu/deps/; done
if [ "$data" = yes ] && [ -d /usr/share/datasets/fashion-mnist ]; then
  mkdir -p .gpu/data && cp -r /usr/share/datasets/fashion-mnist .gpu/data/
fi
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo '/.gpu/' >> "$exclude"
du -sh .gpu
