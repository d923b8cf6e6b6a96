#!/usr/bin/env bash
# cli_conventions_test.sh PROGRAM...: for each program, --help and -h exit 0 with the help on
# stdout and nothing on stderr; --no-such-flag exits 2 with one line on stderr that names the
# program and the flag, and nothing on stdout.
set -uo pipefail
out="$(mktemp)" err="$(mktemp)"
trap 'rm -f "$out" "$err"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for program in "$@"; do
  name="$(basename "$program")"
  for help in --help -h; do
    "$program" "$help" >"$out" 2>"$err"
    status=$?
    [ $status -eq 0 ] || fail "$name $help exited $status"
    [ -s "$out" ] || fail "$name $help printed no help"
    [ ! -s "$err" ] || fail "$name $help wrote to stderr: $(head -c 200 "$err")"
  done
  "$program" --no-such-flag >"$out" 2>"$err"
  status=$?
  [ $status -eq 2 ] || fail "$name --no-such-flag exited $status, expected 2"
  [ ! -s "$out" ] || fail "$name --no-such-flag wrote to stdout: $(head -c 200 "$out")"
  lines=$(wc -l <"$err")
  [ "$lines" -eq 1 ] || fail "$name --no-such-flag wrote $lines lines to stderr: $(cat "$err")"
  grep -q "^$name: .*no-such-flag" "$err" || fail "$name --no-such-flag: '$(cat "$err")' names neither"
done
[ $failures -eq 0 ] && echo "$# programs follow the command-line convention"
exit $((failures > 0))
