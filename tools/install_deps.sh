#!/usr/bin/env bash
# Installs the Debian packages braid needs to build and test, when missing, then the
# Python packages (tools/install_python_deps.sh). Called by `make run` and `make test`;
# does nothing when all are present.
set -euo pipefail
cd "$(dirname "$0")/.."

required=(
  g++ cmake ninja-build pkg-config libgtest-dev python3  # build and unit tests
  libhwloc-dev                                             # topology detection
  libssl-dev openssl                                       # crypto and TLS (OpenSSL 3); certificates for the TLS tests
  iproute2                                                 # multi-host test bed (netns, veth, tc)
  clang libclang-rt-14-dev                                 # fuzz targets and sanitizers
  dataset-fashion-mnist zlib1g-dev                         # the training harness: data, gzip
  libopenmpi-dev openmpi-bin libmpich-dev mpich            # MPI bootstrap tests, MPI baselines
  patchelf                                                 # the GPU kit: $ORIGIN RUNPATHs
)
missing=()
for pkg in "${required[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done

if [ ${#missing[@]} -ne 0 ]; then
  echo "braid: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

if [ -x tools/install_python_deps.sh ]; then
  tools/install_python_deps.sh
fi
