#!/bin/sh
# Two ranks train to the weights one rank trains to: 20 steps of the default experiment, two
# ranks of 64 samples against one of 128 (the same global batches: each rank takes a contiguous
# half), host-staged MPI; the weights agree within float rounding (the sums' order differs), a
# relative difference below 1e-4. Run by two_ranks.sh on the GPU; DEVICE=cpu runs it anywhere
# (PYTHON: an interpreter with numpy, default python3).
#
# usage: same_weights.sh MPIEXEC DTNN CONFIG OUTDIR
set -eu
mpiexec=$1 dtnn=$2 config=$3 out=$4
device=${DEVICE:-cuda}
mkdir -p "$out"
data=""
[ -n "${DTNN_FASHION_MNIST_PATH:-}" ] && data="--set dataset.path=\"$DTNN_FASHION_MNIST_PATH\""
train() {  # log name, batch size, launcher...
  name=$1 batch=$2
  shift 2
  # shellcheck disable=SC2086
  "$@" "$dtnn" run "$config" --set device="\"$device\"" --set training.tensor_format="\"NCHW\"" \
    --set training.epochs=1 --steps-per-epoch 20 --set training.batch_size="$batch" \
    --evaluate false --set output.progress="\"none\"" --set gpu.nccl=false $data \
    --set output.weights_npz="\"$out/$name.npz\"" >"$out/$name.log" 2>&1 ||
    { cat "$out/$name.log"; exit 1; }
}
train one_rank 128
train two_ranks 64 "$mpiexec" -np 2
"${PYTHON:-python3}" - "$out/one_rank.npz" "$out/two_ranks.npz" <<'PY'
import sys
import numpy as np
one, two = np.load(sys.argv[1]), np.load(sys.argv[2])
assert sorted(one.files) == sorted(two.files), (one.files, two.files)
worst = max(float(np.abs(one[k] - two[k]).max() / (1e-12 + np.abs(one[k]).max())) for k in one.files)
print(f"two ranks of 64 against one of 128, 20 steps: largest relative difference of the weights "
      f"{worst:.2e} (limit 1e-4)")
sys.exit(0 if worst < 1e-4 else 1)
PY
