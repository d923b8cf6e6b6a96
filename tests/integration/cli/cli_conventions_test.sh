#!/usr/bin/env bash
# cli_conventions_test.sh PROGRAM... [--bad "PROGRAM ARG..."...]
# For each PROGRAM: --help and -h exit 0 with the help on stdout and nothing on stderr;
# --no-such-flag exits 2 with one line on stderr that names the program and the flag, and
# nothing on stdout.
# Each --bad case is one argument, a program and its arguments separated by blanks: it must
# exit 2 with one line on stderr that names the program and the first option in the case
# (without any "=value"), and nothing on stdout.
set -uo pipefail
out="$(mktemp)" err="$(mktemp)"
trap 'rm -f "$out" "$err"' EXIT
failures=0 checked=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_usage_error NAME WORD COMMAND...: exit 2, nothing on stdout, one line naming NAME and WORD.
expect_usage_error() {
  local name="$1" word="$2"
  shift 2
  "$@" >"$out" 2>"$err" </dev/null
  local status=$?
  local what="$name ${*:2}"
  [ $status -eq 2 ] || fail "$what exited $status, expected 2"
  [ ! -s "$out" ] || fail "$what wrote to stdout: $(head -c 200 "$out")"
  local lines
  lines=$(wc -l <"$err")
  [ "$lines" -eq 1 ] || fail "$what wrote $lines lines to stderr: $(cat "$err")"
  grep -q -e "^$name: " "$err" || fail "$what: '$(cat "$err")' does not start with '$name: '"
  grep -q -F -e "$word" "$err" || fail "$what: '$(cat "$err")' does not name $word"
}

while [ $# -gt 0 ] && [ "$1" != --bad ]; do
  program="$1"
  shift
  name="$(basename "$program")"
  checked=$((checked + 1))
  for help in --help -h; do
    "$program" "$help" >"$out" 2>"$err"
    status=$?
    [ $status -eq 0 ] || fail "$name $help exited $status"
    [ -s "$out" ] || fail "$name $help printed no help"
    [ ! -s "$err" ] || fail "$name $help wrote to stderr: $(head -c 200 "$err")"
  done
  expect_usage_error "$name" no-such-flag "$program" --no-such-flag
done

bad=0
[ $# -gt 0 ] && shift  # --bad
for case in "$@"; do
  read -r -a words <<<"$case"
  name="$(basename "${words[0]}")"
  flag=""
  for word in "${words[@]:1}"; do
    if [ "${word#-}" != "$word" ]; then
      flag="${word%%=*}"
      break
    fi
  done
  expect_usage_error "$name" "$flag" "${words[@]}"
  bad=$((bad + 1))
done
[ $failures -eq 0 ] &&
  echo "$checked programs follow the command-line convention; $bad bad values refused"
exit $((failures > 0))
