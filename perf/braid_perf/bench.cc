#include "bench.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "device_memory.h"
#include "types.h"

namespace braid::perf {
namespace {

constexpr size_t kAlignment = 64;

struct FreeDeleter {
  void operator()(char* pointer) const { std::free(pointer); }
};
using HostAllocation = std::unique_ptr<char, FreeDeleter>;

HostAllocation allocateHost(size_t bytes) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  char* pointer = static_cast<char*>(std::aligned_alloc(kAlignment, std::max(rounded, kAlignment)));
  if (pointer != nullptr) std::memset(pointer, 0, rounded);  // touch every page before timing
  return HostAllocation(pointer);
}

}  // namespace

// The two buffers every call uses, sized for the largest size of the sweep
// (as nccl-tests does); in-place calls work inside `recv` alone. With --memory device the
// calls use deviceSend/deviceRecv, and send/recv are their host mirrors: inputs and poison
// are written there and uploaded, results downloaded there and checked.
struct Bench::Buffers {
  HostAllocation send;
  HostAllocation recv;
  DeviceBuffer deviceSend;
  DeviceBuffer deviceRecv;
  size_t capacity = 0;  // bytes usable past `offset`
  size_t offset = 0;    // bytes past the 64-byte boundary (-u): one element, < kAlignment
};

Bench::Bench(const Options& options, const RankContext& context)
    : options_(options), context_(context), buffers_(std::make_unique<Buffers>()) {}

Bench::~Bench() = default;

Outcome Bench::runSweep(const SweepSpec& spec, const RowCallback& onRow) {
  const std::vector<size_t> sizes = sweepSizes(options_);
  const size_t elementBytes = elementSize(spec.type);
  size_t largest = 0;
  for (size_t bytes : sizes) {
    const BufferLayout layout = layoutFor(spec.kind, bytes, elementBytes, context_.nranks);
    largest = std::max(largest, reportedBytes(layout, elementBytes));
  }
  buffers_->offset = options_.unaligned ? elementBytes : 0;
  if (largest > buffers_->capacity || !buffers_->send) {
    // kAlignment bytes of slack cover the -u offset of any element type.
    buffers_->send = allocateHost(largest + kAlignment);
    buffers_->recv = allocateHost(largest + kAlignment);
    if (!buffers_->send || !buffers_->recv) {
      buffers_->capacity = 0;
      return Outcome::failure("rank " + std::to_string(context_.rank) + " could not allocate " +
                              std::to_string(largest) + " bytes for each of two buffers");
    }
    if (onDevice()) {
      Outcome allocated = buffers_->deviceSend.allocate(largest + kAlignment);
      if (allocated.ok()) allocated = buffers_->deviceRecv.allocate(largest + kAlignment);
      if (!allocated.ok()) {
        buffers_->send.reset();  // allocate again next sweep
        buffers_->capacity = 0;
        return Outcome::failure("rank " + std::to_string(context_.rank) + ": " +
                                allocated.message());
      }
    }
    buffers_->capacity = largest;
  }
  // cudaFree (and possibly cudaMalloc) waits for every kernel on the GPU, and a rank's
  // kernel waits for its peers' kernels: no rank may launch while another is still
  // allocating. Every rank ended its previous sweep in a host collective after its stream
  // drained, so after this barrier no kernel runs until all have allocated.
  Outcome outcome = onDevice() ? barrier(context_) : Outcome::success();
  if (outcome.ok()) outcome = warmUp(spec, sizes.back());
  if (outcome.ok()) outcome = warmUp(spec, sizes.front());
  for (size_t bytes : sizes) {
    if (!outcome.ok()) break;
    Measurement outOfPlace{};
    Measurement inPlace{};
    outcome = measure(spec, bytes, /*inPlace=*/false, &outOfPlace);
    if (outcome.ok()) outcome = measure(spec, bytes, /*inPlace=*/true, &inPlace);
    if (outcome.ok()) onRow(outOfPlace, inPlace);
  }
  return outcome;
}

Outcome Bench::warmUp(const SweepSpec& spec, size_t bytes) {
  const size_t elementBytes = elementSize(spec.type);
  const BufferLayout layout = layoutFor(spec.kind, bytes, elementBytes, context_.nranks);
  const CallArgs args = callArgs(spec, layout, placement(layout, elementBytes, false));
  for (int iter = 0; iter < options_.warmupIters; ++iter) {
    Outcome outcome = launch(spec, args);
    if (!outcome.ok()) return outcome;
  }
  return finish();
}

Outcome Bench::measure(const SweepSpec& spec, size_t bytes, bool inPlace, Measurement* result) {
  const CollectiveInfo& info = collectiveInfo(spec.kind);
  const size_t elementBytes = elementSize(spec.type);
  const BufferLayout layout = layoutFor(spec.kind, bytes, elementBytes, context_.nranks);
  const Placement place = placement(layout, elementBytes, inPlace);
  const CallArgs args = callArgs(spec, layout, place);
  const CheckSpec check{spec.kind,     spec.type,       spec.op, spec.root,
                        context_.rank, context_.nranks, layout};
  Outcome outcome = Outcome::success();
  if (options_.check) {
    fillInput(check, hostView(place.send));
    outcome = upload(place.send, layout.sendCount * elementBytes);
    if (!outcome.ok()) return outcome;
  }

  double seconds = 0.0;
  outcome = timeIterations(spec, args, &seconds);
  if (outcome.ok()) outcome = combineAcrossRanks(context_, options_.aggregation, &seconds);
  if (!outcome.ok()) return outcome;

  std::optional<int64_t> wrong;
  if (options_.check && (!inPlace || info.checkedInPlace)) {
    int64_t count = 0;
    outcome = checkOnce(spec, check, place, &count);
    if (!outcome.ok()) return outcome;
    wrong = count;
  }

  const size_t reported = reportedBytes(layout, elementBytes);
  const double algBw = seconds > 0.0 ? static_cast<double>(reported) / 1.0e9 / seconds : 0.0;
  *result = Measurement{spec.kind,
                        reported,
                        layout.count,
                        spec.type,
                        info.reduces ? std::optional<braidRedOp_t>(spec.op) : std::nullopt,
                        info.rooted ? spec.root : -1,
                        inPlace,
                        seconds,
                        algBw,
                        algBw * info.busFactor(context_.nranks),
                        wrong};
  return Outcome::success();
}

Outcome Bench::timeIterations(const SweepSpec& spec, const CallArgs& args, double* seconds) {
  // One untimed call absorbs lazy connection setup; the barrier lines ranks up.
  Outcome outcome = launch(spec, args);
  if (outcome.ok()) outcome = finish();
  if (outcome.ok()) outcome = barrier(context_);
  if (!outcome.ok()) return outcome;

  const bool grouped = options_.aggIters > 1;
  const auto start = std::chrono::steady_clock::now();
  for (int iter = 0; iter < options_.iters && outcome.ok(); ++iter) {
    if (grouped) outcome = checkCall("braidGroupStart", braidGroupStart(), context_);
    for (int op = 0; op < options_.aggIters && outcome.ok(); ++op) outcome = launch(spec, args);
    // The group is closed even after a failed call, so that the group depth stays balanced.
    if (grouped) {
      Outcome ended = checkCall("braidGroupEnd", braidGroupEnd(), context_);
      if (outcome.ok()) outcome = ended;
    }
  }
  // Device calls were only enqueued: the time ends when the rank's stream has run them.
  if (outcome.ok()) outcome = finish();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  *seconds = elapsed.count() / (static_cast<double>(options_.iters) * options_.aggIters);
  return outcome;
}

Outcome Bench::checkOnce(const SweepSpec& spec, const CheckSpec& check, const Placement& place,
                         int64_t* wrong) {
  // Poison first: in-place inputs live inside the output buffer. With device buffers both
  // are written to the host mirror, whose final state is then uploaded.
  const size_t elementBytes = elementSize(spec.type);
  const size_t recvBytes = check.layout.recvCount * elementBytes;
  poisonOutput(check, hostView(place.recv));
  fillInput(check, hostView(place.send));
  Outcome outcome = upload(place.recv, recvBytes);
  if (outcome.ok()) outcome = upload(place.send, check.layout.sendCount * elementBytes);
  if (outcome.ok()) outcome = launch(spec, callArgs(spec, check.layout, place));
  if (outcome.ok()) outcome = finish();
  if (outcome.ok()) outcome = download(place.recv, recvBytes);
  if (!outcome.ok()) return outcome;
  char* result = hostView(place.recv);
  if (options_.corruptRank == context_.rank) corruptOneElement(check, result);
  *wrong = countWrong(check, result);
  return sumAcrossRanks(context_, wrong);
}

Bench::Placement Bench::placement(const BufferLayout& layout, size_t elementBytes,
                                  bool inPlace) const {
  char* send = (onDevice() ? buffers_->deviceSend.get() : buffers_->send.get()) + buffers_->offset;
  char* recv = (onDevice() ? buffers_->deviceRecv.get() : buffers_->recv.get()) + buffers_->offset;
  if (!inPlace) return Placement{send, recv};
  const size_t rank = static_cast<size_t>(context_.rank);
  return Placement{recv + rank * layout.sendInPlaceOffset * elementBytes,
                   recv + rank * layout.recvInPlaceOffset * elementBytes};
}

CallArgs Bench::callArgs(const SweepSpec& spec, const BufferLayout& layout,
                         const Placement& place) const {
  return CallArgs{place.send, place.recv, layout.count, spec.type, spec.op, spec.root};
}

bool Bench::onDevice() const { return options_.memory == MemoryKind::kDevice; }

char* Bench::hostView(char* at) const {
  if (!onDevice()) return at;
  char* const deviceRecv = buffers_->deviceRecv.get();
  const size_t span = buffers_->capacity + kAlignment;
  if (at >= deviceRecv && at < deviceRecv + span) return buffers_->recv.get() + (at - deviceRecv);
  return buffers_->send.get() + (at - buffers_->deviceSend.get());
}

Outcome Bench::upload(char* at, size_t bytes) {
  if (!onDevice()) return Outcome::success();
  return withRank(copyToDevice(at, hostView(at), bytes));
}

Outcome Bench::download(char* at, size_t bytes) {
  if (!onDevice()) return Outcome::success();
  return withRank(copyToHost(hostView(at), at, bytes));
}

Outcome Bench::finish() {
  if (!onDevice()) return Outcome::success();
  return withRank(synchronizeStream(context_.stream));
}

Outcome Bench::withRank(const Outcome& outcome) const {
  if (outcome.ok()) return outcome;
  return Outcome::failure("rank " + std::to_string(context_.rank) + ": " + outcome.message());
}

Outcome Bench::launch(const SweepSpec& spec, const CallArgs& args) {
  return checkCall(apiName(spec.kind), launchCollective(spec.kind, args, context_), context_);
}

}  // namespace braid::perf
