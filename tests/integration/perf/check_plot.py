#!/usr/bin/env python3
"""Runs a braid-perf command that writes a -J file, plots it with perf/plot and
checks the PNG: signature, IHDR, CRCs, that the image data inflates to
height rows of 1 + 3 * width bytes, and that each run's line colour is there.

  check_plot.py --plot perf/plot --json RUN.json --png OUT.png -- COMMAND...
"""

import argparse
import struct
import subprocess
import sys
import zlib

# The first two of perf/plot's SERIES_COLOURS: one line per run.
LINE_COLOURS = [(31, 119, 180), (214, 39, 40)]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def read_png(path):
    """Returns (width, height, rows of RGB bytes) of an 8-bit RGB PNG with no filters."""
    with open(path, "rb") as handle:
        data = handle.read()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        fail("%s has no PNG signature" % path)
    offset, chunks = 8, {}
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])
        if zlib.crc32(kind + body) & 0xffffffff != crc:
            fail("chunk %r has a bad CRC" % kind)
        chunks[kind] = chunks.get(kind, b"") + body
        offset += 12 + length
    if b"IHDR" not in chunks or b"IDAT" not in chunks or b"IEND" not in chunks:
        fail("missing IHDR, IDAT or IEND: %s" % sorted(chunks))
    width, height, depth, colour, _, _, _ = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    if not (200 <= width <= 4000 and 150 <= height <= 4000):
        fail("image is %dx%d, not a sane plot size" % (width, height))
    if (depth, colour) != (8, 2):
        return width, height, None  # matplotlib's output: structure checked only
    raw = zlib.decompress(chunks[b"IDAT"])
    stride = 1 + 3 * width
    if len(raw) != height * stride:
        fail("image data is %d bytes, expected %d" % (len(raw), height * stride))
    return width, height, [raw[y * stride + 1:(y + 1) * stride] for y in range(height)]


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
    plot = subprocess.run([sys.executable, args.plot, "--no-matplotlib", "-o", args.png,
                           "-l", "run one", "-l", "run two", "--title", "check_plot",
                           args.json, args.json], capture_output=True, text=True)
    if plot.returncode != 0:
        fail("perf/plot exited %d:\n%s" % (plot.returncode, plot.stderr))
    width, height, rows = read_png(args.png)
    pixels = set()
    for row in rows:
        pixels.update(bytes(row[x:x + 3]) for x in range(0, len(row), 3))
    for colour in LINE_COLOURS:
        if bytes(colour) not in pixels:
            fail("no pixel of line colour %s: a run was not drawn" % (colour,))
    if bytes((0, 0, 0)) not in pixels:
        fail("no black pixels: axes and labels were not drawn")
    print("OK: %dx%d PNG, %d distinct colours" % (width, height, len(pixels)))


if __name__ == "__main__":
    main()
