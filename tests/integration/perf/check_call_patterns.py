#!/usr/bin/env python3
"""Checks the call patterns of the comparison programs and of perf/compare.

  check_call_patterns.py --repo DIR --build DIR [--mpi]

bench_braid under braidrun: -p isolated (the default), gap and back-to-back each
run and name their pattern in the JSON; -p gap sweeps -g bytes, or twice the L3
that sysfs reports. perf/compare: a bad --patterns or a --gap-bytes without the
gap pattern exits 2 naming the option; a one-round run of the three patterns
writes a table row per pattern, labelled near or far, and (with --mpi, where
bench_mpi is built) a braid/OpenMPI summary whose ratio is the one the two
programs' JSON files give.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message)


def l3_bytes():
    """The L3 size from sysfs, as the benchmark reads it; 0 when unknown."""
    for index in range(8):
        base = "/sys/devices/system/cpu/cpu0/cache/index%d/" % index
        try:
            level = open(base + "level").read().strip()
            size = open(base + "size").read().strip()
        except OSError:
            continue
        if level == "3" and size:
            unit = {"K": 1 << 10, "M": 1 << 20}.get(size[-1], 1)
            return int(size.rstrip("KM")) * unit
    return 0


def bench(build, scratch, extra):
    """Runs 2-rank bench_braid on 4 KiB all-reduces; returns its JSON or None."""
    path = os.path.join(scratch, "bench.json")
    if os.path.exists(path):
        os.remove(path)
    argv = [os.path.join(build, "tools", "braidrun"), "-n", "2", "--timeout", "60", "--",
            os.path.join(build, "perf", "bench_braid"), "-b", "4K", "-e", "4K", "-c",
            "allreduce", "-J", path] + extra
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=120)
    check(result.returncode == 0, "%s exited %d: %s" % (" ".join(extra), result.returncode,
                                                        result.stdout[-1000:]))
    if result.returncode != 0:
        return None
    return json.load(open(path))


def compare(repo, build, out, extra):
    argv = [sys.executable, os.path.join(repo, "perf", "compare"), "--build", build,
            "--no-build", "--no-install", "--out", out, "--ranks", "2", "--transports", "shm",
            "--collectives", "allreduce", "--min-bytes", "1K", "--max-bytes", "8K",
            "--rounds", "1"] + extra
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=600)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--mpi", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="braid-patterns-") as scratch:
        got = bench(args.build, scratch, [])
        if got:
            check(got["pattern"] == "isolated" and got["gap_bytes"] == 0,
                  "default pattern: %s %s" % (got["pattern"], got["gap_bytes"]))
        got = bench(args.build, scratch, ["-p", "gap", "-g", "3M"])
        if got:
            check(got["pattern"] == "gap" and got["gap_bytes"] == 3 << 20,
                  "-p gap -g 3M: %s %s" % (got["pattern"], got["gap_bytes"]))
            check(len(got["results"]) == 1 and len(got["results"][0]["samples_us"]) > 0,
                  "-p gap: no samples")
        got = bench(args.build, scratch, ["-p", "gap"])
        if got:
            want = 2 * l3_bytes() or 64 << 20
            check(got["gap_bytes"] == want, "-p gap sweeps %d B, not 2 x L3 = %d B" % (
                got["gap_bytes"], want))
        got = bench(args.build, scratch, ["-p", "back-to-back"])
        if got:
            check(got["pattern"] == "back-to-back", "-p back-to-back: %s" % got["pattern"])

        for extra, option in ((["--patterns", "isolated,sideways"], "--patterns"),
                              (["--patterns", ""], "--patterns"),
                              (["--patterns", "isolated", "--gap-bytes", "1M"], "--gap-bytes")):
            result = compare(args.repo, args.build, scratch, extra)
            check(result.returncode == 2 and option in result.stderr,
                  "compare %s: exit %d, stderr %r" % (" ".join(extra), result.returncode,
                                                       result.stderr[-300:]))

        out = os.path.join(scratch, "out")
        backends = "braid,mpi" if args.mpi else "braid"
        result = compare(args.repo, args.build, out,
                         ["--backends", backends, "--patterns", "isolated,gap,back-to-back",
                          "--gap-bytes", "2M", "--factor", "8"])
        check(result.returncode == 0, "compare run exited %d: %s" % (result.returncode,
                                                                     result.stderr[-2000:]))
        reports = glob.glob(os.path.join(out, "compare-*.md"))
        check(len(reports) == 1, "compare wrote %d reports" % len(reports))
        if result.returncode != 0 or len(reports) != 1:
            return 1
        text = open(reports[0]).read()
        for pattern in ("isolated", "gap", "back-to-back"):
            rows = re.findall(r"^\| %s \| (near|far) \| 2 \| shm \| (1024|8192) \|" % pattern,
                              text, re.M)
            check(len(rows) == 2, "%d allreduce rows for the %s pattern" % (len(rows), pattern))
            files = glob.glob(os.path.join(out, "compare-*-braid-2r-shm-%s.json" % pattern))
            check(len(files) == 1 and json.load(open(files[0]))["pattern"] == pattern,
                  "no braid JSON for the %s pattern" % pattern)
        if args.mpi:
            for pattern in ("isolated", "gap", "back-to-back"):
                row = re.search(r"^\| %s \| (near|far) \| 1 \| 2 \| shm \| allreduce \| "
                                r"([0-9.]+) \| ([0-9.]+) \|" % pattern, text, re.M)
                check(row is not None, "no summary row for the %s pattern" % pattern)
                if not row:
                    continue
                # One round: the paired ratio is the ratio of the two programs' medians.
                busbw = {}
                for backend in ("braid", "mpi"):
                    path = glob.glob(os.path.join(out, "compare-*-%s-2r-shm-%s.json" %
                                                  (backend, pattern)))[0]
                    busbw[backend] = {r["size"]: r["busbw"] for r in json.load(open(path))[
                        "results"]}
                want = busbw["braid"][8192] / busbw["mpi"][8192]
                # The report rounds to 2 decimals.
                check(abs(float(row.group(3)) - want) <= 0.006 + want * 1e-3,
                      "%s summary ratio %s, JSON gives %.3f" % (pattern, row.group(3), want))
    if failures:
        return 1
    print("call patterns: bench_braid and perf/compare checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
