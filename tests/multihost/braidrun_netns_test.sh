#!/usr/bin/env bash
# braidrun's multi-host mode on network-namespace hosts: braidrun runs here and
# starts every rank through `--launcher 'ip netns exec {host}'`, as it would
# through ssh on a cluster. Checked:
#   1. 2 hosts x 2 ranks dealt round robin (--map-by node: ranks 0, 2 on host 0):
#      every collective correct (braid-perf -c 1) over TCP between namespaces,
#      each rank on the host braidrun placed it on (BRAID_DEBUG=INFO logs);
#   2. 3 uneven hosts (2 + 1 + 3, hostfile), automatic selection, all collectives;
#   3. a rank on host 1 fails: braidrun exits with its status, names its host,
#      and no process of the job is left in any namespace.
# Skips (77) where no bed can be built (needs root).
# Usage: braidrun_netns_test.sh NETNS_BED BRAIDRUN BRAID_PERF
set -uo pipefail
bed=$1 braidrun=$2 perf=$3
"$bed" check || exit 77
unset BRAID_HOST_ID  # the namespaces alone must tell the hosts apart

log=$(mktemp)
hostfile=$(mktemp)
trap 'rm -f "$log" "$hostfile"' EXIT
fail() {
  echo "FAIL: $1; output:" >&2
  cat "$log" >&2
  exit 1
}
perf_args=(all -b 8 -e 1M -f 32 -c 1 -n 1 -w 0 -T 60)

# 1. Interleaved ranks. BRAID_BED and BRAID_BED_NET come from the bed (netns_bed.sh with).
"$bed" with --hosts 2 -- bash -c '
  exec "$0" --hosts "$BRAID_BED-h0:2,$BRAID_BED-h1:2" --map-by node \
    --launcher "ip netns exec {host}" --root-addr "$BRAID_BED_NET.1" -x BRAID_DEBUG=INFO \
    --timeout 240 -- "$@"' "$braidrun" "$perf" "${perf_args[@]}" >"$log" 2>&1 ||
  fail "2 interleaved hosts: braidrun failed"
grep -q "Out of bounds values : 0 OK" "$log" || fail "2 interleaved hosts: wrong results"
for rank in 0 2; do
  grep -qE "rank $rank of 4 ready \(transport [a-z+]+, host 0 of 2\)" "$log" ||
    fail "rank $rank must be on host 0"
done
for rank in 1 3; do
  grep -qE "rank $rank of 4 ready \(transport [a-z+]+, host 1 of 2\)" "$log" ||
    fail "rank $rank must be on host 1"
done

# 2. Uneven hosts from a hostfile; rank 0's host given by address.
"$bed" with --hosts 3 -- bash -c '
  printf "%s slots=2\n%s\n%s:3\n" "$BRAID_BED-h0" "$BRAID_BED-h1" "$BRAID_BED-h2" >"$1"
  exec "$0" --hostfile "$1" --launcher "ip netns exec {host}" --root-addr "$BRAID_BED_NET.1" \
    --timeout 240 -- "${@:2}"' "$braidrun" "$hostfile" "$perf" "${perf_args[@]}" >"$log" 2>&1 ||
  fail "3 uneven hosts: braidrun failed"
grep -q "Out of bounds values : 0 OK" "$log" || fail "3 uneven hosts: wrong results"

# 3. A failing rank on host 1 stops the job; nothing is left in the namespaces.
"$bed" with --hosts 2 -- bash -c '
  "$0" --hosts "$BRAID_BED-h0,$BRAID_BED-h1" --launcher "ip netns exec {host}" \
    --root-addr "$BRAID_BED_NET.1" -- sh -c "[ \$BRAID_RANK = 1 ] && exit 7; exec sleep 60"
  status=$?
  left=$(ip netns pids "$BRAID_BED-h0"; ip netns pids "$BRAID_BED-h1")
  [ -z "$left" ] || { echo "processes left in the hosts: $left"; exit 1; }
  exit $status' "$braidrun" >"$log" 2>&1
status=$?
((status == 7)) || fail "a failing rank: braidrun exited $status, not the rank's 7"
grep -q "rank 1 (host braid[0-9]*-h1) exited with status 7" "$log" ||
  fail "the report must name the rank and its host"
echo "ok: braidrun starts, supervises and stops ranks on namespace hosts"
