#!/usr/bin/env bash
# Installs the Debian 12 packages Mono builds with; does nothing when they are all present.
#   scripts/install-deps.sh [--test]   --test adds what the tests drive: Chromium (the
#                                      dashboard's browser test), Prometheus, curl, Node.js,
#                                      clang with libFuzzer (tests/fuzz), Python 3 and xz
#                                      (tests/tuning/tuning_data_checks.sh reads a run's archive)
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev nlohmann-json3-dev prometheus-cpp-dev
  libonnx-dev libonnx-testdata libgtest-dev
)
if [ "${1:-}" = "--test" ]; then
  packages+=(chromium prometheus curl clang libclang-rt-14-dev python3 xz-utils)
  # Node.js and npm from Debian, unless the machine already has its own.
  command -v node > /dev/null || packages+=(nodejs)
  command -v npm > /dev/null || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"

if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: note: no CUDA toolkit at /usr/local/cuda (needed later for code generation)"
fi
