"""Prints, as CMake set() commands, how to compile an extension against the torch of the
running interpreter (what torch.utils.cpp_extension would pass), or exits 1 saying why not.

    python torch_flags.py > torch_flags.cmake
"""
import sys
import sysconfig

try:
    import torch
    from torch.utils import cpp_extension
except ImportError as error:
    sys.exit("this Python (%s) has no torch (%s): braid's PyTorch backend is built against the "
             "torch of the environment it is installed into; install torch first, e.g. "
             "pip install torch --index-url https://download.pytorch.org/whl/cpu" %
             (sys.executable, error))

defines = ["TORCH_API_INCLUDE_EXTENSION_H", "_GLIBCXX_USE_CXX11_ABI=%d" % torch._C._GLIBCXX_USE_CXX11_ABI]
if hasattr(cpp_extension, "_get_pybind11_abi_build_flags"):
    defines += [flag[2:] for flag in cpp_extension._get_pybind11_abi_build_flags()]
else:  # older torch: pybind11's ABI tags must match torch's own
    for name in ("COMPILER_TYPE", "STDLIB", "BUILD_ABI"):
        value = getattr(torch._C, "_PYBIND11_" + name, None)
        if value is not None:
            defines.append('PYBIND11_%s="%s"' % (name, value))


def cmake_list(items):
    return ";".join(item.replace("\\", "/").replace('"', '\\"') for item in items)


print('set(BRAID_TORCH_VERSION "%s")' % torch.__version__)
print('set(BRAID_TORCH_INCLUDE_DIRS "%s")' % cmake_list(cpp_extension.include_paths()))
print('set(BRAID_TORCH_LIBRARY_DIRS "%s")' % cmake_list(cpp_extension.library_paths()))
print('set(BRAID_TORCH_DEFINITIONS "%s")' % cmake_list(defines))
print('set(BRAID_PYTHON_INCLUDE_DIR "%s")' % sysconfig.get_paths()["include"])
print('set(BRAID_PYTHON_EXT_SUFFIX "%s")' % sysconfig.get_config_var("EXT_SUFFIX"))
