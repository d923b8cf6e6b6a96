// What one communicator holds of the device path (comm/device_path.h): its device group, or
// the right to create a cuda_p2p group on its first device-buffer collective, and its host
// proxy (comm/device_proxy/). The Comm owns it: made by braidCommInitAll, by a
// one-rank-per-process init, or by the first device call, and destroyed with the Comm, so
// destroy, abort and shrink release it without looking anything up. A host call pays one
// pointer test (is there a proxy to wait for?); a communicator that may never see CUDA holds
// at most this small object noting that it could create a cuda_p2p group.
//
// A communicator is used by one thread at a time (as in NCCL), and the proxy thread never
// touches this object, so it needs no lock of its own.
#pragma once

#include <memory>

#include "comm/device_proxy/device_proxy.h"

namespace braid {

class DeviceSide {
 public:
  DeviceSide() = default;
  /// Stops the proxy (its queued ops run or fail first), then lets go of the group, which
  /// the last of its ranks releases (that synchronises the device).
  ~DeviceSide();
  DeviceSide(const DeviceSide&) = delete;
  DeviceSide& operator=(const DeviceSide&) = delete;

  /// The device group whose kernels run this rank's collectives; null: none (yet).
  /// Shared by the ranks of one group in this process; its deleter releases it.
  std::shared_ptr<void> group;
  /// A one-rank-per-process communicator on one host, not yet bound: its first
  /// device-buffer collective tries to create a cuda_p2p group.
  bool peerCandidate = false;
  /// Device buffers through the host transports; made on first use.
  std::unique_ptr<DeviceProxy> proxy;
};

}  // namespace braid
