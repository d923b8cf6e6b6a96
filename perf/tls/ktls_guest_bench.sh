#!/usr/bin/env bash
# What kernel TLS changes: all-reduce over TCP on 2 ranks, inside the guest of
# tests/rdma/guest (Debian's kernel, with net/tls) in one boot, so every row shares the
# same emulated machine:
#   tests/rdma/guest --cache build/rdma-guest -- perf/tls/ktls_guest_bench.sh build build/rdma-guest [ROUNDS]
# Three variants, paired in each round and run in a rotating order (load that drifts hits
# all alike):
#   plain:   no TLS;
#   openssl: BRAID_SOCKET_TLS=1 BRAID_SOCKET_KTLS=0, OpenSSL does every record;
#   kernel:  BRAID_SOCKET_TLS=1 with the kernel's tls module loaded: the kernel encrypts
#            what it took over (with OpenSSL 3.0, the sends; OpenSSL still decrypts).
# Each run's INFO line must name the record layer its variant stands for, or the script
# stops. Prints every raw line, then per size the medians (microseconds, bench_braid's
# median over iterations of the slowest rank) and the median over rounds of the per-round
# ratios against plain (time / plain time: above 1 is slower).
# The guest is emulated (TCG): absolute figures say nothing about real hardware; only the
# ratios within this one boot do. All variants run with BRAID_SPIN=0 (see below).
set -uo pipefail
build=$1 module_root=$2 rounds=${3:-5}
# shellcheck source=tests/ktls/load_tls.sh
source "$(dirname "$0")/../../tests/ktls/load_tls.sh"
load_tls "$module_root" || exit 1
export BRAID_TIMEOUT=300
# Every variant waits without spinning: under emulation each poll of a stream through libssl
# costs so much that the spin-then-yield phase before a wait, not the transfer, sets the
# small-message figures of the TLS variants (tens of times their BRAID_SPIN=0 time).
export BRAID_SPIN=0
unset BRAID_SOCKET_TLS BRAID_SOCKET_KTLS
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# bench VARIANT ROUND ENV... -> "VARIANT ROUND SIZE US" lines; checks the record layer.
bench() {
  local variant=$1 round=$2 want
  shift 2
  case $variant in
    plain) want='' ;;
    openssl) want='records by OpenSSL (no kernel TLS)' ;;
    kernel) want='records by kernel TLS' ;;
  esac
  env "$@" BRAID_DEBUG=INFO timeout 600 "$build/tools/braidrun" -n 2 --timeout 600 -- \
    "$build/perf/bench_braid" -b 8 -e 16M -f 8 -c allreduce >"$out/run" 2>&1 ||
    { cat "$out/run"; echo "bench_braid failed ($variant)"; exit 1; }
  local layers
  if [[ -n $want ]]; then
    layers=$(grep -c "socket transport: rank [01] runs TLS.*$want" "$out/run")
  else  # plain: no rank may run TLS
    layers=$((2 - $(grep -c 'socket transport: rank [01] runs TLS' "$out/run")))
  fi
  ((layers == 2)) || { cat "$out/run"; echo "$variant: the ranks' records were not by ${want:-nothing}"; exit 1; }
  awk -v v="$variant" -v r="$round" '$1 == "allreduce" { print v, r, $2, $3 }' "$out/run" |
    tee -a "$out/raw"
}

variants=(plain openssl kernel)
declare -A envs=([plain]="BRAID_TRANSPORT=socket"
  [openssl]="BRAID_TRANSPORT=socket BRAID_SOCKET_TLS=1 BRAID_SOCKET_KTLS=0"
  [kernel]="BRAID_TRANSPORT=socket BRAID_SOCKET_TLS=1")
echo "## $(uname -r), $(openssl version 2>/dev/null), $(nproc) vCPUs (TCG), $rounds rounds"
for round in $(seq "$rounds"); do
  for k in 0 1 2; do
    v=${variants[$(((round + k) % 3))]}
    # shellcheck disable=SC2086
    bench "$v" "$round" ${envs[$v]}
  done
done
echo "kernel TLS counters: $(awk '$1 ~ /^Tls(Tx|Rx)Sw$/ { printf "%s %s ", $1, $2 }' /proc/net/tls_stat)"

echo "## medians over $rounds rounds: time (us) per all-reduce; ratio = time / plain time in the same round"
awk -v rounds="$rounds" '
  function med(a, n,   i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { t[$1, $2, $3] = $4; if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 } }
  END {
    printf "%10s %10s %10s %10s %22s %22s %14s\n", "size(B)", "plain", "openssl", "kernel",
           "openssl/plain (min-max)", "kernel/plain (min-max)", "kernel/openssl"
    for (i = 1; i <= n; ++i) {
      s = order[i]
      for (r = 1; r <= rounds; ++r) {
        P[r] = t["plain", r, s]; O[r] = t["openssl", r, s]; K[r] = t["kernel", r, s]
        a[r] = O[r] / P[r]; b[r] = K[r] / P[r]; c[r] = K[r] / O[r]
        lo1 = r == 1 || a[r] < lo1 ? a[r] : lo1; hi1 = r == 1 || a[r] > hi1 ? a[r] : hi1
        lo2 = r == 1 || b[r] < lo2 ? b[r] : lo2; hi2 = r == 1 || b[r] > hi2 ? b[r] : hi2
      }
      printf "%10d %10.1f %10.1f %10.1f %6.2f (%5.2f-%5.2f) %6.2f (%5.2f-%5.2f) %14.2f\n", s,
             med(P, rounds), med(O, rounds), med(K, rounds), med(a, rounds), lo1, hi1,
             med(b, rounds), lo2, hi2, med(c, rounds)
    }
  }' "$out/raw"
