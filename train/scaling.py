#!/usr/bin/env python3
"""Runs braid-train in several layouts and tabulates where the step time goes.

  train/scaling.py [--build build] [--steps 14] [--hidden 1024] [--batch 128] [-o table.md]

Each configuration trains the full model for --steps steps (no evaluation
to speak of) under braidrun and reads braid-train's timing table: medians
over the steps after the first two, per rank. The Markdown table it prints
has, per configuration, the slowest rank's median step time, the mean over
ranks of compute and communication (tp all-reduces + pipeline waits +
exposed data-parallel wait, as a share of the step; the other time columns
are means over ranks, in ms), the data-parallel exchange's busy time
(overlapped or not), and for pipelines the bubble of the busiest stage against
(p-1)/(m+p-1).
"""
import argparse
import re
import subprocess
import sys

CONFIGS = [
    ("1 rank", 1, []),
    ("DP2 ring", 2, ["--dp", "2"]),
    ("DP2 ring, no overlap", 2, ["--dp", "2", "--no-overlap"]),
    ("DP2 param server", 2, ["--dp", "2", "--dp-mode", "ps"]),
    ("DP2 ring bf16", 2, ["--dp", "2", "--precision", "bf16"]),
    ("DP4 ring", 4, ["--dp", "4"]),
    ("DP4 param server", 4, ["--dp", "4", "--dp-mode", "ps"]),
    ("PP2 GPipe m=4", 2, ["--pp", "2", "--micro", "4", "--schedule", "gpipe"]),
    ("PP2 1F1B m=4", 2, ["--pp", "2", "--micro", "4", "--schedule", "1f1b"]),
    ("PP2 1F1B m=8", 2, ["--pp", "2", "--micro", "8", "--schedule", "1f1b"]),
    ("PP4 GPipe m=8", 4, ["--pp", "4", "--micro", "8", "--schedule", "gpipe"]),
    ("PP4 1F1B m=8", 4, ["--pp", "4", "--micro", "8", "--schedule", "1f1b"]),
    ("TP2", 2, ["--tp", "2"]),
    ("TP4", 4, ["--tp", "4"]),
    ("DP2xTP2", 4, ["--dp", "2", "--tp", "2"]),
]

ROW = re.compile(r"^\s*(\d+)\s+\d+\s+\d+\s+\d+\s+" + r"\s+".join([r"([\d.]+)"] * 6) +
                 r"\s+([\d.]+)%\s+([\d.]+)\s+(\d+)$")
BUBBLE = re.compile(r"measured ([\d.]+), \(p-1\)/\(m\+p-1\) = ([\d.]+)")


def measure(args, ranks, flags):
    command = [args.build + "/tools/braidrun", "-n", str(ranks), "--",
               args.build + "/train/braid-train", "--hidden", str(args.hidden), "--batch",
               str(args.batch), "--steps", str(args.steps), "--eval-limit", "100", "--quiet"]
    result = subprocess.run(command + flags, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=1800)
    if result.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(command + flags), result.stdout))
    rows = [ROW.match(line) for line in result.stdout.splitlines()]
    rows = [[float(x) for x in m.groups()] for m in rows if m]
    bubble = BUBBLE.search(result.stdout)
    return rows, bubble


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--steps", type=int, default=14)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--only", help="run only configurations whose name contains this")
    args = parser.parse_args()
    print("| layout | ranks | step ms (slowest rank) | compute | TP all-reduce | PP wait "
          "| DP wait (exposed) | DP exchange busy | comm share | bubble measured / theory |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, ranks, flags in CONFIGS:
        if args.only and args.only not in name:
            continue
        rows, bubble = measure(args, ranks, flags)
        # Row fields: rank, step, compute, tp, pp, dp-wait, dp-busy, comm%, bubble.
        mean = [sum(r[i] for r in rows) / len(rows) for i in range(9)]
        step = max(r[1] for r in rows)
        pipe = "%s / %s" % bubble.groups() if bubble else "-"
        print("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f%% | %s |" %
              (name, ranks, step, mean[2], mean[3], mean[4], mean[5], mean[6], mean[7], pipe),
              flush=True)


if __name__ == "__main__":
    main()
