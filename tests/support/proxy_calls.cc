#include "support/proxy_calls.h"

#include <gtest/gtest.h>

#include "api/guard.h"
#include "comm/device_proxy/proxy_hooks.h"

namespace braid::testing {

int32_t proxyInput(int rank, size_t i, int salt) {
  return static_cast<int32_t>(uint32_t(rank) * 1000003u + uint32_t(i) * 7u + uint32_t(salt));
}

int32_t proxySum(int nranks, size_t i, int salt) {
  uint32_t sum = 0;
  for (int r = 0; r < nranks; ++r) sum += static_cast<uint32_t>(proxyInput(r, i, salt));
  return static_cast<int32_t>(sum);
}

std::vector<int32_t> proxyInputs(int rank, size_t count, int salt) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = proxyInput(rank, i, salt);
  return v;
}

Op proxyCollective(braidComm_t comm, coll::CollKind kind, const char* api, const void* send,
                   void* recv, size_t count) {
  Op op;
  op.kind = OpKind::kCollective;
  op.coll = kind;
  op.apiName = api;
  op.comm = comm != nullptr ? api::toComm(comm) : nullptr;
  op.send = send;
  op.recv = recv;
  op.count = count;
  op.type = braidInt32;
  op.op = braidSum;
  return op;
}

Status enqueueOnFake(const Op& op, FakeStream& stream) {
  BRAID_RETURN_IF_ERROR(validate(op));
  BRAID_RETURN_IF_ERROR(op.comm->health());
  return enqueueOnProxy(op, stream.handle());
}

void expectFailedEverywhere(braidComm_t comm, int rank, FakeStream& stream,
                            bool expectStreamError) {
  EXPECT_EQ(stream.synchronize().isOk(), !expectStreamError) << "rank " << rank;
  // A failed stream skips its waits, so it may finish before the proxy has seen the failure;
  // the next call waits for the proxy (as below), a poll of the async error does not.
  waitForDeviceProxy(api::toComm(comm));
  braidResult_t async = braidSuccess;
  EXPECT_EQ(braidCommGetAsyncError(comm, &async), braidSuccess);
  EXPECT_NE(async, braidSuccess) << "rank " << rank << " has no async error";
  int32_t x = 1;
  EXPECT_NE(braidAllReduce(&x, &x, 1, braidInt32, braidSum, comm, nullptr), braidSuccess)
      << "rank " << rank << ": the next call succeeded on a failed communicator";
}

}  // namespace braid::testing
