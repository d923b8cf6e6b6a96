#!/usr/bin/env bash
# RDMA comparison on soft-RoCE, run inside the test guest in one boot, so every row
# shares the same emulated machine and its load:
#   perf/rdma/guest_bench.sh BUILD_DIR            (normally through perf/rdma/run)
# Rows: ib_write_bw (the link's floor: raw RDMA writes, one process each side), braid over
# ib, braid over TCP (BRAID_TRANSPORT=socket on the same dummy device), and OpenMPI with
# UCX on rxe0 (--mca pml ucx) -- 2 ranks; braid and OpenMPI run perf/baselines' one
# measurement loop (median per-iteration time, max over ranks; nccl-tests sizes and busbw).
set -uo pipefail
build=$1
sizes=(65536 1048576 4194304)
bench_args=(-b 8 -e 4194304 -f 8 -c allreduce,allgather,sendrecv)
export BRAID_TIMEOUT=300

echo "## ib_write_bw -d rxe0 (MB/s, average)"
for s in "${sizes[@]}"; do
  ib_write_bw -d rxe0 -x 1 -s "$s" -n 200 -F >/dev/null 2>&1 &
  sleep 1
  ib_write_bw -d rxe0 -x 1 -s "$s" -n 200 -F 10.77.0.1 2>/dev/null |
    awk -v s="$s" '$1 == s { print "ib_write_bw " s " bytes: " $4 " MB/s" }'
  wait
done

for round in 1 2; do
  for transport in ib socket; do
    echo "## braid BRAID_TRANSPORT=$transport (round $round)"
    BENCH_TRANSPORT=$transport BRAID_TRANSPORT=$transport \
      "$build/tools/braidrun" -n 2 --timeout 600 -- "$build/perf/bench_braid" "${bench_args[@]}"
  done
  if [[ -x $build/perf/bench_mpi ]]; then
    echo "## OpenMPI --mca pml ucx, UCX_NET_DEVICES=rxe0:1 (round $round)"
    BENCH_TRANSPORT=ucx mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 \
      --mca pml ucx --mca btl ^openib -x UCX_NET_DEVICES=rxe0:1 -x BENCH_TRANSPORT \
      "$build/perf/bench_mpi" "${bench_args[@]}" 2>&1 | grep -v '^\[' || true
  fi
done
