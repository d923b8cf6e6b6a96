// Joining the world through MPI or the launcher's environment (see mpi_launch.h).
#include "mpi_launch.h"

#include <cstdlib>

#ifdef BRAID_LAUNCH_WITH_MPI
#include "braid_mpi.h"
#endif

namespace braid::launch {
namespace {

bool isSet(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

// The world size the launcher announced, or 0 when it did not.
int announcedSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (isSet(name)) return std::atoi(std::getenv(name));
  }
  return 0;
}

std::string lastError(const char* call, braidResult_t result) {
  const char* detail = braidGetLastError(nullptr);
  return std::string(call) + " failed: " + braidGetErrorString(result) +
         (detail[0] != '\0' ? std::string(": ") + detail : std::string());
}

#ifdef BRAID_LAUNCH_WITH_MPI
bool initialisedMpi = false;

braidResult_t joinThroughMpi(int* argc, char*** argv, braidComm_t* comm, std::string* error) {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
      *error = "MPI_Init failed";
      return braidSystemError;
    }
    initialisedMpi = true;
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int announced = announcedSize();
  if (announced > 1 && size != announced) {
    *error = "the launcher started " + std::to_string(announced) +
             " ranks but this program's MPI sees a world of " + std::to_string(size) +
             ": it was built with another MPI than the launcher's (use that MPI's mpirun)";
    return braidInvalidUsage;
  }
  braidResult_t result = braidCommInitMPI(comm, MPI_COMM_WORLD);
  if (result != braidSuccess) *error = lastError("braidCommInitMPI", result);
  return result;
}
#endif

}  // namespace

bool startedByMpi() {
  if (isSet("BRAID_RANK") || (isSet("RANK") && isSet("WORLD_SIZE"))) return false;
  return isSet("OMPI_COMM_WORLD_RANK") || isSet("PMI_RANK") || isSet("PMIX_RANK");
}

bool builtWithMpi() {
#ifdef BRAID_LAUNCH_WITH_MPI
  return true;
#else
  return false;
#endif
}

braidResult_t joinWorld(int* argc, char*** argv, braidComm_t* comm, std::string* error) {
#ifdef BRAID_LAUNCH_WITH_MPI
  if (startedByMpi()) return joinThroughMpi(argc, argv, comm, error);
#else
  (void)argc;
  (void)argv;
#endif
  braidResult_t result = braidCommInitFromEnv(comm);
  if (result != braidSuccess) *error = lastError("braidCommInitFromEnv", result);
  return result;
}

void leaveWorld() {
#ifdef BRAID_LAUNCH_WITH_MPI
  if (initialisedMpi) {
    MPI_Finalize();
    initialisedMpi = false;
  }
#endif
}

}  // namespace braid::launch
