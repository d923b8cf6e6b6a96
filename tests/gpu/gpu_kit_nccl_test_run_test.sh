#!/usr/bin/env bash
# gpu_kit_nccl_test_run_test.sh NCCL_TEST_RUN: the GPU kit's verdict on one nccl-tests run,
# given a stand-in that prints nccl-tests' header and rows as told by its environment.
set -uo pipefail
verify="$1"
fake="$(mktemp)"
trap 'rm -f "$fake"' EXIT
cat >"$fake" <<'FAKE'
#!/bin/sh
echo "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=${FAKE_LIBRARY:-23203}"
echo "#       size    count   type  redop  root   time  algbw  busbw #wrong   time  algbw  busbw #wrong"
[ -n "${FAKE_NO_ROWS:-}" ] && exit 0
echo "           8        2  float    sum    -1   10.1   0.00   0.00      0   10.0   0.00   0.00  ${FAKE_WRONG:-0}"
echo "        1024      256  float    sum    -1   12.0   0.09   0.09      0   11.0   0.09   0.09      0"
exit "${FAKE_STATUS:-0}"
FAKE
chmod +x "$fake"
failures=0
expect() {  # expect STATUS DESCRIPTION VAR=VALUE...
  local want="$1" what="$2"
  shift 2
  env "$@" "$verify" 23203 "$fake" -g 2 -c 1 >/dev/null 2>&1
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"
    failures=$((failures + 1))
  fi
}
expect 0 "a clean run" FAKE_NONE=1
expect 1 "a run that exits 1" FAKE_STATUS=1
expect 1 "a row with #wrong 3" FAKE_WRONG=3
expect 1 "another libnccl.so.2" FAKE_LIBRARY=22809
expect 1 "no result rows" FAKE_NO_ROWS=1
[ $failures -eq 0 ] && echo "nccl_test_run passes the clean run and fails the four bad ones"
exit $((failures > 0))
