#!/usr/bin/env bash
# Installs the Debian 12 packages dtnn needs to build, test and run its default experiments
# (Fashion-MNIST, and the English text of `fortunes` for the language model).
# Idempotent: packages already present are skipped, and apt is not touched when nothing is missing.
#   scripts/install-deps.sh           build + test + Fashion-MNIST
#   scripts/install-deps.sh --bench   also PyTorch (python3-torch), the peer the benchmarks compare with
#   scripts/install-deps.sh --fuzz    also clang and libFuzzer (scripts/check-fuzzers.sh)
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config ccache
  libboost-dev libboost-program-options-dev
  libopenmpi-dev openmpi-bin
  libblis-openmp-dev
  nlohmann-json3-dev doctest-dev libfmt-dev zlib1g-dev
  python3-numpy python3-matplotlib python3-yaml libjpeg62-turbo-dev libpng-dev
  python3-dev pybind11-dev python3-pytest
  libssl-dev openssl libmosquitto-dev mosquitto
  dataset-fashion-mnist fortunes
)
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(python3-torch) ;;
    --fuzz) packages+=(clang libfuzzer-14-dev libclang-rt-14-dev libomp-14-dev) ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg' (expected --bench, --fuzz or --help)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
