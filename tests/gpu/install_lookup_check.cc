// Checks an installed braid (cmake --install into a temporary prefix, driven by
// install_lookup_test.cmake): libbraid_cuda.so sits beside libbraid.so, and the installed
// libbraid finds and loads exactly that file when an application asks for CUDA devices.
//
// Needs no GPU: braidCommInitAll with a devlist first locates libbraid_cuda.so, then asks
// it for a device group. Without a GPU the second part fails — with an error from the
// device library ("creating the device group: ..."), which proves the lookup succeeded;
// a lookup failure says "libbraid_cuda.so was not found / could not be loaded" instead.
// Then the loaded objects of this process show which file was loaded.
//
// Last, the installed libbraid_cuda.so's exports: exactly one device-path table and one
// stream-ops table, each opening with the size and version this braid was built with.
//
// This program links only libdl: it opens the installed libbraid by path, so the build
// tree's copy is never loaded beside it.
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "braid.h"
#include "collectives/device/cuda/device_path_abi.h"
#include "collectives/device/cuda/stream_ops_abi.h"

namespace {

int fail(const std::string& why) {
  std::fprintf(stderr, "install_lookup_check: FAIL: %s\n", why.c_str());
  return 1;
}

std::string realPath(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? resolved : "";
}

// Every loaded object whose file name ends in /libbraid_cuda.so, resolved.
int collectDeviceLibrary(dl_phdr_info* info, size_t, void* out) {
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  const std::string suffix = "/libbraid_cuda.so";
  if (name.size() >= suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    *static_cast<std::string*>(out) += realPath(name) + ";";
  }
  return 0;
}

// "" when libbraid_cuda.so (`lib`, loaded) exports its two tables as this braid expects them,
// and nothing of the versioned tables it once had; else what is wrong.
std::string checkTables(void* lib) {
  using PathEntry = const BraidDevicePath* (*)();
  using OpsEntry = const BraidStreamOps* (*)();
  auto path = reinterpret_cast<PathEntry>(dlsym(lib, "braidDevicePath"));
  auto ops = reinterpret_cast<OpsEntry>(dlsym(lib, "braidStreamOps"));
  if (path == nullptr || ops == nullptr) return "braidDevicePath or braidStreamOps is not exported";
  const BraidDevicePath* p = path();
  const BraidStreamOps* o = ops();
  if (p == nullptr || p->size != sizeof(BraidDevicePath) || p->version != kBraidDevicePathVersion) {
    return "braidDevicePath() does not open with this braid's size and version";
  }
  if (o == nullptr || o->size != sizeof(BraidStreamOps) || o->version != kBraidStreamOpsVersion) {
    return "braidStreamOps() does not open with this braid's size and version";
  }
  for (const char* gone : {"braidStreamOpsV1", "braidStreamOpsV2", "braidDevicePathV1"}) {
    if (dlsym(lib, gone) != nullptr) return std::string(gone) + " is still exported";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: install_lookup_check <installed libdir>");
  const std::string libdir = argv[1];
  const std::string braidLib = libdir + "/libbraid.so";
  const std::string deviceLib = libdir + "/libbraid_cuda.so";
  struct stat st;
  if (stat(braidLib.c_str(), &st) != 0) return fail(braidLib + " is not installed");
  if (stat(deviceLib.c_str(), &st) != 0) return fail(deviceLib + " is not installed");

  void* braid = dlopen(braidLib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (braid == nullptr) return fail(std::string("dlopen libbraid: ") + dlerror());
  using InitAll = braidResult_t (*)(braidComm_t*, int, const int*);
  using LastError = const char* (*)(braidComm_t);
  using Destroy = braidResult_t (*)(braidComm_t);
  auto initAll = reinterpret_cast<InitAll>(dlsym(braid, "braidCommInitAll"));
  auto lastError = reinterpret_cast<LastError>(dlsym(braid, "braidGetLastError"));
  auto destroy = reinterpret_cast<Destroy>(dlsym(braid, "braidCommDestroy"));
  if (!initAll || !lastError || !destroy) return fail("libbraid lacks the C API symbols");

  braidComm_t comms[2] = {nullptr, nullptr};
  const int devlist[2] = {0, 0};
  const braidResult_t result = initAll(comms, 2, devlist);
  const std::string error = result == braidSuccess ? "" : lastError(nullptr);
  if (result == braidSuccess) {  // a GPU is present: the whole path worked
    for (braidComm_t c : comms) destroy(c);
  } else if (error.find("creating the device group") == std::string::npos) {
    return fail("the installed libbraid did not reach libbraid_cuda.so: " + error);
  }
  std::string loaded;
  dl_iterate_phdr(&collectDeviceLibrary, &loaded);
  if (loaded != realPath(deviceLib) + ";") {
    return fail("expected exactly " + realPath(deviceLib) + " loaded, found '" + loaded + "'");
  }
  void* device = dlopen(deviceLib.c_str(), RTLD_NOW | RTLD_NOLOAD);  // the copy loaded above
  if (device == nullptr) return fail("libbraid_cuda.so is not loaded");
  const std::string tables = checkTables(device);
  if (!tables.empty()) return fail("the installed libbraid_cuda.so: " + tables);
  std::printf("install_lookup_check: OK: %s loaded (%s)\n", deviceLib.c_str(),
              result == braidSuccess ? "GPU present, InitAll succeeded" : error.c_str());
  return 0;
}
