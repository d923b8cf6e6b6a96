#!/usr/bin/env python3
"""Runs a braid-perf command that writes a -J file, plots it with perf/plot and
checks the PNG: its signature, a sane size, and that each run's line colour and
the black of the axes and labels are drawn (pixels read back with matplotlib).

  check_plot.py --plot perf/plot --json RUN.json --png OUT.png -- COMMAND...
"""

import argparse
import subprocess
import sys

# The first two of perf/plot's SERIES_COLOURS: one line per run.
LINE_COLOURS = [(31, 119, 180), (214, 39, 40)]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def read_pixels(path):
    """Returns (width, height, set of (r, g, b) colours) of a PNG."""
    with open(path, "rb") as handle:
        if handle.read(8) != b"\x89PNG\r\n\x1a\n":
            fail("%s has no PNG signature" % path)
    import matplotlib.image
    image = matplotlib.image.imread(path)  # floats in [0, 1], RGB or RGBA
    height, width = image.shape[0], image.shape[1]
    if not (200 <= width <= 4000 and 150 <= height <= 4000):
        fail("image is %dx%d, not a sane plot size" % (width, height))
    colours = {tuple(int(round(255 * c)) for c in pixel[:3]) for row in image for pixel in row}
    return width, height, colours


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plot", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--png", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        fail("braid-perf exited %d:\n%s%s" % (run.returncode, run.stdout, run.stderr))
    # The same file twice, under two labels, stands for a comparison of two runs.
    plot = subprocess.run([sys.executable, args.plot, "-o", args.png,
                           "-l", "run one", "-l", "run two", "--title", "check_plot",
                           args.json, args.json], capture_output=True, text=True)
    if plot.returncode != 0:
        fail("perf/plot exited %d:\n%s" % (plot.returncode, plot.stderr))
    width, height, pixels = read_pixels(args.png)
    for colour in LINE_COLOURS:
        if colour not in pixels:
            fail("no pixel of line colour %s: a run was not drawn" % (colour,))
    if (0, 0, 0) not in pixels:
        fail("no black pixels: axes and labels were not drawn")
    print("OK: %dx%d PNG, %d distinct colours" % (width, height, len(pixels)))


if __name__ == "__main__":
    main()
