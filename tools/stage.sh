#!/usr/bin/env bash
# Runs one stage of `make run` / `make test`: prints one line for it, sends the command's own
# output to a log file, and on failure prints the log's last lines and where the whole log is.
#   tools/stage.sh LOG "what this stage does" command args...
set -uo pipefail
log="$1"
what="$2"
shift 2
mkdir -p "$(dirname "$log")"
printf 'braid: %s ... ' "$what"
start=$SECONDS
{ echo "=== $what: $*"; } >>"$log"
"$@" >>"$log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  echo "failed"
  echo "---- last lines of $log ----"
  tail -n 30 "$log"
  echo "---- the whole output is in $log ----"
  exit $rc
fi
echo "done ($((SECONDS - start)) s)"
