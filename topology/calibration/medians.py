#!/usr/bin/env python3
"""Turns the braid-perf JSON files of measure.sh into the CSV the calibration reads.

One row per (link, collective, algorithm, ranks, size): the median time over every
round and both in-place and out-of-place calls. Files are named
<link>-<collective>-<algorithm>-n<ranks>-r<round>.json (measure.sh's names).

    topology/calibration/medians.py DIR > topology/calibration/shm-socket.csv
"""
import collections
import glob
import json
import os
import statistics
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    times = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
        link, coll, algo, ranks, _ = os.path.basename(path)[:-5].split("-")
        with open(path) as f:
            for row in json.load(f)["results"]:
                if row["size"] == 0 or row["wrong"] != 0:
                    continue
                times[(link, coll, algo, int(ranks[1:]), row["size"])].append(row["time_us"])
    print("link,collective,algorithm,nranks,size,us")
    for (link, coll, algo, n, size), values in sorted(times.items()):
        print(f"{link},{coll},{algo},{n},{size},{statistics.median(values):.3f}")


if __name__ == "__main__":
    main()
