#!/usr/bin/env bash
# The rdma label's checks, run inside the soft-RoCE guest in one boot (tests/rdma/guest
# boots it; an emulated machine boots slowly, so everything shares one boot).
# Usage: rdma_checks.sh MP_COLLECTIVES MP_DEAD_RANK IB_CHECKS
# Each check prints its time; the script exits non-zero when any failed.
set -uo pipefail
collectives=$1 dead_rank=$2 ib_checks=$3
export BRAID_TIMEOUT=${BRAID_TIMEOUT:-60}
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
# shellcheck source=tests/rdma/guest_check.sh
source "$(dirname "$0")/guest_check.sh"

sent_packets() { cat "$counters/sent_pkts" 2>/dev/null || echo 0; }

# Coverage over ib against the reference, chosen to fit the label's time budget:
#   - every collective x type x op, in place and out of place, both roots, at 4099
#     elements on 2 and 3 ranks (3: no power of two): messages of several elements of
#     every size, each reduction kernel on data that crossed the link;
#   - counts 0, 1, 7 (and 4099 on 4 ranks) and a large count -- 1000003 on 2 ranks,
#     65539 on 4 -- for the picks that cover every element size (1, 2, 4, 8 bytes,
#     fp16, bf16), both placements and roots: empty, one-element and odd-sized
#     messages, and messages spanning many RDMA writes and staging slots.
# The transport moves bytes and hands whole elements to reductions, so what depends on
# the type is the element size, which every count sees. Every type x op at every count
# and rank count costs an emulated machine many times the label's budget (a
# million-element case on 4 ranks most of all); the other transports run that matrix.
over_rdma() {  # COMMAND...: runs it and checks that rxe0 sent packets meanwhile
  local before after
  before=$(sent_packets)
  "$@" || return
  after=$(sent_packets)
  echo "rxe0 sent $((after - before)) RoCE packets"
  ((after > before)) || { echo "no RoCE packet went out: not over RDMA"; return 1; }
}
for n in 2 3; do
  check "ib, $n ranks, every collective x type x op at 4099" \
    over_rdma "$collectives" ib $n --counts 4099 --large 0
done
check "ib, 2 ranks, counts 0,1,7,1000003 (element-size picks)" \
  over_rdma "$collectives" ib 2 --counts 0,1,7 --large 1000003 --picks --few
check "ib, 4 ranks, counts 0,1,7,4099,65539 (element-size picks)" \
  over_rdma "$collectives" ib 4 --counts 0,1,7,4099 --large 65539 --picks --few
# Chunks of 1 KiB: every collective runs many steps, each posted while the one before
# is in flight where their bytes are apart (collectives/host/schedule_runner.h).
small_chunks() {
  BRAID_CHUNK_BYTES=1024 over_rdma "$collectives" ib 2 --counts 4099 --large 0 --few &&
    BRAID_CHUNK_BYTES=1024 over_rdma "$collectives" ib 3 --counts 4099 --large 0 --few
}
check "ib, 2 and 3 ranks, 1 KiB chunks: steps posted ahead (picks)" small_chunks

# Four queue pairs per peer: large pieces striped over them (the links' trace lines,
# written when a communicator closes, count the pieces each sent striped).
striped() {
  local log rc
  log=$(mktemp)
  BRAID_IB_QPS_PER_PEER=4 BRAID_DEBUG=TRACE over_rdma "$collectives" ib 2 --counts 0,1,7,4099 \
    --large 1000003 --picks --few >"$log" 2>&1
  rc=$?
  grep -v 'braid TRACE\|braid INFO' "$log"
  local links
  links=$(grep -c 'ib: rank [01] to rank [01]: .*; 4 queue pairs, [1-9][0-9]* pieces striped' "$log")
  rm -f "$log"
  ((rc == 0)) || return $rc
  ((links > 0)) || { echo "no link striped a piece over 4 queue pairs"; return 1; }
}
check "ib, 2 ranks, 4 queue pairs per peer: striping (element-size picks)" striped

# Two simulated hosts of two ranks: shared memory inside a host, ib between them.
mixed() {
  local log
  log=$(mktemp)
  BRAID_HOST_ID=a,a,b,b BRAID_DEBUG=INFO over_rdma "$collectives" mixed 4 --counts 0,7,4099 \
    --large 65539 --picks --few >"$log" 2>&1
  local rc=$?
  grep -v 'braid INFO' "$log"
  local links
  links=$(grep -c 'mixed: rank [0-3] on host [01] of 2: shm to ranks [0-3]; ib to ranks' "$log")
  rm -f "$log"
  ((rc == 0)) || return $rc
  ((links == 4)) || { echo "expected 4 ranks with ib between hosts, saw $links"; return 1; }
}
check "mixed (2 hosts x 2 ranks: shm + ib)" mixed

# A rank SIGKILLed mid-all-reduce: every survivor fails naming it, within the deadline.
check "ib, kill -9 of a rank mid-collective" "$dead_rank" ib 4 kill
check "ib, registration cache under munmap/mmap and heap reuse" "$ib_checks" regcache
check "ib, bad GID index / device / port" "$ib_checks" badconfig
check "ib, credits: late receiver, size mismatches, absent receiver" "$ib_checks" protocol

if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "PASSED: every rdma check"
