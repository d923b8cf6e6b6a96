#include "comm/device_proxy/cuda_stream_ops.h"

#include <mutex>
#include <string>

#include "collectives/device/cuda/stream_ops_abi.h"
#include "comm/device_path.h"

namespace braid {
namespace {

constexpr size_t kErrorBytes = 512;

class CudaStreamOps final : public StreamOps {
 public:
  explicit CudaStreamOps(const BraidStreamOps* api) : api_(api) {}

  Result<void*> allocHost(size_t bytes) override {
    char error[kErrorBytes] = "";
    void* host = nullptr;
    if (api_->allocHost(bytes, &host, error, sizeof(error)) != 0) return failure(error);
    return host;
  }
  void freeHost(void* host) override { api_->freeHost(host); }

  Result<Event> createEvent() override {
    char error[kErrorBytes] = "";
    void* event = nullptr;
    if (api_->createEvent(&event, error, sizeof(error)) != 0) return failure(error);
    return event;
  }
  void destroyEvent(Event event) override { api_->destroyEvent(event); }

  Status copyAsync(void* dst, const void* src, size_t bytes, Direction direction,
                   void* stream) override {
    char error[kErrorBytes] = "";
    const int toDevice = direction == Direction::kToDevice ? 1 : 0;
    if (api_->copyAsync(dst, src, bytes, toDevice, stream, error, sizeof(error)) != 0) {
      return failure(error);
    }
    return Status::ok();
  }

  Status recordEvent(Event event, void* stream) override {
    char error[kErrorBytes] = "";
    if (api_->recordEvent(event, stream, error, sizeof(error)) != 0) return failure(error);
    return Status::ok();
  }

  Result<EventState> queryEvent(Event event) override {
    char error[kErrorBytes] = "";
    switch (api_->queryEvent(event, error, sizeof(error))) {
      case 0:
        return EventState::kDone;
      case 2:
        return EventState::kPending;
      default:
        return failure(error);
    }
  }

  Status streamWaitFlag(void* stream, const uint32_t* flag, uint32_t value) override {
    char error[kErrorBytes] = "";
    if (api_->streamWaitFlag(stream, flag, value, error, sizeof(error)) != 0) {
      return failure(error);
    }
    return Status::ok();
  }

  Result<bool> isCapturing(void* stream) override {
    char error[kErrorBytes] = "";
    int capturing = 0;
    if (api_->isCapturing(stream, &capturing, error, sizeof(error)) != 0) return failure(error);
    return capturing != 0;
  }

  Status launchHostFunc(void* stream, HostFn fn, void* arg) override {
    char error[kErrorBytes] = "";
    if (api_->launchHostFunc(stream, fn, arg, error, sizeof(error)) != 0) return failure(error);
    return Status::ok();
  }

  Status retainWithCapture(void* stream, HostFn destroy, void* arg) override {
    char error[kErrorBytes] = "";
    if (api_->retainWithCapture(stream, destroy, arg, error, sizeof(error)) != 0) {
      return failure(error);
    }
    return Status::ok();
  }

  Status streamWaitEvent(void* stream, Event event) override {
    char error[kErrorBytes] = "";
    if (api_->streamWaitEvent(stream, event, error, sizeof(error)) != 0) return failure(error);
    return Status::ok();
  }

  Result<int> currentDevice() override {
    char error[kErrorBytes] = "";
    int device = -1;
    if (api_->currentDevice(&device, error, sizeof(error)) != 0) return failure(error);
    return device;
  }

  Status useDevice(int device) override {
    char error[kErrorBytes] = "";
    if (api_->useDevice(device, error, sizeof(error)) != 0) return failure(error);
    return Status::ok();
  }

 private:
  static Status failure(const char* error) { return internalError(std::string("CUDA: ") + error); }

  const BraidStreamOps* const api_;
};

}  // namespace

Result<std::shared_ptr<StreamOps>> cudaStreamOps() {
  static std::shared_ptr<StreamOps> ops;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string why;
    using Entry = const BraidStreamOps* (*)();
    auto entry = reinterpret_cast<Entry>(deviceLibrarySymbol("braidStreamOps", &why));
    const BraidStreamOps* table = entry != nullptr ? entry() : nullptr;
    if (table == nullptr || table->version != kBraidStreamOpsVersion ||
        table->size < sizeof(BraidStreamOps)) {
      failure = !why.empty() ? why
                             : "libbraid_cuda.so has no matching device proxy (it comes from "
                               "another braid version)";
      return;
    }
    ops = std::make_shared<CudaStreamOps>(table);
  });
  if (ops == nullptr) return invalidUsage(failure);
  return ops;
}

}  // namespace braid
