#!/usr/bin/env bash
# Side by side in one run: braid-perf allreduce vs MPI_Allreduce (OpenMPI),
# float sum, same sizes, same timing method. Needs openmpi-bin and
# libopenmpi-dev at configure time (the mpi_allreduce target).
# Usage: perf/compare_mpi.sh [build-dir] [nranks] [shm|socket]
set -euo pipefail
build=${1:-build}
n=${2:-2}
transport=${3:-shm}
btl=$([ "$transport" = shm ] && echo vader || echo tcp)
[ -x "$build/perf/mpi_allreduce" ] || { echo "no $build/perf/mpi_allreduce: install libopenmpi-dev and rebuild"; exit 2; }

braid=$(mktemp); mpi=$(mktemp)
trap 'rm -f "$braid" "$mpi"' EXIT
export LC_ALL=C  # join wants both inputs in the same collation
BRAID_TRANSPORT=$transport "$build/tools/braidrun" -n "$n" -- \
  "$build/perf/braid-perf" allreduce -b 8 -e 128M -f 16 -c 0 -n 20 -w 3 |
  awk '/^ +[0-9]/ {print $1, $6, $8}' >"$braid"
mpirun --allow-run-as-root --oversubscribe -np "$n" --mca btl "self,$btl" \
  "$build/perf/mpi_allreduce" 8 134217728 16 20 | awk '/^ +[0-9]/ {print $1, $2, $4}' >"$mpi"

echo "# allreduce float sum, $n ranks, braid $transport vs OpenMPI btl $btl"
# speedup = mpi time / braid time (> 1: braid is faster); GB/s are busbw.
printf "%12s %12s %12s %10s %10s %8s\n" "size(B)" "braid(us)" "mpi(us)" "braid GB/s" "mpi GB/s" "speedup"
join "$braid" "$mpi" | awk '{r = ($2 > 0) ? $4 / $2 : 0;
  printf "%12d %12.2f %12.2f %10.2f %10.2f %8.2f\n", $1, $2, $4, $3, $5, r}'
