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

// Binds `port` (0: the kernel picks an unused one) on `address`. The socket stays
// open until the caller has picked all its ports, so that two picks cannot return
// the same one.
bool bindPort(const std::string& address, int port, UniqueFd* socketFd, int* bound,
              std::string* error) {
  socketFd->reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof(addr);
  int reuse = 1;  // a fixed port may still have connections of the last job in TIME_WAIT
  if (socketFd->valid() && port != 0) {
    ::setsockopt(socketFd->get(), SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse));
  }
  if (!socketFd->valid() || ::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1 ||
      ::bind(socketFd->get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(socketFd->get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    *error = (port == 0 ? "cannot find a free TCP port on " + address
                        : "cannot bind TCP port " + std::to_string(port) + " on " + address) +
             ": " + std::strerror(errno);
    return false;
  }
  *bound = ntohs(addr.sin_port);
  return true;
}

std::string nameOf(const std::string& entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

bool makeJobIdentity(JobIdentity* job, const RootPlan& plan, std::string* error) {
  unsigned char random[20];
  if (!readRandomBytes(random, sizeof(random), error)) return false;
  job->tag = toHex(random, 4);
  job->secret = toHex(random + 4, 16);
  job->rootAddress = plan.advertised;

  // The root's socket listens from here on and rank 0 inherits it: closing it
  // and letting rank 0 bind the port again would leave a window in which any
  // program's outgoing connection could take the port (seen under parallel ctest).
  // torch's MASTER_PORT is bound by torch itself, so that one is only picked; so is
  // the root's port when rank 0 runs on another host (free here is a good guess there).
  job->rootListener = std::make_shared<UniqueFd>();
  UniqueFd masterSocket, pickedRoot;
  UniqueFd* rootSocket = plan.listenHere ? job->rootListener.get() : &pickedRoot;
  const std::string bindAddress = plan.listenHere ? plan.bindAddress : "0.0.0.0";
  if (!plan.listenHere && plan.port != 0) {
    job->rootPort = plan.port;
  } else if (!bindPort(bindAddress, plan.port, rootSocket, &job->rootPort, error)) {
    return false;
  }
  if (!bindPort(bindAddress, 0, &masterSocket, &job->masterPort, error)) return false;
  if (plan.listenHere && ::listen(job->rootListener->get(), SOMAXCONN) != 0) {
    *error = std::string("cannot listen for the bootstrap root: ") + std::strerror(errno);
    return false;
  }
  if (!plan.listenHere) job->rootListener.reset();
  return true;
}

bool makeJobIdentity(JobIdentity* job, std::string* error) {
  return makeJobIdentity(job, RootPlan{}, error);
}

namespace {

// The variables braidrun defines for one rank, rank 0's inherited root socket included.
std::vector<std::string> jobVariables(const JobIdentity& job, int rank, int nranks,
                                      const RankPlace& place) {
  const std::string r = std::to_string(rank), n = std::to_string(nranks);
  const std::string localRank = std::to_string(place.localRank);
  const std::string localSize = std::to_string(place.localSize);
  const std::string root = job.rootAddress + ":" + std::to_string(job.rootPort);
  std::vector<std::string> vars = {"BRAID_RANK=" + r,
                                   "BRAID_NRANKS=" + n,
                                   "BRAID_LOCAL_RANK=" + localRank,
                                   "BRAID_LOCAL_SIZE=" + localSize,
                                   "BRAID_ROOT=" + root,
                                   "BRAID_SECRET=" + job.secret,
                                   "BRAID_JOB_TAG=" + job.tag,
                                   "RANK=" + r,
                                   "WORLD_SIZE=" + n,
                                   "LOCAL_RANK=" + localRank,
                                   "LOCAL_WORLD_SIZE=" + localSize,
                                   "GROUP_RANK=" + std::to_string(place.host),
                                   "MASTER_ADDR=" + job.rootAddress,
                                   "MASTER_PORT=" + std::to_string(job.masterPort)};
  if (rank == 0 && job.rootListener != nullptr && job.rootListener->valid()) {
    vars.push_back("BRAID_ROOT_FD=" + std::to_string(job.rootListener->get()));
  }
  return vars;
}

// Keyed by name, so that later entries replace earlier ones; the map also keeps
// the order stable for tests.
class EnvBuilder {
 public:
  void set(const std::string& entry) { env_[nameOf(entry)] = entry; }
  void erase(const std::string& name) { env_.erase(name); }
  std::vector<std::string> take() {
    std::vector<std::string> out;
    out.reserve(env_.size());
    for (auto& [name, entry] : env_) out.push_back(std::move(entry));
    return out;
  }

 private:
  std::map<std::string, std::string> env_;
};

}  // namespace

std::vector<std::string> rankEnvironment(const JobIdentity& job, int rank, int nranks,
                                         const RankPlace& place,
                                         const std::vector<std::string>& extraEnv) {
  // A job variable replaces an inherited one (a braidrun started inside another
  // launcher's job must not hand its ranks stale values) and -x replaces both.
  EnvBuilder env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) env.set(*entry);
  env.erase("BRAID_ROOT_FD");  // only rank 0 inherits the root's socket (makeJobIdentity)
  for (const std::string& entry : jobVariables(job, rank, nranks, place)) env.set(entry);
  for (const std::string& entry : extraEnv) env.set(entry);
  return env.take();
}

std::vector<std::string> rankEnvironment(const JobIdentity& job, int rank, int nranks,
                                         const std::vector<std::string>& extraEnv) {
  return rankEnvironment(job, rank, nranks, RankPlace{0, rank, nranks}, extraEnv);
}

std::vector<std::string> launchedRankEnvironment(const JobIdentity& job, int rank, int nranks,
                                                 const RankPlace& place,
                                                 const std::vector<std::string>& extraEnv) {
  EnvBuilder env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "BRAID_", 6) == 0) env.set(*entry);
  }
  // Both describe this machine, not the rank's: a socket only processes started here
  // can inherit (a launched rank 0 binds the root's port itself), and this host's name
  // (given to every host it would make them one). -x still passes either on purpose.
  env.erase("BRAID_ROOT_FD");
  env.erase("BRAID_HOST_ID");
  for (const std::string& entry : jobVariables(job, rank, nranks, place)) env.set(entry);
  for (const std::string& entry : extraEnv) env.set(entry);
  return env.take();
}

std::vector<std::string> launcherProcessEnvironment() {
  EnvBuilder env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) env.set(*entry);
  env.erase("BRAID_ROOT_FD");
  return env.take();
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
