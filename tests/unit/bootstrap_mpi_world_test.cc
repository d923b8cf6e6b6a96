// Finding an initialised MPI without linking it (bootstrap/mpi_world.h), against a fake MPI
// with MPICH's ABI defined in this test binary (exported, so dlsym(RTLD_DEFAULT) finds it as
// it finds a real libmpi): not initialised or finalised means no MPI; MPICH's handle values
// reach MPI_Comm_rank/size and MPI_Bcast; an MPI of unknown ABI is named, never guessed at;
// braidCommInitFromEnv bootstraps over it, and without it says exactly what to set.
// Real Open MPI and MPICH runs: tests/integration/mpi/.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "bootstrap/launch_env.h"
#include "bootstrap/mpi_world.h"
#include "braid.h"

namespace {

struct FakeMpi {
  int initialized = 0, finalized = 0, rank = 0, size = 1;
  std::string library = "MPICH Version:      4.0.2\nMPICH Release date: Thu Apr  7 2022";
  int bcastCalls = 0, lastCount = -1, lastType = 0, lastRoot = -1, lastComm = 0;
};
FakeMpi fake;

constexpr int kWorld = 0x44000000;  // MPICH's MPI_COMM_WORLD
constexpr int kByte = 0x4c00010d;   // MPICH's MPI_BYTE

}  // namespace

// MPICH's ABI: handles are ints. Returns 0 (MPI_SUCCESS) or an error for a wrong handle.
extern "C" {
int MPI_Initialized(int* flag) {
  *flag = fake.initialized;
  return 0;
}
int MPI_Finalized(int* flag) {
  *flag = fake.finalized;
  return 0;
}
int MPI_Comm_rank(int comm, int* rank) {
  *rank = fake.rank;
  return comm == kWorld ? 0 : 5;
}
int MPI_Comm_size(int comm, int* size) {
  *size = fake.size;
  return comm == kWorld ? 0 : 5;
}
int MPI_Bcast(void*, int count, int type, int root, int comm) {
  ++fake.bcastCalls;
  fake.lastCount = count, fake.lastType = type, fake.lastRoot = root, fake.lastComm = comm;
  return comm == kWorld && type == kByte ? 0 : 5;
}
int MPI_Get_library_version(char* version, int* length) {
  std::strcpy(version, fake.library.c_str());
  *length = static_cast<int>(fake.library.size());
  return 0;
}
}

namespace braid::bootstrap {
namespace {

class BootstrapMpiWorld : public ::testing::Test {
 protected:
  void SetUp() override {
    fake = FakeMpi{};
    for (const char* name : {"BRAID_RANK", "BRAID_ROOT", "RANK", "WORLD_SIZE", "MASTER_ADDR",
                             "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}) {
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                             "OMPI_COMM_WORLD_LOCAL_SIZE", "BRAID_ROOT"}) {
      unsetenv(name);
    }
  }
};

TEST_F(BootstrapMpiWorld, NotInitialisedOrFinalisedMeansNoMpi) {
  auto mpi = findInitializedMpi();
  ASSERT_TRUE(mpi.isOk()) << mpi.status().message();
  EXPECT_FALSE(mpi->initialized);
  fake.initialized = 1;
  fake.finalized = 1;
  mpi = findInitializedMpi();
  ASSERT_TRUE(mpi.isOk()) << mpi.status().message();
  EXPECT_FALSE(mpi->initialized);
}

TEST_F(BootstrapMpiWorld, MpichHandlesReachTheMpi) {
  fake.initialized = 1;
  fake.rank = 2;
  fake.size = 5;
  auto mpi = findInitializedMpi();
  ASSERT_TRUE(mpi.isOk()) << mpi.status().message();
  ASSERT_TRUE(mpi->initialized);
  EXPECT_EQ(mpi->rank, 2);
  EXPECT_EQ(mpi->size, 5);
  EXPECT_NE(mpi->library.find("MPICH"), std::string::npos);
  char buffer[40] = {};
  EXPECT_TRUE(mpi->broadcast(buffer, sizeof(buffer)));
  EXPECT_EQ(fake.bcastCalls, 1);
  EXPECT_EQ(fake.lastCount, 40);
  EXPECT_EQ(fake.lastType, kByte);
  EXPECT_EQ(fake.lastRoot, 0);
  EXPECT_EQ(fake.lastComm, kWorld);
}

TEST_F(BootstrapMpiWorld, AnUnknownMpiIsNamedNotGuessed) {
  fake.initialized = 1;
  fake.library = "Fancy MPI 9.9\nbuilt yesterday";
  auto mpi = findInitializedMpi();
  ASSERT_FALSE(mpi.isOk());
  EXPECT_NE(mpi.status().message().find("Fancy MPI 9.9"), std::string::npos)
      << mpi.status().message();
  EXPECT_EQ(fake.bcastCalls, 0);

  braidComm_t comm = nullptr;
  EXPECT_EQ(braidCommInitFromEnv(&comm), braidInvalidUsage);
  std::string message = braidGetLastError(nullptr);
  EXPECT_NE(message.find("Fancy MPI 9.9"), std::string::npos) << message;
  EXPECT_NE(message.find("BRAID_ROOT=host:port"), std::string::npos) << message;
}

TEST_F(BootstrapMpiWorld, InitFromEnvBootstrapsOverAnInitialisedMpi) {
  fake.initialized = 1;  // a 1-rank world: rank 0 "broadcasts" to itself
  braidComm_t comm = nullptr;
  ASSERT_EQ(braidCommInitFromEnv(&comm), braidSuccess) << braidGetLastError(nullptr);
  EXPECT_EQ(fake.bcastCalls, 1);
  int count = 0;
  ASSERT_EQ(braidCommCount(comm, &count), braidSuccess);
  EXPECT_EQ(count, 1);
  float in = 3.5f, out = 0.0f;
  ASSERT_EQ(braidAllReduce(&in, &out, 1, braidFloat32, braidSum, comm, nullptr), braidSuccess);
  EXPECT_EQ(out, 3.5f);
  braidCommDestroy(comm);
}

TEST_F(BootstrapMpiWorld, AGivenRootWinsOverMpi) {
  EXPECT_FALSE(launchEnvNamesRoot());
  setenv("BRAID_ROOT", "10.0.0.1:29500", 1);
  EXPECT_TRUE(launchEnvNamesRoot());
  unsetenv("BRAID_ROOT");
  setenv("MASTER_ADDR", "10.0.0.1", 1);
  EXPECT_TRUE(launchEnvNamesRoot());
  unsetenv("MASTER_ADDR");
}

TEST_F(BootstrapMpiWorld, RanksOnSeveralNodesWithoutMpiSayWhatToSet) {
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  braidComm_t comm = nullptr;
  EXPECT_EQ(braidCommInitFromEnv(&comm), braidInvalidArgument);
  std::string message = braidGetLastError(nullptr);
  EXPECT_NE(message.find("MPI_Init"), std::string::npos) << message;
  EXPECT_NE(message.find("braidCommInitMPI"), std::string::npos) << message;
  EXPECT_NE(message.find("BRAID_ROOT=host:port"), std::string::npos) << message;
  EXPECT_EQ(fake.bcastCalls, 0);
}

}  // namespace
}  // namespace braid::bootstrap
