#!/usr/bin/env bash
# Runs the default build on CPUs this machine may not be: under Debian's qemu-user, a Haswell
# (AVX2 and FMA, no AVX-512) and a Nehalem (SSE4.2: x86-64-v2, no AVX). For each it checks that
#   - dtnn info reports the CPU's level as its ceiling;
#   - every conv plugin file built for that CPU's level passes `dtnn check-plugin` (the conformance
#     sweep against reference, each engine), every file above it is refused unopened, by name; the
#     files below it run on the CPU whose level they are (the portable ones on the Nehalem);
#   - the process maps each per-level plugin's best file for that CPU and none above (isa_ceiling);
#   - the conv, layer, loss and optimizer checks of dtnn_tests pass on that CPU's plugins, and
#     the int8 kernels (vpmaddubsw on the Haswell, loops on the Nehalem) and layers;
#   - a few training steps run: ResNet-20 with best_of, simplecnn with every conv algorithm.
# Left out of dtnn_tests under emulation, each run natively by the README's test command: the
# conformance sweep (check-plugin runs it on each file here) and the test that trains a model to an
# accuracy with every conv algorithm (over 10 minutes emulated; the training steps here run the same
# code).
# Code of a level the CPU lacks dies there with SIGILL, so any of these catches it. CI runs this
# after the README's test command (.ci/run); it takes about 10 minutes on 2 cores.
#   scripts/check-emulated-cpus.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if ! command -v qemu-x86_64 >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "check-emulated-cpus: installing qemu-user"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends qemu-user >/dev/null
fi
if [ "$(uname -m)" != "x86_64" ]; then
  echo "check-emulated-cpus: x86-64 only; nothing to do on $(uname -m)"
  exit 0
fi

dtnn=$build/bin/dtnn
plugins=$build/lib/dtnn/plugins
checks="every instruction-set variant*,the small GEMM*,every int8 kernel*,int8 conv2d and fc*,gemm in bf16 and fp16*,every level's bulk rounding*,gradient check*,forward by hand*,sgd*,adam*,rmsprop*,nadam*,*binary_cross_entropy*,*categorical_cross_entropy*,maxpool2d*,batchnorm*,dropout*"
failures=0
# OpenMP's idle threads spin by default; under emulation spinning costs as much as the work.
export OMP_WAIT_POLICY=passive

# qemu warns about every CPU feature TCG cannot emulate (TSX, x2APIC, ...): none matters here.
on_cpu() {
  local cpu=$1
  shift
  qemu-x86_64 -cpu "$cpu" "$@" 2> >(grep -v "^qemu-x86_64: warning: TCG doesn't support" >&2)
}
fail() {
  echo "FAIL ($cpu): $*"
  failures=$((failures + 1))
}
# The level of a plugin file: conv_direct.avx2.so -> avx2, conv_direct.so -> portable.
level_of() {
  local stem=${1%.so}
  case "${stem##*.}" in
    avx2 | avx512) echo "${stem##*.}" ;;
    *) echo portable ;;
  esac
}
rank() { case $1 in portable) echo 0 ;; avx2) echo 1 ;; avx512) echo 2 ;; esac }

for pair in "Haswell avx2" "Nehalem portable"; do
  read -r cpu level <<<"$pair"
  echo "== $cpu (runs up to $level)"
  start=$SECONDS
  info=$(on_cpu "$cpu" "$dtnn" info) || fail "dtnn info exited $?"
  grep -q "ceiling $level " <<<"$info" || fail "dtnn info does not report the ceiling $level"

  for file in "$plugins"/conv_*.so; do
    name=$(basename "$file")
    file_level=$(level_of "$name")
    if [ "$(rank "$file_level")" -lt "$(rank "$level")" ] && [ "$file_level" = portable ] &&
      ls "$plugins/${name%.so}".*.so >/dev/null 2>&1; then
      echo "  $name: the Nehalem runs it"  # a portable file with per-level twins
    elif [ "$(rank "$file_level")" -le "$(rank "$level")" ]; then
      out=$(on_cpu "$cpu" "$dtnn" check-plugin "$file" 2>&1) || fail "check-plugin $name: $(tail -3 <<<"$out")"
      echo "  $name: $(tail -1 <<<"$out")"
    else
      out=$(on_cpu "$cpu" "$dtnn" check-plugin "$file" 2>&1) && fail "check-plugin $name ran above the CPU"
      grep -q "built for $(level_of "$name"), above this process's ceiling $level" <<<"$out" ||
        fail "check-plugin $name: not refused by name: $out"
      echo "  $name: refused unopened"
    fi
  done

  DTNN_ISA=$level on_cpu "$cpu" "$build/bin/isa_ceiling" || fail "isa_ceiling"
  on_cpu "$cpu" "$build/bin/dtnn_tests" "--test-case=$checks" >/tmp/dtnn-emulated-$cpu.log 2>&1 ||
    fail "dtnn_tests plugin checks (log: /tmp/dtnn-emulated-$cpu.log): $(tail -5 /tmp/dtnn-emulated-$cpu.log)"
  grep "test cases:" /tmp/dtnn-emulated-$cpu.log | sed 's/^/  dtnn_tests: /'

  # No evaluation, no validation split: only the training steps (the held-out 6,000 samples alone
  # took a minute per run under emulation).
  run=(run --num-epochs 1 --steps-per-epoch 3 --batch-size 16 --evaluate false
    --set dataset.validation_split=0 --set 'output.progress="none"')
  on_cpu "$cpu" "$dtnn" "${run[@]}" configs/synthetic_resnet20.json >/dev/null 2>&1 ||
    fail "ResNet-20 with best_of"
  for algo in i2c implicit_gemm winograd direct best_of; do
    on_cpu "$cpu" "$dtnn" "${run[@]}" configs/fashion_mnist_simplecnn.json --conv-variant "$algo" \
      >/dev/null 2>&1 || fail "simplecnn with $algo"
  done
  echo "  training steps: ResNet-20 (best_of), simplecnn (i2c, implicit_gemm, winograd, direct, best_of) ran"
  echo "  $cpu: $((SECONDS - start)) s"
done

if [ "$failures" -gt 0 ]; then
  echo "check-emulated-cpus: $failures failure(s)"
  exit 1
fi
echo "check-emulated-cpus: all passed"
