// libnccl.so.2 loaded at run time (dlopen): the braid-vs-NCCL comparison must build where
// only nccl.h exists and run with whichever NCCL the machine's PyTorch carries, so nothing
// links NCCL. nccl.h gives the types; the entry points are looked up by name.
#pragma once

#include <nccl.h>

#include <string>

namespace braid::perf {

/// The NCCL entry points the comparison calls, from one dlopen'ed library.
struct NcclLibrary {
  decltype(&ncclGetVersion) getVersion = nullptr;
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommDestroy) commDestroy = nullptr;
  decltype(&ncclGetErrorString) getErrorString = nullptr;
  decltype(&ncclAllReduce) allReduce = nullptr;
  decltype(&ncclAllGather) allGather = nullptr;
  decltype(&ncclReduceScatter) reduceScatter = nullptr;
  decltype(&ncclGroupStart) groupStart = nullptr;
  decltype(&ncclGroupEnd) groupEnd = nullptr;

  /// Where the library was found (the path given, or the dynamic loader's name).
  std::string path;
  /// NCCL_VERSION_CODE of the loaded library (e.g. 23007 for 2.30.7).
  int version = 0;

  /// "2.30.7" from `version`.
  std::string versionString() const;
};

/// Opens `path` (or "libnccl.so.2" through the loader's search when empty) and resolves every
/// entry point. Returns "" on success, else why not (the dlopen/dlsym error).
std::string loadNccl(const std::string& path, NcclLibrary* nccl);

}  // namespace braid::perf
