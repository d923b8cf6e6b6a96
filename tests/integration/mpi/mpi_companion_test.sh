#!/usr/bin/env bash
# braid_mpi.h from an outside program, with one MPI's own compiler wrapper and launcher:
# compiles tests/integration/mpi/mpi_outside.c with that MPI's mpicc against include/ and
# libbraid.so only (the installed package and braid_mpi.pc: tests/integration/install),
# then, under the MPI's launcher:
#   1. -np 4 world:   braidCommInitMPI on MPI_COMM_WORLD and on splits; results equal MPI's;
#                     MPI_COMM_NULL, an inter-communicator and NULL comm are clear errors;
#   2. -np 4 fromenv: braidCommInitFromEnv with MPI initialised and no BRAID_* variable
#                     bootstraps over MPI (the log says so);
#   3. -np 1 uninit:  before MPI_Init and after MPI_Finalize, clear errors.
# Usage: mpi_companion_test.sh openmpi|mpich LIBBRAID SOURCE_DIR WORK_DIR
# Skips (77) when that MPI's wrapper or launcher is not installed.
set -uo pipefail
flavor=$1 libbraid=$2 source=$3 work=$4

case $flavor in
  openmpi)
    mpicc=mpicc.openmpi launcher=mpirun.openmpi
    # As root Open MPI wants --allow-run-as-root; 4 ranks on fewer cores need --oversubscribe.
    launch() { timeout 240 mpirun.openmpi --oversubscribe --allow-run-as-root -np "$@"; } ;;
  mpich)
    mpicc=mpicc.mpich launcher=mpiexec.mpich
    launch() { timeout 240 mpiexec.mpich -n "$@"; } ;;
  *) echo "usage: $0 openmpi|mpich LIBBRAID SOURCE_DIR WORK_DIR" >&2; exit 2 ;;
esac
if ! command -v "$mpicc" >/dev/null || ! command -v "$launcher" >/dev/null; then
  echo "skipped: $mpicc or $launcher not installed (tools/install_deps.sh installs both)"
  exit 77
fi

# No BRAID_* variable reaches the ranks: MPI alone must bring them together.
for name in $(compgen -e); do [[ $name == BRAID_* ]] && unset "$name"; done

rm -rf "$work" && mkdir -p "$work"
log=$work/log
fail() {
  echo "FAIL ($flavor): $1; output:" >&2
  cat "$log" >&2
  exit 1
}
"$mpicc" -std=c99 -Wall -Wextra -Werror "$source/tests/integration/mpi/mpi_outside.c" \
  -I"$source/include" "$libbraid" -Wl,-rpath,"$(dirname "$libbraid")" -o "$work/mpi_outside" \
  >"$log" 2>&1 || fail "$mpicc build"

launch 4 "$work/mpi_outside" world >"$log" 2>&1 || fail "world, 4 ranks"
grep -q "mpi_outside world: 4 ranks ok" "$log" || fail "world: no success line"

# BRAID_DEBUG, braid's log switch and no bootstrap setting, shows which bootstrap ran.
BRAID_DEBUG=INFO launch 4 "$work/mpi_outside" fromenv >"$log" 2>&1 || fail "fromenv, 4 ranks"
grep -q "mpi_outside fromenv: 4 ranks ok" "$log" || fail "fromenv: no success line"
grep -q "unique id by MPI_Bcast" "$log" || fail "fromenv: braid did not bootstrap over MPI"

launch 1 "$work/mpi_outside" uninit >"$log" 2>&1 || fail "uninit"
grep -q "mpi_outside uninit: ok" "$log" || fail "uninit: no success line"
echo "ok ($flavor): braid_mpi.h, braidCommInitFromEnv over MPI, and bad input"
