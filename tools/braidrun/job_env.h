// The identity of one braidrun job and the environment each rank starts with.
//
// Everything a rank needs to find the others comes from here: the bootstrap
// root's address (rank 0 listens there), a shared secret that bootstrap
// connections must prove, and a job tag that prefixes the job's /dev/shm names
// so that braidrun can remove what a crashed job left behind.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "braidrun/host_list.h"
#include "braidrun/unique_fd.h"

namespace braid::run {

struct JobIdentity {
  std::string tag;     // 8 hex chars: BRAID_JOB_TAG, prefix of shm names
  std::string secret;  // 32 hex chars: BRAID_SECRET
  std::string rootAddress = "127.0.0.1";
  int rootPort = 0;  // BRAID_ROOT's port: where braid's bootstrap root listens
  /// Listening on rootPort from makeJobIdentity on; rank 0 inherits it (BRAID_ROOT_FD).
  std::shared_ptr<UniqueFd> rootListener;
  int masterPort = 0;  // MASTER_PORT: a different port, for torch's own TCPStore
};

/// Where the bootstrap root listens (see root_address.h for how it is chosen).
struct RootPlan {
  std::string advertised = "127.0.0.1";   // BRAID_ROOT's host and MASTER_ADDR
  std::string bindAddress = "127.0.0.1";  // what braidrun binds when listenHere
  int port = 0;                           // 0: a port free on this machine
  bool listenHere = true;                 // rank 0 runs on this machine and inherits the listener
};

/// Draws a fresh tag and secret from /dev/urandom and picks the root's port (listening
/// on it when plan.listenHere) and a free MASTER_PORT. Returns false with *error set
/// when the system refuses either.
bool makeJobIdentity(JobIdentity* job, const RootPlan& plan, std::string* error);
/// The single-host job: everything on 127.0.0.1.
bool makeJobIdentity(JobIdentity* job, std::string* error);

/// The full environment (NAME=VALUE strings) for `rank` of `nranks`: braidrun's
/// own environment, then the job variables, then `extraEnv` (-x), later entries
/// replacing earlier ones of the same name. `place` numbers the rank on its host.
std::vector<std::string> rankEnvironment(const JobIdentity& job, int rank, int nranks,
                                         const RankPlace& place,
                                         const std::vector<std::string>& extraEnv);
/// The same with every rank on one host.
std::vector<std::string> rankEnvironment(const JobIdentity& job, int rank, int nranks,
                                         const std::vector<std::string>& extraEnv);

/// What a rank started through a launcher (launch_template.h) must be told on its
/// command line, since it does not inherit braidrun's environment: the BRAID_*
/// variables of braidrun's environment (but BRAID_ROOT_FD and BRAID_HOST_ID, which
/// describe this machine), the job variables, then `extraEnv`.
std::vector<std::string> launchedRankEnvironment(const JobIdentity& job, int rank, int nranks,
                                                 const RankPlace& place,
                                                 const std::vector<std::string>& extraEnv);

/// braidrun's own environment without BRAID_ROOT_FD: what a launcher process gets.
std::vector<std::string> launcherProcessEnvironment();

/// Unlinks every /dev/shm/braid-<tag>* entry; returns how many were removed.
int removeJobShmSegments(const std::string& tag);

}  // namespace braid::run
