#include "braidrun/job_env.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "braidrun/unique_fd.h"

extern char** environ;

namespace braid::run {
namespace {

bool readRandomBytes(unsigned char* out, size_t size, std::string* error) {
  UniqueFd fd(::open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  size_t got = 0;
  while (fd.valid() && got < size) {
    ssize_t n = ::read(fd.get(), out + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got != size) {
    *error = std::string("cannot read /dev/urandom: ") + std::strerror(errno);
    return false;
  }
  return true;
}

std::string toHex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

// Binds port 0 on the loopback address so that the kernel picks an unused
// port. The socket stays open until the caller has picked all its ports, so
// that two picks cannot return the same one.
bool bindFreePort(const std::string& address, UniqueFd* socketFd, int* port, std::string* error) {
  socketFd->reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (!socketFd->valid() || ::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1 ||
      ::bind(socketFd->get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(socketFd->get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    *error = "cannot find a free TCP port on " + address + ": " + std::strerror(errno);
    return false;
  }
  *port = ntohs(addr.sin_port);
  return true;
}

std::string nameOf(const std::string& entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

bool makeJobIdentity(JobIdentity* job, std::string* error) {
  unsigned char random[20];
  if (!readRandomBytes(random, sizeof(random), error)) return false;
  job->tag = toHex(random, 4);
  job->secret = toHex(random + 4, 16);

  // The root's socket listens from here on and rank 0 inherits it: closing it
  // and letting rank 0 bind the port again would leave a window in which any
  // program's outgoing connection could take the port (seen under parallel ctest).
  // torch's MASTER_PORT is bound by torch itself, so that one is only picked.
  job->rootListener = std::make_shared<UniqueFd>();
  UniqueFd masterSocket;
  if (!bindFreePort(job->rootAddress, job->rootListener.get(), &job->rootPort, error) ||
      !bindFreePort(job->rootAddress, &masterSocket, &job->masterPort, error)) {
    return false;
  }
  if (::listen(job->rootListener->get(), SOMAXCONN) != 0) {
    *error = std::string("cannot listen for the bootstrap root: ") + std::strerror(errno);
    return false;
  }
  return true;
}

std::vector<std::string> rankEnvironment(const JobIdentity& job, int rank, int nranks,
                                         const std::vector<std::string>& extraEnv) {
  // Keyed by name so that a job variable replaces an inherited one (a braidrun
  // started inside another launcher's job must not hand its ranks stale values)
  // and -x replaces both. The map also keeps the order stable for tests.
  std::map<std::string, std::string> env;
  auto set = [&env](const std::string& entry) { env[nameOf(entry)] = entry; };
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) set(*entry);

  std::string r = std::to_string(rank), n = std::to_string(nranks);
  std::string root = job.rootAddress + ":" + std::to_string(job.rootPort);
  // Every rank runs on this host, so local and global numbering coincide.
  for (const std::string& entry :
       {"BRAID_RANK=" + r, "BRAID_NRANKS=" + n, "BRAID_LOCAL_RANK=" + r, "BRAID_LOCAL_SIZE=" + n,
        "BRAID_ROOT=" + root, "BRAID_SECRET=" + job.secret, "BRAID_JOB_TAG=" + job.tag, "RANK=" + r,
        "WORLD_SIZE=" + n, "LOCAL_RANK=" + r, "LOCAL_WORLD_SIZE=" + n,
        "MASTER_ADDR=" + job.rootAddress, "MASTER_PORT=" + std::to_string(job.masterPort)}) {
    set(entry);
  }
  // Only rank 0 inherits the root's listening socket (see makeJobIdentity).
  env.erase("BRAID_ROOT_FD");
  if (rank == 0 && job.rootListener != nullptr && job.rootListener->valid()) {
    set("BRAID_ROOT_FD=" + std::to_string(job.rootListener->get()));
  }
  for (const std::string& entry : extraEnv) set(entry);

  std::vector<std::string> out;
  out.reserve(env.size());
  for (auto& [name, entry] : env) out.push_back(std::move(entry));
  return out;
}

int removeJobShmSegments(const std::string& tag) {
  // An empty tag would match every braid segment on the host, including other
  // jobs' live ones.
  if (tag.empty()) return 0;
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return 0;
  const std::string prefix = "braid-" + tag;
  int removed = 0;
  while (dirent* entry = ::readdir(dir)) {
    if (std::strncmp(entry->d_name, prefix.c_str(), prefix.size()) != 0) continue;
    std::string path = std::string("/dev/shm/") + entry->d_name;
    if (::unlink(path.c_str()) == 0) ++removed;
  }
  ::closedir(dir);
  return removed;
}

}  // namespace braid::run
