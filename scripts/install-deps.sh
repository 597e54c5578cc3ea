#!/usr/bin/env bash
# Installs the Debian 12 packages dtnn needs to build, test and run its default experiments
# (Fashion-MNIST, and the English text of `fortunes` for the language model), TenSEAL from PyPI
# (the ckks codec's homomorphic encryption), TensorBoard and ONNX Runtime from PyPI (in
# /opt/dtnn-pytools).
# Idempotent: packages already present are skipped, and apt is not touched when nothing is missing.
#   scripts/install-deps.sh           build + test + Fashion-MNIST
#   scripts/install-deps.sh --torch   also Debian's PyTorch (python3-torch 1.13, python3-torchvision):
#                                     the source dtnn.pytorch's tests load weights from
#   scripts/install-deps.sh --bench   --torch, and the current PyTorch from PyPI in a virtual
#                                     environment, /opt/dtnn-torch: the peers the benchmarks
#                                     compare with
#   scripts/install-deps.sh --fuzz    also clang and libFuzzer (scripts/check-fuzzers.sh)
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config ccache
  libboost-dev libboost-program-options-dev
  libopenmpi-dev openmpi-bin
  libblis-openmp-dev
  nlohmann-json3-dev doctest-dev libfmt-dev zlib1g-dev
  python3-numpy python3-matplotlib python3-yaml libjpeg62-turbo-dev libpng-dev
  python3-dev pybind11-dev python3-pytest python3-pip python3-venv python3-onnx
  python3-nbclient python3-nbformat python3-ipykernel
  libssl-dev openssl libmosquitto-dev mosquitto
  libgrpc++-dev protobuf-compiler-grpc protobuf-compiler libprotobuf-dev
  dataset-fashion-mnist fortunes
)
bench=0
for arg in "$@"; do
  case "$arg" in
    --torch) packages+=(python3-torch python3-torchvision) ;;
    --bench) packages+=(python3-torch python3-torchvision python3-venv); bench=1 ;;
    --fuzz) packages+=(clang libfuzzer-14-dev libclang-rt-14-dev libomp-14-dev) ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg' (expected --torch, --bench, --fuzz or --help)" >&2; exit 2 ;;
  esac
done

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "install-deps: done"
fi

# TenSEAL, the CKKS library the ckks codec reaches through Python (PyDTNN 3.x's --encryption
# tenseal): in no Debian package, so from PyPI, for Debian's python3, beside Debian's numpy
# (--no-deps: TenSEAL needs nothing else). Debian marks its Python externally managed; a package
# installed into /usr/local, as this is, does not touch Debian's own.
tenseal=tenseal==0.3.18
if ! /usr/bin/python3 -c "import tenseal" 2>/dev/null; then
  echo "install-deps: installing $tenseal from PyPI (pip, into /usr/local)"
  $sudo /usr/bin/python3 -m pip install -q --break-system-packages --no-deps --root-user-action=ignore \
    "$tenseal" || { echo "install-deps: pip could not install $tenseal" >&2; exit 1; }
fi

# TensorBoard and ONNX Runtime from PyPI (in no Debian package): the readers the tests check
# `dtnn run --tensorboard` (tests/tensorboard.py) and dtnn.onnx's exports (tests/python/test_onnx.py)
# with, and what a user looks at runs with (/opt/dtnn-pytools/bin/tensorboard --logdir DIR): a
# virtual environment of their own, as their protobuf and numpy are newer than Debian's.
if ! /opt/dtnn-pytools/bin/python3 -c "import tensorboard, onnxruntime" 2>/dev/null; then
  echo "install-deps: installing TensorBoard and ONNX Runtime from PyPI into /opt/dtnn-pytools"
  $sudo /usr/bin/python3 -m venv /opt/dtnn-pytools
  $sudo /opt/dtnn-pytools/bin/pip install -q --no-cache-dir tensorboard onnxruntime ||
    { echo "install-deps: pip could not install tensorboard, onnxruntime into /opt/dtnn-pytools" >&2
      exit 1; }
fi

# The current PyTorch from PyPI, beside Debian's 1.13, for the benchmarks (bench/compare_torch.py and
# bench/compare_transformer.py run both): a virtual environment of its own (pip pulls the CUDA
# libraries too, some GB), so that neither Python's packages touch the other's.
if [ "$bench" = 1 ] && ! /opt/dtnn-torch/bin/python3 -c "import torch, torchvision, numpy" 2>/dev/null; then
  echo "install-deps: installing the current PyTorch from PyPI into /opt/dtnn-torch"
  $sudo /usr/bin/python3 -m venv /opt/dtnn-torch
  # torchvision: the ImageNet models of bench/scale_of_step.py's peer.
  $sudo /opt/dtnn-torch/bin/pip install -q --no-cache-dir torch torchvision numpy ||
    { echo "install-deps: pip could not install torch into /opt/dtnn-torch" >&2; exit 1; }
fi
