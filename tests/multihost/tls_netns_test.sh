#!/usr/bin/env bash
# TLS between network-namespace hosts: 2 hosts x 2 ranks run every collective with result
# checking (braid-perf -c 1) under BRAID_SOCKET_TLS=1, and every rank's log must show the
# TLS handshakes done, the socket transport's (shm carries the traffic inside each host,
# TLS between them) and the bootstrap's (every link, from the id exchange on).
# Skips (77) where no bed can be built (needs root).
# Usage: tls_netns_test.sh NETNS_BED BRAID_PERF
set -uo pipefail
bed=$1 perf=$2
"$bed" check || exit 77
unset BRAID_HOST_ID  # the namespaces alone must tell the hosts apart
log=$(mktemp)
trap 'rm -f "$log"' EXIT
BRAID_SOCKET_TLS=1 BRAID_DEBUG=INFO "$bed" run --hosts 2x2 -- "$perf" all -b 8 -e 2M -f 64 -c 1 \
  -n 2 -w 1 -T 60 >"$log" 2>&1 || { cat "$log" >&2; echo "FAIL: braid-perf failed" >&2; exit 1; }
grep -q "Out of bounds values : 0 OK" "$log" || { cat "$log" >&2; echo "FAIL: wrong results" >&2; exit 1; }
tls=$(grep -c "runs TLS 1.3 (pre-shared key)" "$log")
[ "$tls" -eq 4 ] || { cat "$log" >&2; echo "FAIL: $tls of 4 ranks ran TLS" >&2; exit 1; }
boot=$(grep -c "bootstrap: rank [0-9]* runs TLS 1.3" "$log")
[ "$boot" -eq 4 ] || { cat "$log" >&2; echo "FAIL: $boot of 4 bootstraps ran TLS" >&2; exit 1; }
echo "every collective correct over TLS between 2 hosts; $(grep -m1 -o 'records by [^)]*)\?' "$log")"
