#!/usr/bin/env bash
# Installs dtnn to a temporary prefix, builds examples/conv_plugin against it with find_package(dtnn),
# runs `dtnn check-plugin` on the result (the conformance suite against reference) and checks that
# DTNN_PLUGIN_PATH makes the installed dtnn list it.
#   out_of_tree_plugin.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$source/examples/conv_plugin" -B "$work/example" "${generator[@]}" \
  -Ddtnn_DIR="$work/prefix/lib/cmake/dtnn" >/dev/null
cmake --build "$work/example" >/dev/null
# Built once per instruction-set level (ISA_VARIANTS): every file this CPU runs is conformant, and
# the plugin is found at the CPU's best level (the file dtnn info's ceiling names).
ceiling=$("$work/prefix/bin/dtnn" info | sed -n 's/^Instruction sets: .*; ceiling \([a-z0-9]*\) .*/\1/p')
checked=0
for plugin in "$work"/example/plugins/conv_example_loops*.so; do
  level=$(basename "$plugin" .so)
  level=${level#conv_example_loops}
  level=${level#.}
  case "$ceiling:${level:-portable}" in
    avx2:avx512 | portable:avx2 | portable:avx512) continue ;;  # above this CPU
  esac
  "$work/prefix/bin/dtnn" check-plugin "$plugin"
  checked=$((checked + 1))
done
[ "$checked" -ge 1 ]
expected=conv_example_loops.so
if [ "$(ls "$work"/example/plugins | wc -l)" -gt 1 ] && [ "$ceiling" != portable ]; then
  expected=conv_example_loops.$ceiling.so
fi
DTNN_PLUGIN_PATH="$work/example/plugins" "$work/prefix/bin/dtnn" plugins |
  grep -E "^conv +example_loops +cpu +ok +.*/$expected\$"
echo "out-of-tree plugin: built per level, conformant and found at $ceiling ($checked file(s) checked)"
