#include "core/config.h"

#include <strings.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/selection_spec.h"

namespace braid {
namespace {

// Parses an unsigned size with an optional K/M/G suffix (powers of 1024).
bool parseBytes(const char* text, size_t* out) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || text[0] == '-') return false;
  switch (*end) {
    case 'k':
    case 'K':
      v <<= 10;
      ++end;
      break;
    case 'm':
    case 'M':
      v <<= 20;
      ++end;
      break;
    case 'g':
    case 'G':
      v <<= 30;
      ++end;
      break;
    default:
      break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return false;
  *out = static_cast<size_t>(v);
  return true;
}

Status badValue(const char* var, const char* value, const char* expected) {
  return invalidArgument(std::string(var) + "='" + value + "' is not " + expected);
}

Status readBytes(const char* var, size_t minimum, size_t* out) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return Status::ok();
  size_t parsed;
  if (!parseBytes(v, &parsed) || parsed < minimum) {
    return badValue(var, v, ("a byte count >= " + std::to_string(minimum)).c_str());
  }
  *out = parsed;
  return Status::ok();
}

Status readInt(const char* var, int minimum, int maximum, int* out) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return Status::ok();
  char* end = nullptr;
  errno = 0;
  long parsed = std::strtol(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || parsed < minimum || parsed > maximum) {
    return badValue(
        var, v,
        ("an integer in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]")
            .c_str());
  }
  *out = static_cast<int>(parsed);
  return Status::ok();
}

Status readChoice(const char* var, std::initializer_list<const char*> choices, std::string* out) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return Status::ok();
  std::string expected = "one of";
  for (const char* c : choices) {
    if (std::strcmp(v, c) == 0) {
      *out = v;
      return Status::ok();
    }
    expected += std::string(" ") + c;
  }
  return badValue(var, v, expected.c_str());
}

// BRAID_SOCKET_CONGESTION: auto, system, or a congestion control's name as the kernel spells
// it (letters, digits, '_' and '-', at most 15 characters: TCP_CA_NAME_MAX less the NUL).
// Whether the kernel has it is only known when a socket asks for it (the transport says).
Status readCongestion(std::string* out) {
  const char* v = std::getenv("BRAID_SOCKET_CONGESTION");
  if (v == nullptr || *v == '\0') return Status::ok();
  const size_t length = std::strlen(v);
  bool valid = length <= 15;
  for (size_t i = 0; valid && i < length; ++i) {
    const char ch = v[i];
    valid = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '_' || ch == '-';
  }
  if (!valid) {
    return badValue("BRAID_SOCKET_CONGESTION", v,
                    "auto, system, or a TCP congestion control's name (e.g. reno, cubic, bbr: "
                    "letters, digits, '_' or '-', at most 15 characters)");
  }
  *out = v;
  return Status::ok();
}

// A BRAID_ALGO / BRAID_PROTO spec: syntax checked here; names against `names` when given
// (algorithm names are the registry's business: collectives/algorithm.h checks them).
Status readSpec(const char* var, std::initializer_list<const char*> names, std::string* out) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return Status::ok();
  if (std::strlen(v) > Config::kMaxSpecLength) {
    return badValue(var, v,
                    ("at most " + std::to_string(Config::kMaxSpecLength) + " characters").c_str());
  }
  BRAID_ASSIGN_OR_RETURN(SelectionSpec spec,
                         SelectionSpec::parse(v, var, Config::collectiveNames()));
  for (const SelectionChoice& choice : spec.choices()) {
    if (names.size() == 0) break;
    bool known = false;
    std::string expected;
    for (const char* name : names) {
      known = known || choice.name == name;
      expected += std::string(expected.empty() ? "" : ", ") + name;
    }
    if (!known) {
      return invalidArgument(std::string(var) + "='" + v + "': token '" + choice.name +
                             "' is not one of " + expected);
    }
  }
  *out = v;
  return Status::ok();
}

// BRAID_SOCKET_TLS, BRAID_SOCKET_KTLS and the certificate files: all three files or none
// (then a key derived from the communicator's secret), and files and BRAID_SOCKET_KTLS only
// with TLS on, so a typo is not silently a plain-text job.
Status readTls(Config* c) {
  int tls = 0;
  BRAID_RETURN_IF_ERROR(readInt("BRAID_SOCKET_TLS", 0, 1, &tls));
  c->socketTls = tls != 0;
  int kernelTls = -1;
  BRAID_RETURN_IF_ERROR(readInt("BRAID_SOCKET_KTLS", 0, 1, &kernelTls));
  if (kernelTls != -1 && !c->socketTls) {
    return invalidArgument(
        "BRAID_SOCKET_KTLS is set but BRAID_SOCKET_TLS is not 1: set "
        "BRAID_SOCKET_TLS=1 for TLS, or unset BRAID_SOCKET_KTLS");
  }
  c->socketKernelTls = kernelTls != 0;
  struct File {
    const char* var;
    std::string* into;
  };
  const File files[] = {{"BRAID_TLS_CERT", &c->tlsCertFile},
                        {"BRAID_TLS_KEY", &c->tlsKeyFile},
                        {"BRAID_TLS_CA", &c->tlsCaFile}};
  std::string set, unset;
  for (const File& f : files) {
    const char* v = std::getenv(f.var);
    *f.into = v != nullptr ? v : "";
    (f.into->empty() ? unset : set) += std::string(" ") + f.var;
  }
  if (!set.empty() && !c->socketTls) {
    return invalidArgument("BRAID_TLS_CERT/KEY/CA are set (" + set.substr(1) +
                           ") but BRAID_SOCKET_TLS is not 1: set BRAID_SOCKET_TLS=1 to use them");
  }
  if (!set.empty() && !unset.empty()) {
    return invalidArgument(
        "TLS certificates need BRAID_TLS_CERT, BRAID_TLS_KEY and BRAID_TLS_CA "
        "together; missing:" +
        unset);
  }
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& Config::collectiveNames() {
  static const std::vector<std::string> kNames = {
      "allreduce", "broadcast", "reduce", "allgather", "reducescatter",
      "alltoall",  "alltoallv", "gather", "scatter",   "barrier"};
  return kNames;
}

// Over loopback TCP a chunk of 1 MiB made a 2-rank all-reduce a reduce-scatter
// then an all-gather of one message each at 2 MiB (nothing to overlap); 512 KiB
// chunks pipeline the two and gain most there, about even elsewhere. On shm
// the FIFO slots, not the chunks, bound what is in flight, so a smaller chunk
// gains nothing and it keeps 1 MiB, as does the mixed transport (not measured).
// Over ib (soft-RoCE, paired rounds) 4 MiB chunks beat 1 MiB at 4-16 MiB for
// the two-way collectives: a step costs a completion and a wake-up on each side
// whatever its size, so fewer, larger steps keep the link busier.
// Figures: perf/RESULTS.md, "Pipelining chunk over TCP" and the RDMA section.
size_t Config::defaultChunkBytes(const std::string& transport) {
  if (transport == "socket") return size_t{512} << 10;
  if (transport == "ib") return size_t{4} << 20;
  return size_t{1} << 20;
}

Status checkSocketFragmentBytes(size_t bytes) {
  if (bytes == 0 ||
      (bytes >= 4096 && bytes <= Config::kMaxSocketFragmentBytes && (bytes & (bytes - 1)) == 0)) {
    return Status::ok();
  }
  return invalidArgument(
      "BRAID_SOCKET_FRAGMENT_BYTES must be 0 (automatic) or a power of two from 4096 to 1 GiB, "
      "got " +
      std::to_string(bytes));
}

// BRAID_DEBUG is read by the logger (core/log.cc), which cannot fail; a value it would ignore
// silently is refused here, with every other setting.
Status checkDebugLevel() {
  const char* v = std::getenv("BRAID_DEBUG");
  if (v == nullptr || *v == '\0') return Status::ok();
  for (const char* level : {"WARN", "INFO", "TRACE"}) {
    if (strcasecmp(v, level) == 0) return Status::ok();
  }
  return badValue("BRAID_DEBUG", v, "one of WARN, INFO, TRACE");
}

Result<Config> Config::fromEnv() {
  Config c;
  BRAID_RETURN_IF_ERROR(checkDebugLevel());
  if (const char* v = std::getenv("BRAID_TIMEOUT"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    double t = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(t > 0)) {
      return badValue("BRAID_TIMEOUT", v, "a positive number of seconds");
    }
    c.timeoutSeconds = t;
  }
  BRAID_RETURN_IF_ERROR(
      readChoice("BRAID_TRANSPORT", {"shm", "socket", "mixed", "ib"}, &c.transport));
  BRAID_RETURN_IF_ERROR(readSpec("BRAID_ALGO", {}, &c.algorithm));
  BRAID_RETURN_IF_ERROR(readSpec("BRAID_PROTO", {"simple", "ll", "ll128"}, &c.protocol));
  BRAID_RETURN_IF_ERROR(readBytes("BRAID_CHUNK_BYTES", 64, &c.chunkBytes));
  const char* chunk = std::getenv("BRAID_CHUNK_BYTES");
  c.chunkBytesSet = chunk != nullptr && *chunk != '\0';
  BRAID_RETURN_IF_ERROR(readBytes("BRAID_SHM_SLOT_BYTES", 4096, &c.shmSlotBytes));
  if (c.shmSlotBytes % 64 != 0) {
    return invalidArgument("BRAID_SHM_SLOT_BYTES must be a multiple of 64");
  }
  BRAID_RETURN_IF_ERROR(readInt("BRAID_SHM_SLOTS", 2, 1024, &c.shmSlots));
  BRAID_RETURN_IF_ERROR(readBytes("BRAID_SHM_SINGLE_COPY_BYTES", 0, &c.shmSingleCopyBytes));
  BRAID_RETURN_IF_ERROR(readBytes("BRAID_STREAM_STORE_BYTES", 0, &c.streamStoreBytes));
  if (const char* v = std::getenv("BRAID_SOCKET_IFNAME")) c.socketIfname = v;
  BRAID_RETURN_IF_ERROR(readInt("BRAID_SOCKET_NSTREAMS", 0, 64, &c.socketStreams));
  BRAID_RETURN_IF_ERROR(readBytes("BRAID_SOCKET_BUFFER_BYTES", 0, &c.socketBufferBytes));
  BRAID_RETURN_IF_ERROR(readBytes("BRAID_SOCKET_FRAGMENT_BYTES", 0, &c.socketFragmentBytes));
  BRAID_RETURN_IF_ERROR(checkSocketFragmentBytes(c.socketFragmentBytes));
  BRAID_RETURN_IF_ERROR(readCongestion(&c.socketCongestion));
  if (c.socketBufferBytes != 0 && c.socketBufferBytes < 4096) {
    return invalidArgument(
        "BRAID_SOCKET_BUFFER_BYTES must be 0 (the kernel sizes the buffers) "
        "or at least 4096 bytes, got " +
        std::to_string(c.socketBufferBytes));
  }
  if (const char* v = std::getenv("BRAID_IB_HCA")) c.ibHca = v;
  BRAID_RETURN_IF_ERROR(readInt("BRAID_IB_GID_INDEX", -1, 255, &c.ibGidIndex));
  BRAID_RETURN_IF_ERROR(readInt("BRAID_IB_CREDITS", 0, 8, &c.ibCredits));
  BRAID_RETURN_IF_ERROR(
      readInt("BRAID_IB_QPS_PER_PEER", 1, Config::kMaxIbQpsPerPeer, &c.ibQpsPerPeer));
  BRAID_RETURN_IF_ERROR(
      readInt("BRAID_IB_TIMEOUT", Config::kMinIbTimeout, Config::kMaxIbTimeout, &c.ibTimeout));
  BRAID_RETURN_IF_ERROR(
      readBytes("BRAID_IB_CREDIT_BYTES", Config::kMinIbCreditBytes, &c.ibCreditBytes));
  if (c.ibCreditBytes > Config::kMaxIbCreditBytes) {
    return invalidArgument("BRAID_IB_CREDIT_BYTES must be a byte count from 4096 to 8 MiB (" +
                           std::to_string(Config::kMaxIbCreditBytes) + "), got " +
                           std::to_string(c.ibCreditBytes));
  }
  int gdr = 1;
  BRAID_RETURN_IF_ERROR(readInt("BRAID_GDR", 0, 1, &gdr));
  c.gdr = gdr != 0;
  BRAID_RETURN_IF_ERROR(readTls(&c));
  BRAID_RETURN_IF_ERROR(readInt("BRAID_SPIN", -1, 100000000, &c.spinIterations));
  BRAID_RETURN_IF_ERROR(readBytes("BRAID_TINY_BYTES", 0, &c.tinyBytes));
  if (c.tinyBytes > Config::kMaxTinyBytes) {
    return invalidArgument("BRAID_TINY_BYTES must be at most " +
                           std::to_string(Config::kMaxTinyBytes) + " bytes, got " +
                           std::to_string(c.tinyBytes));
  }
  int check = 0;
  BRAID_RETURN_IF_ERROR(readInt("BRAID_CHECK", 0, 1, &check));
  c.checkArguments = check != 0;
  int p2pDisable = 0;
  BRAID_RETURN_IF_ERROR(readInt("BRAID_P2P_DISABLE", 0, 1, &p2pDisable));
  c.p2pDisable = p2pDisable != 0;
  return c;
}

}  // namespace braid
