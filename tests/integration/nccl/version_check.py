#!/usr/bin/env python3
"""The drop-in's version, said three ways, must agree: what ncclGetVersion reports, the
release the library file is named after (libnccl.so.X.Y.Z, soname libnccl.so.2 as NCCL's),
and the release the build declares (BRAID_NCCL_VERSION). It must be at least as new as
every NCCL header that programs are built against (NCCL_VERSION_CODE): a library older than
its header makes NCCL programs warn or refuse newer calls.

usage: version_check.py LIBRARY X.Y.Z [HEADER...]"""
import ctypes
import os
import re
import subprocess
import sys


def code(major, minor, patch):  # NCCL_VERSION() for releases since 2.9
    return major * 10000 + minor * 100 + patch


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    library, declared = sys.argv[1], sys.argv[2]
    failed = []
    want = code(*map(int, declared.split(".")))

    reported = ctypes.c_int(-1)
    result = ctypes.CDLL(library).ncclGetVersion(ctypes.byref(reported))
    if result != 0 or reported.value != want:
        failed.append(f"ncclGetVersion returned {result} and reports {reported.value}; the build "
                      f"declares {declared} ({want})")

    real = os.path.basename(os.path.realpath(library))
    if real != f"libnccl.so.{declared}":
        failed.append(f"the library file is {real}, not libnccl.so.{declared}")
    dynamic = subprocess.run(["readelf", "-d", library], check=True, capture_output=True,
                             text=True).stdout
    soname = re.search(r"\(SONAME\).*\[(.*)\]", dynamic)
    if soname is None or soname.group(1) != "libnccl.so.2":
        failed.append(f"soname {soname.group(1) if soname else 'missing'}, not libnccl.so.2")

    for header in sys.argv[3:]:
        text = open(header, encoding="utf-8").read()
        match = re.search(r"^#define NCCL_VERSION_CODE (\d+)", text, re.M)
        if match is None:
            failed.append(f"{header}: no NCCL_VERSION_CODE")
        elif int(match.group(1)) > reported.value:
            failed.append(f"{header} is NCCL {match.group(1)}, newer than the library's "
                          f"{reported.value}")
    for line in failed:
        print(line)
    if not failed:
        print(f"{library}: NCCL {declared} ({want}) in ncclGetVersion, file name and soname; "
              f"not older than {len(sys.argv) - 3} header(s)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
