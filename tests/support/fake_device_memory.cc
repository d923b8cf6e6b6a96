#include "support/fake_device_memory.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/device_memory.h"

namespace braid::testing {
namespace {

std::mutex registryMu;
std::map<uintptr_t, uintptr_t>& ranges() {  // first byte -> one past the last
  static auto* map = new std::map<uintptr_t, uintptr_t>;
  return *map;
}

thread_local size_t queriesOnThisThread = 0;

bool isFakeDevice(const void* ptr) {
  ++queriesOnThisThread;
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(registryMu);
  auto it = ranges().upper_bound(p);
  if (it == ranges().begin()) return false;
  --it;
  return p >= it->first && p < it->second;
}

}  // namespace

size_t fakeDeviceQueriesOnThisThread() { return queriesOnThisThread; }

FakeDeviceMemoryScope::FakeDeviceMemoryScope() { setDeviceMemoryQueryForTesting(&isFakeDevice); }

FakeDeviceMemoryScope::~FakeDeviceMemoryScope() { setDeviceMemoryQueryForTesting(nullptr); }

FakeDeviceBuffer::FakeDeviceBuffer(size_t count, int32_t fill)
    : count_(count), data_(std::max<size_t>(count, 1), fill) {
  std::lock_guard<std::mutex> lock(registryMu);
  const auto first = reinterpret_cast<uintptr_t>(data_.data());
  ranges()[first] = first + data_.size() * sizeof(int32_t);
}

FakeDeviceBuffer::~FakeDeviceBuffer() {
  std::lock_guard<std::mutex> lock(registryMu);
  ranges().erase(reinterpret_cast<uintptr_t>(data_.data()));
}

}  // namespace braid::testing
