#!/usr/bin/env bash
# Measures every (collective, algorithm) braid can force, over shared memory with 2, 3, 4 and
# 8 ranks, so that fit.py can calibrate the cost model (topology/cost_model.h) and report
# its prediction error. One braid-perf run per (collective, algorithm, ranks, round);
# rounds alternate algorithms so that a burst of load on this shared machine hits them
# all alike. Time per call = max over ranks (-a 3); fit.py takes medians over rounds.
#
#   topology/calibration/measure.sh [build-dir] [out-dir] [rounds] [shm|socket]
set -euo pipefail
build=${1:-build}
out=${2:-topology/calibration/results}
rounds=${3:-3}
transport=${4:-shm}
mkdir -p "$out"
combos=(
  "allreduce ring" "allreduce tree" "allreduce rd"
  "broadcast ring" "broadcast tree" "reduce ring" "reduce tree"
  "allgather ring" "reducescatter ring" "alltoall pairwise" "alltoall ring"
)
for round in $(seq 1 "$rounds"); do
  for n in 2 3 4 8; do
    for combo in "${combos[@]}"; do
      read -r coll algo <<<"$combo"
      BRAID_TRANSPORT=$transport "$build/tools/braidrun" -n "$n" -- \
        "$build/perf/braid-perf" "$coll" -b 8 -e 4M -f 4 -a 3 -n 30 -w 5 --algo "$algo" \
        -J "$out/$transport-$coll-$algo-n$n-r$round.json" >/dev/null
    done
  done
done
echo "wrote $(ls "$out" | wc -l) files to $out"
