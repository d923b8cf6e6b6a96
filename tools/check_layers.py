#!/usr/bin/env python3
"""Fails when an #include runs upward through braid's layers (docs/ARCHITECTURE.md).

The library is a stack of folders; a file may include its own layer and the layers below it,
never one above. train/ and bindings/ sit on the public C API alone (and the header-only
command-line convention of tools/cli/, which holds no library code). Usage:

    tools/check_layers.py [SOURCE_ROOT]      exit 0: clean; 1: violations, one line each
"""
import os
import re
import sys

# Bottom to top. A folder prefix belongs to the first layer that names it.
LAYERS = [
    ("include", ["include/"]),          # the public C API: anyone may include it
    ("core", ["core/"]),                # status, config, log, types, host kernels, sockets
    ("bootstrap", ["bootstrap/"]),      # unique id, rendezvous, the ranks' first links
    ("topology", ["topology/"]),        # detection, graph, search, cost model
    ("transports", ["transports/"]),    # connectors: shm, socket, mixed, cuda_p2p
    ("collectives", ["collectives/"]),  # schedules, selection, host and device executors
    ("comm", ["src/comm/"]),            # the communicator: tasks, groups, progress
    ("api", ["src/api/"]),              # the extern "C" boundary
]
# Programs on the public API only: they may include braid.h, their own files and SHARED_HEADERS.
API_ONLY = ["train/", "bindings/"]
# Header-only helpers beside the library that any program may use: the command-line convention.
SHARED_HEADERS = ["tools/cli/"]
# Where the compiler looks for quoted includes, after the including file's own folder.
SEARCH_PATH = ["", "src", "include"]
SOURCE_SUFFIXES = (".h", ".hpp", ".cc", ".cpp", ".c", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    for rank, (name, prefixes) in enumerate(LAYERS):
        if any(path.startswith(p) for p in prefixes):
            return rank, name
    return None


def resolve(root, including, target):
    """The repository-relative path `target` names from `including`, or None (a system header)."""
    for base in [os.path.dirname(including)] + SEARCH_PATH:
        candidate = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def sources(root, folders):
    for folder in folders:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def violations(root):
    library = [p.rstrip("/") for _, prefixes in LAYERS[1:] for p in prefixes]
    for path in sources(root, library + [p.rstrip("/") for p in API_ONLY]):
        own = layer_of(path)
        with open(os.path.join(root, path), errors="replace") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = resolve(root, path, match.group(1))
                if target is None:
                    continue
                where = f"{path}:{number}: includes {target}"
                if own is None:  # train/, bindings/: braid.h and their own tree only
                    top = path.split("/")[0] + "/"
                    allowed = ["include/", top] + SHARED_HEADERS
                    if not any(target.startswith(prefix) for prefix in allowed):
                        yield f"{where}, but {top} may use only the public C API (include/)"
                    continue
                theirs = layer_of(target)
                if theirs is not None and theirs[0] > own[0]:
                    yield f"{where}: {own[1]} may not include the {theirs[1]} layer above it"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = list(violations(os.path.abspath(root)))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) run upward; see docs/ARCHITECTURE.md for the layers")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
