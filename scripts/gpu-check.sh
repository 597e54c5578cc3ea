#!/bin/sh
# On the GPU machine, in one call of the device tool (carry [".gpu.tar.gz"], made by scripts/gpu-bundle.sh
# here): what the GPU work needs checked, each step's output kept in gpu-out-WHAT/ (packed into
# $OUT/gpu-logs-WHAT.tar.gz under the device tool).
#   scripts/gpu-check.sh [tests|bench|sanitize|all]      (default all)
#   1. dtnn info (the GPU, driver and library versions)
#   2. dtnn_gpu_tests (layers against their CPU twins, losses, optimizers, NCCL on one rank,
#      CPU-vs-GPU Fashion-MNIST accuracy, device memory across steps)
#   3. one epoch of the default experiment on the GPU (history JSON), 200 steps with
#      the GPU's energy read through NVML (output.energy ["nvml"]), and 20 steps of each of the
#      zoo's CNNs whose layers all have twins (MobileNetV2-tiny, ResNet-20, DenseNet)
#   4. the sequence models (transformer_lm, the seq2seq transformer, ViT, BERT), the U-Net's
#      segmentation (tests/segmentation.py --gpu); two MPI ranks on the
#      GPU by each gradient route the machine allows (tests/gpu/two_ranks.sh, with the Open MPI
#      that gpu-bundle packed)
#   5. bench/gpu/compare_gpu.py (dtnn beside PyTorch), float32 with the per-layer tables,
#      transformer_lm beside PyTorch (bench/compare_transformer.py lm --gpu; TRANSFORMER_REPEATS
#      rounds, 3) and its per-layer times (dtnn_bench --profile), then TF32
#      (BENCH_TF32=0 skips it); BENCH_ARGS replaces the short default ("--rounds 1
#      --repeats 2 --steps 10"), BENCH_SECONDS each pass's time limit (300 s)
# Each step has a time limit (its exit is then 124) and its log is gpu-out-WHAT/<step>.log; the last 40
# lines of each (TAIL_LINES) are printed. GPU_SKIP names steps to leave out (GPU_SKIP="bench bench_tf32"
# runs everything but the CNN comparisons).
# `sanitize` runs only info and the kernel-level GPU tests (layers, losses, metrics, optimizers)
# under compute-sanitizer's memcheck: an out-of-bounds or misaligned device access, or a CUDA
# error a test did not check, fails it. It needs a runtime where compute-sanitizer works (the
# device tool's KINDS.md: Firecracker, not gVisor). The caching allocator rounds blocks up, so
# overruns smaller than the rounding stay unseen.
set -u
cd "$(dirname "$0")/.." || exit 1
what=${1:-all}
# The logs go to gpu-out-WHAT/ and, under the device tool (which brings back at most 8 files of
# $OUT), packed into $OUT/gpu-logs-WHAT.tar.gz when the script ends.
out=gpu-out-$what
rm -rf "$out" && mkdir -p "$out"
[ -n "${OUT:-}" ] && trap 'tar czf "$OUT/gpu-logs-$what.tar.gz" "$out"' EXIT
trap 'exit 143' TERM  # stopped from outside (timeout -s TERM): the logs are still packed
env=scripts/gpu-env.sh
status=0
step() {  # name, seconds, command...: a step that runs past its seconds is stopped (exit 124)
  name=$1 seconds=$2
  shift 2
  case " ${GPU_SKIP:-} " in *" $name "*)
    echo "== $name: skipped (GPU_SKIP)"
    return ;;
  esac
  echo "== $name: $*"
  start=$(date +%s)
  timeout -k 5 "$seconds" "$@" >"$out/$name.log" 2>&1
  rc=$?
  tail -n "${TAIL_LINES:-40}" "$out/$name.log"
  echo "== $name: exit $rc after $(($(date +%s) - start)) s"
  [ $rc -eq 0 ] || status=1
}
step info 60 $env .gpu/bin/dtnn info
if [ "$what" = sanitize ]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  step sanitize 400 $env "$sanitizer" --tool memcheck --error-exitcode 1 .gpu/bin/dtnn_gpu_tests \
    -tc='*twin*,*dropout*,*losses*,*metric*,*optimizers*'
  exit $status
fi
if [ "$what" != bench ]; then
  step gpu_tests 300 $env .gpu/bin/dtnn_gpu_tests
  step train 120 $env .gpu/bin/dtnn run configs/fashion_mnist_simplecnn.json --enable-gpu true \
    --dataset-path .gpu/data/fashion-mnist --num-epochs 1 --set output.progress=\"lines\" \
    --history "$out/train_history.json"
  # The GPU's energy through NVML (output.energy ["nvml"] must work here): joules per epoch.
  step energy 90 $env .gpu/bin/dtnn run configs/fashion_mnist_simplecnn.json --enable-gpu true \
    --dataset-path .gpu/data/fashion-mnist --num-epochs 1 --steps-per-epoch 200 \
    --set output.progress=\"lines\" --set 'output.energy=["nvml"]' \
    --history "$out/energy_history.json"
  # The zoo's CNNs whose layers all have twins, a few steps each on CIFAR-shaped synthetic data.
  # shellcheck disable=SC2016
  step models 180 $env sh -c 'for m in mobilenetv2_tiny resnet20_cifar10 densenet_cifar10; do
      echo "== $m"
      out=$(.gpu/bin/dtnn run --enable-gpu true --model $m --dataset synthetic \
        --set "dataset.input_shape=[32,32,3]" --num-epochs 1 --steps-per-epoch 20 \
        --set output.progress=\"lines\" --evaluate false 2>&1) || { echo "$out" | tail -5; exit 1; }
      echo "$out" | grep -E "^(Epoch|Training)"
    done'
  # The sequence models on the GPU (the sequence twins: embedding, positions, layer norm,
  # attention, gelu, patches, log_softmax, nll): transformer_lm on the fortunes text for 100
  # steps, the seq2seq reversal task (encoder_decoder, cross-attention) and ViT on Fashion-MNIST
  # for an epoch each.
  # shellcheck disable=SC2016
  step sequence_models 240 $env sh -c 'failed=0
    run() {
      echo "== $*"
      o=$(.gpu/bin/dtnn run "$@" --enable-gpu true --set output.progress=\"lines\" 2>&1)
      r=$?
      echo "$o" | grep -E "^(Epoch|Training|Test after)"
      [ $r -eq 0 ] || { echo "$o" | tail -5; failed=1; }
    }
    run configs/fortunes_char_lm.json --dataset-path .gpu/data/fortunes --steps-per-epoch 100
    run configs/seq2seq_reverse.json --num-epochs 1
    run configs/fashion_mnist_vit.json --dataset-path .gpu/data/fashion-mnist --num-epochs 1
    run configs/fortunes_char_bert.json --dataset-path .gpu/data/fortunes --steps-per-epoch 100
    exit $failed'
  # The U-Net (conv2d_transpose, concat blocks, the dice loss) learns to segment on the GPU.
  step unet 120 $env python3 tests/segmentation.py .gpu/bin/dtnn --gpu
  # shellcheck disable=SC2016
  step two_ranks 180 $env sh -c 'tests/gpu/two_ranks.sh "${DTNN_MPIEXEC:?no MPI was packed}" \
    .gpu/bin/dtnn .gpu/bin/check_history configs/fashion_mnist_simplecnn.json "$0"' "$out/two_ranks"
fi
if [ "$what" != tests ]; then
  # Short by default, so that one call of the device tool does everything (about 8 minutes on an
  # H100): one round of two timings of 10 steps, float32 with the per-layer tables, then TF32.
  bench_args=${BENCH_ARGS:-"--rounds 1 --repeats 2 --steps 10"}
  # shellcheck disable=SC2086
  step bench "${BENCH_SECONDS:-300}" $env python3 bench/gpu/compare_gpu.py \
    --dtnn-bench .gpu/bin/dtnn_bench --out "$out/bench" $bench_args
  # transformer_lm's training tokens/s beside PyTorch's, both on the GPU.
  step bench_transformer 150 $env python3 bench/compare_transformer.py lm --gpu --build .gpu \
    --text .gpu/data/fortunes --peer-python python3 --steps 40 --repeats "${TRANSFORMER_REPEATS:-3}"
  # Where its time goes: dtnn's per-layer forward/backward times of transformer_lm on the GPU.
  step profile_transformer 90 $env .gpu/bin/dtnn_bench configs/fortunes_char_lm.json \
    --set 'device="cuda"' --set 'dataset.path=".gpu/data/fortunes"' --steps 40 --warmup 10 \
    --repeats 1 --profile
  if [ "${BENCH_TF32:-1}" = 1 ]; then
    # shellcheck disable=SC2086
    step bench_tf32 "${BENCH_SECONDS:-300}" $env python3 bench/gpu/compare_gpu.py \
      --dtnn-bench .gpu/bin/dtnn_bench --out "$out/bench_tf32" $bench_args --tf32 --no-profile
  fi
fi
exit $status
