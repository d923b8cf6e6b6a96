// bench_gloo: the comparison loop of bench_loop.h run on Gloo (Debian's
// libgloo-dev). Gloo has only a TCP transport here, so every run, "shm" rows
// included, goes over TCP on 127.0.0.1. Ranks rendezvous through a FileStore in
// $GLOO_STORE_DIR (a fresh directory per run); rank and size come from RANK and
// WORLD_SIZE, which tools/braidrun sets, so braidrun launches this program too.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/alltoall.h"
#include "gloo/barrier.h"
#include "gloo/broadcast.h"
#include "gloo/math.h"
#include "gloo/reduce_scatter.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/transport/unbound_buffer.h"
#include "perf/baselines/bench_loop.h"

namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

int envInt(const char* name) {
  const char* value = std::getenv(name);
  if (!value) {
    std::fprintf(stderr, "bench_gloo: %s is not set; start it with tools/braidrun\n", name);
    std::exit(2);
  }
  return std::atoi(value);
}

class GlooBackend {
 public:
  GlooBackend() : rank_(envInt("RANK")), nranks_(envInt("WORLD_SIZE")) {
    const char* dir = std::getenv("GLOO_STORE_DIR");
    if (!dir) {
      std::fprintf(stderr, "bench_gloo: GLOO_STORE_DIR (an empty shared directory) is not set\n");
      std::exit(2);
    }
    gloo::transport::tcp::attr attr("127.0.0.1");
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(dir);
    context_ = std::make_shared<gloo::rendezvous::Context>(rank_, nranks_);
    context_->setTimeout(std::chrono::seconds(300));
    context_->connectFullMesh(store, device);
  }

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  // Send/receive pairs need a peer other than the rank itself.
  bool supports(bench::Collective c) const {
    return c != bench::Collective::kSendRecv || nranks_ > 1;
  }

  // Gloo's reduce-scatter is the older algorithm-object API, in place on one
  // buffer of count * nranks elements: build it once per size, as a user would.
  // The buffer is zeroed so that repeated in-place sums stay finite.
  void prepare(bench::Collective c, size_t count, float* send, float* recv) {
    reduceScatter_.reset();
    sendBuffer_.reset();
    recvBuffer_.reset();
    if (c == bench::Collective::kSendRecv) {
      // Gloo's point-to-point API: buffers registered once per size, a slot all ranks agree on.
      sendBuffer_ = context_->createUnboundBuffer(send, count * sizeof(float));
      recvBuffer_ = context_->createUnboundBuffer(recv, count * sizeof(float));
      slot_ = context_->nextSlot();
    }
    if (c != bench::Collective::kReduceScatter) return;
    std::memset(recv, 0, count * nranks_ * sizeof(float));
    std::vector<int> recvElems(nranks_, static_cast<int>(count));
    reduceScatter_ = std::make_unique<gloo::ReduceScatterHalvingDoubling<float>>(
        context_, std::vector<float*>{recv}, static_cast<int>(count * nranks_), recvElems);
  }

  void run(bench::Collective c, size_t count, float* send, float* recv) {
    using bench::Collective;
    switch (c) {
      case Collective::kAllReduce: {
        gloo::AllreduceOptions opts(context_);
        opts.setInput(send, count);
        opts.setOutput(recv, count);
        opts.setReduceFunction(static_cast<ReduceFn>(&gloo::sum<float>));
        gloo::allreduce(opts);
        break;
      }
      case Collective::kBroadcast: {
        gloo::BroadcastOptions opts(context_);
        if (rank_ == 0) opts.setInput(send, count);
        opts.setOutput(recv, count);
        opts.setRoot(0);
        gloo::broadcast(opts);
        break;
      }
      case Collective::kAllGather: {
        gloo::AllgatherOptions opts(context_);
        opts.setInput(send, count);
        opts.setOutput(recv, count * nranks_);
        gloo::allgather(opts);
        break;
      }
      case Collective::kReduceScatter:
        reduceScatter_->run();
        break;
      case Collective::kAllToAll: {
        gloo::AlltoallOptions opts(context_);
        opts.setInput(send, count * nranks_);
        opts.setOutput(recv, count * nranks_);
        gloo::alltoall(opts);
        break;
      }
      case Collective::kSendRecv: {
        const int right = (rank_ + 1) % nranks_, left = (rank_ + nranks_ - 1) % nranks_;
        sendBuffer_->send(right, slot_);
        recvBuffer_->recv(left, slot_);
        sendBuffer_->waitSend();
        recvBuffer_->waitRecv();
        break;
      }
    }
  }

  void barrier() {
    gloo::BarrierOptions opts(context_);
    gloo::barrier(opts);
  }

  void maxOverRanks(double* values, size_t n) {
    gloo::AllreduceOptions opts(context_);
    opts.setOutput(values, n);
    opts.setReduceFunction(static_cast<ReduceFn>(&gloo::max<double>));
    gloo::allreduce(opts);
  }

 private:
  int rank_;
  int nranks_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::unique_ptr<gloo::ReduceScatterHalvingDoubling<float>> reduceScatter_;
  std::unique_ptr<gloo::transport::UnboundBuffer> sendBuffer_, recvBuffer_;
  uint64_t slot_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  return bench::runMain<GlooBackend>(argc, argv, "gloo", "BENCH_TRANSPORT", "tcp");
}
