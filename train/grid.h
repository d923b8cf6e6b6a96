/*
 * The dp × pp × tp grid of ranks and its communicators.
 *
 * World rank r sits at (d, p, t) with r = (d·pp + p)·tp + t: tensor-parallel
 * peers are neighbours (they talk most), then pipeline stages, then
 * data-parallel replicas. braidCommSplit makes three communicators per rank:
 *   tp: the ranks with the same (d, p), ranked by t
 *   pp: the ranks with the same (d, t), ranked by p (stage index = rank)
 *   dp: the ranks with the same (p, t), ranked by d
 */
#pragma once

#include "braid.h"
#include "train/status.h"

namespace braid::train {

struct GridShape {
  int dp = 1, pp = 1, tp = 1;
  int size() const { return dp * pp * tp; }
};

class Grid {
 public:
  Grid() = default;
  ~Grid();
  Grid(const Grid&) = delete;
  Grid& operator=(const Grid&) = delete;

  /// Splits `world` (whose size must be shape.size()) into the three groups.
  Status create(braidComm_t world, const GridShape& shape);

  const GridShape& shape() const { return shape_; }
  int worldRank() const { return worldRank_; }
  int d() const { return d_; }
  int p() const { return p_; }
  int t() const { return t_; }
  bool firstStage() const { return p_ == 0; }
  bool lastStage() const { return p_ == shape_.pp - 1; }
  braidComm_t world() const { return world_; }
  braidComm_t dpComm() const { return dp_; }
  braidComm_t ppComm() const { return pp_; }
  braidComm_t tpComm() const { return tp_; }

 private:
  GridShape shape_;
  int worldRank_ = 0, d_ = 0, p_ = 0, t_ = 0;
  braidComm_t world_ = nullptr;  // not owned
  braidComm_t dp_ = nullptr, pp_ = nullptr, tp_ = nullptr;
};

}  // namespace braid::train
