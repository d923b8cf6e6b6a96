#!/usr/bin/env bash
# Installs the PyPI packages that the Python bindings and their tests need, when missing:
# torch (the c10d backend builds against it), setuptools and wheel (the extension build),
# pytest, and numpy + expecttest (imported by torch.testing._internal, whose distributed
# suite runs against braid). Called by tools/install_deps.sh; does nothing when all are
# present. Set BRAID_SKIP_PYTHON_DEPS=1 to skip (the Python tests then skip themselves).
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

if [ ${#missing[@]} -ne 0 ]; then
  echo "braid: pip-installing ${missing[*]}"
  "$python" -m pip install --quiet "${missing[@]}"
fi
