#!/usr/bin/env bash
# The failure-injection hook of netns_bed.sh, end to end: 2 hosts x 2 ranks run
# all-reduces in a loop; once they are running, rank 0 cuts host 1's link at the
# switch (netns_bed.sh link BED 1 down). Every rank must then fail cleanly
# (BRAID_TIMEOUT) instead of hanging: the bed exits non-zero, well before ctest's
# TIMEOUT, and the ranks' errors name a peer. Skips (77) where no bed can be built.
# Usage: link_down_test.sh NETNS_BED BRAID_PERF
set -uo pipefail
bed=$1 perf=$2
"$bed" check || exit 77

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# -n is far more iterations than run before the cut; -T bounds every wait after it.
# shellcheck disable=SC2016  # the inner script expands its variables in each rank
"$bed" run --hosts 2x2 -- bash -c '
  if [[ $BRAID_RANK == 0 ]]; then
    (sleep 3; "$0" link "$BRAID_BED" 1 down) &
  fi
  exec "$1" allreduce -b 1M -e 1M -n 1000000 -w 1 -c 0 -T 8' "$bed" "$perf" >"$log" 2>&1
status=$?
if ((status == 0)); then
  echo "FAIL: the ranks finished although host 1 lost its link" >&2
  cat "$log" >&2
  exit 1
fi
if ! grep -qE 'failed on rank [0-9]+: .*rank [0-9]+' "$log"; then
  echo "FAIL: no rank's error names a peer; output:" >&2
  cat "$log" >&2
  exit 1
fi
echo "ok: the link cut became an error (bed status $status):"
grep -iE 'error|timeout|rank [0-9]+' "$log" | head -5
