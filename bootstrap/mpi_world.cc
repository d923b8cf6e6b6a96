// Finding an initialised MPI without linking it (see mpi_world.h).
#include "bootstrap/mpi_world.h"

#include <dlfcn.h>

#include <cstdint>
#include <vector>

namespace braid::bootstrap {
namespace {

// MPICH's ABI (mpi.h): handles are ints.
constexpr int kMpichCommWorld = 0x44000000;
constexpr int kMpichByte = 0x4c00010d;
constexpr int kMpiSuccess = 0;  // MPI_SUCCESS is 0 in every MPI

using InitializedFn = int (*)(int*);
using LibraryVersionFn = int (*)(char*, int*);

template <typename Fn>
Fn lookup(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// Rank, size and broadcast through one ABI's handle type (a pointer or an int).
template <typename Handle>
Result<MpiWorld> worldOf(Handle world, Handle byte, const std::string& library) {
  using CommIntFn = int (*)(Handle, int*);
  using BcastFn = int (*)(void*, int, Handle, int, Handle);
  auto commRank = lookup<CommIntFn>("MPI_Comm_rank");
  auto commSize = lookup<CommIntFn>("MPI_Comm_size");
  auto bcast = lookup<BcastFn>("MPI_Bcast");
  if (commRank == nullptr || commSize == nullptr || bcast == nullptr) {
    return invalidUsage(library +
                        " is initialised but MPI_Comm_rank, MPI_Comm_size or "
                        "MPI_Bcast cannot be found in the process");
  }
  MpiWorld mpi;
  mpi.initialized = true;
  mpi.library = library;
  if (commRank(world, &mpi.rank) != kMpiSuccess || commSize(world, &mpi.size) != kMpiSuccess) {
    return invalidUsage(library + ": MPI_Comm_rank/MPI_Comm_size on MPI_COMM_WORLD failed");
  }
  mpi.broadcast = [bcast, world, byte](void* buffer, size_t bytes) {
    return bytes <= INT32_MAX &&
           bcast(buffer, static_cast<int>(bytes), byte, 0, world) == kMpiSuccess;
  };
  return mpi;
}

// The first line of MPI_Get_library_version, to name an MPI braid does not know.
std::string libraryName() {
  auto version = lookup<LibraryVersionFn>("MPI_Get_library_version");
  if (version == nullptr) return "an MPI without MPI_Get_library_version";
  std::vector<char> text(8192 + 1, '\0');  // MPI_MAX_LIBRARY_VERSION_STRING of MPICH
  int length = 0;
  if (version(text.data(), &length) != kMpiSuccess) return "an unknown MPI";
  // One line, runs of blanks as one space ("MPICH Version:\t4.0.2" -> "MPICH Version: 4.0.2").
  std::string name;
  for (const char* c = text.data(); *c != '\0' && *c != '\n'; ++c) {
    bool blank = *c == ' ' || *c == '\t' || *c == '\r';
    if (!blank)
      name += *c;
    else if (!name.empty() && name.back() != ' ')
      name += ' ';
  }
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name;
}

bool isMpichFamily(const std::string& name) {
  for (const char* family : {"MPICH", "Intel(R) MPI", "MVAPICH", "CRAY MPICH"}) {
    if (name.find(family) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Result<MpiWorld> findInitializedMpi() {
  auto initialized = lookup<InitializedFn>("MPI_Initialized");
  auto finalized = lookup<InitializedFn>("MPI_Finalized");
  if (initialized == nullptr || finalized == nullptr) return MpiWorld{};
  int isInit = 0, isFinal = 0;
  if (initialized(&isInit) != kMpiSuccess || !isInit) return MpiWorld{};
  if (finalized(&isFinal) != kMpiSuccess || isFinal) return MpiWorld{};
  void* ompiWorld = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
  void* ompiByte = dlsym(RTLD_DEFAULT, "ompi_mpi_byte");
  if (ompiWorld != nullptr && ompiByte != nullptr) return worldOf(ompiWorld, ompiByte, "Open MPI");
  std::string name = libraryName();
  if (isMpichFamily(name)) return worldOf(kMpichCommWorld, kMpichByte, "MPICH (" + name + ")");
  return invalidUsage("MPI is initialised, but braid does not know the ABI of " + name +
                      " to broadcast over it");
}

}  // namespace braid::bootstrap
