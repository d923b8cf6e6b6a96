#!/usr/bin/env python3
"""Every function NCCL's nccl.h declares must be defined in braid's libnccl.so.2, and so must
every host function of the device API headers beside it (nccl_device/*.h: NCCL_EXTERN_C
declarations that are not inline), and the library must export nothing but nccl*/pnccl*
symbols (its version script).

usage: symbol_check.py LIBRARY HEADER [HEADER...]"""
import os
import re
import subprocess
import sys

# A declaration: optional attributes, a return type, then the nccl/pnccl name and "(".
DECLARATION = re.compile(
    r"(?:^|[;}])\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*(?:extern\s+)?(?:const\s+)?"
    r"[A-Za-z_]\w*[\s\*]+\b(p?nccl\w+)\s*\(",
    re.S)


# A host function of the device API: NCCL_EXTERN_C, then a return type and the name. Inline
# (header-only) functions carry NCCL_*INLINE and are not in the library.
DEVICE_HOST_DECLARATION = re.compile(
    r"\bNCCL_EXTERN_C\s+(?!\w*INLINE)(?:__host__\s+)?(?:const\s+)?[A-Za-z_]\w*[\s\*]+"
    r"\b(p?nccl\w+)\s*\(")

# Exported by NCCL's library, declared by none of its headers (ncclResetDebugInit calls it).
UNDECLARED_EXPORTS = {"ncclResetDebugInitInternal"}


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r"^\s*#.*$", ";", text, flags=re.M)  # preprocessor lines end a statement


def declared(header):
    names = set(DECLARATION.findall(strip(open(header, encoding="utf-8").read())))
    device = os.path.join(os.path.dirname(header), "nccl_device")
    for folder, _, files in os.walk(device):
        for name in files:
            if name.endswith(".h"):
                text = strip(open(os.path.join(folder, name), encoding="utf-8").read())
                names |= set(DEVICE_HOST_DECLARATION.findall(text))
    return names


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
        missing = sorted((names | UNDECLARED_EXPORTS) - symbols)
        if missing:
            print(f"{header}: {len(missing)} of {len(names)} functions missing from "
                  f"{library}: {', '.join(missing)}")
            failed = True
        else:
            print(f"{header}: all {len(names)} functions resolve in {library}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
