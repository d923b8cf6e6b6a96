"""The braid package itself: the C API version, result strings, and backend registration."""
import re
from pathlib import Path

import torch.distributed as dist

import braid

HEADER = Path(__file__).resolve().parents[3] / "include" / "braid.h"


def header_version():
    text = HEADER.read_text()
    major, minor, patch = (
        int(re.search(rf"#define BRAID_{p} (\d+)", text).group(1))
        for p in ("MAJOR", "MINOR", "PATCH")
    )
    return major, minor, patch


def test_version_matches_header():
    major, minor, patch = header_version()
    assert braid.c_api_version() == major * 10000 + minor * 100 + patch
    assert braid.version() == f"{major}.{minor}.{patch}" == braid.__version__


def test_error_strings():
    assert braid.error_string(0) != ""
    assert braid.error_string(8) != braid.error_string(4)  # timeout vs invalid argument
    assert braid.error_string(12345) != ""  # out of range still gives a sentence


def test_import_registers_backend():
    import braid.torch

    assert braid.torch.is_registered()
    assert dist.Backend("braid") == "braid"
    assert dist.Backend.backend_capability["braid"] == ["cpu", "cuda"]
    assert Path(braid.library_path()).parent == Path(braid.__file__).parent
