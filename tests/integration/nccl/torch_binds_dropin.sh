#!/usr/bin/env sh
# torch_binds_dropin.sh PYTHON PRELOAD EXPECTED: imports torch with PRELOAD in LD_PRELOAD and
# checks that its NCCL is EXPECTED (tools/gpu_kit/nccl_ddp.py which-nccl). Exit 77 (skipped)
# where PYTHON has no torch or a torch without CUDA.
python="$1" preload="$2" expected="$3"
"$python" -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('torch') else 77)" ||
  { echo "skipped: $python has no torch"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
LD_PRELOAD="$preload" exec "$python" "$here/../../../tools/gpu_kit/nccl_ddp.py" which-nccl "$expected"
