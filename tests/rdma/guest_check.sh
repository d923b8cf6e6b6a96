# shellcheck shell=bash
# Sourced by the guest's check scripts (rdma_checks.sh, tests/ktls/ktls_checks.sh): `check NAME
# COMMAND...` runs one check, prints its verdict and time, and adds NAME to `failed` when it
# fails, so that one boot runs every check and the script reports them all at the end.
failed=()

check() {  # NAME COMMAND...
  local name=$1 start rc
  shift
  echo "=== $name"
  start=${EPOCHREALTIME/./}
  "$@"
  rc=$?
  local us=$((${EPOCHREALTIME/./} - start))
  printf '=== %s: %s in %d.%d s\n' "$name" "$([[ $rc == 0 ]] && echo passed || echo "FAILED ($rc)")" \
    $((us / 1000000)) $((us / 100000 % 10))
  [[ $rc == 0 ]] || failed+=("$name")
}
