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
plugin="$work/example/plugins/conv_example_loops.so"
"$work/prefix/bin/dtnn" check-plugin "$plugin"
DTNN_PLUGIN_PATH="$work/example/plugins" "$work/prefix/bin/dtnn" plugins | grep -E "^conv +example_loops +ok"
echo "out-of-tree plugin: built, conformant and found"
