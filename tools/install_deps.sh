#!/usr/bin/env bash
# Installs the Debian packages braid needs, when missing; does nothing when all are present.
#   tools/install_deps.sh run    what `make run` needs: compile the library, braidrun, braid-perf
#   tools/install_deps.sh test   what `make test` needs too (the default)
# The Python packages go into a virtual environment instead: tools/install_python_deps.sh.
set -euo pipefail

purpose="${1:-test}"
build=(
  g++ cmake ninja-build pkg-config                       # compiler and build
  libcli11-dev                                           # the tools' command lines
  libssl-dev                                             # crypto and TLS (OpenSSL 3)
  libgtest-dev zlib1g-dev python3                        # configuring: tests, harness, scripts
  libhwloc-dev                                           # topology detection
  libibverbs-dev                                         # the ib transport's header (dlopen)
)
testing=(
  python3-venv python3-dev                               # the Python tests: environment, extension build
  openssl                                                # certificates for the TLS tests
  libopenmpi-dev openmpi-bin libmpich-dev mpich          # MPI bootstrap tests, MPI baselines
  patchelf                                               # the GPU kit: $ORIGIN RUNPATHs
  qemu-system-x86 busybox-static ibverbs-providers       # the soft-RoCE guest (tests/rdma/guest)
  ibverbs-utils perftest
  iproute2                                               # multi-host test bed (netns, veth, tc)
  clang libclang-rt-14-dev                               # fuzz targets and sanitizers
  dataset-fashion-mnist                                  # the training harness's data
)
case "$purpose" in
  run) required=("${build[@]}") ;;
  test) required=("${build[@]}" "${testing[@]}") ;;
  *) echo "install_deps.sh: unknown purpose '$purpose' (expected run or test)" >&2; exit 2 ;;
esac

missing=()
for pkg in "${required[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "braid: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
