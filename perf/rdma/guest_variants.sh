#!/usr/bin/env bash
# Contenders over soft-RoCE, paired in rounds inside the test guest (one boot, so every
# contender shares the same emulated machine and its load):
#   tests/rdma/guest --cache build/rdma-guest -- perf/rdma/guest_variants.sh build ROUNDS \
#       MIN MAX FACTOR COLLS CONTENDER...
# e.g. ... guest_variants.sh build 3 1M 16M 4 broadcast,sendrecv ib= ucx= wbw
#      ... guest_variants.sh build 3 1M 16M 4 broadcast,allgather default= chunk4M=BRAID_CHUNK_BYTES=4M
#      ... guest_variants.sh build 6 64 4K 8 broadcast,sendrecv credits= nocredit=BRAID_IB_CREDITS=0
# A contender is
#   NAME=ENV[,ENV...]     braid over ib (BRAID_TRANSPORT=ib) with those variables, none
#                         for the defaults (an older build: LD_LIBRARY_PATH=its build/src;
#                         braid over TCP: BRAID_TRANSPORT=socket,BRAID_SOCKET_IFNAME=dummy0);
#   ucxNAME=ENV[,ENV...]  (a name starting with ucx) OpenMPI + UCX on rxe0 running
#                         perf/bench_mpi, the same loop as bench_braid (e.g. ucx=, or
#                         ucxput=UCX_RNDV_SCHEME=put_zcopy);
#   wbw, rbw              ib_write_bw / ib_read_bw at each size: one-way against
#                         broadcast, -b per direction against the two-way collectives.
# Either kind of ENV list may also hold settings of the loop itself, the same for both
# programs (perf/rdma/guest_lib.sh): BENCH_PATTERN=back-to-back (or gap; the default is
# isolated: a barrier before each call), BENCH_SAMPLES=1 (every call's time and each
# rank's CPU time, "s ..." and "c ..." lines), BENCH_COUNTERS=1 (rxe0's counters over
# the run: packets, retries, duplicates; "k ..." lines), e.g.
#   ... guest_variants.sh build 3 4M 16M 4 broadcast ib=BENCH_COUNTERS=1 ucx=BENCH_COUNTERS=1
# The order rotates from round to round (round r starts with the r-th contender), so
# no contender always goes first or last and load that drifts hits all alike. Prints
# "v ROUND NAME COLLECTIVE SIZE MB/s" per result (MB/s: 2^20 bytes/s per direction,
# nccl-tests' bus bandwidth on 2 ranks), then per collective and size each contender's
# median and, for each pair A before B on the command line, the median over rounds of
# A / B in the same round (> 1: A faster) with the per-round ratios.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=perf/rdma/guest_lib.sh
source "$here/guest_lib.sh"
usage() {
  echo "usage: $0 build ROUNDS MIN MAX FACTOR COLLS CONTENDER... (NAME=ENV[,ENV...], ucxNAME=..., wbw, rbw)" >&2
  exit 2
}
(($# >= 7)) || usage
build=$1 rounds=$2 args="$3 $4 $5 $6"
shift 6
contenders=("$@")
names=()
for c in "${contenders[@]}"; do
  [[ $c == wbw || $c == rbw || $c == *=* ]] || usage
  names+=("${c%%=*}")
done
raw=$(mktemp)

for c in "${contenders[@]}"; do
  if [[ ${c%%=*} == ucx* ]]; then
    echo "## OpenMPI + UCX: ${ucx_env[*]}; the lanes UCX picked:"
    ucx_lanes
    break
  fi
done
n=${#contenders[@]}
for round in $(seq "$rounds"); do
  for ((k = 0; k < n; ++k)); do
    run_variant "$round" "${contenders[$(((k + round - 1) % n))]}" "$args" | tee -a "$raw"
  done
done
echo "## median MB/s over $rounds rounds, and A/B: median of the per-round ratios (per round)"
summarize "$raw" "${names[@]}"
rm -f "$raw"
