"""Builds the braid Python package and its PyTorch backend extension inside braid's own build.

ctest's python_build runs this against the build tree's libbraid; users install with
`pip install ./bindings/python`, which goes through pyproject.toml (scikit-build-core, CMake).

The extension (braid._torch_backend) is compiled against the installed torch and linked
against libbraid, the library the CMake build produces. libbraid is copied into the package
next to the extension, which finds it through an $ORIGIN rpath, so an installed package
needs no LD_LIBRARY_PATH. Where libbraid is looked up:

    BRAID_LIBRARY_DIR   folder holding libbraid.so (default: <repo>/build/src)
    BRAID_INCLUDE_DIR   folder holding braid.h     (default: <repo>/include)

"""
import os
import re
import shutil
from pathlib import Path

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def braid_version(header: Path) -> str:
    text = header.read_text()
    parts = [re.search(rf"#define BRAID_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def braid_library_dir() -> Path:
    folder = Path(os.environ.get("BRAID_LIBRARY_DIR", REPO / "build" / "src"))
    if not (folder / "libbraid.so").exists():
        raise SystemExit(
            f"braid: no libbraid.so in {folder}; build the library first "
            "(cmake -S . -B build && cmake --build build --target braid) or set BRAID_LIBRARY_DIR"
        )
    return folder


def braid_soname(folder: Path) -> str:
    """libbraid.so.<major>: the shortest versioned name, which is what the linker records."""
    names = sorted((p.name for p in folder.glob("libbraid.so.*")), key=len)
    if not names:
        raise SystemExit(f"braid: {folder} has libbraid.so but no versioned libbraid.so.N")
    return names[0]


class BuildWithLibbraid(BuildExtension):
    """Builds the extension, then places libbraid beside it (found through $ORIGIN)."""

    def run(self):
        super().run()
        library_dir = braid_library_dir()
        soname = braid_soname(library_dir)
        for ext in self.extensions:
            target = Path(self.get_ext_fullpath(ext.name)).parent / soname
            # Copy, then rename: processes that have the old copy mapped keep a valid file.
            staging = target.with_name(target.name + ".tmp")
            shutil.copyfile(library_dir / soname, staging)  # follows the symlink chain
            os.replace(staging, target)


INCLUDE_DIR = Path(os.environ.get("BRAID_INCLUDE_DIR", REPO / "include"))
LIBRARY_DIR = braid_library_dir()

# pyproject.toml holds the version (scikit-build-core reads it); it must be braid.h's.
PYPROJECT_VERSION = re.search(r'^version = "([^"]+)"', (HERE / "pyproject.toml").read_text(),
                              re.M).group(1)
if braid_version(INCLUDE_DIR / "braid.h") != PYPROJECT_VERSION:
    raise SystemExit(f"braid: bindings/python/pyproject.toml's version {PYPROJECT_VERSION} is not "
                     f"braid.h's {braid_version(INCLUDE_DIR / 'braid.h')}")

setup(
    packages=["braid"],
    ext_modules=[
        CppExtension(
            name="braid._torch_backend",
            sources=[f"csrc/{name}.cc" for name in ("module", "backend", "collectives", "work")],
            include_dirs=[str(INCLUDE_DIR)],
            library_dirs=[str(LIBRARY_DIR)],
            libraries=["braid"],
            # -g0: debug info for torch's headers more than doubles the compile time.
            extra_compile_args=["-O2", "-g0", "-fvisibility=hidden"],
            extra_link_args=["-Wl,-rpath,$ORIGIN"],
        )
    ],
    cmdclass={"build_ext": BuildWithLibbraid},
)
