#!/usr/bin/env python3
"""braid-train's command line: bad input gives a clear error and a non-zero exit.

  cli_test.py --train BRAID_TRAIN CASE

Cases: each bad argument (exit 2, message names the argument), a missing
dataset directory and a layout that does not match the job size (exit 1,
message says why), --help (exit 0), and a tiny run whose --csv and --plot
outputs exist and are well formed (their folders made when missing, a clear
error when they cannot be).
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

BAD_ARGUMENTS = [
    (["--dp"], "--dp needs a value"),
    (["--dp", "x"], "--dp wants an integer"),
    (["--dp", "0"], "out of range"),
    (["--bogus"], "unknown argument '--bogus'"),
    (["--schedule", "zigzag"], "--schedule must be one of"),
    (["--precision", "fp8"], "--precision must be one of"),
    (["--optimizer", "rmsprop"], "--optimizer must be one of"),
    (["--lr", "-1"], "--lr wants a number"),
    (["--batch", "4", "--dp", "2", "--micro", "4"], "some micro-batch would be empty"),
    (["--pp", "9"], "exceeds the model's 4 layers"),
    (["--tp", "11"], "--tp 11 exceeds"),
]


def run(command):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=120)


def expect(result, code, words):
    if result.returncode != code or words not in result.stderr + result.stdout:
        sys.exit("FAILED: expected exit %d and %r, got exit %d\nstdout: %s\nstderr: %s" %
                 (code, words, result.returncode, result.stdout, result.stderr))


def check_loss_scaling(train):
    """fp16 with a scale far too large: steps overflow and are skipped, the scale halves
    each time until gradients fit, then training proceeds with finite losses and the
    scale doubles after every --loss-scale-window good steps."""
    with tempfile.TemporaryDirectory(prefix="braid_train_cli_") as tmp:
        table = os.path.join(tmp, "fp16.csv")
        result = run([train, "--hidden", "16", "--batch", "32", "--steps", "30", "--eval-limit",
                      "100", "--precision", "fp16", "--loss-scale", "1e9",
                      "--loss-scale-window", "4", "--quiet", "--csv", table])
        expect(result, 0, "final test accuracy")
        with open(table, newline="") as handle:
            rows = list(csv.DictReader(handle))
    scales = [float(row["loss_scale"]) for row in rows]
    skipped = [row["skipped"] == "1" for row in rows]
    first_good = skipped.index(False) if False in skipped else len(rows)
    if first_good == 0 or first_good == len(rows):
        sys.exit("FAILED: expected some skipped steps, then good ones: %s" % skipped)
    def near(a, b):  # the CSV keeps 9 significant digits
        return abs(a - b) <= 1e-8 * abs(b)

    for i in range(1, first_good + 1):
        if not near(scales[i], scales[i - 1] / 2):
            sys.exit("FAILED: the scale should halve after each overflow: %s" % scales)
    if not all(any(near(scales[i], f * scales[i - 1]) for f in (1, 2, 0.5))
               for i in range(1, len(rows))) or max(scales[first_good:]) <= scales[first_good]:
        sys.exit("FAILED: the scale should grow again after good steps: %s" % scales)
    losses = [float(row["loss"]) for row in rows]
    if not all(loss == loss and loss < 10 for loss in losses):
        sys.exit("FAILED: losses should stay finite: %s" % losses)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("case", choices=["bad_arguments", "missing_data", "world_mismatch",
                                         "help", "outputs", "loss_scaling"])
    args = parser.parse_args()
    train = args.train
    if args.case == "bad_arguments":
        for argv, words in BAD_ARGUMENTS:
            expect(run([train] + argv), 2, words)
    elif args.case == "missing_data":
        expect(run([train, "--data", "/nonexistent/fashion"]), 1,
               "/nonexistent/fashion/train-images-idx3-ubyte.gz: cannot open")
    elif args.case == "world_mismatch":
        expect(run([train, "--dp", "2", "--quiet"]), 1, "the job has 1")
    elif args.case == "help":
        expect(run([train, "--help"]), 0, "usage: braid-train")
    elif args.case == "loss_scaling":
        check_loss_scaling(train)
    else:
        with tempfile.TemporaryDirectory(prefix="braid_train_cli_") as tmp:
            # Folders that do not exist yet (train/results/ is git-ignored): braid-train makes them.
            table = os.path.join(tmp, "new", "results", "loss.csv")
            image = os.path.join(tmp, "other", "loss.png")
            result = run([train, "--hidden", "16", "--batch", "64", "--steps", "5",
                          "--eval-limit", "100", "--csv", table, "--plot", image])
            expect(result, 0, "final test accuracy")
            with open(table, newline="") as handle:
                rows = list(csv.DictReader(handle))
            if len(rows) != 5 or not rows[-1]["eval_accuracy"]:
                sys.exit("FAILED: the CSV should hold 5 steps and a final evaluation: %s" % rows)
            with open(image, "rb") as handle:
                if handle.read(8) != b"\x89PNG\r\n\x1a\n":
                    sys.exit("FAILED: %s is not a PNG" % image)
            # A folder that cannot be made (its parent is a file): a clear error naming the flag.
            for flag in ("--csv", "--plot"):
                blocked = os.path.join(table, "x.out")
                expect(run([train, "--hidden", "16", "--batch", "64", "--steps", "1",
                            "--eval-limit", "100", "--quiet", flag, blocked]), 1,
                       "cannot create folder %s" % table)
    print("ok:", args.case)


if __name__ == "__main__":
    main()
