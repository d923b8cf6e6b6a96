// BraidBackend lifecycle: rendezvous through the c10d Store, splitting, coalescing, and
// running Jobs on the worker thread. The collectives themselves are in collectives.cc.
#include "backend.h"

#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace braid::torch_backend {
namespace {

// The Store key under which rank 0 publishes the unique id. The Store handed to a backend
// is already prefixed with the group's name, so one key per group is enough.
constexpr const char* kUniqueIdKey = "braid/unique_id";

// braid reads BRAID_TIMEOUT when a communicator is created. Unless the user chose a value,
// the c10d timeout of the group becomes braid's deadline for every wait, so a dead peer turns
// into an error within the timeout PyTorch promised.
class ScopedBraidTimeout {
 public:
  explicit ScopedBraidTimeout(std::chrono::milliseconds timeout)
      : set_(std::getenv("BRAID_TIMEOUT") == nullptr && timeout.count() > 0) {
    if (!set_) return;
    long seconds = std::max<long>(1, static_cast<long>(std::ceil(timeout.count() / 1000.0)));
    setenv("BRAID_TIMEOUT", std::to_string(seconds).c_str(), /*overwrite=*/0);
  }
  ~ScopedBraidTimeout() {
    if (set_) unsetenv("BRAID_TIMEOUT");
  }
  ScopedBraidTimeout(const ScopedBraidTimeout&) = delete;
  ScopedBraidTimeout& operator=(const ScopedBraidTimeout&) = delete;

 private:
  const bool set_;
};

std::string describe(int rank, int size) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(size);
}

// The most specific message braid has for a failed call on `comm`.
std::string failure(braidResult_t rc, braidComm_t comm) {
  std::string msg = braidGetErrorString(rc);
  const char* detail = comm != nullptr ? braidGetLastError(comm) : "";
  if (detail == nullptr || *detail == '\0') detail = braidGetLastError(nullptr);
  if (detail != nullptr && *detail != '\0') msg += ": " + std::string(detail);
  return msg;
}

}  // namespace

c10::intrusive_ptr<BraidBackend> BraidBackend::create(const c10::intrusive_ptr<c10d::Store>& store,
                                                      int rank, int size,
                                                      std::chrono::milliseconds timeout) {
  TORCH_CHECK(size > 0 && rank >= 0 && rank < size, "braid: rank ", rank,
              " is out of range for a group of ", size);
  ScopedBraidTimeout scopedTimeout(timeout);
  braidUniqueId id;
  if (rank == 0) {
    braidResult_t rc = braidGetUniqueId(&id);
    if (rc != braidSuccess) {
      C10_THROW_ERROR(DistBackendError, "braid: braidGetUniqueId failed on " +
                                            describe(rank, size) + ": " + failure(rc, nullptr));
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(id.internal);
    store->set(kUniqueIdKey, std::vector<uint8_t>(bytes, bytes + sizeof(id.internal)));
  } else {
    std::vector<uint8_t> bytes = store->get(kUniqueIdKey);  // waits for rank 0
    TORCH_CHECK(bytes.size() == sizeof(id.internal), "braid: ", describe(rank, size),
                " read a unique id of ", bytes.size(), " bytes from the store, expected ",
                sizeof(id.internal));
    std::memcpy(id.internal, bytes.data(), bytes.size());
  }
  braidComm_t comm = nullptr;
  braidResult_t rc = braidCommInitRank(&comm, size, id, rank);
  if (rc != braidSuccess) {
    C10_THROW_ERROR(DistBackendError, "braid: braidCommInitRank failed on " + describe(rank, size) +
                                          ": " + failure(rc, nullptr));
  }
  return c10::make_intrusive<BraidBackend>(comm, rank, size, timeout);
}

BraidBackend::BraidBackend(braidComm_t comm, int rank, int size, std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size),
      comm_(comm),
      timeout_(timeout),
      queue_(std::make_unique<JobQueue>([this](Job& job) { runJob(job); })) {}

BraidBackend::~BraidBackend() { shutdown(); }

void BraidBackend::shutdown() {
  queue_.reset();  // runs what is queued: operations already issued still complete
  if (comm_ != nullptr) braidCommDestroy(comm_);
  comm_ = nullptr;
}

c10::intrusive_ptr<c10d::Backend::Options> BraidBackend::getBackendOptions() {
  return c10::make_intrusive<Options>("braid", timeout_);
}

std::string BraidBackend::where() const { return describe(getRank(), getSize()); }

void BraidBackend::runJob(Job& job) {
  // CUDA: the staging copies, the braid calls and the futures' events all go on the stream
  // the operation was issued on (this thread's current stream only while the guard lives).
  std::optional<c10::StreamGuard> onStream;
  if (job.stream) onStream.emplace(*job.stream);
  braidStream_t stream = job.stream ? job.stream->native_handle() : nullptr;
  for (auto& copyIn : job.before) copyIn();
  braidResult_t rc = braidSuccess;
  if (job.calls.size() == 1) {
    rc = job.calls.front()(comm_, stream);
  } else if (!job.calls.empty()) {
    rc = braidGroupStart();
    for (size_t i = 0; rc == braidSuccess && i < job.calls.size(); ++i) {
      rc = job.calls[i](comm_, stream);
    }
    braidResult_t end = braidGroupEnd();  // closes the group even after a failed call
    if (rc == braidSuccess) rc = end;
  }
  if (rc != braidSuccess) {
    C10_THROW_ERROR(DistBackendError,
                    "braid: " + job.name + " failed on " + where() + ": " + failure(rc, comm_));
  }
  for (auto& copyOut : job.after) copyOut();
  if (job.stream) {
    // Complete here, under the guard, so each future records its event on job.stream.
    for (auto& work : job.works) work->complete(nullptr);
    job.works.clear();
  }
}

c10::intrusive_ptr<c10d::Work> BraidBackend::submit(c10d::OpType type, Job job,
                                                    std::vector<at::Tensor> outputs,
                                                    const at::Tensor& place) {
  TORCH_CHECK(queue_ != nullptr, "braid: ", job.name, " on ", where(),
              " was issued after the process group was shut down");
  if (place.defined() && place.is_cuda() && !job.stream) {
    job.stream = c10::impl::VirtualGuardImpl(c10::DeviceType::CUDA).getStream(place.device());
  }
  ++sequence_;
  std::optional<c10::Device> device;
  if (job.stream) device = job.stream->device();
  auto work = c10::make_intrusive<BraidWork>(getRank(), type, job.name + " on " + where(),
                                             std::move(outputs), device);
  job.works.push_back(work);
  {
    std::lock_guard<std::mutex> lock(coalesceMu_);
    if (coalescing_) {
      TORCH_CHECK(!job.stream || !coalesced_.stream || *job.stream == *coalesced_.stream,
                  "braid: ", job.name, " on ", where(),
                  " joins a coalesced batch issued on "
                  "another CUDA stream; one batch runs on one stream");
      coalesced_.absorb(std::move(job));
      return work;
    }
  }
  queue_->push(std::move(job));
  return work;
}

void BraidBackend::runAndWait(const char* name, BraidCall call) {
  Job job;
  job.name = name;
  job.calls.push_back(std::move(call));
  submit(c10d::OpType::UNKNOWN, std::move(job), {})->wait();
}

void BraidBackend::startCoalescing() {
  std::lock_guard<std::mutex> lock(coalesceMu_);
  TORCH_CHECK(!coalescing_, "braid: startCoalescing on ", where(),
              " while a coalesced batch is already open");
  coalescing_ = true;
  coalesced_ = Job();
}

c10::intrusive_ptr<c10d::Work> BraidBackend::endCoalescing() {
  Job batch;
  {
    std::lock_guard<std::mutex> lock(coalesceMu_);
    TORCH_CHECK(coalescing_, "braid: endCoalescing on ", where(), " without startCoalescing");
    coalescing_ = false;
    batch = std::move(coalesced_);
    coalesced_ = Job();
  }
  std::vector<at::Tensor> outputs;
  for (auto& work : batch.works) {
    for (auto& t : work->result()) outputs.push_back(t);
  }
  if (batch.name.empty()) batch.name = "empty coalesced batch";
  return submit(c10d::OpType::COALESCED, std::move(batch), std::move(outputs));
}

c10::intrusive_ptr<BraidBackend> BraidBackend::splitByColor(int color, int key) {
  braidComm_t child = nullptr;
  // The call runs on the worker thread while this thread waits, so `child` outlives it.
  runAndWait("split", [&child, color, key](braidComm_t comm, braidStream_t) {
    return braidCommSplit(comm, color, key, &child);
  });
  if (child == nullptr) return {};
  int rank = 0;
  int size = 0;
  braidCommUserRank(child, &rank);
  braidCommCount(child, &size);
  return c10::make_intrusive<BraidBackend>(child, rank, size, timeout_);
}

c10::intrusive_ptr<c10d::Backend> BraidBackend::split(
    const c10::intrusive_ptr<c10d::Store>& /*store*/, const std::vector<int>& ranks,
    const c10::intrusive_ptr<Options>& /*opts*/) {
  auto me = std::find(ranks.begin(), ranks.end(), getRank());
  if (me == ranks.end()) {
    splitByColor(BRAID_SPLIT_NOCOLOR, 0);
    return {};
  }
  // Disjoint groups have distinct smallest members: a color every member computes alike.
  int color = *std::min_element(ranks.begin(), ranks.end());
  return splitByColor(color, static_cast<int>(me - ranks.begin()));
}

}  // namespace braid::torch_backend
