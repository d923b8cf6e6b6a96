#include "comm/device_side.h"

#include "comm/comm.h"

namespace braid {

DeviceSide::~DeviceSide() {
  // The proxy first: its remaining ops may still run on this rank's transports, and it waits
  // for the streams' copies back, before the group (and its device) goes.
  if (proxy != nullptr) proxy->shutdown();
  proxy.reset();
  group.reset();
}

// Declared in comm/comm.h, which sees only a declaration of DeviceSide.
void DeviceSideDeleter::operator()(DeviceSide* side) const { delete side; }

}  // namespace braid
