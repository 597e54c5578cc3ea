#!/usr/bin/env bash
# Installs dtnn to a temporary prefix and builds the out-of-tree example plugins against it with
# find_package(dtnn), one per kind: examples/conv_plugin (built per instruction-set level),
# layer_plugin, metric_plugin and optimizer_plugin (each with its CUDA twin where the installed
# dtnn has CUDA). Runs `dtnn check-plugin` on every file (its kind's conformance checks), checks
# that a twin loads and reports itself unavailable without a GPU, and that DTNN_PLUGIN_PATH makes
# the installed dtnn list them.
#   out_of_tree_plugin.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
dtnn="$work/prefix/bin/dtnn"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
for example in conv layer metric optimizer; do
  cmake -S "$source/examples/${example}_plugin" -B "$work/$example" "${generator[@]}" \
    -Ddtnn_DIR="$work/prefix/lib/cmake/dtnn" >/dev/null
  cmake --build "$work/$example" >/dev/null
done

# The conv plugin, built once per instruction-set level (ISA_VARIANTS): every file this CPU runs
# is conformant, and the plugin is found at the CPU's best level (the file dtnn info's ceiling
# names).
ceiling=$("$dtnn" info | sed -n 's/^Instruction sets: .*; ceiling \([a-z0-9]*\) .*/\1/p')
checked=0
for plugin in "$work"/conv/plugins/conv_example_loops*.so; do
  level=$(basename "$plugin" .so)
  level=${level#conv_example_loops}
  level=${level#.}
  case "$ceiling:${level:-portable}" in
    avx2:avx512 | portable:avx2 | portable:avx512) continue ;;  # above this CPU
  esac
  "$dtnn" check-plugin "$plugin"
  checked=$((checked + 1))
done
[ "$checked" -ge 1 ]
expected=conv_example_loops.so
if [ "$(ls "$work"/conv/plugins | wc -l)" -gt 1 ] && [ "$ceiling" != portable ]; then
  expected=conv_example_loops.$ceiling.so
fi
DTNN_PLUGIN_PATH="$work/conv/plugins" "$dtnn" plugins |
  grep -E "^conv +example_loops +cpu +ok +.*/$expected\$"
echo "out-of-tree conv plugin: built per level, conformant and found at $ceiling ($checked file(s) checked)"

# A layer, a metric and an optimizer, each with its twin.
for kind_name in layer:channel_scale metric:top_k_accuracy optimizer:lion; do
  kind=${kind_name%%:*} name=${kind_name#*:}
  folder="$work/$kind/plugins"
  best=$(ls "$folder"/${kind}_${name}*.so | grep -v "_cuda_" | sort | tail -1)
  [ "$kind" = optimizer ] && best="$folder/${kind}_${name}.so"  # the portable file runs anywhere
  "$dtnn" check-plugin "$best" | tee "$work/check.txt"
  grep -Eq "conformance of $kind '$name': [1-9][0-9]* passed, 0 failed" "$work/check.txt"
  listing=$(DTNN_PLUGIN_PATH="$folder" "$dtnn" plugins)
  grep -Eq "^$kind +$name +cpu +ok " <<<"$listing"
  twin="$folder/${kind}_cuda_${name}.so"
  if [ -f "$twin" ]; then  # built: the installed dtnn has CUDA
    if grep -Eq "^$kind +$name +cuda +ok " <<<"$listing"; then
      echo "out-of-tree $kind twin: loads, and a GPU is here"
    else
      grep -Eq "^$kind +$name +cuda +unavailable " <<<"$listing"
      echo "out-of-tree $kind twin: loads, unavailable without a GPU (with the reason)"
    fi
  fi
  echo "out-of-tree $kind plugin '$name': conformant and found"
done

# The Python package, where the build has it: installed under the prefix, `import dtnn` from there
# loads the installed module, which finds the installed plugins and trains.
module=$(find "$work/prefix" -name "_dtnn.*.so" | head -1)
if [ -n "$module" ]; then
  python=$(sed -n 's/^DTNN_PYTHON_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
  PYTHONPATH=$(dirname "$(dirname "$module")") "${python:-python3}" - "$work/prefix" <<'PY'
import sys
import dtnn
prefix = sys.argv[1]
assert dtnn.__file__.startswith(prefix), dtnn.__file__
folders = dtnn.info()["plugin_folders"]
assert folders[0] == prefix + "/lib/dtnn/plugins", folders
assert all(p["file"].startswith(prefix) for p in dtnn.plugins()), "a plugin from elsewhere"
exp = dtnn.Experiment({"model": "simplecnn",
                       "dataset": {"name": "synthetic", "input_shape": [28, 28, 1], "classes": 10,
                                   "train_samples": 64, "test_samples": 16},
                       "training": {"batch_size": 16, "evaluate": False},
                       "output": {"progress": "none"}})
exp.fit()
print("installed Python package: imported from the prefix, its plugins found, trained")
PY
fi
