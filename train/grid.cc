/*
 * Rank grid construction (see grid.h).
 */
#include "train/grid.h"

#include <string>

namespace braid::train {

Grid::~Grid() {
  braidCommDestroy(tp_);
  braidCommDestroy(pp_);
  braidCommDestroy(dp_);
}

Status Grid::create(braidComm_t world, const GridShape& shape) {
  int size = 0;
  TRAIN_RETURN_IF_ERROR(checkBraid(braidCommCount(world, &size), world, "braidCommCount"));
  TRAIN_RETURN_IF_ERROR(
      checkBraid(braidCommUserRank(world, &worldRank_), world, "braidCommUserRank"));
  if (size != shape.size()) {
    return Status::error("--dp " + std::to_string(shape.dp) + " × --pp " +
                         std::to_string(shape.pp) + " × --tp " + std::to_string(shape.tp) + " = " +
                         std::to_string(shape.size()) + " ranks, but the job has " +
                         std::to_string(size));
  }
  shape_ = shape;
  world_ = world;
  t_ = worldRank_ % shape.tp;
  p_ = (worldRank_ / shape.tp) % shape.pp;
  d_ = worldRank_ / (shape.tp * shape.pp);
  TRAIN_RETURN_IF_ERROR(checkBraid(braidCommSplit(world, d_ * shape.pp + p_, t_, &tp_), world,
                                   "braidCommSplit (tensor-parallel group)"));
  TRAIN_RETURN_IF_ERROR(checkBraid(braidCommSplit(world, d_ * shape.tp + t_, p_, &pp_), world,
                                   "braidCommSplit (pipeline group)"));
  TRAIN_RETURN_IF_ERROR(checkBraid(braidCommSplit(world, p_ * shape.tp + t_, d_, &dp_), world,
                                   "braidCommSplit (data-parallel group)"));
  return Status();
}

}  // namespace braid::train
