#!/usr/bin/env bash
# RDMA comparison on soft-RoCE, run inside the test guest in one boot, so every row
# shares the same emulated machine and its load:
#   tests/rdma/guest --cache build/rdma-guest -- perf/rdma/guest_bench.sh build [ROUNDS]
#
# Like is compared with like, paired in each round (the emulated link's speed swings
# with the host's load, so only ratios within a round mean anything):
#   one way:  braid broadcast on 2 ranks (the root writes to the other rank) against
#             ib_write_bw (one writer, one passive target);
#   two ways: braid sendrecv on 2 ranks (each rank sends to and receives from the other
#             at once) against ib_write_bw -b (both sides write), per direction.
# soft-RoCE does its packet work on the guest's CPUs, so traffic in both directions at
# once shares those CPUs: a two-way figure is lower than a one-way one for braid and
# ib_write_bw alike. Each round also runs braid busy-polling only (BRAID_SPIN); then, once
# each: braid with 4 MiB collective chunks, braid over TCP on the same dummy device, and
# OpenMPI with UCX on rxe0.
# Prints every raw line, then per size the medians over rounds and the median ratio.
set -uo pipefail
build=$1
rounds=${2:-3}
sizes=(1048576 4194304)
bench_args=(-b 1048576 -e 4194304 -f 4 -c 'broadcast,sendrecv')
export BRAID_TIMEOUT=300
out=$(mktemp -d)

# ib_write_bw SIZE ITERS [-b] -> prints "MB/s" (2^20 bytes, perftest's unit): the average.
write_bw() {
  local size=$1 iters=$2
  shift 2
  # A fresh port each time: a server from a failed try must not hold the next one's.
  local port=$((20000 + RANDOM % 20000))
  timeout --foreground 120 ib_write_bw -d rxe0 -x 1 -p $port -s "$size" -n "$iters" -F "$@" \
    >/dev/null 2>&1 &
  local server=$! result=""
  # The client retries while the server starts (slow on a loaded emulated machine).
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 1
    result=$(timeout --foreground 120 ib_write_bw -d rxe0 -x 1 -p $port -s "$size" -n "$iters" -F "$@" 10.77.0.1 \
      2>/dev/null | awk -v s="$size" '$1 == s { print $4 }')
    [[ -n $result ]] && break
  done
  echo "$result"
  wait "$server"
}

# braid_bench LABEL ENV... -> lines "LABEL COLLECTIVE SIZE MB/s" (2^20 bytes/s, from the
# median time: the printed algbw has too few digits at these speeds)
braid_bench() {
  local label=$1
  shift
  env "$@" timeout 300 "$build/tools/braidrun" -n 2 --timeout 300 -- \
    "$build/perf/bench_braid" "${bench_args[@]}" 2>&1 |
    awk -v l="$label" '$1 ~ /^(broadcast|sendrecv)$/ { printf "%s %s %s %.2f\n", l, $1, $2, $2 / $3 * 1e6 / 1048576 }'
}

for round in $(seq "$rounds"); do
  for s in "${sizes[@]}"; do
    iters=$((s > 1048576 ? 25 : 100))
    echo "wbw_uni $s $(write_bw "$s" "$iters")" | tee -a "$out/raw"
    bi=$(write_bw "$s" "$iters" -b)
    # -b reports both directions together; the per-direction figure is half.
    echo "wbw_bi $s $(awk -v b="$bi" 'BEGIN { if (b != "") printf "%.2f", b / 2 }')" |
      tee -a "$out/raw"
  done
  braid_bench "ib$round" BRAID_TRANSPORT=ib | tee -a "$out/raw"
  # The same busy-polling only: never yielding the CPU nor sleeping on the completion
  # channel, as ib_write_bw waits.
  braid_bench "spin$round" BRAID_TRANSPORT=ib BRAID_SPIN=100000000 | tee -a "$out/raw"
done
echo "## braid over ib with 4 MiB collective chunks (default 1 MiB: one clear-to-send round trip per chunk)"
braid_bench big BRAID_TRANSPORT=ib BRAID_CHUNK_BYTES=4194304 | tee -a "$out/raw"
echo "## braid over TCP on the dummy device"
braid_bench tcp BRAID_TRANSPORT=socket BRAID_SOCKET_IFNAME=dummy0 | tee -a "$out/raw"

echo "## medians over $rounds rounds (MB/s = 2^20 bytes/s; ratio: braid / ib_write_bw per round)"
awk -v rounds="$rounds" '
  function med(a, n,   i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  # ib_write_bw now and then reports an average of 0.00 on this guest: no figure.
  $1 == "wbw_uni" { uni[$2, ++nu[$2]] = $3 > 0 ? $3 : "" }
  $1 == "wbw_bi" { bi[$2, ++nb[$2]] = $3 > 0 ? $3 : "" }
  $1 ~ /^ib[0-9]+$/ && $2 == "broadcast" { bc[$3, ++nbc[$3]] = $4 }
  $1 ~ /^ib[0-9]+$/ && $2 == "sendrecv" { sr[$3, ++nsr[$3]] = $4 }
  $1 ~ /^spin[0-9]+$/ && $2 == "broadcast" { gbc[$3, ++ngbc[$3]] = $4 }
  $1 ~ /^spin[0-9]+$/ && $2 == "sendrecv" { gsr[$3, ++ngsr[$3]] = $4 }
  $1 == "big" || $1 == "tcp" { once[$1, $2, $3] = $4 }
  END {
    printf "%-9s %-10s %10s %10s %24s %24s %8s %8s\n", "size", "way", "wbw", "braid", "ratio (per round)", "busy polling: ratio", "4MiB-chunks", "tcp"
    for (s = 1048576; s <= 4194304; s *= 4) {
      for (way = 0; way < 2; ++way) {
        n = 0; list = ""; m = 0; glist = ""; nw = 0
        for (r = 1; r <= rounds; ++r) {
          w = way ? bi[s, r] : uni[s, r]; b = way ? sr[s, r] : bc[s, r]
          g = way ? gsr[s, r] : gbc[s, r]
          if (w > 0) W[++nw] = w
          B[r] = b
          if (w > 0 && b > 0) { R[++n] = b / w; list = list sprintf("%s%.2f", n > 1 ? "," : "", b / w) }
          if (w > 0 && g > 0) { G[++m] = g / w; glist = glist sprintf("%s%.2f", m > 1 ? "," : "", g / w) }
        }
        coll = way ? "sendrecv" : "broadcast"
        printf "%-9d %-10s %10.2f %10.2f %6.2f (%15s) %6.2f (%15s) %8s %8s\n", s,
               way ? "two-way" : "one-way", nw ? med(W, nw) : 0, med(B, rounds), n ? med(R, n) : 0,
               list, m ? med(G, m) : 0, glist, once["big", coll, s], once["tcp", coll, s]
      }
    }
  }' "$out/raw"

# OpenMPI + UCX on rxe0: each try is bounded; the first lines of a failure are kept.
if [[ -x $build/perf/bench_mpi ]]; then
  # rc_verbs needs ud_verbs beside it to connect (its "auxiliary transport").
  for tls in rc_verbs,ud_verbs,self ud_verbs,self; do
    echo "## OpenMPI --mca pml ucx, UCX_TLS=$tls UCX_NET_DEVICES=rxe0:1 UCX_IB_GID_INDEX=1"
    timeout 90 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 \
      --mca pml ucx --mca btl ^openib,vader,tcp -x UCX_NET_DEVICES=rxe0:1 -x UCX_TLS="$tls" \
      -x UCX_IB_GID_INDEX=1 "$build/perf/bench_mpi" "${bench_args[@]}" 2>&1 | head -25
  done
fi
rm -rf "$out"
