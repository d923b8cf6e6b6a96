#!/usr/bin/env bash
# braid over ib against OpenMPI + UCX and ib_write_bw on soft-RoCE, in one boot of the
# test guest:
#   tests/rdma/guest --cache build/rdma-guest -- perf/rdma/guest_bench.sh build [ROUNDS [ENV...]]
# broadcast, sendrecv, all-reduce and all-gather on 2 ranks at 1, 4 and 16 MiB; each
# round runs braid as it is ("ib"), braid with ENV... ("base", only when ENV is given:
# e.g. LD_LIBRARY_PATH=<older build>/src), OpenMPI with UCX on rxe0 ("ucx") and
# ib_write_bw ("wbw": one-way against broadcast, -b per direction against the others),
# in an order that rotates from round to round (perf/rdma/guest_variants.sh, which
# prints every raw line, the medians and the per-round ratios of each pair).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 rounds=${2:-3}
contenders=(ib=)
if (($# > 2)); then
  base=("${@:3}")
  contenders+=("base=$(
    IFS=,
    echo "${base[*]}"
  )")
fi
exec "$here/guest_variants.sh" "$build" "$rounds" 1M 16M 4 broadcast,sendrecv,allreduce,allgather \
  "${contenders[@]}" ucx= wbw
