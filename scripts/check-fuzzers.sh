#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz: one per loader) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each for SECONDS from its seed corpus. A crash, a sanitizer
# report, a leak, an input slower than 10 s or an allocation over 2 GiB fails the run; the input is
# kept under BUILD_DIR/fuzz-findings/ and belongs, once fixed, in tests/fuzz/regressions/<target>/,
# whose files the normal test suite replays. Prints each target's executions.
#   scripts/check-fuzzers.sh [SECONDS] [BUILD_DIR]   (defaults: 30, build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build=${2:-build-fuzz}
if ! command -v clang++ >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  scripts/install-deps.sh --fuzz
fi
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
cmake -S . -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DDTNN_ENABLE_CUDA=OFF -DBUILD_TESTING=OFF -DDTNN_FUZZ=ON "-DDTNN_SANITIZE=address;undefined" \
  -DDTNN_ISA_ONLY=portable -DDTNN_SKIP_PLUGINS=conv/winograd -DDTNN_BUILD_BENCH=OFF >/dev/null
targets=$(tr ';' ' ' < "$build/fuzz_targets.txt")  # tests/fuzz/CMakeLists.txt writes them
cmake --build "$build" --parallel "$(nproc)" --target $(for t in $targets; do echo "fuzz_$t"; done)

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
mkdir -p "$build/fuzz-findings"
failed=0
printf '%-16s %12s %10s %s\n' target executions corpus result
for t in $targets; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus"
  log="$build/fuzz-findings/$t.log"
  if "$build/bin/fuzz_$t" "$corpus" "tests/fuzz/corpus/$t" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2560 -malloc_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/fuzz-findings/$t-" >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log)"
    failed=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  size=$(find "$corpus" -type f | wc -l)
  printf '%-16s %12s %10s %s\n' "$t" "${runs:-?}" "$size" "$result"
done
if [ "$failed" -ne 0 ]; then
  for log in "$build"/fuzz-findings/*.log; do
    grep -q "ERROR\|Deadly\|Timeout\|out-of-memory\|malloc limit\|leak" "$log" && { echo "== $log"; grep -A30 "ERROR\|==.*==" "$log" | head -60; }
  done
fi
exit "$failed"
