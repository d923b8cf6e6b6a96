#!/usr/bin/env bash
# Open MPI's launcher across network-namespace hosts, with no BRAID_* variable: mpirun runs
# in host 0's namespace and starts its daemons through an rsh agent that is
# `ip netns exec`, as it would through ssh on a cluster. Braid's ranks then find each other
# through MPI alone (unique id by MPI_Bcast), on 2 hosts x 2 ranks:
#   1. an outside C program (tests/integration/mpi/mpi_outside.c) with braidCommInitMPI:
#      world and split communicators equal MPI's results, bad handles are clear errors;
#   2. the same program with braidCommInitFromEnv after MPI_Init;
#   3. braid-perf (built with MPI) runs every collective, checked (-c 1), and its ranks sit
#      on two hosts.
# Usage: mpi_netns_test.sh NETNS_BED BRAID_PERF LIBBRAID SOURCE_DIR WORK_DIR
# Skips (77) without root (no bed), without Open MPI, or when braid-perf lacks MPI.
set -uo pipefail
bed=$1 perf=$2 libbraid=$3 source=$4 work=$5
"$bed" check || exit 77
if ! command -v mpicc.openmpi >/dev/null || ! command -v mpirun.openmpi >/dev/null; then
  echo "skipped: Open MPI is not installed (tools/install_deps.sh installs it)"
  exit 77
fi
for name in $(compgen -e); do [[ $name == BRAID_* ]] && unset "$name"; done

rm -rf "$work" && mkdir -p "$work"
log=$work/log
fail() {
  echo "FAIL: $1; output:" >&2
  cat "$log" >&2
  exit 1
}
mpicc.openmpi -std=c99 -Wall -Werror "$source/tests/integration/mpi/mpi_outside.c" \
  -I"$source/include" "$libbraid" -Wl,-rpath,"$(dirname "$libbraid")" -o "$work/mpi_outside" \
  >"$log" 2>&1 || fail "building mpi_outside"

# Open MPI's rsh agent: `agent HOST COMMAND...`, the command written for a remote shell.
# HOST is an address of the bed (10.A.B.H); host H-1's namespace runs the command.
cat >"$work/netns_agent" <<'AGENT'
#!/bin/sh
host=$1
shift
exec ip netns exec "$MPIBED_NS-h$((${host##*.} - 1))" sh -c "$*"
AGENT
chmod +x "$work/netns_agent"

# Runs mpirun in host 0 with 2 ranks on each of the bed's two hosts: mpirun.sh PROGRAM ARGS...
# MPI's own messages go over TCP (btl self,tcp): the namespace hosts share one kernel and
# hostname, and Open MPI's shared-memory transport, taking them for one node, crashes.
cat >"$work/mpirun.sh" <<'MPIRUN'
#!/usr/bin/env bash
exec timeout 240 ip netns exec "$MPIBED_NS-h0" mpirun.openmpi --allow-run-as-root \
  --oversubscribe --mca plm_rsh_agent "$MPIBED_WORK/netns_agent" --mca btl self,tcp \
  -H "$MPIBED_NET.1:2,$MPIBED_NET.2:2" -np 4 "$@"
MPIRUN
chmod +x "$work/mpirun.sh"

# In the bed (netns_bed.sh with): BRAID_BED/BRAID_BED_NET name it; they are copied to
# non-BRAID names and removed, so no BRAID_* variable reaches mpirun or the ranks.
in_bed() {
  "$bed" with --hosts 2 -- env MPIBED_WORK="$work" bash -c '
    export MPIBED_NS=$BRAID_BED MPIBED_NET=$BRAID_BED_NET
    unset BRAID_BED BRAID_BED_NET
    exec "$@"' bash "$@"
}

in_bed "$work/mpirun.sh" "$work/mpi_outside" world >"$log" 2>&1 || fail "mpi_outside world"
grep -q "mpi_outside world: 4 ranks ok" "$log" || fail "world: no success line"
# Ranks 0-1 share one network namespace, ranks 2-3 another: two hosts to braid.
ns() { sed -n "s/^mpi_outside rank $1 netns //p" "$log"; }
[[ -n "$(ns 0)" && "$(ns 0)" == "$(ns 1)" && "$(ns 2)" == "$(ns 3)" && "$(ns 0)" != "$(ns 2)" ]] ||
  fail "the ranks must run 2 per namespace host"

in_bed "$work/mpirun.sh" "$work/mpi_outside" fromenv >"$log" 2>&1 || fail "mpi_outside fromenv"
grep -q "mpi_outside fromenv: 4 ranks ok" "$log" || fail "fromenv: no success line"

in_bed "$work/mpirun.sh" "$perf" all -b 8 -e 1M -f 32 -c 1 -n 1 -w 0 -T 60 >"$log" 2>&1 ||
  fail "braid-perf under mpirun"
grep -q "Out of bounds values : 0 OK" "$log" || fail "braid-perf: wrong results"

# Where braid placed the ranks: its log (BRAID_DEBUG, a log switch, no bootstrap setting).
in_bed "$work/mpirun.sh" -x BRAID_DEBUG=INFO "$perf" allreduce -b 1M -e 1M -c 1 -n 1 -w 0 \
  >"$log" 2>&1 || fail "braid-perf with BRAID_DEBUG=INFO"
grep -q "braidCommInitRankBroadcast: rank 3 of 4 joins with the unique id rank 0 broadcast" \
  "$log" || fail "braid-perf did not bootstrap over MPI (braidCommInitMPI)"
for rank in 0 1 2 3; do
  grep -qE "rank $rank of 4 ready \(transport [a-z+]+, host $((rank / 2)) of 2\)" "$log" ||
    fail "rank $rank must be on host $((rank / 2)) of 2"
done
echo "ok: braid over Open MPI's launcher across 2 namespace hosts, no BRAID_* variable"
