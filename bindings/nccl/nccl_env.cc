// NCCL_* environment variables that mean the same as a BRAID_* one, copied over when the
// drop-in is loaded (before any call reads them). A BRAID_* variable the user set wins;
// NCCL values braid has no equivalent for are left alone (braid's default applies).
#include <strings.h>

#include <cctype>
#include <cstdlib>
#include <string>

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
};

constexpr Mapping kMappings[] = {
    {"NCCL_SOCKET_IFNAME", "BRAID_SOCKET_IFNAME", same},
    {"NCCL_DEBUG", "BRAID_DEBUG", debugLevel},
    {"NCCL_DEBUG_FILE", "BRAID_DEBUG_FILE", debugFile},
    {"NCCL_P2P_DISABLE", "BRAID_P2P_DISABLE", same},
    {"NCCL_ALGO", "BRAID_ALGO", algorithm},
    {"NCCL_PROTO", "BRAID_PROTO", protocol},
    {"NCCL_SHM_DISABLE", "BRAID_TRANSPORT", shmDisable},
};

__attribute__((constructor)) void mapNcclEnvironment() {
  for (const Mapping& m : kMappings) {
    const char* value = std::getenv(m.nccl);
    if (value == nullptr || std::getenv(m.braid) != nullptr) continue;
    const std::string translated = m.translate(value);
    if (!translated.empty()) setenv(m.braid, translated.c_str(), 0);
  }
}

}  // namespace
}  // namespace braid::nccl

// NCCL's ncclResetDebugInit (deprecated) and the internal entry it calls: reload the logging
// variables. braid's logger reads BRAID_DEBUG and BRAID_DEBUG_FILE once, at its first line,
// so there is nothing to reset; both are exported because programs link them.
extern "C" __attribute__((visibility("default"))) void ncclResetDebugInitInternal() {}
extern "C" __attribute__((visibility("default"))) void pncclResetDebugInit() {
  ncclResetDebugInitInternal();
}
extern "C" __attribute__((visibility("default"), weak, alias("pncclResetDebugInit"))) void
ncclResetDebugInit();
