#!/usr/bin/env bash
# The ktls label's checks, run inside the QEMU guest of tests/rdma/guest in one boot: that
# guest runs Debian's own kernel, which ships kernel TLS (net/tls/tls.ko), where this
# machine's kernel may not. Loads `tls` (and the AES-GCM pieces the kernel would otherwise
# ask modprobe for) from the guest kernel's package, then runs braid's TLS on the socket
# transport with the kernel doing the records it can:
#   - every collective against the reference on 2 and 4 ranks (and on 2 streams per peer,
#     and 2 MB messages);
#   - each rank's INFO line must say the kernel does its records, and the kernel's own
#     counters (/proc/net/tls_stat) must rise by at least the connections braid reported.
#     A connection whose sends the kernel encrypts is written with plain sendmsg; its peer
#     decrypts with OpenSSL, so correct results prove the kernel made genuine records;
#   - attacks under kernel TLS: a forged record (every rank fails, naming a peer), a wrong
#     key, a client without a key, a peer that leaves mid-send, a rank killed mid-call.
# Usage: ktls_checks.sh MODULE_ROOT MP_COLLECTIVES MP_DEAD_RANK SOCKET_TLS_TEST BOOTSTRAP_TLS_TEST
# MODULE_ROOT: a folder holding lib/modules/<the guest's uname -r>/kernel (the guest's cache).
set -uo pipefail
module_root=$1 collectives=$2 dead_rank=$3 socket_tls_test=$4 bootstrap_tls_test=$5
export BRAID_TIMEOUT=${BRAID_TIMEOUT:-60}
unset BRAID_SOCKET_TLS BRAID_SOCKET_KTLS  # by_kernel sets TLS; the gtests set what they test
# shellcheck source=tests/rdma/guest_check.sh
source "$(dirname "$0")/../rdma/guest_check.sh"

# --- kernel TLS in the guest's kernel ----------------------------------------------------------
# shellcheck source=tests/ktls/load_tls.sh
source "$(dirname "$0")/load_tls.sh"
check "load the kernel's tls module" load_tls "$module_root" || true
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi

tls_stat() { awk -v k="$1" '$1 == k { print $2 }' /proc/net/tls_stat; }

# Runs COMMAND... with BRAID_SOCKET_TLS=1 BRAID_DEBUG=INFO; passes when it passed, each of RANKS ranks logged
# the socket transport's TLS with the kernel doing its sends (and the bootstrap's links,
# with BOOTSTRAP_TOO), and TlsTxSw rose by at least the connections they reported (TlsRxSw
# too where the log says the kernel also receives). TlsCurrTxSw must fall back afterwards.
by_kernel() {  # RANKS COMMAND...
  local ranks=$1 log rc
  shift
  log=$(mktemp)
  local tx0 rx0
  tx0=$(tls_stat TlsTxSw) rx0=$(tls_stat TlsRxSw)
  BRAID_SOCKET_TLS=1 BRAID_DEBUG=INFO "$@" >"$log" 2>&1
  rc=$?
  local tx rx
  tx=$(($(tls_stat TlsTxSw) - tx0)) rx=$(($(tls_stat TlsRxSw) - rx0))
  grep -v 'braid INFO' "$log"
  local lines kernel both connections
  lines=$(grep 'socket transport: rank [0-9]* runs TLS 1.3' "$log")
  kernel=$(grep -c 'records by kernel TLS' <<<"$lines")
  both=$(grep -c 'records by kernel TLS$' <<<"$lines")
  connections=$(sed -n 's/.* on \([0-9]*\) connection(s).*/\1/p' <<<"$lines" |
    awk '{ n += $1 } END { print n + 0 }')
  grep -m1 -o 'runs TLS 1.3 .*' <<<"$lines"
  echo "kernel TLS counters: TlsTxSw +$tx, TlsRxSw +$rx for ${connections:-0} connection ends"
  rm -f "$log"
  ((rc == 0)) || return $rc
  ((kernel == ranks)) || { echo "$kernel of $ranks ranks logged kernel TLS records"; return 1; }
  ((tx >= connections)) || { echo "TlsTxSw rose by $tx for $connections connections"; return 1; }
  if ((both == ranks && rx < connections)); then
    echo "the log says the kernel receives too, but TlsRxSw rose by $rx"
    return 1
  fi
  (($(tls_stat TlsCurrTxSw) == 0)) || { echo "kernel TLS sockets left open"; return 1; }
}

# Every collective against the reference: on 2 ranks every type x op at the small counts
# and the element-size picks at a large count (2 MB messages: many records, and sendmsg
# calls a full socket buffer takes in part); on 4 ranks, and on 2 streams per peer, the element-size picks.
check "2 ranks, every collective x type x op, counts 0,1,7,4099" \
  by_kernel 2 "$collectives" socket 2 --counts 0,1,7,4099 --large 0
check "2 ranks, count 500009 (element-size picks)" \
  by_kernel 2 "$collectives" socket 2 --counts 0 --large 500009 --picks --few
check "4 ranks, counts 0,1,7,4099,65539 (element-size picks)" \
  by_kernel 4 "$collectives" socket 4 --counts 0,1,7,4099 --large 65539 --picks --few
BRAID_SOCKET_NSTREAMS=2 check "3 ranks, 2 streams per peer (element-size picks)" \
  by_kernel 3 "$collectives" socket 3 --counts 0,7,4099 \
  --large 65539 --picks --few

# The forged record: the forger keeps its records in OpenSSL (a kernel-TLS socket turns
# whatever is written on it into a genuine record), the two others run kernel TLS.
forged() {
  local log rc
  log=$(mktemp)
  BRAID_DEBUG=INFO "$socket_tls_test" --gtest_filter='SocketTls.AForgedRecord*' >"$log" 2>&1
  rc=$?
  grep -v 'braid INFO' "$log"
  local kernel user
  kernel=$(grep -c 'socket transport: rank [12] runs TLS.*records by kernel TLS' "$log")
  user=$(grep -c 'socket transport: rank 0 runs TLS.*OpenSSL (no kernel TLS)' "$log")
  rm -f "$log"
  ((rc == 0)) || return $rc
  ((kernel == 2 && user == 1)) || {
    echo "expected ranks 1, 2 on kernel TLS and rank 0 on OpenSSL, saw $kernel and $user"
    return 1
  }
}
check "a forged record: every rank fails naming a peer (ranks 1, 2 on kernel TLS)" forged
check "a wrong key, a client without a key, a peer leaving mid-send" \
  "$socket_tls_test" --gtest_filter='SocketTls.ARankWithAWrongKey*:SocketTls.AClientWithout*:SocketTls.APeerThatLeaves*:SocketTls.MessagesArriveIntactWithCertificates'
# The bootstrap's links on kernel TLS, but for the forged-record test, whose forger needs its
# records in OpenSSL (the test sets BRAID_SOCKET_KTLS=0 for itself, as above).
bootstrap_links() {
  local log rc kernel
  log=$(mktemp)
  BRAID_DEBUG=INFO "$bootstrap_tls_test" >"$log" 2>&1
  rc=$?
  grep -v 'braid INFO' "$log"
  kernel=$(grep -c 'bootstrap: rank [0-9]* runs TLS.*records by kernel TLS' "$log")
  rm -f "$log"
  ((rc == 0)) || return $rc
  ((kernel > 0)) || { echo "no bootstrap logged kernel TLS records"; return 1; }
  echo "$kernel bootstraps logged kernel TLS records"
}
check "bootstrap links on kernel TLS" bootstrap_links
check "kill -9 of a rank mid-collective: every survivor names it" \
  by_kernel 4 "$dead_rank" socket 4 kill

if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "PASSED: every kernel TLS check"
