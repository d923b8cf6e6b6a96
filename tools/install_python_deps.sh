#!/usr/bin/env bash
# Creates the virtual environment that braid's Python tests and plots run in, and installs into it
# what is missing: torch (the c10d backend builds against it), setuptools and wheel (the extension
# build), pytest, numpy and expecttest (imported by torch.testing._internal), matplotlib (perf/plot
# and braid-train's plots). Does nothing when the environment already has them all.
#   tools/install_python_deps.sh VENV       e.g. build/venv (what `make test` passes)
#
# Which environment: a python3 that its user manages (pyenv, conda, a python built from source)
# is extended: the environment sees that python's packages (--system-site-packages), so a torch
# already installed there is used as it is and nothing large is downloaded. A python3 that the
# distribution manages (Debian's, which refuses pip under PEP 668) gets an environment of its own,
# and torch comes from PyTorch's CPU-only wheels (about 200 MB instead of several GB with CUDA).
#   PYTHON                 the base interpreter (default python3)
#   BRAID_TORCH_INDEX_URL  where pip takes torch from when it must install it
#                          (default https://download.pytorch.org/whl/cpu; https://pypi.org/simple
#                          for the CUDA wheels)
#   BRAID_SKIP_TORCH=1     everything but torch (the PyTorch tests are then skipped)
set -euo pipefail

venv="${1:?usage: install_python_deps.sh VENV}"
python="${PYTHON:-python3}"
torch_index="${BRAID_TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"

# module name : pip requirement
required=(
  "torch:torch>=2.4"
  "setuptools:setuptools>=64"
  "wheel:wheel"
  "pytest:pytest"
  "numpy:numpy"
  "expecttest:expecttest"
  "matplotlib:matplotlib"
)

if [ "${BRAID_SKIP_TORCH:-0}" = "1" ]; then
  required=("${required[@]:1}")
fi

missing_in() {  # prints the requirements whose module $1 cannot import
  local interpreter="$1" entry
  for entry in "${required[@]}"; do
    "$interpreter" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('${entry%%:*}') is None)" \
      2>/dev/null || echo "${entry#*:}"
  done
}

if [ ! -x "$venv/bin/python" ]; then
  command -v "$python" >/dev/null || { echo "braid: no $python; install python3" >&2; exit 1; }
  managed=$("$python" -c 'import os, sys, sysconfig
print(int(sys.prefix == sys.base_prefix and
          os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))))')
  if [ "$managed" = "1" ]; then
    echo "braid: $python is managed by the distribution: a separate environment in $venv"
    "$python" -m venv "$venv"
  else
    echo "braid: an environment in $venv that sees $python's packages"
    "$python" -m venv --system-site-packages "$venv"
  fi
fi

mapfile -t missing < <(missing_in "$venv/bin/python")
[ ${#missing[@]} -eq 0 ] && exit 0

pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
others=()
for requirement in "${missing[@]}"; do
  if [[ "$requirement" == torch* ]]; then
    echo "braid: pip-installing torch from $torch_index"
    "${pip[@]}" --index-url "$torch_index" "$requirement" || {
      echo "braid: could not install torch from $torch_index; set BRAID_TORCH_INDEX_URL to an" \
           "index you can reach (https://pypi.org/simple: the CUDA wheels, several GB), or" \
           "BRAID_SKIP_TORCH=1 to leave the PyTorch tests out" >&2
      exit 1
    }
  else
    others+=("$requirement")
  fi
done
if [ ${#others[@]} -ne 0 ]; then
  echo "braid: pip-installing ${others[*]}"
  "${pip[@]}" "${others[@]}"
fi
mapfile -t missing < <(missing_in "$venv/bin/python")
if [ ${#missing[@]} -ne 0 ]; then
  echo "braid: $venv still lacks ${missing[*]}" >&2
  exit 1
fi
