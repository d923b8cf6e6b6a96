#include "comm/device_proxy/staging_pool.h"

#include <algorithm>
#include <bit>
#include <string>
#include <thread>

namespace braid {
namespace {

constexpr size_t kMinSlabBytes = 4096;

size_t roundedSlabBytes(size_t bytes) { return std::bit_ceil(std::max(bytes, kMinSlabBytes)); }

}  // namespace

StagingPool::~StagingPool() { release(); }

void StagingPool::reclaim() {
  for (auto& slab : slabs_) {
    if (!slab->busy || !slab->doneRecorded) continue;  // in use, or its op failed half way
    Result<StreamOps::EventState> state = ops_->queryEvent(slab->done);
    // A failed stream never runs the copy back: the slab is as free as it will get, and the
    // error reaches the application through the op that owned it.
    if (!state.isOk() || *state == StreamOps::EventState::kDone) slab->busy = false;
  }
}

Result<std::unique_ptr<StagingSlab>> StagingPool::newSlab(size_t bytes) {
  auto slab = std::make_unique<StagingSlab>();
  slab->bytes = bytes;
  Result<StreamOps::Event> ready = ops_->createEvent();
  Result<StreamOps::Event> done = ops_->createEvent();
  Result<void*> host = ops_->allocHost(bytes);
  if (ready.isOk()) slab->ready = *ready;
  if (done.isOk()) slab->done = *done;
  if (host.isOk()) slab->host = static_cast<uint8_t*>(*host);
  if (ready.isOk() && done.isOk() && host.isOk()) return slab;
  if (slab->ready != nullptr) ops_->destroyEvent(slab->ready);
  if (slab->done != nullptr) ops_->destroyEvent(slab->done);
  if (slab->host != nullptr) ops_->freeHost(slab->host);
  const Status& why = !host.isOk() ? host.status() : !ready.isOk() ? ready.status() : done.status();
  return why.withContext("device proxy: staging " + std::to_string(bytes) + " bytes");
}

Result<StagingSlab*> StagingPool::acquire(size_t bytes) {
  reclaim();
  StagingSlab* best = nullptr;
  for (auto& slab : slabs_) {
    if (slab->busy || slab->bytes < bytes) continue;
    if (best == nullptr || slab->bytes < best->bytes) best = slab.get();
  }
  if (best == nullptr) {
    BRAID_ASSIGN_OR_RETURN(std::unique_ptr<StagingSlab> slab, newSlab(roundedSlabBytes(bytes)));
    slabs_.push_back(std::move(slab));
    best = slabs_.back().get();
  }
  best->busy = true;
  best->doneRecorded = false;
  return best;
}

void StagingPool::release() {
  for (auto& slab : slabs_) {
    while (slab->busy && slab->doneRecorded) {
      Result<StreamOps::EventState> state = ops_->queryEvent(slab->done);
      if (!state.isOk() || *state == StreamOps::EventState::kDone) break;
      std::this_thread::yield();
    }
    if (slab->ready != nullptr) ops_->destroyEvent(slab->ready);
    if (slab->done != nullptr) ops_->destroyEvent(slab->done);
    if (slab->host != nullptr) ops_->freeHost(slab->host);
  }
  slabs_.clear();
}

}  // namespace braid
