#!/usr/bin/env bash
# RDMA comparison on soft-RoCE, run inside the test guest in one boot, so every row
# shares the same emulated machine and its load:
#   tests/rdma/guest --cache build/rdma-guest -- perf/rdma/guest_bench.sh build [ROUNDS [ENV...]]
#
# Like is compared with like, paired in each round (the emulated link's speed swings
# with the host's load, so only ratios within a round mean anything):
#   one way:  braid broadcast on 2 ranks (the root writes to the other rank) against
#             ib_write_bw (one writer, one passive target);
#   two ways: braid sendrecv, all-reduce and all-gather on 2 ranks (each rank sends to
#             and receives from the other at once) against ib_write_bw -b (both sides
#             write), per direction: each collective's bus bandwidth (nccl-tests'
#             factor: the bytes each rank moves each way).
# soft-RoCE does its packet work on the guest's CPUs, so traffic in both directions at
# once shares those CPUs: a two-way figure is lower than a one-way one for braid and
# ib_write_bw alike. Each round runs braid twice: as it is (receivers grant 2 credits
# ahead, each as large as the 1 MiB chunk: no chunk waits for a clear-to-send) and as the
# baseline: with the variables ENV... (default BRAID_IB_CREDIT_BYTES=262144: credits
# cover a chunk's first 256 KiB, its rest waits for a clear-to-send round trip; to run
# an older build, LD_LIBRARY_PATH=its build/src); and OpenMPI 4.1 with UCX on rxe0 (see
# mpi_ucx below); then, once: braid over TCP on the same dummy device.
# Prints every raw line, then per size and collective the medians over rounds and the
# median ratios.
set -uo pipefail
build=$1
rounds=${2:-3}
baseline=("${@:3}")
((${#baseline[@]})) || baseline=(BRAID_IB_CREDIT_BYTES=262144)
sizes=(1048576 4194304 16777216)
colls=(broadcast sendrecv allreduce allgather)
bench_args=(-b 1048576 -e 16777216 -f 4 -c "$(
  IFS=,
  echo "${colls[*]}"
)")
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

# braid_bench LABEL ENV... -> lines "LABEL COLLECTIVE SIZE MB/s" (2^20 bytes/s, bus
# bandwidth from the median time: the printed figures have too few digits at these speeds)
braid_bench() {
  local label=$1
  shift
  env "$@" timeout 600 "$build/tools/braidrun" -n 2 --timeout 600 -- \
    "$build/perf/bench_braid" "${bench_args[@]}" 2>&1 |
    awk -v l="$label" '$1 ~ /^(broadcast|sendrecv|allreduce|allgather)$/ {
      f = $1 == "allgather" ? 0.5 : 1  # nccl-tests bus factor on 2 ranks
      printf "%s %s %s %.2f\n", l, $1, $2, f * $2 / $3 * 1e6 / 1048576 }'
}

# OpenMPI (--mca pml ucx) on rxe0, lines as braid_bench's. rc_verbs carries the data;
# it connects through ud_verbs (its "auxiliary transport"), and UCX's UD drops every
# packet whose destination GID it cannot match against the port's (ETH_DGID_CHECK):
# on rxe's RoCE v2 IPv4 GID that check drops them all and the first collective hangs
# until UD's timeout, so it is off. GID 1 is the port's RoCE v2 GID that holds the
# IPv4 address.
ucx_env=(UCX_NET_DEVICES=rxe0:1 "UCX_TLS=rc_verbs,ud_verbs,self" UCX_IB_GID_INDEX=1
  UCX_UD_VERBS_ETH_DGID_CHECK=n)
mpi_ucx() {
  local label=$1 e exports=()
  shift
  for e in "${ucx_env[@]}" "$@"; do exports+=(-x "${e%%=*}"); done
  env "${ucx_env[@]}" "$@" timeout 600 mpirun --allow-run-as-root --oversubscribe --bind-to none \
    -np 2 --mca pml ucx --mca btl ^openib,vader,tcp "${exports[@]}" \
    "$build/perf/bench_mpi" "${bench_args[@]}" 2>&1 |
    awk -v l="$label" '$1 ~ /^(broadcast|sendrecv|allreduce|allgather)$/ {
      f = $1 == "allgather" ? 0.5 : 1
      printf "%s %s %s %.2f\n", l, $1, $2, f * $2 / $3 * 1e6 / 1048576 }'
}
if [[ -x $build/perf/bench_mpi ]]; then
  echo "## OpenMPI + UCX: ${ucx_env[*]}; the lanes UCX picked:"
  mpi_ucx_lanes=$(env "${ucx_env[@]}" UCX_LOG_LEVEL=info timeout 120 mpirun --allow-run-as-root \
    --bind-to none -np 2 --mca pml ucx --mca btl ^openib,vader,tcp -x UCX_NET_DEVICES -x UCX_TLS \
    -x UCX_IB_GID_INDEX -x UCX_UD_VERBS_ETH_DGID_CHECK -x UCX_LOG_LEVEL "$build/perf/bench_mpi" \
    -b 8 -e 8 -c sendrecv 2>&1 | grep -o 'ep_cfg.*' | sort -u)
  echo "$mpi_ucx_lanes"
fi

for round in $(seq "$rounds"); do
  for s in "${sizes[@]}"; do
    iters=$((s > 4194304 ? 10 : s > 1048576 ? 25 : 100))
    echo "wbw_uni $s $(write_bw "$s" "$iters")" | tee -a "$out/raw"
    bi=$(write_bw "$s" "$iters" -b)
    # -b reports both directions together; the per-direction figure is half.
    echo "wbw_bi $s $(awk -v b="$bi" 'BEGIN { if (b != "") printf "%.2f", b / 2 }')" |
      tee -a "$out/raw"
  done
  # Alternate which variant runs first, so load that drifts hits both alike.
  if ((round % 2)); then
    braid_bench "ib$round" BRAID_TRANSPORT=ib | tee -a "$out/raw"
    braid_bench "base$round" BRAID_TRANSPORT=ib "${baseline[@]}" | tee -a "$out/raw"
  else
    braid_bench "base$round" BRAID_TRANSPORT=ib "${baseline[@]}" | tee -a "$out/raw"
    braid_bench "ib$round" BRAID_TRANSPORT=ib | tee -a "$out/raw"
  fi
  [[ -x $build/perf/bench_mpi ]] && mpi_ucx "ucx$round" | tee -a "$out/raw"
done
echo "## braid over TCP on the dummy device"
braid_bench tcp BRAID_TRANSPORT=socket BRAID_SOCKET_IFNAME=dummy0 | tee -a "$out/raw"

echo "## baseline: ${baseline[*]}"
echo "## medians over $rounds rounds (MB/s = 2^20 bytes/s per direction; ratios per round: braid / ib_write_bw, braid / OpenMPI+UCX)"
awk -v rounds="$rounds" '
  function med(a, n,   i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  # ib_write_bw now and then reports an average of 0.00 on this guest: no figure.
  $1 == "wbw_uni" { uni[$2, ++nu[$2]] = $3 > 0 ? $3 : "" }
  $1 == "wbw_bi" { bi[$2, ++nb[$2]] = $3 > 0 ? $3 : "" }
  $1 ~ /^ib[0-9]+$/ { r = substr($1, 3); v[$2, $3, r] = $4 }
  $1 ~ /^base[0-9]+$/ { r = substr($1, 5); z[$2, $3, r] = $4 }
  $1 ~ /^ucx[0-9]+$/ { r = substr($1, 4); u[$2, $3, r] = $4 }
  $1 == "tcp" { tcp[$2, $3] = $4 }
  END {
    printf "%-9s %-10s %8s %8s %26s %8s %26s %26s %8s %8s %26s\n", "size", "collective", "wbw", "braid",
           "braid/wbw (per round)", "baseline", "base/wbw (per round)", "braid/base (per round)",
           "tcp", "ucx", "braid/ucx (per round)"
    split("broadcast sendrecv allreduce allgather", C, " ")
    for (s = 1048576; s <= 16777216; s *= 4) {
      for (k = 1; k <= 4; ++k) {
        c = C[k]; n = 0; m = 0; h = 0; nw = 0; nv = 0; nz = 0; list = ""; zlist = ""; hlist = ""
        nu2 = 0; q = 0; qlist = ""
        for (r = 1; r <= rounds; ++r) {
          w = c == "broadcast" ? uni[s, r] : bi[s, r]
          if (w > 0) W[++nw] = w
          if (v[c, s, r] > 0) V[++nv] = v[c, s, r]
          if (z[c, s, r] > 0) Z[++nz] = z[c, s, r]
          if (w > 0 && v[c, s, r] > 0) { R[++n] = v[c, s, r] / w; list = list sprintf("%s%.2f", n > 1 ? "," : "", R[n]) }
          if (w > 0 && z[c, s, r] > 0) { G[++m] = z[c, s, r] / w; zlist = zlist sprintf("%s%.2f", m > 1 ? "," : "", G[m]) }
          if (v[c, s, r] > 0 && z[c, s, r] > 0) { H[++h] = v[c, s, r] / z[c, s, r]; hlist = hlist sprintf("%s%.2f", h > 1 ? "," : "", H[h]) }
          if (u[c, s, r] > 0) U[++nu2] = u[c, s, r]
          if (v[c, s, r] > 0 && u[c, s, r] > 0) { Q[++q] = v[c, s, r] / u[c, s, r]; qlist = qlist sprintf("%s%.2f", q > 1 ? "," : "", Q[q]) }
        }
        printf "%-9d %-10s %8.2f %8.2f %6.2f (%18s) %8.2f %6.2f (%18s) %6.2f (%18s) %8s %8.2f %6.2f (%18s)\n", s, c,
               nw ? med(W, nw) : 0, nv ? med(V, nv) : 0, n ? med(R, n) : 0, list,
               nz ? med(Z, nz) : 0, m ? med(G, m) : 0, zlist, h ? med(H, h) : 0, hlist, tcp[c, s],
               nu2 ? med(U, nu2) : 0, q ? med(Q, q) : 0, qlist
      }
    }
  }' "$out/raw"

rm -rf "$out"
