#!/usr/bin/env bash
# `pip install .` as a user would run it (pyproject.toml), into a fresh virtual environment that
# sees Debian's numpy: the package imports, trains a short experiment from Python, and its `dtnn`
# command runs. ccache (when present) serves the compiler from the earlier build's objects.
#   scripts/check-pip-install.sh [VENV_DIR]     (default: a temporary folder, removed after)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-$(mktemp -d /tmp/dtnn-pip-XXXXXX)}
[ -n "${1:-}" ] || trap 'rm -rf "$venv"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$venv"
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
start=$(date +%s)
"$venv/bin/python" -m pip install -q . 2>&1 | tail -20
echo "check-pip-install: pip install . took $(($(date +%s) - start)) s"
cd /tmp  # nothing of the source tree on the path
"$venv/bin/python" - <<'PY'
import pathlib, dtnn
package = pathlib.Path(dtnn.__file__).parent
assert "site-packages" in str(package), package  # the installed package, not the build tree's
for part in ("lib/dtnn/plugins", "bin/dtnn", "share/dtnn/configs/models/simplecnn.json"):
    assert (package / part).exists(), part
names = {p["name"] for p in dtnn.plugins() if p["kind"] == "conv"}
assert {"i2c", "reference"} <= names, names
exp = dtnn.Experiment({"model": "simplecnn", "dataset": {"name": "synthetic", "input_shape": [28, 28, 1],
                       "train_samples": 256, "test_samples": 64},
                       "training": {"epochs": 1, "batch_size": 32}, "output": {"progress": "none"}})
history = exp.fit()
assert history["epochs"][0]["loss"] > 0, history
print("check-pip-install: import dtnn from", package, "and a short training run: ok")
PY
"$venv/bin/dtnn" info | grep -E "^Plugins:"
"$venv/bin/dtnn" run --model simplecnn --dataset synthetic --num-epochs 1 --steps-per-epoch 4 \
  --set output.progress=\"lines\" | grep -E "^Training"
echo "check-pip-install: the dtnn command of the package: ok"
# A plugin written in Python, in a plugin folder, reaches the package's dtnn program too (it hands
# itself over to the venv's python3 -m dtnn).
plugins=$(mktemp -d /tmp/dtnn-pip-plugins-XXXXXX)
cat >"$plugins/halve.py" <<'PY'
class Halve:
    kind = "layer"
    name = "halve"
    def build(self, ctx):
        return None
    def forward(self, x, y, training):
        y[...] = x / 2
    def backward(self, x, y, dy, dx):
        dx[...] = dy / 2
PY
cat >"$plugins/exp.json" <<'JSON'
{"model": {"name": "halved", "layers": [{"type": "flatten"}, {"type": "halve"},
                                         {"type": "fc", "units": "$classes"}, {"type": "softmax"}]},
 "dataset": {"name": "synthetic", "input_shape": [4, 4, 1], "classes": 3, "train_samples": 128,
             "test_samples": 32},
 "training": {"epochs": 1, "batch_size": 32}, "output": {"progress": "lines"}}
JSON
program=$("$venv/bin/python" -c "import dtnn, pathlib; print(pathlib.Path(dtnn.__file__).parent / 'bin' / 'dtnn')")
env -u DTNN_PLUGIN_PATH "$program" run "$plugins/exp.json" --plugin-path "$plugins" | grep -E "^Training"
rm -rf "$plugins"
echo "check-pip-install: a plugin written in Python through the package's program: ok"
