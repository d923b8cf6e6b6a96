#!/usr/bin/env bash
# braid over ib in several configurations, paired in rounds inside the test guest (one
# boot, so every variant shares the same emulated machine and its load):
#   tests/rdma/guest -- perf/rdma/guest_variants.sh build ROUNDS MIN MAX FACTOR COLLS \
#       NAME=ENV[,ENV...] ...
# e.g. ... guest_variants.sh build 3 1M 16M 4 broadcast,allgather default= chunk4M=BRAID_CHUNK_BYTES=4M
# Each variant is a name and the BRAID_ variables it sets (comma-separated, none for the
# defaults); the first is the reference. The order rotates from round to round, so load
# that drifts hits every variant alike. Prints "v ROUND NAME COLLECTIVE SIZE US MB/s"
# per result (MB/s: 2^20 bytes/s per direction, nccl-tests' bus factor on 2 ranks), then
# per variant, collective and size the median MB/s and the median over rounds of its
# bandwidth against the reference's in the same round (> 1: faster), with the per-round
# ratios.
set -uo pipefail
build=$1 rounds=$2 min=$3 max=$4 factor=$5 colls=$6
shift 6
variants=("$@")
((${#variants[@]} >= 2)) || {
  echo "usage: $0 build ROUNDS MIN MAX FACTOR COLLS NAME=ENV[,ENV...] NAME=... ..." >&2
  exit 2
}
export BRAID_TIMEOUT=600
raw=$(mktemp)

for round in $(seq "$rounds"); do
  n=${#variants[@]}
  for ((k = 0; k < n; ++k)); do
    spec=${variants[$(((k + round - 1) % n))]}
    name=${spec%%=*} vars=${spec#*=}
    env_args=(BRAID_TRANSPORT=ib)
    if [[ -n $vars ]]; then
      IFS=, read -ra more <<<"$vars"
      env_args+=("${more[@]}")
    fi
    env "${env_args[@]}" timeout 900 "$build/tools/braidrun" -n 2 --timeout 900 -- \
      "$build/perf/bench_braid" -b "$min" -e "$max" -f "$factor" -c "$colls" 2>&1 |
      awk -v v="$name" -v r="$round" '$1 ~ /^(broadcast|sendrecv|allreduce|allgather)$/ {
        f = $1 == "allgather" ? 0.5 : 1
        printf "v %d %s %s %s %s %.2f\n", r, v, $1, $2, $3, f * $2 / $3 * 1e6 / 1048576 }' |
      tee -a "$raw"
  done
done
echo "## median MB/s, and bandwidth / ${variants[0]%%=*}'s in the same round: median (per round)"
awk -v ref="${variants[0]%%=*}" '
  function med(a, n,   i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  $1 == "v" { bw[$3, $4, $5, $2] = $7; key[$3 " " $4 " " $5] = 1; if ($2 > R) R = $2 }
  END {
    for (k in key) {
      split(k, p, " "); n = 0; m = 0; l = ""
      for (r = 1; r <= R; ++r) {
        a = bw[p[1], p[2], p[3], r]; b = bw[ref, p[2], p[3], r]
        if (a > 0) y[++m] = a
        if (a > 0 && b > 0) { x[++n] = a / b; l = l sprintf("%s%.2f", n > 1 ? "," : "", a / b) }
      }
      printf "%-10s %-10s %10d %8.2f  %.2f (%s)\n", p[1], p[2], p[3], m ? med(y, m) : 0,
             n ? med(x, n) : 0, l
    }
  }' "$raw" | sort -k2,2 -k3,3n -k1,1
rm -f "$raw"
