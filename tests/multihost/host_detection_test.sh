#!/usr/bin/env bash
# Ranks in different network namespaces are different hosts; ranks in one are
# one host (src/comm/host_identity.h). Checked from the ranks' own logs
# (BRAID_DEBUG=TRACE): on 2 hosts x 2 ranks every rank reports "host h of 2",
# uses the mixed transport with shm to the rank of its own host and sockets to
# the other host's two, and a 1 MiB all-reduce runs the "hier" schedule;
# BRAID_TRANSPORT=socket still puts every peer on sockets; 3 ranks in one
# namespace report one host and shared memory.
# Skips (77) where no bed can be built. Usage: host_detection_test.sh NETNS_BED BRAID_PERF
set -uo pipefail
bed=$1 perf=$2
"$bed" check || exit 77
unset BRAID_HOST_ID  # the namespaces alone must tell the hosts apart

fail() {
  echo "FAIL: $1; output:" >&2
  cat "$log" >&2
  exit 1
}
expect_count() {  # PATTERN COUNT WHAT
  local got
  got=$(grep -cE "$1" "$log")
  ((got == $2)) || fail "$3 ($got lines match '$1', expected $2)"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
  BRAID_DEBUG=TRACE "$bed" run "$@" -- "$perf" allreduce -b 1M -e 1M -n 1 -w 0 -c 1 >"$log" 2>&1
}

run --hosts 2x2 || fail "the 2-host run failed"
expect_count 'ready \(transport mixed, host 0 of 2\)' 2 "ranks 0 and 1 must be host 0 of 2"
expect_count 'ready \(transport mixed, host 1 of 2\)' 2 "ranks 2 and 3 must be host 1 of 2"
# Which link each peer gets (transports/mixed/mixed_transport.cc logs it per rank).
expect_count 'mixed: rank 0 on host 0 of 2: shm to ranks 1; socket to ranks 2,3' 1 "rank 0's links"
expect_count 'mixed: rank 1 on host 0 of 2: shm to ranks 0; socket to ranks 2,3' 1 "rank 1's links"
expect_count 'mixed: rank 2 on host 1 of 2: shm to ranks 3; socket to ranks 0,1' 1 "rank 2's links"
expect_count 'mixed: rank 3 on host 1 of 2: shm to ranks 2; socket to ranks 0,1' 1 "rank 3's links"
grep -qE 'braidAllReduce: [0-9]+ elements, hier,' "$log" || fail "the all-reduce did not run hier"

BRAID_TRANSPORT=socket run --hosts 2x2 || fail "the 2-host socket run failed"
expect_count 'ready \(transport socket, host [01] of 2\)' 4 "BRAID_TRANSPORT=socket must win"

run --hosts 3 || fail "the 1-host run failed"
expect_count 'ready \(transport shm, host 0 of 1\)' 3 "3 ranks of one namespace must be one host"
echo "ok: namespaces are hosts; hierarchical all-reduce chosen across them"
