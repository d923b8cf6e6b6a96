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

/// Draws a fresh tag and secret from /dev/urandom and picks two free TCP ports.
/// Returns false with *error set when the system refuses either.
bool makeJobIdentity(JobIdentity* job, std::string* error);

/// The full environment (NAME=VALUE strings) for `rank` of `nranks`: braidrun's
/// own environment, then the job variables, then `extraEnv` (-x), later entries
/// replacing earlier ones of the same name.
std::vector<std::string> rankEnvironment(const JobIdentity& job, int rank, int nranks,
                                         const std::vector<std::string>& extraEnv);

/// Unlinks every /dev/shm/braid-<tag>* entry; returns how many were removed.
int removeJobShmSegments(const std::string& tag);

}  // namespace braid::run
