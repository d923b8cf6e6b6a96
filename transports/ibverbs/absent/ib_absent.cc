// Stands in for the ibverbs transport in a build without <infiniband/verbs.h>
// (BRAID_WITH_IBVERBS=OFF, or AUTO without libibverbs-dev).
#include "transports/ibverbs/ib_transport.h"

namespace braid::transport {

namespace {
constexpr const char* kNotBuilt =
    "ib transport: this braid was built without ibverbs (configure with "
    "-DBRAID_WITH_IBVERBS=ON where libibverbs-dev is installed)";
}

Result<std::unique_ptr<Transport>> createIbTransport(Bootstrap& bootstrap, const Config& config,
                                                     std::vector<bool> selection) {
  (void)bootstrap;
  (void)config;
  (void)selection;
  return invalidUsage(kNotBuilt);
}

std::string ibUnavailableReason(const Config& config) {
  (void)config;
  return kNotBuilt;
}

}  // namespace braid::transport
