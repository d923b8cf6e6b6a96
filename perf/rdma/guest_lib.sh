# shellcheck shell=bash
# Sourced by perf/rdma/guest_variants.sh and perf/rdma/guest_bench.sh, inside the test
# guest (tests/rdma/guest): one runner per kind of contender, each printing lines
#   v ROUND NAME COLLECTIVE SIZE MB/s
# (MB/s = 2^20 bytes/s per direction: nccl-tests' bus bandwidth on 2 ranks, factor 1 for
# broadcast, sendrecv and all-reduce, 1/2 for all-gather), so every contender lands in
# the same table. Needs: $build (the build directory), and for perftest the rxe0 port on
# 10.77.0.1 that the guest sets up.

# The collectives' lines of bench_braid / bench_mpi -> "v ROUND NAME COLL SIZE MB/s"
# (from the median time: the printed bandwidth has too few digits at these speeds). A
# run that printed no result shows its last lines instead, marked "#", so a failure is
# seen rather than a missing row.
bench_lines() {
  awk -v r="$1" -v n="$2" '$1 ~ /^(broadcast|sendrecv|allreduce|allgather)$/ {
    f = $1 == "allgather" ? 0.5 : 1
    printf "v %d %s %s %s %.2f\n", r, n, $1, $2, f * $2 / $3 * 1e6 / 1048576; ++got
    next }
    { tail[++t % 8] = $0 }
    END { if (!got) { printf "# %s in round %d printed no result; its last lines:\n", n, r
                      for (i = t - 7; i <= t; ++i) if (i > 0) print "#   " tail[i % 8] } }'
}

# Settings of the loop rather than the library, taken from a contender's ENV list by
# split_bench_env (the same for braid and OpenMPI, so both keep timing the same thing):
#   BENCH_PATTERN=isolated|gap|back-to-back   bench_*'s -p (what comes between timed calls)
#   BENCH_SAMPLES=1                           also print each timed call's time (max over
#                                             ranks), "s ROUND NAME COLL SIZE US US ...",
#                                             in the order the calls ran, and each
#                                             rank's CPU time over them ("c ...")
#   BENCH_COUNTERS=1                          also print what rxe0's counters (sent packets,
#                                             retries, duplicates, ...) counted over the
#                                             run, "k ROUND NAME counter=N ..."
# split_bench_env ENV...: sets bench_env (the rest, for the environment), bench_opts (the
# program's options), bench_json (a file for -J, or empty) and bench_counters (1 or 0).
split_bench_env() {
  local e
  bench_env=() bench_opts=() bench_json="" bench_counters=0
  for e in "$@"; do
    case $e in
      BENCH_PATTERN=*) bench_opts+=(-p "${e#*=}") ;;
      BENCH_SAMPLES=1)
        bench_json=$(mktemp)
        bench_opts+=(-J "$bench_json")
        ;;
      BENCH_COUNTERS=1) bench_counters=1 ;;
      BENCH_*)
        echo "guest_lib: unknown loop setting '$e' (BENCH_PATTERN=..., BENCH_SAMPLES=1," \
          "BENCH_COUNTERS=1)" >&2
        return 2
        ;;
      *) bench_env+=("$e") ;;
    esac
  done
}

# sample_lines ROUND NAME JSON: the per-call times of bench_loop.h's JSON (one result a
# line) as "s ROUND NAME COLL SIZE US...", then each rank's CPU time over the timed calls
# and its threads as "c ROUND NAME COLL SIZE user US... sys US... threads N...".
sample_lines() {
  [[ -s $3 ]] || return 0
  awk -v r="$1" -v n="$2" '/"samples_us"/ {
    c = $0; sub(/.*"collective": "/, "", c); sub(/".*/, "", c)
    z = $0; sub(/.*"size": /, "", z); sub(/,.*/, "", z)
    s = $0; sub(/.*"samples_us": \[/, "", s); sub(/\].*/, "", s); gsub(/,/, "", s)
    printf "s %d %s %s %s %s\n", r, n, c, z, s
    u = $0; sub(/.*"cpu_user_us": \[/, "", u); sub(/\].*/, "", u); gsub(/,/, "", u)
    k = $0; sub(/.*"cpu_sys_us": \[/, "", k); sub(/\].*/, "", k); gsub(/,/, "", k)
    t = $0; sub(/.*"threads": \[/, "", t); sub(/\].*/, "", t); gsub(/,/, "", t)
    printf "c %d %s %s %s user %s sys %s threads %s\n", r, n, c, z, u, k, t }' "$3"
}

# rxe_counters: "name value" per counter of rxe0's port 1 (none where there is no rxe0).
rxe_counters() {
  local f
  for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
    [[ -r $f ]] && echo "${f##*/} $(<"$f")"
  done
}

# counter_line ROUND NAME BEFORE: "k ROUND NAME counter=N ..." for the counters that moved
# since BEFORE (rxe_counters' output).
counter_line() {
  rxe_counters | awk -v r="$1" -v n="$2" -v before="$3" 'BEGIN {
      k = split(before, l, "\n"); for (i = 1; i <= k; ++i) { split(l[i], f, " "); b[f[1]] = f[2] } }
    $2 != b[$1] { line = line sprintf(" %s=%d", $1, $2 - b[$1]) }
    END { printf "k %d %s%s\n", r, n, line }'
}

# finish_bench ROUND NAME BEFORE: after a contender's run, the counter and per-call lines
# its loop settings asked for (BEFORE: rxe_counters' output before the run).
finish_bench() {
  ((bench_counters)) && counter_line "$1" "$2" "$3"
  if [[ -n $bench_json ]]; then
    sample_lines "$1" "$2" "$bench_json"
    rm -f "$bench_json"
  fi
}

# run_braid ROUND NAME "MIN MAX FACTOR COLLS" [ENV...]: braid over ib (ENV may override).
run_braid() {
  local round=$1 name=$2
  read -r min max factor colls <<<"$3"
  shift 3
  split_bench_env "$@" || return
  local before=""
  ((bench_counters)) && before=$(rxe_counters)
  env BRAID_TRANSPORT=ib BRAID_TIMEOUT=600 "${bench_env[@]}" timeout 900 \
    "${build:?}/tools/braidrun" -n 2 --timeout 900 -- "$build/perf/bench_braid" -b "$min" \
    -e "$max" -f "$factor" -c "$colls" "${bench_opts[@]}" 2>&1 | bench_lines "$round" "$name"
  finish_bench "$round" "$name" "$before"
}

# OpenMPI (--mca pml ucx) on rxe0. rc_verbs carries the data; it connects through
# ud_verbs (its "auxiliary transport"), and UCX's UD drops every packet whose
# destination GID it cannot match against the port's (ETH_DGID_CHECK): on rxe's RoCE v2
# IPv4 GID that check drops them all and the first collective hangs until UD's timeout,
# so it is off. GID 1 is the port's RoCE v2 GID that holds the IPv4 address.
ucx_env=(UCX_NET_DEVICES=rxe0:1 "UCX_TLS=rc_verbs,ud_verbs,self" UCX_IB_GID_INDEX=1
  UCX_UD_VERBS_ETH_DGID_CHECK=n)

# run_ucx ROUND NAME "MIN MAX FACTOR COLLS" [ENV...]: bench_mpi under OpenMPI + UCX.
run_ucx() {
  local round=$1 name=$2 e exports=()
  read -r min max factor colls <<<"$3"
  shift 3
  split_bench_env "$@" || return
  local before=""
  ((bench_counters)) && before=$(rxe_counters)
  for e in "${ucx_env[@]}" "${bench_env[@]}"; do exports+=(-x "${e%%=*}"); done
  env "${ucx_env[@]}" "${bench_env[@]}" timeout 900 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np 2 --mca pml ucx --mca btl ^openib,vader,tcp "${exports[@]}" \
    "${build:?}/perf/bench_mpi" -b "$min" -e "$max" -f "$factor" -c "$colls" \
    "${bench_opts[@]}" 2>&1 | bench_lines "$round" "$name"
  finish_bench "$round" "$name" "$before"
}

# ucx_lanes: what UCX picked for the tag lane to the other rank (UCX_LOG_LEVEL=info).
ucx_lanes() {
  local e exports=()
  for e in "${ucx_env[@]}"; do exports+=(-x "${e%%=*}"); done
  env "${ucx_env[@]}" UCX_LOG_LEVEL=info timeout 300 mpirun --allow-run-as-root --bind-to none \
    -np 2 --mca pml ucx --mca btl ^openib,vader,tcp "${exports[@]}" -x UCX_LOG_LEVEL \
    "$build/perf/bench_mpi" -b 8 -e 8 -c sendrecv 2>&1 | grep -o 'ep_cfg.*' | sort -u
}

# perftest TOOL SIZE ITERS [-b] -> MB/s (2^20 bytes, perftest's unit), the average; with
# -b both directions together. TOOL: ib_write_bw or ib_read_bw.
perftest() {
  local tool=$1 size=$2 iters=$3
  shift 3
  # A fresh port each time: a server from a failed try must not hold the next one's.
  local port=$((20000 + RANDOM % 20000)) result=""
  timeout --foreground 300 "$tool" -d rxe0 -x 1 -p $port -s "$size" -n "$iters" -F "$@" \
    >/dev/null 2>&1 &
  local server=$!
  # The client retries while the server starts (slow on a loaded emulated machine).
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 1
    result=$(timeout --foreground 300 "$tool" -d rxe0 -x 1 -p $port -s "$size" -n "$iters" -F \
      "$@" 10.77.0.1 2>/dev/null | awk -v s="$size" '$1 == s { print $4 }')
    [[ -n $result ]] && break
  done
  echo "$result"
  wait "$server"
}

# run_perftest ROUND NAME TOOL "MIN MAX FACTOR COLLS": the floor for each collective and
# size: one-way TOOL for broadcast (one writer), TOOL -b per direction for the others
# (both ranks send at once). ib_write_bw now and then reports 0.00 here: no figure then.
run_perftest() {
  local round=$1 name=$2 tool=$3 s uni bi c iters
  read -r min max factor colls <<<"$4"
  min=$(numfmt --from=iec "$min") max=$(numfmt --from=iec "$max")
  for ((s = min; s <= max; s *= factor)); do
    iters=$((s > 4194304 ? 10 : s > 1048576 ? 25 : 100))
    uni="" bi=""
    for c in ${colls//,/ }; do
      if [[ $c == broadcast ]]; then
        [[ -n $uni ]] || uni=$(perftest "$tool" "$s" "$iters")
        awk -v u="$uni" 'BEGIN { exit !(u > 0) }' && echo "v $round $name $c $s $uni"
      else
        [[ -n $bi ]] || bi=$(perftest "$tool" "$s" "$iters" -b)
        awk -v b="$bi" -v r="$round" -v n="$name" -v c="$c" -v s="$s" \
          'BEGIN { if (b > 0) printf "v %d %s %s %s %.2f\n", r, n, c, s, b / 2 }'
      fi
    done
  done
}

# run_variant ROUND SPEC "MIN MAX FACTOR COLLS": SPEC is wbw, rbw (ib_write_bw /
# ib_read_bw), NAME=ENV[,ENV...] for braid over ib with those variables, or
# ucxNAME=ENV[,ENV...] (a name starting with ucx) for OpenMPI + UCX with them.
run_variant() {
  local round=$1 spec=$2 args=$3 name vars more=()
  case $spec in
    wbw) run_perftest "$round" wbw ib_write_bw "$args" ;;
    rbw) run_perftest "$round" rbw ib_read_bw "$args" ;;
    *)
      name=${spec%%=*} vars=${spec#*=}
      [[ -n $vars ]] && IFS=, read -ra more <<<"$vars"
      if [[ $name == ucx* ]]; then
        run_ucx "$round" "$name" "$args" "${more[@]}"
      else
        run_braid "$round" "$name" "$args" "${more[@]}"
      fi
      ;;
  esac
}

# summarize FILE NAME...: per collective and size, each contender's median MB/s over
# rounds, then for each pair (A before B in NAME...) the median over rounds of A / B in
# the same round, with the per-round ratios in brackets (> 1: A faster).
summarize() {
  local file=$1
  shift
  awk -v names="$*" '
    function med(a, n,   i, j, t) {
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    $1 == "v" { bw[$3, $4, $5, $2] = $6; key[$4 " " $5] = 1; if ($2 > R) R = $2 }
    END {
      nn = split(names, N, " ")
      for (k in key) {
        split(k, p, " "); line = ""
        for (a = 1; a <= nn; ++a) {
          m = 0
          for (r = 1; r <= R; ++r) if (bw[N[a], p[1], p[2], r] > 0) y[++m] = bw[N[a], p[1], p[2], r]
          line = line sprintf(" %s %.2f", N[a], m ? med(y, m) : 0)
        }
        printf "%-10s %10d MB/s:%s\n", p[1], p[2], line
        for (a = 1; a <= nn; ++a) for (b = a + 1; b <= nn; ++b) {
          n = 0; l = ""
          for (r = 1; r <= R; ++r) {
            x1 = bw[N[a], p[1], p[2], r]; x2 = bw[N[b], p[1], p[2], r]
            if (x1 > 0 && x2 > 0) { x[++n] = x1 / x2; l = l sprintf("%s%.2f", n > 1 ? ", " : "", x1 / x2) }
          }
          printf "%-10s %10d %s/%s %.2f (%s)\n", p[1], p[2], N[a], N[b], n ? med(x, n) : 0, l
        }
      }
    }' "$file" | sort -s -k1,1 -k2,2n
}
