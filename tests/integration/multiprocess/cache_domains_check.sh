#!/bin/sh
# Rings that follow faked L3 domains (BRAID_L3_DOMAIN): 4 rank processes on
# "two sockets" with ranks alternating between them get every collective right
# in the order 0 2 1 3 (rank 0's INFO line says so), and a malformed value fails
# every rank's init naming the variable.
# FIFO placement by NUMA node (BRAID_NUMA_NODE) in the same run: ranks 0 and 2
# ask for node 0 and say their inbound FIFOs are there; ranks 1 and 3 ask for a
# node no machine has, say why their FIFOs are not bound, and work all the same.
# A malformed BRAID_NUMA_NODE fails every rank's init naming it.
#   cache_domains_check.sh <braid_mp_collectives>
set -u
program=$1
log=$(mktemp)
trap 'rm -f "$log"' EXIT

BRAID_L3_DOMAIN=0,1,0,1 BRAID_NUMA_NODE=0,4000,0,4000 BRAID_DEBUG=INFO \
  "$program" shm 4 --picks --few >"$log" 2>&1
rc=$?
tail -n 1 "$log"
if [ $rc -ne 0 ]; then
  echo "FAILED: the collectives failed on faked domains (exit $rc)"; cat "$log"; exit 1
fi
if ! grep -q "rings follow the ranks' L3 domains: rank order 0 2 1 3" "$log"; then
  echo "FAILED: rank 0 did not report the domain order 0 2 1 3"; exit 1
fi

for rank in 0 2; do
  if ! grep -q "shm: rank $rank connected .*inbound FIFOs on NUMA node 0\$" "$log"; then
    echo "FAILED: rank $rank did not report its inbound FIFOs on NUMA node 0"; cat "$log"; exit 1
  fi
done
for rank in 1 3; do
  if ! grep -q "shm: rank $rank's inbound FIFOs are not bound to a NUMA node: .*node 4000" "$log" ||
     ! grep -q "shm: rank $rank connected .*inbound FIFOs not bound to a NUMA node\$" "$log"; then
    echo "FAILED: rank $rank did not report why its FIFOs are not bound"; cat "$log"; exit 1
  fi
done

BRAID_NUMA_NODE=0,1,-1,1 "$program" shm 4 --picks --few >"$log" 2>&1
named=$(grep -c 'init failed: .*BRAID_NUMA_NODE=0,1,-1,1' "$log")
if [ "$named" -ne 4 ]; then
  echo "FAILED: $named of 4 ranks failed naming BRAID_NUMA_NODE"; cat "$log"; exit 1
fi

BRAID_L3_DOMAIN=0,1,x,1 "$program" shm 4 --picks --few >"$log" 2>&1
named=$(grep -c 'init failed: .*BRAID_L3_DOMAIN=0,1,x,1' "$log")
if [ "$named" -ne 4 ]; then
  echo "FAILED: $named of 4 ranks failed naming BRAID_L3_DOMAIN"; cat "$log"; exit 1
fi
echo "PASSED: domain order and NUMA nodes used; a bad BRAID_L3_DOMAIN or BRAID_NUMA_NODE fails every rank"
