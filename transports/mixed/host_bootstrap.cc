// HostBootstrap: host-local collectives carried by the parent bootstrap (see the header).
#include "transports/mixed/host_bootstrap.h"

#include <algorithm>
#include <cstring>

namespace braid::transport::mixed {

HostBootstrap::HostBootstrap(Bootstrap& parent, const std::vector<int>& hostOfRank, std::string tag)
    : parent_(parent), tag_(std::move(tag)) {
  const int self = parent.rank();
  for (int r = 0; r < static_cast<int>(hostOfRank.size()); ++r) {
    if (hostOfRank[r] != hostOfRank[self]) continue;
    if (r == self) localRank_ = static_cast<int>(members_.size());
    members_.push_back(r);
  }
}

Status HostBootstrap::allGather(void* data, size_t bytes) {
  const int nparent = parent_.nranks();
  // Round 1: every rank's record size, so that round 2 has one size everywhere.
  std::vector<uint64_t> sizes(nparent);
  sizes[parent_.rank()] = bytes;
  BRAID_RETURN_IF_ERROR(parent_.allGather(sizes.data(), sizeof(uint64_t)));
  // A mismatch is reported after round 2: the other hosts are already in it.
  Status mismatch;
  for (int member : members_) {
    if (sizes[member] != bytes && mismatch.isOk()) {
      mismatch = internalError("host bootstrap " + tag_ + ": rank " + std::to_string(member) +
                               " gathers " + std::to_string(sizes[member]) + " bytes, rank " +
                               std::to_string(parent_.rank()) + " " + std::to_string(bytes));
    }
  }
  const size_t padded = *std::max_element(sizes.begin(), sizes.end());
  if (padded == 0) return mismatch;
  // Round 2: the records, padded; this host's are then copied out in view order.
  std::vector<uint8_t> all(padded * nparent);
  const auto* mine = static_cast<const uint8_t*>(data) + localRank_ * bytes;
  if (bytes != 0 && bytes <= padded) std::memcpy(all.data() + parent_.rank() * padded, mine, bytes);
  BRAID_RETURN_IF_ERROR(parent_.allGather(all.data(), padded));
  BRAID_RETURN_IF_ERROR(mismatch);
  for (size_t local = 0; local < members_.size(); ++local) {
    if (bytes != 0) {
      std::memcpy(static_cast<uint8_t*>(data) + local * bytes,
                  all.data() + members_[local] * padded, bytes);
    }
  }
  return Status::ok();
}

}  // namespace braid::transport::mixed
