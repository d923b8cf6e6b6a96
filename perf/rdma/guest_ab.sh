#!/usr/bin/env bash
# braid over ib with credits (BRAID_IB_CREDITS=2, the default) against without (=0),
# alternating which runs first, inside the test guest; optionally with ib_write_bw at
# the largest size in each round:
#   tests/rdma/guest -- perf/rdma/guest_ab.sh build ROUNDS MIN MAX FACTOR COLLS [wbw]
# e.g. ... perf/rdma/guest_ab.sh build 3 8 256K 8 broadcast,sendrecv,allreduce,allgather
# Prints "ab ROUND CREDITS COLLECTIVE SIZE US MB/s" per result (MB/s: 2^20 bytes/s per
# direction, nccl-tests' bus factor on 2 ranks), "wbw ROUND uni|bi SIZE MB/s", then per
# collective and size the median over rounds of with/without time ratios (< 1: credits
# faster).
set -uo pipefail
build=$1 rounds=$2 min=$3 max=$4 factor=$5 colls=$6 wbw=${7:-}
export BRAID_TIMEOUT=600
raw=$(mktemp)

bytes() { numfmt --from=iec "$1"; }

write_bw() {  # SIZE ITERS [-b] -> MB/s, both directions together with -b
  local port=$((20000 + RANDOM % 20000)) result=""
  timeout --foreground 300 ib_write_bw -d rxe0 -x 1 -p $port -s "$1" -n "$2" -F "${@:3}" \
    >/dev/null 2>&1 &
  local server=$!
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 1
    result=$(timeout --foreground 300 ib_write_bw -d rxe0 -x 1 -p $port -s "$1" -n "$2" -F \
      "${@:3}" 10.77.0.1 2>/dev/null | awk -v s="$1" '$1 == s { print $4 }')
    [[ -n $result ]] && break
  done
  echo "$result"
  wait "$server"
}

for round in $(seq "$rounds"); do
  if [[ $wbw == wbw ]]; then
    s=$(bytes "$max")
    echo "wbw $round uni $s $(write_bw "$s" 5)" | tee -a "$raw"
    echo "wbw $round bi $s $(awk -v b="$(write_bw "$s" 5 -b)" 'BEGIN { if (b != "") printf "%.2f", b / 2 }')" |
      tee -a "$raw"
  fi
  for c in $( ((round % 2)) && echo "2 0" || echo "0 2"); do
    BRAID_TRANSPORT=ib BRAID_IB_CREDITS=$c timeout 900 "$build/tools/braidrun" -n 2 \
      --timeout 900 -- "$build/perf/bench_braid" -b "$min" -e "$max" -f "$factor" -c "$colls" 2>&1 |
      awk -v c="$c" -v r="$round" '$1 ~ /^(broadcast|sendrecv|allreduce|allgather)$/ {
        f = $1 == "allgather" ? 0.5 : 1
        printf "ab %d %d %s %s %s %.2f\n", r, c, $1, $2, $3, f * $2 / $3 * 1e6 / 1048576 }' |
      tee -a "$raw"
  done
done
echo "## with credits / without, time ratio per round, then the median (< 1: credits faster)"
awk '
  function med(a, n,   i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  $1 == "ab" { t[$4, $5, $2, $3] = $6; key[$4 " " $5] = 1; if ($2 > R) R = $2 }
  END {
    for (k in key) {
      split(k, p, " "); n = 0; l = ""
      for (r = 1; r <= R; ++r) {
        a = t[p[1], p[2], r, 2]; b = t[p[1], p[2], r, 0]
        if (a > 0 && b > 0) { x[++n] = a / b; l = l sprintf("%s%.2f", n > 1 ? "," : "", a / b) }
      }
      printf "%-10s %10d  %.2f (%s)\n", p[1], p[2], n ? med(x, n) : 0, l
    }
  }' "$raw" | sort -k1,1 -k2,2n
rm -f "$raw"
