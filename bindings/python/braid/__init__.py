"""braid: collective communication for distributed training, from Python.

This package wraps the few parts of braid's C API (include/braid.h) that are useful without
a framework: the library's version and result codes. `import braid.torch` registers braid
as a torch.distributed backend:

    import braid.torch
    torch.distributed.init_process_group(backend="braid")

libbraid is loaded from this folder, where the build placed it, or from $BRAID_LIBRARY (the
path of a libbraid.so.N, e.g. the GPU kit's lib/libbraid.so.0, beside its libbraid_cuda.so).
"""
import ctypes
import os
from pathlib import Path

__all__ = ["c_api_version", "version", "error_string", "library_path", "BraidError"]


def _find_library() -> Path:
    chosen = os.environ.get("BRAID_LIBRARY")
    if chosen:
        if not Path(chosen).is_file():
            raise ImportError(f"braid: BRAID_LIBRARY={chosen} is not a file")
        return Path(chosen)
    here = Path(__file__).resolve().parent
    bundled = sorted(here.glob("libbraid.so.*"), key=lambda p: len(p.name))
    if not bundled:
        raise ImportError(f"braid: libbraid.so.* is missing from {here}; rebuild the package")
    return bundled[0]


_LIBRARY = _find_library()
# RTLD_GLOBAL: the torch extension, loaded later, resolves against this same copy.
_lib = ctypes.CDLL(str(_LIBRARY), mode=os.RTLD_NOW | ctypes.RTLD_GLOBAL)
_lib.braidGetVersion.argtypes = [ctypes.POINTER(ctypes.c_int)]
_lib.braidGetVersion.restype = ctypes.c_int
_lib.braidGetErrorString.argtypes = [ctypes.c_int]
_lib.braidGetErrorString.restype = ctypes.c_char_p


class BraidError(RuntimeError):
    """A braid C API call failed; `code` is its braidResult_t."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def library_path() -> str:
    """The libbraid this package loaded."""
    return str(_LIBRARY)


def c_api_version() -> int:
    """BRAID_VERSION_CODE of the loaded library: major * 10000 + minor * 100 + patch."""
    code = ctypes.c_int(0)
    rc = _lib.braidGetVersion(ctypes.byref(code))
    if rc != 0:
        raise BraidError(rc, f"braidGetVersion failed: {error_string(rc)}")
    return code.value


def version() -> str:
    """The loaded library's version as "major.minor.patch"."""
    code = c_api_version()
    return f"{code // 10000}.{code // 100 % 100}.{code % 100}"


def error_string(result: int) -> str:
    """braidGetErrorString: a short description of a braidResult_t."""
    return _lib.braidGetErrorString(int(result)).decode()


__version__ = version()
