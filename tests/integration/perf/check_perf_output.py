#!/usr/bin/env python3
"""Runs braid-perf (usually under braidrun) and checks what it printed.

  check_perf_output.py [--expect-rc N] [--expect-stderr TEXT] [--expect-wrong N] [--rows N]
                       [--nranks N] [--json PATH] -- COMMAND...

With the default --expect-rc 0 it checks that the table has nccl-tests'
columns, that every row has 13 fields and every #wrong is 0 (or N/A for
in-place sendrecv), that the footer says "Out of bounds values : 0 OK", and
that busbw = algbw * the collective's factor. With --json it also checks that
the JSON file holds the same results. With another --expect-rc it checks only
the exit status and that stderr contains --expect-stderr, unless --expect-wrong
N (for the BRAID_PERF_CORRUPT test hook) asks for the table to be checked with
every checked #wrong equal to N and the footer counting those results FAILED.
"""

import argparse
import json
import math
import re
import subprocess
import sys

COLUMN_TITLES = ["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"]
NOT_CHECKED_IN_PLACE = {"sendrecv"}


def bus_factor(collective, nranks):
    # nccl-tests' doc/PERFORMANCE.md, and gather.cu / scatter.cu / sendrecv.cu.
    if collective == "allreduce":
        return 2.0 * (nranks - 1) / nranks
    if collective in ("allgather", "reducescatter", "alltoall", "gather", "scatter"):
        return (nranks - 1) / nranks
    return 1.0


def fail(message, output=""):
    print("FAIL: " + message)
    if output:
        print("---- output ----\n" + output)
    sys.exit(1)


def parse_table(stdout):
    """Returns [(collective, fields)] for every data row, checking the headers."""
    rows = []
    collective = None
    saw_titles = False
    for line in stdout.splitlines():
        match = re.match(r"# Collective: (\w+)", line)
        if match:
            collective = match.group(1)
            continue
        if line.startswith("#"):
            if all(title in line.split() for title in COLUMN_TITLES):
                saw_titles = True
            continue
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 13:
            fail("row has %d fields, expected 13: %r" % (len(fields), line), stdout)
        if collective is None:
            fail("row before any '# Collective:' line: %r" % line, stdout)
        rows.append((collective, fields))
    if not saw_titles:
        fail("no column titles (%s) in the output" % " ".join(COLUMN_TITLES), stdout)
    return rows


def check_rows(rows, nranks, expected_wrong, stdout):
    """Checks every row; returns how many halves were checked."""
    checked = 0
    for collective, fields in rows:
        for half, (algbw, busbw, wrong) in (("out-of-place", fields[6:9]),
                                            ("in-place", fields[10:13])):
            if wrong == "N/A" and half == "in-place" and collective in NOT_CHECKED_IN_PLACE:
                pass
            elif wrong != str(expected_wrong):
                fail("%s %s #wrong is %s, expected %d, in row %s" %
                     (collective, half, wrong, expected_wrong, fields), stdout)
            else:
                checked += 1
            if nranks is not None:
                expected = float(algbw) * bus_factor(collective, nranks)
                if abs(float(busbw) - expected) > 0.011 + 0.01 * expected:
                    fail("%s busbw %s is not algbw %s x factor" % (collective, busbw, algbw),
                         stdout)
    return checked


def check_json(path, rows, nranks, expected_wrong, stdout):
    with open(path) as handle:
        document = json.load(handle)
    records = document["results"]
    if len(records) != 2 * len(rows):
        fail("JSON has %d records, table has %d rows (2 records each)" %
             (len(records), len(rows)), stdout)
    if nranks is not None and document["nranks"] != nranks:
        fail("JSON nranks is %s, expected %d" % (document["nranks"], nranks))
    for index, record in enumerate(records):
        collective, fields = rows[index // 2]
        if record["collective"] != collective or str(record["size"]) != fields[0]:
            fail("JSON record %d (%s) does not match row %s" % (index, record, fields))
        if record["inplace"] != (index % 2 == 1):
            fail("JSON record %d has inplace=%s out of order" % (index, record["inplace"]))
        if record["time_us"] > 0:
            algbw = record["size"] / 1e3 / record["time_us"]  # bytes/us/1e3 = GB/s
            if not math.isclose(algbw, record["algbw"], rel_tol=1e-6, abs_tol=1e-9):
                fail("JSON record %d: algbw %s is not size/time" % (index, record["algbw"]))
            factor = bus_factor(collective, document["nranks"])
            if not math.isclose(record["busbw"], record["algbw"] * factor, rel_tol=1e-6,
                                abs_tol=1e-9):
                fail("JSON record %d: busbw %s is not algbw x %g" %
                     (index, record["busbw"], factor))
        unchecked = record["inplace"] and collective in NOT_CHECKED_IN_PLACE
        if record["wrong"] != (None if unchecked else expected_wrong):
            fail("JSON record %d: wrong is %s" % (index, record["wrong"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--expect-rc", type=int, default=0)
    parser.add_argument("--expect-stderr", default=None)
    parser.add_argument("--rows", type=int, default=None, help="expected number of table rows")
    parser.add_argument("--nranks", type=int, default=None)
    parser.add_argument("--json", default=None)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--expect-wrong", type=int, default=0,
                        help="#wrong expected in every checked result (test hook runs)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")

    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        fail("command did not finish in %g s: %s" % (args.timeout, " ".join(command)))
    output = proc.stdout + ("\n---- stderr ----\n" + proc.stderr if proc.stderr else "")
    if proc.returncode != args.expect_rc:
        fail("exit status %d, expected %d" % (proc.returncode, args.expect_rc), output)
    if args.expect_stderr is not None and args.expect_stderr not in proc.stderr:
        fail("stderr does not mention %r" % args.expect_stderr, output)
    if args.expect_rc != 0 and args.expect_wrong == 0:
        print("OK: exit status %d" % proc.returncode)
        return

    rows = parse_table(proc.stdout)
    if args.rows is not None and len(rows) != args.rows:
        fail("%d table rows, expected %d" % (len(rows), args.rows), output)
    checked = check_rows(rows, args.nranks, args.expect_wrong, output)
    footer = ("# Out of bounds values : 0 OK" if args.expect_wrong == 0 else
              "# Out of bounds values : %d FAILED" % checked)
    if footer not in proc.stdout:
        fail("footer does not say %r" % footer, output)
    if not re.search(r"# Avg bus bandwidth\s+: \S+", proc.stdout):
        fail("footer has no 'Avg bus bandwidth'", output)
    if args.json:
        check_json(args.json, rows, args.nranks, args.expect_wrong, output)
    print("OK: %d rows" % len(rows))


if __name__ == "__main__":
    main()
