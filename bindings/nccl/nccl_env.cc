// NCCL_* environment variables that mean the same as a BRAID_* one, copied over when the
// drop-in is loaded (before any call reads them), the logging ones again on ncclResetDebugInit.
// A BRAID_* variable the user set wins; NCCL values braid has no equivalent for are left alone
// (braid's default applies).
#include <strings.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include "braid.h"

namespace braid::nccl {
namespace {

// The BRAID_* value for an NCCL_* value, or "" when there is none.
using Translate = std::string (*)(const std::string& value);

std::string same(const std::string& value) { return value; }

std::string lower(const std::string& value) {
  std::string out = value;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// NCCL_DEBUG: VERSION and ABORT have no braid level.
std::string debugLevel(const std::string& value) {
  const std::string level = lower(value);
  if (level == "warn" || level == "info" || level == "trace") return value;
  return "";
}

// NCCL_DEBUG_FILE may hold %h / %p (host, pid), which braid does not expand.
std::string debugFile(const std::string& value) {
  return value.find('%') == std::string::npos ? value : "";
}

// NCCL_ALGO / NCCL_PROTO: one name, no lists or ^exclusions, that braid knows.
std::string algorithm(const std::string& value) {
  const std::string name = lower(value);
  return name == "ring" || name == "tree" ? name : "";
}
std::string protocol(const std::string& value) {
  const std::string name = lower(value);
  return name == "simple" || name == "ll" || name == "ll128" ? name : "";
}

// NCCL_SHM_DISABLE=1: peers on one host talk over sockets.
std::string shmDisable(const std::string& value) { return value == "1" ? "socket" : ""; }

struct Mapping {
  const char* nccl;
  const char* braid;
  Translate translate;
  bool logging;  // read again by ncclResetDebugInit
};

constexpr Mapping kMappings[] = {
    {"NCCL_SOCKET_IFNAME", "BRAID_SOCKET_IFNAME", same, false},
    {"NCCL_DEBUG", "BRAID_DEBUG", debugLevel, true},
    {"NCCL_DEBUG_FILE", "BRAID_DEBUG_FILE", debugFile, true},
    {"NCCL_P2P_DISABLE", "BRAID_P2P_DISABLE", same, false},
    {"NCCL_ALGO", "BRAID_ALGO", algorithm, false},
    {"NCCL_PROTO", "BRAID_PROTO", protocol, false},
    {"NCCL_SHM_DISABLE", "BRAID_TRANSPORT", shmDisable, false},
};
constexpr size_t kCount = sizeof(kMappings) / sizeof(kMappings[0]);

// The values the drop-in gave BRAID_* variables (from their NCCL_* twin; empty: none): a
// reload may replace a variable that still holds it, never one the user set or changed.
// A function's static: the load-time constructor below runs before this file's globals are.
std::string* setHere() {
  static std::string values[kCount];
  return values;
}

void mapVariables(bool loggingOnly) {
  for (size_t i = 0; i < kCount; ++i) {
    const Mapping& m = kMappings[i];
    if (loggingOnly && !m.logging) continue;
    const char* current = std::getenv(m.braid);
    std::string& mine = setHere()[i];
    if (!mine.empty() && current != nullptr && mine == current) unsetenv(m.braid);
    mine.clear();
    const char* value = std::getenv(m.nccl);
    if (value == nullptr || std::getenv(m.braid) != nullptr) continue;
    const std::string translated = m.translate(value);
    if (!translated.empty() && setenv(m.braid, translated.c_str(), 0) == 0) {
      mine = translated;
    }
  }
}

__attribute__((constructor)) void mapNcclEnvironment() { mapVariables(false); }

}  // namespace
}  // namespace braid::nccl

// NCCL's ncclResetDebugInit (deprecated) and the internal entry it calls: NCCL_DEBUG and
// NCCL_DEBUG_FILE are mapped again (over what the drop-in mapped before, never over a BRAID_*
// variable the user set) and braid's logger reads its variables again.
extern "C" __attribute__((visibility("default"))) void ncclResetDebugInitInternal() {
  try {
    braid::nccl::mapVariables(/*loggingOnly=*/true);
  } catch (...) {  // out of memory: keep the variables as they are
  }
  braidResetDebugInit();
}
extern "C" __attribute__((visibility("default"))) void pncclResetDebugInit() {
  ncclResetDebugInitInternal();
}
extern "C" __attribute__((visibility("default"), weak, alias("pncclResetDebugInit"))) void
ncclResetDebugInit();
