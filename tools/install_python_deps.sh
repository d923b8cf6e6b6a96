#!/usr/bin/env bash
# Installs the PyPI packages that the Python bindings and their tests need, when missing:
# torch (the c10d backend builds against it), setuptools and wheel (the extension build),
# pytest, and numpy + expecttest (imported by torch.testing._internal, whose distributed
# suite runs against braid). Called by tools/install_deps.sh; does nothing when all are
# present. Set BRAID_SKIP_PYTHON_DEPS=1 to skip (the Python tests are then left out), and
# BRAID_TORCH_INDEX_URL to take torch from another index (e.g. the CPU-only wheels at
# https://download.pytorch.org/whl/cpu, a tenth of the download).
set -euo pipefail

[ "${BRAID_SKIP_PYTHON_DEPS:-0}" = "1" ] && exit 0
python="${PYTHON:-python3}"

# module name : pip requirement
required=(
  "torch:torch"
  "setuptools:setuptools"
  "wheel:wheel"
  "pytest:pytest"
  "numpy:numpy"
  "expecttest:expecttest"
)
missing=()
for entry in "${required[@]}"; do
  module="${entry%%:*}"
  requirement="${entry#*:}"
  "$python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$module') is None)" \
    2>/dev/null || missing+=("$requirement")
done

others=()
for requirement in "${missing[@]}"; do
  if [ "$requirement" = "torch" ] && [ -n "${BRAID_TORCH_INDEX_URL:-}" ]; then
    echo "braid: pip-installing torch from $BRAID_TORCH_INDEX_URL"
    "$python" -m pip install --quiet --index-url "$BRAID_TORCH_INDEX_URL" torch
  else
    others+=("$requirement")
  fi
done
if [ ${#others[@]} -ne 0 ]; then
  echo "braid: pip-installing ${others[*]}"
  "$python" -m pip install --quiet "${others[@]}"
fi
