#!/usr/bin/env bash
# The default experiment runs on the plugins `scripts/build.sh --run` builds (DTNN_FIRST_RUN_PLUGINS
# in CMakeLists.txt) alone: a copy of the command and its libraries with only those plugins beside
# it, one short epoch on Fashion-MNIST. A plugin the experiment comes to need fails it (the
# registry's error names it) until the list names it too.
#   tests/first_run_plugins.sh BUILD_DIR SOURCE_DIR PLUGIN...   (PLUGIN: kind_name, as the .so)
set -euo pipefail
build=$1 source=$2
shift 2
[ $# -gt 0 ] || { echo "first_run_plugins: no plugins named" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib/dtnn/plugins"
cp "$build/bin/dtnn" "$tmp/bin/"
cp -P "$build"/lib/*.so* "$tmp/lib/"
for plugin in "$@"; do
  found=0
  for file in "$build/lib/dtnn/plugins/$plugin.so" "$build/lib/dtnn/plugins/$plugin".*.so; do
    if [ -e "$file" ]; then
      cp "$file" "$tmp/lib/dtnn/plugins/"
      found=1
    fi
  done
  [ "$found" = 1 ] || { echo "first_run_plugins: no $plugin.so in $build/lib/dtnn/plugins" >&2; exit 1; }
done
unset DTNN_PLUGIN_PATH
# Only the copy's plugins load (an installed dtnn's folder would hide a missing one).
loaded=$("$tmp/bin/dtnn" plugins | grep -o '/[^ ]*\.so' || true)
if echo "$loaded" | grep -v "^$tmp/" | grep -q .; then
  echo "first_run_plugins: plugins outside the copy load too:" >&2
  echo "$loaded" | grep -v "^$tmp/" >&2
  exit 1
fi
cd "$source"
"$tmp/bin/dtnn" run configs/fashion_mnist_simplecnn.json --set training.epochs=1 \
  --set dataset.train_limit=2048 --set dataset.test_limit=512
