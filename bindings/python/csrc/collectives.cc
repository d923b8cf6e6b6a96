// The c10d collectives of BraidBackend, each turned into a Job of braid calls.
//
// Arguments are checked here, on the calling thread, before anything is queued: a bad
// call raises at once and leaves every rank's queue in step. Lists of tensors (allgather,
// scatter, alltoall, ...) are staged through one flat buffer so that each becomes a single
// braid call; data movers send bytes, reductions send braid's element types.
#include <c10/util/Exception.h>

#include <numeric>

#include "backend.h"
#include "tensor_args.h"

namespace braid::torch_backend {
namespace {

using c10d::OpType;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

// The tensor whose device (and current stream) an operation on `list` runs on.
at::Tensor first(const std::vector<at::Tensor>& list) {
  return list.empty() ? at::Tensor() : list.front();
}

Job named(const char* name, bool pointToPoint = false) {
  Job job;
  job.name = name;
  job.pointToPoint = pointToPoint;
  return job;
}

// A contiguous tensor braid may write; for a non-contiguous `t`, the Job copies the result
// back afterwards. The staged copy starts with t's contents, which in-place collectives read.
at::Tensor writable(Job& job, const at::Tensor& t) {
  if (t.is_contiguous()) return t;
  at::Tensor staged = t.contiguous();
  job.after.push_back([t, staged] { t.copy_(staged); });
  return staged;
}

// One flat buffer holding `parts` back to back, filled by the Job just before it runs.
at::Tensor packed(Job& job, const std::vector<at::Tensor>& parts, const at::Tensor& like) {
  int64_t total = 0;
  for (const auto& p : parts) total += p.numel();
  at::Tensor flat = at::empty({total}, like.options());
  job.before.push_back([flat, parts] {
    int64_t offset = 0;
    for (const auto& p : parts) {
      flat.narrow(0, offset, p.numel()).copy_(p.reshape({-1}));
      offset += p.numel();
    }
  });
  return flat;
}

// One flat buffer whose slices the Job copies into `parts` after it ran.
at::Tensor unpacked(Job& job, const std::vector<at::Tensor>& parts, const at::Tensor& like) {
  int64_t total = 0;
  for (const auto& p : parts) total += p.numel();
  at::Tensor flat = at::empty({total}, like.options());
  job.after.push_back([flat, parts] {
    int64_t offset = 0;
    for (const auto& p : parts) {
      p.copy_(flat.narrow(0, offset, p.numel()).view(p.sizes()));
      offset += p.numel();
    }
  });
  return flat;
}

// all_gather_into_tensor's contract: `whole` holds one `block`-sized part per rank.
// reduce_scatter_tensor has the same one, with input and output swapped.
void checkBlocks(const at::Tensor& whole, const at::Tensor& block, int size, const char* api) {
  checkTensor(whole, api);
  checkTensor(block, api);
  checkSameDevice(whole, block, api, "the larger tensor");
  TORCH_CHECK(whole.scalar_type() == block.scalar_type(), "braid: ", api, ": dtypes ",
              whole.scalar_type(), " and ", block.scalar_type(), " differ");
  TORCH_CHECK(whole.numel() == block.numel() * size, "braid: ", api, ": the larger tensor has ",
              whole.numel(), " elements, expected ", block.numel() * size, " (", block.numel(),
              " per rank times ", size, " ranks)");
}

void checkRoot(int64_t root, int size, const char* api) {
  TORCH_CHECK(root >= 0 && root < size, "braid: ", api, ": root rank ", root,
              " is out of range for a group of ", size);
}

// Bytes each peer's block takes in an all-to-all buffer: split sizes count rows (dim 0).
std::vector<size_t> blockBytes(const at::Tensor& t, const std::vector<int64_t>& splits, int size,
                               const char* what) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const size_t rowBytes = rows == 0 ? 0 : bytesOf(t) / rows;
  std::vector<size_t> bytes(size);
  if (splits.empty()) {
    TORCH_CHECK(rows % size == 0, "braid: alltoall_base: ", what, " has ", rows,
                " rows, which do not divide evenly among ", size, " ranks");
    for (auto& b : bytes) b = rows / size * rowBytes;
    return bytes;
  }
  checkCount(splits.size(), size, "alltoall_base", what);
  int64_t sum = 0;
  for (int i = 0; i < size; ++i) {
    TORCH_CHECK(splits[i] >= 0, "braid: alltoall_base: ", what, "[", i, "] is negative");
    sum += splits[i];
    bytes[i] = splits[i] * rowBytes;
  }
  TORCH_CHECK(sum == rows, "braid: alltoall_base: ", what, " add up to ", sum,
              " rows, but the "
              "tensor has ",
              rows);
  return bytes;
}

std::vector<size_t> displacements(const std::vector<size_t>& counts) {
  std::vector<size_t> displs(counts.size(), 0);
  std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), size_t{0});
  return displs;
}

// One all-to-all-v call over byte blocks of the flat buffers `in` and `out`.
BraidCall allToAllBytes(at::Tensor in, std::vector<size_t> sendBytes, at::Tensor out,
                        std::vector<size_t> recvBytes) {
  std::vector<size_t> sendDispls = displacements(sendBytes);
  std::vector<size_t> recvDispls = displacements(recvBytes);
  return [=](braidComm_t comm, braidStream_t stream) {
    return braidAllToAllv(in.data_ptr(), sendBytes.data(), sendDispls.data(), out.data_ptr(),
                          recvBytes.data(), recvDispls.data(), braidUint8, comm, stream);
  };
}

BraidCall allGatherBytes(at::Tensor in, at::Tensor out) {
  return [in, out](braidComm_t comm, braidStream_t stream) {
    return braidAllGather(in.data_ptr(), out.data_ptr(), bytesOf(in), braidUint8, comm, stream);
  };
}

BraidCall reduceScatterCall(at::Tensor in, at::Tensor out, const c10d::ReduceOp& op,
                            const char* api) {
  braidDataType_t type = reductionType(out.scalar_type(), api);
  braidRedOp_t braidOp = reductionOp(op, api);
  return [in, out, type, braidOp](braidComm_t comm, braidStream_t stream) {
    return braidReduceScatter(in.data_ptr(), out.data_ptr(), out.numel(), type, braidOp, comm,
                              stream);
  };
}

}  // namespace

WorkPtr BraidBackend::allreduce(std::vector<at::Tensor>& tensors,
                                const c10d::AllreduceOptions& opts) {
  Job job = named("allreduce");
  braidRedOp_t op = reductionOp(opts.reduceOp, "allreduce");
  for (const auto& t : tensors) {
    checkTensor(t, "allreduce");
    checkSameDevice(t, tensors.front(), "allreduce", "a tensor");
    braidDataType_t type = reductionType(t.scalar_type(), "allreduce");
    at::Tensor buf = writable(job, t);
    job.calls.push_back([buf, type, op](braidComm_t comm, braidStream_t stream) {
      return braidAllReduce(buf.data_ptr(), buf.data_ptr(), buf.numel(), type, op, comm, stream);
    });
  }
  return submit(OpType::ALLREDUCE, std::move(job), tensors, first(tensors));
}

WorkPtr BraidBackend::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                          const c10d::AllreduceCoalescedOptions& opts) {
  return allreduce(tensors, opts);
}

WorkPtr BraidBackend::broadcast(std::vector<at::Tensor>& tensors,
                                const c10d::BroadcastOptions& opts) {
  checkRoot(opts.rootRank, getSize(), "broadcast");
  Job job = named("broadcast");
  const int root = static_cast<int>(opts.rootRank);
  for (const auto& t : tensors) {
    checkTensor(t, "broadcast");
    checkSameDevice(t, tensors.front(), "broadcast", "a tensor");
    at::Tensor buf = writable(job, t);
    job.calls.push_back([buf, root](braidComm_t comm, braidStream_t stream) {
      return braidBroadcast(buf.data_ptr(), buf.data_ptr(), bytesOf(buf), braidUint8, root, comm,
                            stream);
    });
  }
  return submit(OpType::BROADCAST, std::move(job), tensors, first(tensors));
}

WorkPtr BraidBackend::reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  checkRoot(opts.rootRank, getSize(), "reduce");
  Job job = named("reduce");
  const int root = static_cast<int>(opts.rootRank);
  braidRedOp_t op = reductionOp(opts.reduceOp, "reduce");
  for (const auto& t : tensors) {
    checkTensor(t, "reduce");
    checkSameDevice(t, tensors.front(), "reduce", "a tensor");
    braidDataType_t type = reductionType(t.scalar_type(), "reduce");
    at::Tensor buf = writable(job, t);
    job.calls.push_back([buf, type, op, root](braidComm_t comm, braidStream_t stream) {
      return braidReduce(buf.data_ptr(), buf.data_ptr(), buf.numel(), type, op, root, comm, stream);
    });
  }
  return submit(OpType::REDUCE, std::move(job), tensors, first(tensors));
}

WorkPtr BraidBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                std::vector<at::Tensor>& inputs,
                                const c10d::AllgatherOptions& /*opts*/) {
  checkCount(inputs.size(), 1, "allgather", "input tensor");
  checkCount(outputs.size(), 1, "allgather", "output list");
  checkTensor(inputs[0], "allgather");
  checkCount(outputs[0].size(), getSize(), "allgather", "output tensors (one per rank)");
  checkSameShape(outputs[0], inputs[0], "allgather", "output");
  Job job = named("allgather");
  at::Tensor flat = unpacked(job, outputs[0], inputs[0]);
  job.calls.push_back(allGatherBytes(inputs[0].contiguous(), flat));
  return submit(OpType::ALLGATHER, std::move(job), outputs[0], inputs[0]);
}

WorkPtr BraidBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                      const c10d::AllgatherOptions& /*opts*/) {
  checkBlocks(output, input, getSize(), "all_gather_into_tensor");
  Job job = named("all_gather_into_tensor");
  job.calls.push_back(allGatherBytes(input.contiguous(), writable(job, output)));
  return submit(OpType::_ALLGATHER_BASE, std::move(job), {output}, input);
}

WorkPtr BraidBackend::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::AllgatherOptions& /*opts*/) {
  checkCount(outputs.size(), inputs.size(), "allgather_into_tensor_coalesced", "outputs");
  Job batch = named("allgather_into_tensor_coalesced");
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkBlocks(outputs[i], inputs[i], getSize(), "allgather_into_tensor_coalesced");
    checkSameDevice(inputs[i], inputs[0], "allgather_into_tensor_coalesced", "an input");
    batch.calls.push_back(allGatherBytes(inputs[i].contiguous(), writable(batch, outputs[i])));
  }
  return submit(OpType::ALLGATHER_INTO_TENSOR_COALESCED, std::move(batch), outputs, first(inputs));
}

WorkPtr BraidBackend::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllgatherOptions& /*opts*/) {
  // outputLists[r][i] receives rank r's inputs[i].
  checkCount(outputLists.size(), getSize(), "allgather_coalesced", "output lists (one per rank)");
  Job job = named("allgather_coalesced");
  std::vector<at::Tensor> all;
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkTensor(inputs[i], "allgather_coalesced");
    checkSameDevice(inputs[i], inputs[0], "allgather_coalesced", "an input");
    std::vector<at::Tensor> fromEachRank;
    for (auto& list : outputLists) {
      checkCount(list.size(), inputs.size(), "allgather_coalesced", "tensors per output list");
      fromEachRank.push_back(list[i]);
      all.push_back(list[i]);
    }
    checkSameShape(fromEachRank, inputs[i], "allgather_coalesced", "output");
    at::Tensor flat = unpacked(job, fromEachRank, inputs[i]);
    job.calls.push_back(allGatherBytes(inputs[i].contiguous(), flat));
  }
  return submit(OpType::ALLGATHER_COALESCED, std::move(job), all, first(inputs));
}

WorkPtr BraidBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                             std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  checkRoot(opts.rootRank, getSize(), "gather");
  checkCount(inputs.size(), 1, "gather", "input tensor");
  checkTensor(inputs[0], "gather");
  const int root = static_cast<int>(opts.rootRank);
  Job job = named("gather");
  at::Tensor flat;  // only the root receives
  std::vector<at::Tensor> results;
  if (getRank() == root) {
    checkCount(outputs.size(), 1, "gather", "output list on the root");
    checkCount(outputs[0].size(), getSize(), "gather", "output tensors on the root");
    checkSameShape(outputs[0], inputs[0], "gather", "output");
    flat = unpacked(job, outputs[0], inputs[0]);
    results = outputs[0];
  }
  at::Tensor in = inputs[0].contiguous();
  job.calls.push_back([in, flat, root](braidComm_t comm, braidStream_t stream) {
    return braidGather(in.data_ptr(), flat.defined() ? flat.data_ptr() : nullptr, bytesOf(in),
                       braidUint8, root, comm, stream);
  });
  return submit(OpType::GATHER, std::move(job), results, inputs[0]);
}

WorkPtr BraidBackend::scatter(std::vector<at::Tensor>& outputs,
                              std::vector<std::vector<at::Tensor>>& inputs,
                              const c10d::ScatterOptions& opts) {
  checkRoot(opts.rootRank, getSize(), "scatter");
  checkCount(outputs.size(), 1, "scatter", "output tensor");
  checkTensor(outputs[0], "scatter");
  const int root = static_cast<int>(opts.rootRank);
  Job job = named("scatter");
  at::Tensor flat;  // only the root sends
  if (getRank() == root) {
    checkCount(inputs.size(), 1, "scatter", "input list on the root");
    checkCount(inputs[0].size(), getSize(), "scatter", "input tensors on the root");
    checkSameShape(inputs[0], outputs[0], "scatter", "input");
    flat = packed(job, inputs[0], outputs[0]);
  }
  at::Tensor out = writable(job, outputs[0]);
  job.calls.push_back([flat, out, root](braidComm_t comm, braidStream_t stream) {
    return braidScatter(flat.defined() ? flat.data_ptr() : nullptr, out.data_ptr(), bytesOf(out),
                        braidUint8, root, comm, stream);
  });
  return submit(OpType::SCATTER, std::move(job), outputs, outputs[0]);
}

WorkPtr BraidBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                     std::vector<std::vector<at::Tensor>>& inputs,
                                     const c10d::ReduceScatterOptions& opts) {
  checkCount(outputs.size(), 1, "reduce_scatter", "output tensor");
  checkCount(inputs.size(), 1, "reduce_scatter", "input list");
  checkTensor(outputs[0], "reduce_scatter");
  checkCount(inputs[0].size(), getSize(), "reduce_scatter", "input tensors (one per rank)");
  checkSameShape(inputs[0], outputs[0], "reduce_scatter", "input");
  Job job = named("reduce_scatter");
  at::Tensor flat = packed(job, inputs[0], outputs[0]);
  job.calls.push_back(
      reduceScatterCall(flat, writable(job, outputs[0]), opts.reduceOp, "reduce_scatter"));
  return submit(OpType::REDUCE_SCATTER, std::move(job), outputs, outputs[0]);
}

WorkPtr BraidBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                           const c10d::ReduceScatterOptions& opts) {
  checkBlocks(input, output, getSize(), "reduce_scatter_tensor");
  Job job = named("reduce_scatter_tensor");
  job.calls.push_back(reduceScatterCall(input.contiguous(), writable(job, output), opts.reduceOp,
                                        "reduce_scatter_tensor"));
  return submit(OpType::_REDUCE_SCATTER_BASE, std::move(job), {output}, output);
}

WorkPtr BraidBackend::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::ReduceScatterOptions& opts) {
  checkCount(outputs.size(), inputs.size(), "reduce_scatter_tensor_coalesced", "outputs");
  Job batch = named("reduce_scatter_tensor_coalesced");
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkBlocks(inputs[i], outputs[i], getSize(), "reduce_scatter_tensor_coalesced");
    checkSameDevice(inputs[i], inputs[0], "reduce_scatter_tensor_coalesced", "an input");
    batch.calls.push_back(reduceScatterCall(inputs[i].contiguous(), writable(batch, outputs[i]),
                                            opts.reduceOp, "reduce_scatter_tensor_coalesced"));
  }
  return submit(OpType::REDUCE_SCATTER_TENSOR_COALESCED, std::move(batch), outputs, first(inputs));
}

WorkPtr BraidBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                    std::vector<int64_t>& outputSplits,
                                    std::vector<int64_t>& inputSplits,
                                    const c10d::AllToAllOptions& /*opts*/) {
  checkTensor(input, "all_to_all_single");
  checkTensor(output, "all_to_all_single");
  checkSameDevice(output, input, "all_to_all_single", "the output");
  TORCH_CHECK(input.scalar_type() == output.scalar_type(),
              "braid: all_to_all_single: input "
              "dtype ",
              input.scalar_type(), " differs from output dtype ", output.scalar_type());
  Job job = named("all_to_all_single");
  job.calls.push_back(allToAllBytes(
      input.contiguous(), blockBytes(input, inputSplits, getSize(), "input splits"),
      writable(job, output), blockBytes(output, outputSplits, getSize(), "output splits")));
  return submit(OpType::ALLTOALL_BASE, std::move(job), {output}, input);
}

WorkPtr BraidBackend::alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                               const c10d::AllToAllOptions& /*opts*/) {
  checkCount(inputs.size(), getSize(), "all_to_all", "input tensors (one per rank)");
  checkCount(outputs.size(), getSize(), "all_to_all", "output tensors (one per rank)");
  std::vector<size_t> sendBytes;
  std::vector<size_t> recvBytes;
  for (int r = 0; r < getSize(); ++r) {
    checkTensor(inputs[r], "all_to_all");
    checkTensor(outputs[r], "all_to_all");
    checkSameDevice(inputs[r], inputs[0], "all_to_all", "an input");
    checkSameDevice(outputs[r], inputs[0], "all_to_all", "an output");
    TORCH_CHECK(inputs[r].scalar_type() == inputs[0].scalar_type() &&
                    outputs[r].scalar_type() == inputs[0].scalar_type(),
                "braid: all_to_all: every input and output must have dtype ",
                inputs[0].scalar_type());
    sendBytes.push_back(bytesOf(inputs[r]));
    recvBytes.push_back(bytesOf(outputs[r]));
  }
  Job job = named("all_to_all");
  at::Tensor in = packed(job, inputs, inputs[0]);
  at::Tensor out = unpacked(job, outputs, inputs[0]);
  job.calls.push_back(allToAllBytes(in, sendBytes, out, recvBytes));
  return submit(OpType::ALLTOALL, std::move(job), outputs, inputs[0]);
}

WorkPtr BraidBackend::send(std::vector<at::Tensor>& tensors, int dstRank, int /*tag*/) {
  // braid matches messages between two ranks in issue order; c10d tags are not needed for that.
  checkCount(tensors.size(), 1, "send", "tensor");
  checkTensor(tensors[0], "send");
  checkRoot(dstRank, getSize(), "send (destination)");
  Job job = named("send", /*pointToPoint=*/true);
  at::Tensor in = tensors[0].contiguous();
  job.calls.push_back([in, dstRank](braidComm_t comm, braidStream_t stream) {
    return braidSend(in.data_ptr(), bytesOf(in), braidUint8, dstRank, comm, stream);
  });
  return submit(OpType::SEND, std::move(job), tensors, tensors[0]);
}

WorkPtr BraidBackend::recv(std::vector<at::Tensor>& tensors, int srcRank, int /*tag*/) {
  checkCount(tensors.size(), 1, "recv", "tensor");
  checkTensor(tensors[0], "recv");
  checkRoot(srcRank, getSize(), "recv (source)");
  Job job = named("recv", /*pointToPoint=*/true);
  at::Tensor out = writable(job, tensors[0]);
  job.calls.push_back([out, srcRank](braidComm_t comm, braidStream_t stream) {
    return braidRecv(out.data_ptr(), bytesOf(out), braidUint8, srcRank, comm, stream);
  });
  return submit(OpType::RECV, std::move(job), tensors, tensors[0]);
}

WorkPtr BraidBackend::barrier(const c10d::BarrierOptions& /*opts*/) {
  Job job = named("barrier");
  job.calls.push_back(
      [](braidComm_t comm, braidStream_t stream) { return braidBarrier(comm, stream); });
  return submit(OpType::BARRIER, std::move(job), {});
}

}  // namespace braid::torch_backend
