#!/bin/sh
# gpu_two_ranks: data-parallel training on GPUs under MPI, 2 ranks, by each gradient route this
# machine allows: host-staged MPI always (both ranks may share one GPU); NCCL when there are two
# GPUs or more, else the fallback to MPI that NCCL's one GPU per rank forces; CUDA-aware MPI when
# the library is. Each run
# must reach the stated accuracy on Fashion-MNIST; and two ranks of 64 must end with the weights one
# rank of 128 ends with (same_weights.sh). Exit 77 (skipped) without a usable GPU.
#
# usage: two_ranks.sh MPIEXEC DTNN CHECK_HISTORY CONFIG OUTDIR
set -eu
mpiexec=$1 dtnn=$2 check=$3 config=$4 out=$5
gpu_line=$("$dtnn" info | grep '^GPU' || true)
gpus=$(echo "$gpu_line" | sed -n 's/^GPU [0-9]* of \([0-9]*\):.*/\1/p')
if [ -z "$gpus" ]; then
  echo "gpu_two_ranks: skipped: ${gpu_line:-no GPU line from dtnn info}"
  exit 77
fi
mkdir -p "$out"
data=""
[ -n "${DTNN_FASHION_MNIST_PATH:-}" ] && data="--set dataset.path=\"$DTNN_FASHION_MNIST_PATH\""
run() {  # route, expected Gradients: line, --set options...
  route=$1 expect=$2
  shift 2
  echo "== $route"
  "$mpiexec" -np 2 "$dtnn" run "$config" --set device=cuda --set training.epochs=1 \
    --set output.progress=lines $data "$@" \
    --history "$out/two_ranks_$route.json" >"$out/two_ranks_$route.log" 2>&1 ||
    { cat "$out/two_ranks_$route.log"; exit 1; }
  grep -E "^(Device|Gradients):" "$out/two_ranks_$route.log"
  grep -q "^Gradients: $expect" "$out/two_ranks_$route.log" ||
    { echo "expected 'Gradients: $expect'"; exit 1; }
  "$check" "$out/two_ranks_$route.json" 1 0.80
}
run staged "staged through pinned host memory" --set gpu.nccl=false
echo "== the same weights as one rank"
sh "$(dirname "$0")/same_weights.sh" "$mpiexec" "$dtnn" "$config" "$out/same_weights"
if "$mpiexec" -np 1 "$dtnn" info | grep -q "CUDA-aware"; then
  run gpudirect "device memory, by the host communicator" --set gpu.nccl=false --set gpu.gpudirect=true
fi
if [ "$gpus" -ge 2 ]; then
  run nccl "device memory, by the device communicator" --set gpu.nccl=true
else  # two ranks on one GPU: NCCL would refuse; every rank falls back to MPI together
  run nccl_fallback "staged through pinned host memory" --set gpu.nccl=true
  grep -q "NCCL needs one GPU per rank" "$out/two_ranks_nccl_fallback.log"
fi
