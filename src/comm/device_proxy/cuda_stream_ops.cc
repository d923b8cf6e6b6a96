#include "comm/device_proxy/cuda_stream_ops.h"

#include <mutex>
#include <string>

#include "collectives/device/cuda/stream_ops_abi.h"
#include "comm/device_path.h"

namespace braid {
namespace {

constexpr size_t kErrorBytes = 512;

// Where the loaded libbraid_cuda.so predates V2: no capture (V1's copies refuse it).
constexpr const char* kNoCapture =
    "the libbraid_cuda.so found predates CUDA graph capture through the host proxy";

class CudaStreamOps final : public StreamOps {
 public:
  // `v2` may be null (an older libbraid_cuda.so): V1 only.
  CudaStreamOps(const BraidStreamOpsV1* api, const BraidStreamOpsV2* v2) : api_(api), v2_(v2) {}

  Result<void*> allocHost(size_t bytes) override {
    char error[kErrorBytes] = "";
    void* host = nullptr;
    auto alloc = v2_ != nullptr ? v2_->allocHost : api_->allocHost;
    if (alloc(bytes, &host, error, sizeof(error)) != 0) return failure(error);
    return host;
  }
  void freeHost(void* host) override { (v2_ != nullptr ? v2_->freeHost : api_->freeHost)(host); }

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
    auto copy = v2_ != nullptr ? v2_->copyAsync : api_->copyAsync;
    if (copy(dst, src, bytes, toDevice, stream, error, sizeof(error)) != 0) {
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
    auto wait = v2_ != nullptr ? v2_->streamWaitFlag : api_->streamWaitFlag;
    if (wait(stream, flag, value, error, sizeof(error)) != 0) return failure(error);
    return Status::ok();
  }

  Result<bool> isCapturing(void* stream) override {
    if (v2_ == nullptr) return false;
    char error[kErrorBytes] = "";
    int capturing = 0;
    if (v2_->isCapturing(stream, &capturing, error, sizeof(error)) != 0) return failure(error);
    return capturing != 0;
  }

  Status launchHostFunc(void* stream, HostFn fn, void* arg) override {
    if (v2_ == nullptr) return invalidUsage(kNoCapture);
    char error[kErrorBytes] = "";
    if (v2_->launchHostFunc(stream, fn, arg, error, sizeof(error)) != 0) return failure(error);
    return Status::ok();
  }

  Status retainWithCapture(void* stream, HostFn destroy, void* arg) override {
    if (v2_ == nullptr) return invalidUsage(kNoCapture);
    char error[kErrorBytes] = "";
    if (v2_->retainWithCapture(stream, destroy, arg, error, sizeof(error)) != 0) {
      return failure(error);
    }
    return Status::ok();
  }

  Status streamWaitEvent(void* stream, Event event) override {
    if (v2_ == nullptr) return invalidUsage(kNoCapture);
    char error[kErrorBytes] = "";
    if (v2_->streamWaitEvent(stream, event, error, sizeof(error)) != 0) return failure(error);
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
    auto use = v2_ != nullptr ? v2_->useDevice : api_->useDevice;
    if (use(device, error, sizeof(error)) != 0) return failure(error);
    return Status::ok();
  }

 private:
  static Status failure(const char* error) { return internalError(std::string("CUDA: ") + error); }

  const BraidStreamOpsV1* const api_;
  const BraidStreamOpsV2* const v2_;
};

}  // namespace

Result<std::shared_ptr<StreamOps>> cudaStreamOps() {
  static std::shared_ptr<StreamOps> ops;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string why;
    using Entry = const BraidStreamOpsV1* (*)();
    auto entry = reinterpret_cast<Entry>(deviceLibrarySymbol("braidStreamOpsV1", &why));
    const BraidStreamOpsV1* table = entry != nullptr ? entry() : nullptr;
    if (table == nullptr || table->version != 1) {
      failure =
          why.empty() ? "libbraid_cuda.so has no device proxy (it predates this libbraid)" : why;
      return;
    }
    using EntryV2 = const BraidStreamOpsV2* (*)();
    auto entryV2 = reinterpret_cast<EntryV2>(deviceLibrarySymbol("braidStreamOpsV2", nullptr));
    const BraidStreamOpsV2* v2 = entryV2 != nullptr ? entryV2() : nullptr;
    if (v2 != nullptr && (v2->version != 2 || v2->v1 != table)) v2 = nullptr;
    ops = std::make_shared<CudaStreamOps>(table, v2);
  });
  if (ops == nullptr) return invalidUsage(failure);
  return ops;
}

}  // namespace braid
