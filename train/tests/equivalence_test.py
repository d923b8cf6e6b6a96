#!/usr/bin/env python3
"""Parallel training reproduces single-process training.

  equivalence_test.py --train BRAID_TRAIN --braidrun BRAIDRUN CASE
  equivalence_test.py --train BRAID_TRAIN --mpirun MPIEXEC CASE

With --mpirun the parallel run is started by that MPI launcher instead, and the
ranks of a braid-train built with MPI join through MPI (no BRAID_* variable).

Runs braid-train once in a single process and once under braidrun with the
layout of CASE, both with the same seed, global batch and model, and requires
the per-step training loss (and the final test loss) of the first steps to
agree within 1e-5 relative (fp32), and each pipeline stage to have held as
many micro-batches of activations at once as its schedule prescribes.
Half-precision cases compare against the fp32 single process with a looser
bound, since their gradients are rounded (bf16 keeps 8 significant bits,
fp16 11: 3e-2 and 1e-2 after six steps).
Each case is one ctest test; a failure prints both loss columns.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

COMMON = ["--hidden", "32", "--batch", "48", "--steps", "6", "--eval-limit", "300",
          "--seed", "3", "--optimizer", "sgd", "--lr", "0.05", "--quiet"]

# name: (ranks, layout flags, extra flags for both runs, relative tolerance)
CASES = {
    "dp4": (4, ["--dp", "4"], ["--micro", "2", "--bucket-mb", "0.002"], 1e-5),
    "dp4_ps": (4, ["--dp", "4", "--dp-mode", "ps"], ["--bucket-mb", "0.002"], 1e-5),
    "dp2_no_overlap": (2, ["--dp", "2", "--no-overlap"], [], 1e-5),
    "pp4_1f1b": (4, ["--pp", "4", "--schedule", "1f1b"], ["--micro", "4"], 1e-5),
    "pp4_gpipe": (4, ["--pp", "4", "--schedule", "gpipe"], ["--micro", "6"], 1e-5),
    "tp4": (4, ["--tp", "4"], [], 1e-5),
    "tp2_two_pairs": (2, ["--tp", "2"], ["--hidden-layers", "4"], 1e-5),
    "dp2_pp2": (4, ["--dp", "2", "--pp", "2"], ["--micro", "3"], 1e-5),
    "dp2_tp2": (4, ["--dp", "2", "--tp", "2"], [], 1e-5),
    "pp2_tp2": (4, ["--pp", "2", "--tp", "2"], ["--micro", "2"], 1e-5),
    "dp2_pp2_tp2": (8, ["--dp", "2", "--pp", "2", "--tp", "2"], ["--micro", "2"], 1e-5),
    "dp2_tp2_adam": (4, ["--dp", "2", "--tp", "2"], ["--optimizer", "adam", "--lr", "0.002"],
                     1e-5),
    "tp2_pp2_lamb": (4, ["--tp", "2", "--pp", "2"], ["--optimizer", "lamb", "--lr", "0.01"],
                     1e-5),
    "dp2_bf16": (2, ["--dp", "2", "--precision", "bf16"], [], 3e-2),
    "dp2_fp16": (2, ["--dp", "2", "--precision", "fp16"], [], 1e-2),
}


def run(command, env):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=240, env=env)
    if result.returncode != 0:
        sys.exit("FAILED (exit %d): %s\n%s" % (result.returncode, " ".join(command),
                                                result.stdout))
    return result.stdout


def losses(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    train = [float(row["loss"]) for row in rows]
    final = [float(row["eval_loss"]) for row in rows if row["eval_loss"]]
    return train, final


def flag(flags, name, default):
    return int(flags[flags.index(name) + 1]) if name in flags else default


def check_live_activations(output, flags):
    """The timing table's last column is the most micro-batches whose activations a
    stage held at once: m on every stage for GPipe, min(p - s, m) on stage s for 1F1B."""
    pp, micro = flag(flags, "--pp", 1), flag(flags, "--micro", 1)
    gpipe = "gpipe" in flags
    rows = [line.split() for line in output.splitlines()]
    rows = [row for row in rows if len(row) == 13 and row[0].isdigit() and row[10].endswith("%")]
    if not rows:
        sys.exit("FAILED: no timing table in the output")
    for row in rows:
        stage, live = int(row[2]), int(row[12])
        expected = micro if gpipe else min(pp - stage, micro)
        if live != expected:
            sys.exit("FAILED: stage %d held %d micro-batches at once, expected %d (%s)" %
                     (stage, live, expected, "gpipe" if gpipe else "1f1b"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    launcher = parser.add_mutually_exclusive_group(required=True)
    launcher.add_argument("--braidrun")
    launcher.add_argument("--mpirun")
    parser.add_argument("case", choices=sorted(CASES))
    args = parser.parse_args()
    ranks, layout, extra, tolerance = CASES[args.case]
    env = dict(os.environ, BRAID_TIMEOUT="120")
    if args.braidrun:
        start = [args.braidrun, "-n", str(ranks), "--"]
    else:
        # Nothing of braid's in the environment: MPI alone brings the ranks together.
        env = {k: v for k, v in os.environ.items() if not k.startswith("BRAID_")}
        start = [args.mpirun, "-np", str(ranks)]
        version = subprocess.run([args.mpirun, "--version"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True).stdout
        if "Open MPI" in version or "OpenRTE" in version:  # as root, more ranks than cores
            start[1:1] = ["--allow-run-as-root", "--oversubscribe"]
    with tempfile.TemporaryDirectory(prefix="braid_train_eq_") as tmp:
        single = os.path.join(tmp, "single.csv")
        parallel = os.path.join(tmp, "parallel.csv")
        run([args.train] + COMMON + extra + ["--csv", single], env)
        output = run(start + [args.train] + COMMON + extra + layout + ["--csv", parallel], env)
        reference, reference_eval = losses(single)
        got, got_eval = losses(parallel)
    print(output)
    check_live_activations(output, layout + extra)
    if len(got) != len(reference) or not got:
        sys.exit("step counts differ: single %d, parallel %d" % (len(reference), len(got)))
    worst = 0.0
    for step, (a, b) in enumerate(zip(reference + reference_eval, got + got_eval)):
        error = abs(a - b) / max(abs(a), 1e-30)
        worst = max(worst, error)
        print("%-6s single %.9f  parallel %.9f  rel %.2e" %
              (step if step < len(reference) else "test", a, b, error))
    if worst > tolerance:
        sys.exit("FAILED: relative difference %.3e exceeds %.0e" % (worst, tolerance))
    print("ok: %s reproduces the single-process loss within %.3e (bound %.0e)" %
          (args.case, worst, tolerance))


if __name__ == "__main__":
    main()
