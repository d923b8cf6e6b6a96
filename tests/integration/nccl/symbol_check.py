#!/usr/bin/env python3
"""Every function NCCL's nccl.h declares must be defined in braid's libnccl.so.2, and the
library must export nothing but nccl*/pnccl* symbols (its version script).

usage: symbol_check.py LIBRARY HEADER [HEADER...]"""
import re
import subprocess
import sys

# A declaration: optional attributes, a return type, then the nccl/pnccl name and "(".
DECLARATION = re.compile(
    r"(?:^|[;}])\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*(?:extern\s+)?(?:const\s+)?"
    r"[A-Za-z_]\w*[\s\*]+\b(p?nccl\w+)\s*\(",
    re.S)


def declared(header):
    text = open(header, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^\s*#.*$", ";", text, flags=re.M)  # preprocessor lines end a statement
    return set(DECLARATION.findall(text))


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    library = sys.argv[1]
    symbols = exported(library)
    failed = False
    foreign = sorted(s for s in symbols if not re.match(r"p?nccl", s))
    if foreign:
        print(f"{library} exports symbols outside NCCL's API: {', '.join(foreign[:20])}")
        failed = True
    for header in sys.argv[2:]:
        names = declared(header)
        if len(names) < 40:  # a parse that found almost nothing proves nothing
            print(f"{header}: only {len(names)} declarations found; the parser is broken")
            failed = True
        missing = sorted(names - symbols)
        if missing:
            print(f"{header}: {len(missing)} of {len(names)} functions missing from "
                  f"{library}: {', '.join(missing)}")
            failed = True
        else:
            print(f"{header}: all {len(names)} functions resolve in {library}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
