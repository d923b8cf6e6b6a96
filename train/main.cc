/*
 * braid-train: trains the Fashion-MNIST MLP with any dp × pp × tp layout.
 *
 * Run under a launcher (braidrun -n N, mpirun -np N, torchrun, srun): the ranks
 * join through braidCommInitFromEnv, or through MPI when built with it and started
 * by mpirun (tools/mpi_launch/mpi_launch.h: no BRAID_* variable, any number of hosts). Started
 * alone, it trains in one process. Exit status: 0 on success, 2 for a bad command line, 1 for any
 * other error (a missing dataset, a failed collective), always with a sentence on stderr.
 */
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "braid.h"
#include "mpi_launch.h"
#include "tools/cli/cli.h"
#include "train/dataset.h"
#include "train/grid.h"
#include "train/options.h"
#include "train/trainer.h"

namespace {

using braid::train::Status;

bool launchedByLauncher() {
  if (braid::launch::startedByMpi()) return true;
  for (const char* name : {"BRAID_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

// Under a launcher: through MPI when built with it and started by mpirun, else the
// launcher's variables (tools/mpi_launch/mpi_launch.h).
Status joinWorld(int* argc, char*** argv, braidComm_t* world) {
  if (launchedByLauncher()) {
    std::string error;
    if (braid::launch::joinWorld(argc, argv, world, &error) == braidSuccess) return Status();
    return Status::error(error);
  }
  return braid::train::checkBraid(braidCommInitAll(world, 1, nullptr), nullptr,
                                  "braidCommInitAll (one rank, no launcher found)");
}

int fail(const Status& status, int rank) {
  std::fprintf(stderr, "braid-train (rank %d): %s\n", rank, status.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  braid::train::Options options;
  Status parsed =
      braid::train::parseOptions(std::vector<std::string>(argv + 1, argv + argc), &options);
  if (!parsed.ok()) {
    braid::cli::usageError("braid-train", parsed.message());
    return braid::cli::kUsageError;
  }
  if (options.help) {
    std::fputs(braid::train::usage().c_str(), stdout);
    return 0;
  }
  braid::train::FashionMnist data;
  if (Status loaded = braid::train::loadFashionMnist(options.dataDir, &data); !loaded.ok()) {
    std::fprintf(stderr, "braid-train: %s\n", loaded.message().c_str());
    return 1;
  }
  braidComm_t world = nullptr;
  if (Status joined = joinWorld(&argc, &argv, &world); !joined.ok()) return fail(joined, -1);
  int rank = 0;
  braidCommUserRank(world, &rank);
  Status status;
  {
    braid::train::Grid grid;
    status = grid.create(world, options.grid);
    if (status.ok()) {
      braid::train::Trainer trainer(options, data, grid);
      status = trainer.run();
    }
  }
  if (!status.ok()) {
    fail(status, rank);
    braidCommAbort(world);
    braid::launch::leaveWorld();
    return 1;
  }
  braidCommFinalize(world);
  braidCommDestroy(world);
  braid::launch::leaveWorld();  // MPI_Finalize, when the ranks joined through MPI
  return 0;
}
