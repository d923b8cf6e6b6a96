// "Device" buffers for the CPU fake of CUDA (fake_stream_ops.h), seen as device memory by
// braid's isDeviceMemory, so tests drive the C API's own device route — braidSend,
// braidRecv, braidAllToAllv, groups — into the host proxy without a GPU.
//
// A FakeDeviceBuffer is ordinary host memory whose range is registered while it lives; a
// FakeDeviceMemoryScope installs the query (core/device_memory.h) that answers "device"
// for registered ranges only, so host buffers in the same test stay host buffers. Ranks
// are threads of one process: the registry is shared and locked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::testing {

/// How many times braid asked "is this device memory?" on the calling thread so far (each
/// query of a non-null pointer while a FakeDeviceMemoryScope is installed): tests check a
/// call decides its memory kind once.
size_t fakeDeviceQueriesOnThisThread();

class FakeDeviceMemoryScope {
 public:
  FakeDeviceMemoryScope();   // installs the query
  ~FakeDeviceMemoryScope();  // restores CUDA's answer
  FakeDeviceMemoryScope(const FakeDeviceMemoryScope&) = delete;
  FakeDeviceMemoryScope& operator=(const FakeDeviceMemoryScope&) = delete;
};

/// `count` int32 elements of fake device memory, filled with `fill`.
class FakeDeviceBuffer {
 public:
  explicit FakeDeviceBuffer(size_t count, int32_t fill = 0);
  ~FakeDeviceBuffer();
  FakeDeviceBuffer(const FakeDeviceBuffer&) = delete;
  FakeDeviceBuffer& operator=(const FakeDeviceBuffer&) = delete;

  int32_t* data() { return data_.data(); }
  size_t size() const { return count_; }
  /// The elements, read once the streams that write them are synchronised.
  std::vector<int32_t> values() const {
    return std::vector<int32_t>(data_.begin(), data_.begin() + count_);
  }

 private:
  size_t count_;
  std::vector<int32_t> data_;  // at least one element: even an empty buffer has an address
};

}  // namespace braid::testing
