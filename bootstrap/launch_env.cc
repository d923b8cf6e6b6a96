// Reading the launcher's environment (see launch_env.h for the variables of each launcher).
#include "bootstrap/launch_env.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "bootstrap/crypto.h"

namespace braid::bootstrap {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

Status readInt(const char* name, int* out) {
  const char* v = env(name);
  if (v == nullptr) return invalidArgument(std::string(name) + " is not set");
  char* end = nullptr;
  errno = 0;
  long parsed = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || parsed < 0 || parsed > (1 << 24)) {
    return invalidArgument(std::string(name) + "='" + v + "' is not a valid integer");
  }
  *out = static_cast<int>(parsed);
  return Status::ok();
}

// 128 bits from a string (the first half of its SHA-256): every rank of the job derives
// the same value. Guessable by whoever knows the job's identity; see launch_env.h.
void deriveSecret(const std::string& text, uint8_t (&secret)[kSecretBytes]) {
  Digest d = sha256(text.data(), text.size());
  std::memcpy(secret, d.data(), kSecretBytes);
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Exactly 32 hex digits: no sign, space or prefix slips through.
Status parseSecretHex(const char* hex, uint8_t (&secret)[kSecretBytes]) {
  if (std::strlen(hex) != 2 * kSecretBytes) {
    return invalidArgument("BRAID_SECRET must be 32 hex digits");
  }
  for (int i = 0; i < kSecretBytes; ++i) {
    int high = hexDigit(hex[2 * i]), low = hexDigit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return invalidArgument("BRAID_SECRET must be 32 hex digits");
    secret[i] = static_cast<uint8_t>(high << 4 | low);
  }
  return Status::ok();
}

Status splitHostPort(const char* text, const char* name, std::string* host, int* port) {
  const char* colon = std::strrchr(text, ':');
  if (colon == nullptr)
    return invalidArgument(std::string(name) + "='" + text + "' is not host:port");
  *host = std::string(text, colon - text);
  *port = std::atoi(colon + 1);
  if (*port <= 0 || *port > 65535) {
    return invalidArgument(std::string(name) + "='" + text + "' has no valid port");
  }
  return Status::ok();
}

// Picks the root for launchers that do not name one (OpenMPI, Slurm).
Status chooseRoot(bool singleNode, const std::string& jobId, LaunchInfo* info) {
  if (const char* root = env("BRAID_ROOT")) {
    return splitHostPort(root, "BRAID_ROOT", &info->rootHost, &info->rootPort);
  }
  if (const char* master = env("MASTER_ADDR")) {
    info->rootHost = master;
    int port = 0;
    if (env("MASTER_PORT") != nullptr) BRAID_RETURN_IF_ERROR(readInt("MASTER_PORT", &port));
    info->rootPort = port > 0 ? port + 1 : 0;
  } else if (singleNode) {
    info->rootHost = "127.0.0.1";
  } else {
    return invalidArgument(
        info->launcher +
        " ranks span several nodes and no MPI is initialised in this process: call MPI_Init "
        "before braidCommInitFromEnv (braid then sends its unique id with MPI_Bcast), or "
        "create the communicator with braidCommInitMPI (braid_mpi.h), or set "
        "BRAID_ROOT=host:port to an address of rank 0's host and a free port on every rank "
        "(mpirun -x BRAID_ROOT=hostA:29500, srun --export=ALL,BRAID_ROOT=hostA:29500)");
  }
  if (info->rootPort == 0) {
    uint8_t h[kSecretBytes];
    deriveSecret("port:" + jobId, h);
    info->rootPort = 20000 + (h[0] | (h[1] << 8)) % 20000;
  }
  return Status::ok();
}

}  // namespace

bool launchEnvNamesRoot() {
  return env("BRAID_RANK") != nullptr || (env("RANK") != nullptr && env("WORLD_SIZE") != nullptr) ||
         env("BRAID_ROOT") != nullptr || env("MASTER_ADDR") != nullptr;
}

Result<LaunchInfo> launchInfoFromEnv() {
  LaunchInfo info;
  std::string jobId;
  if (env("BRAID_RANK") != nullptr) {
    info.launcher = "braidrun";
    BRAID_RETURN_IF_ERROR(readInt("BRAID_RANK", &info.rank));
    BRAID_RETURN_IF_ERROR(readInt("BRAID_NRANKS", &info.nranks));
    const char* root = env("BRAID_ROOT");
    if (root == nullptr) return invalidArgument("BRAID_RANK is set but BRAID_ROOT is not");
    BRAID_RETURN_IF_ERROR(splitHostPort(root, "BRAID_ROOT", &info.rootHost, &info.rootPort));
    if (env("BRAID_ROOT_FD") != nullptr) {
      BRAID_RETURN_IF_ERROR(readInt("BRAID_ROOT_FD", &info.rootListenFd));
    }
    jobId = std::string("braidrun:") + root;
  } else if (env("RANK") != nullptr && env("WORLD_SIZE") != nullptr) {
    info.launcher = "torchrun";
    BRAID_RETURN_IF_ERROR(readInt("RANK", &info.rank));
    BRAID_RETURN_IF_ERROR(readInt("WORLD_SIZE", &info.nranks));
    const char* master = env("MASTER_ADDR");
    if (master == nullptr) return invalidArgument("RANK is set but MASTER_ADDR is not");
    int port = 0;
    BRAID_RETURN_IF_ERROR(readInt("MASTER_PORT", &port));
    info.rootHost = master;
    info.rootPort = port + 1;
    const char* run = env("TORCHELASTIC_RUN_ID");
    jobId = std::string("torchrun:") + master + ":" + std::to_string(port) + ":" +
            std::to_string(info.nranks) + ":" + (run ? run : "");
  } else if (env("OMPI_COMM_WORLD_RANK") != nullptr) {
    info.launcher = "openmpi";
    BRAID_RETURN_IF_ERROR(readInt("OMPI_COMM_WORLD_RANK", &info.rank));
    BRAID_RETURN_IF_ERROR(readInt("OMPI_COMM_WORLD_SIZE", &info.nranks));
    int localSize = -1;
    if (env("OMPI_COMM_WORLD_LOCAL_SIZE") != nullptr) {
      BRAID_RETURN_IF_ERROR(readInt("OMPI_COMM_WORLD_LOCAL_SIZE", &localSize));
    }
    const char* job = env("OMPI_MCA_ess_base_jobid");
    const char* uri = env("OMPI_MCA_orte_hnp_uri");
    jobId = std::string("openmpi:") + (job ? job : "") + ":" + (uri ? uri : "");
    BRAID_RETURN_IF_ERROR(chooseRoot(localSize == info.nranks, jobId, &info));
  } else if (env("SLURM_PROCID") != nullptr) {
    info.launcher = "slurm";
    BRAID_RETURN_IF_ERROR(readInt("SLURM_PROCID", &info.rank));
    BRAID_RETURN_IF_ERROR(readInt("SLURM_NTASKS", &info.nranks));
    const char* nodes = env("SLURM_NNODES");
    const char* job = env("SLURM_JOB_ID");
    const char* step = env("SLURM_STEP_ID");
    jobId = std::string("slurm:") + (job ? job : "") + "." + (step ? step : "");
    BRAID_RETURN_IF_ERROR(
        chooseRoot(nodes != nullptr && std::strcmp(nodes, "1") == 0, jobId, &info));
  } else {
    return invalidUsage(
        "no launcher environment found: run under braidrun, torchrun, mpirun or srun, or "
        "set BRAID_RANK, BRAID_NRANKS and BRAID_ROOT (an MPI program started by any MPI "
        "launcher: call MPI_Init first, or use braidCommInitMPI from braid_mpi.h)");
  }
  if (const char* port = env("BRAID_ROOT_PORT")) {
    BRAID_RETURN_IF_ERROR(readInt("BRAID_ROOT_PORT", &info.rootPort));
    (void)port;
  }
  if (info.nranks <= 0) return invalidArgument("the launcher's world size is 0");
  if (info.rank >= info.nranks) {
    return invalidArgument("rank " + std::to_string(info.rank) + " is not below the world size " +
                           std::to_string(info.nranks));
  }
  if (const char* hex = env("BRAID_SECRET")) {
    BRAID_RETURN_IF_ERROR(parseSecretHex(hex, info.secret));
  } else {
    deriveSecret("secret:" + jobId, info.secret);
  }
  if (const char* tag = env("BRAID_JOB_TAG")) info.tagPrefix = tag;
  return info;
}

}  // namespace braid::bootstrap
