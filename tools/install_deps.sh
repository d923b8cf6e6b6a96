#!/usr/bin/env bash
# Installs the Debian packages braid needs to build and test, when missing.
# Called by `make run` and `make test`; does nothing when all are present.
set -euo pipefail

required=(g++ cmake ninja-build pkg-config libgtest-dev python3)
missing=()
for pkg in "${required[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "braid: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
