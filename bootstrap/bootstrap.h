// The out-of-band channel a communicator is built over.
//
// Transports use it during setup to exchange addresses and segment names,
// and the communicator uses it for agreement (split, argument checks). It is
// slow and simple by design; collectives never use it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/deadline.h"
#include "core/status.h"

namespace braid::transport {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  virtual int rank() const = 0;
  virtual int nranks() const = 0;

  /// A short string unique to this communicator (hex), identical on all
  /// ranks; transports use it to name shared resources.
  virtual const std::string& commTag() const = 0;

  /// A 16-byte key of this communicator that connections between ranks prove. It is
  /// derived from the unique id's secret, never equal to it, so a transport that sends
  /// it in clear does not give away the right to join the bootstrap.
  virtual const uint8_t* secret() const = 0;

  /// A 32-byte key for `purpose` that only holders of the unique id's secret can compute
  /// (HKDF-SHA256 of that secret). Unlike secret(), nothing braid sends reveals it or
  /// anything it is computed from, so it can key encryption (the socket transport's TLS).
  virtual std::array<uint8_t, 32> deriveKey(std::string_view purpose) const = 0;

  /// In: this rank's `bytes` at data + rank * bytes. Out: every rank's.
  virtual Status allGather(void* data, size_t bytes) = 0;

  /// Returns when every rank has entered the barrier.
  virtual Status barrier() = 0;

  /// Seconds every bootstrap and transport wait may take (BRAID_TIMEOUT).
  virtual double timeoutSeconds() const = 0;
};

}  // namespace braid::transport
