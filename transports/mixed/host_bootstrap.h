// A Bootstrap view over the ranks of one host, built on the communicator's
// bootstrap, so that a host-local transport (shm) can be set up with host-local
// rank numbers inside a communicator that spans hosts.
//
// Collective over ALL ranks of the parent: every allGather or barrier on the
// view is one on the parent, entered by every rank of every host. That is what
// makes it deadlock-free without a channel of its own, and it is why every
// host's view must be driven through the same sequence of calls (the mixed
// transport sets up one shm transport per host, all at the same time; each
// makes the same calls whatever its host size).
//
// allGather(data, bytes) may be called with different `bytes` on different
// hosts (the shm transport sends a row per local rank): the view first gathers
// every rank's size, then the records padded to the largest. Within one host
// the sizes must agree, or every rank of that host gets an error naming the
// rank that differs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"

namespace braid::transport::mixed {

class HostBootstrap final : public Bootstrap {
 public:
  /// The view of `parent.rank()`'s host, given the host index of every rank
  /// (collective: all ranks, same vector). `tag` names the host group's shared
  /// resources and must differ between hosts and from the parent's.
  HostBootstrap(Bootstrap& parent, const std::vector<int>& hostOfRank, std::string tag);

  int rank() const override { return localRank_; }
  int nranks() const override { return static_cast<int>(members_.size()); }
  const std::string& commTag() const override { return tag_; }
  const uint8_t* secret() const override { return parent_.secret(); }
  std::array<uint8_t, 32> deriveKey(std::string_view purpose) const override {
    return parent_.deriveKey(purpose);
  }
  Status allGather(void* data, size_t bytes) override;
  Status barrier() override { return parent_.barrier(); }
  double timeoutSeconds() const override { return parent_.timeoutSeconds(); }

  /// The parent rank of each rank of this view, in view order (ascending).
  const std::vector<int>& members() const { return members_; }

 private:
  Bootstrap& parent_;
  std::string tag_;
  std::vector<int> members_;  // parent ranks on this host, ascending
  int localRank_ = -1;
};

}  // namespace braid::transport::mixed
