// See nccl_library.h.
#include "nccl_library.h"

#include <dlfcn.h>

namespace braid::perf {
namespace {

template <class F>
bool resolve(void* handle, const char* name, F* out, std::string* error) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (*out == nullptr && error->empty()) *error = std::string("dlsym ") + name + ": " + dlerror();
  return *out != nullptr;
}

}  // namespace

std::string NcclLibrary::versionString() const {
  // Codes since 2.9 are major * 10000 + minor * 100 + patch.
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

std::string loadNccl(const std::string& path, NcclLibrary* nccl) {
  const std::string name = path.empty() ? "libnccl.so.2" : path;
  // RTLD_LOCAL: NCCL's symbols stay out of the global namespace braid's libraries see.
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return std::string("dlopen ") + name + ": " + dlerror();
  nccl->path = name;
  std::string error;
  resolve(handle, "ncclGetVersion", &nccl->getVersion, &error);
  resolve(handle, "ncclGetUniqueId", &nccl->getUniqueId, &error);
  resolve(handle, "ncclCommInitRank", &nccl->commInitRank, &error);
  resolve(handle, "ncclCommDestroy", &nccl->commDestroy, &error);
  resolve(handle, "ncclGetErrorString", &nccl->getErrorString, &error);
  resolve(handle, "ncclAllReduce", &nccl->allReduce, &error);
  resolve(handle, "ncclAllGather", &nccl->allGather, &error);
  resolve(handle, "ncclReduceScatter", &nccl->reduceScatter, &error);
  resolve(handle, "ncclGroupStart", &nccl->groupStart, &error);
  resolve(handle, "ncclGroupEnd", &nccl->groupEnd, &error);
  if (!error.empty()) return error;
  if (nccl->getVersion(&nccl->version) != ncclSuccess) return "ncclGetVersion failed";
  return "";
}

}  // namespace braid::perf
