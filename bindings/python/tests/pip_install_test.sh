#!/usr/bin/env bash
# `pip install ./bindings/python` in one step, in a fresh virtual environment, then a 2-rank DDP
# run under torchrun with the installed package (never the source folder's).
#   pip_install_test.sh PYTHON SOURCE_DIR [CMAKE_ARGS...]
# PYTHON is the test environment's interpreter: the fresh environment sees its packages (torch)
# through a .pth file, so that torch is not downloaded again; pip itself fetches scikit-build-core
# for the isolated build. CMAKE_ARGS (e.g. a compiler launcher) go to the package's CMake run.
set -euo pipefail
python="$1" source_dir="$2"
shift 2
work="$(mktemp -d "${TMPDIR:-/tmp}/braid-pip.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

"$python" -m venv "$work/venv"
fresh_site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$python" -c 'import sys; print("\n".join(p for p in sys.path if p.endswith("-packages")))' \
  >"$fresh_site/braid-test-environment.pth"
"$work/venv/bin/python" -c "import torch" || fail "the fresh environment does not see torch"

# torch missing: the build stops with one clear sentence, not a raw traceback.
python3_bare="$work/bare"
"$python" -m venv "$python3_bare"
set +e
"$python3_bare/bin/pip" install --quiet --disable-pip-version-check "$source_dir/bindings/python" \
  >"$work/bare.log" 2>&1
status=$?
set -e
[ $status -ne 0 ] || fail "pip install without torch succeeded"
grep -q "has no torch" "$work/bare.log" || { cat "$work/bare.log"; fail "no clear message without torch"; }

SKBUILD_CMAKE_BUILD_TYPE="${SKBUILD_CMAKE_BUILD_TYPE:-Release}" CMAKE_ARGS="$*" \
  "$work/venv/bin/pip" install --quiet --disable-pip-version-check \
  "$source_dir/bindings/python" >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; fail "pip install"; }
cd "$work"  # away from the source tree: braid must come from the environment
"$work/venv/bin/python" -c "
import braid, braid.torch, pathlib
assert pathlib.Path(braid.__file__).is_relative_to(pathlib.Path('$work/venv')), braid.__file__
print('installed braid', braid.version(), 'at', pathlib.Path(braid.__file__).parent)"
cat >"$work/ddp.py" <<'PY'
import torch, torch.distributed as dist
import braid.torch  # noqa: F401  registers the backend
dist.init_process_group(backend="braid")
rank, size = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    torch.manual_seed(100 + 10 * step + rank)  # different data on each rank
    loss = model(torch.randn(4, 8)).square().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
# DDP keeps the replicas equal: every rank holds the same weights.
weights = torch.cat([p.detach().flatten() for p in model.parameters()])
gathered = [torch.empty_like(weights) for _ in range(size)]
dist.all_gather(gathered, weights)
assert all(torch.equal(gathered[0], g) for g in gathered), "replicas differ"
if rank == 0:
    print("ddp over braid: %d ranks, replicas equal after 3 steps" % size)
dist.destroy_process_group()
PY
OMP_NUM_THREADS=1 "$work/venv/bin/python" -m torch.distributed.run --standalone --nproc-per-node 2 \
  "$work/ddp.py" || fail "2-rank DDP under torchrun"
