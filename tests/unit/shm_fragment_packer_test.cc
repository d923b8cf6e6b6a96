// Tests of the shm FIFO's fragment packing (transports/shm/fragment_packer.h, fifo.h): where
// the sender puts each fragment in the data area, and a link built on two in-memory FIFOs
// that shows small messages travelling as contiguous small fragments, data surviving the cut
// at the end of the area (plain and reduced), and a header that points outside the area
// turned into an error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "core/kernels/reduce.h"
#include "transports/shm/fragment_packer.h"
#include "transports/shm/shm_connector.h"
#include "transports/shm/shm_segment.h"

namespace braid::transport::shm {
namespace {

constexpr size_t kArea = 4096;

// Reserves and commits fragment `tail` of `want` bytes; it must fit.
FragmentPacker::Place put(FragmentPacker& packer, uint64_t tail, uint64_t head, size_t want) {
  FragmentPacker::Place place = packer.reserve(tail, head, want);
  EXPECT_TRUE(place.fits) << "fragment " << tail;
  packer.commit(tail, place);
  return place;
}

TEST(FragmentPacker, FragmentsLieOneAfterTheOtherOnCacheLines) {
  FragmentPacker packer(16, kArea);
  EXPECT_EQ(put(packer, 0, 0, 1024).offset, 0u);
  EXPECT_EQ(put(packer, 1, 0, 1000).offset, 1024u);
  // 1000 bytes took 16 lines: the next fragment starts on a line of its own.
  EXPECT_EQ(put(packer, 2, 0, 64).offset, 2048u);
  // A fragment with no data bytes (a line or rendezvous message) takes no room.
  EXPECT_EQ(put(packer, 3, 0, 0).bytes, 0u);
  EXPECT_EQ(put(packer, 4, 0, 512).offset, 2112u);
}

TEST(FragmentPacker, AFragmentIsCutAtTheEndOfTheAreaAndTheNextStartsAtZero) {
  FragmentPacker packer(16, kArea);
  put(packer, 0, 0, 3072);
  FragmentPacker::Place cut = put(packer, 1, 1, 2048);
  EXPECT_EQ(cut.offset, 3072u);
  EXPECT_EQ(cut.bytes, 1024u);  // what is left of the area, a whole number of lines
  FragmentPacker::Place next = put(packer, 2, 2, 1024);
  EXPECT_EQ(next.offset, 0u);
  EXPECT_EQ(next.bytes, 1024u);
}

TEST(FragmentPacker, WaitsForTheWholeFragmentToBeFree) {
  FragmentPacker packer(16, kArea);
  put(packer, 0, 0, 1024);
  put(packer, 1, 0, 2048);
  put(packer, 2, 0, 1024);  // the area is full
  EXPECT_FALSE(packer.reserve(3, 0, 64).fits);
  // Fragment 0 consumed: 1 KiB is free, 2 KiB wanted: no fit (not a fragment cut down to
  // what is free), while 1 KiB fits.
  EXPECT_FALSE(packer.reserve(3, 1, 2048).fits);
  EXPECT_TRUE(packer.reserve(3, 1, 1024).fits);
  // Once fragment 1 is consumed too, 2 KiB fit at the start of the area.
  FragmentPacker::Place place = packer.reserve(3, 2, 2048);
  EXPECT_TRUE(place.fits);
  EXPECT_EQ(place.offset, 0u);
  EXPECT_EQ(place.bytes, 2048u);
}

TEST(FragmentPacker, WaitsForAFreeHeader) {
  FragmentPacker packer(4, kArea);
  for (uint64_t f = 0; f < 4; ++f) put(packer, f, 0, 0);
  EXPECT_FALSE(packer.reserve(4, 0, 0).fits);
  EXPECT_TRUE(packer.reserve(4, 1, 64).fits);
}

// A receiver that consumes fragments in order at random moments; the sender packs fragments
// of random sizes. No fragment may overlap one still in flight, and every one lies inside
// the area.
TEST(FragmentPacker, InFlightFragmentsNeverOverlap) {
  struct Span {
    size_t offset, bytes;
  };
  std::mt19937 random(7);
  for (uint64_t headers : {1u, 3u, 8u, 64u}) {
    FragmentPacker packer(headers, kArea);
    std::deque<Span> inFlight;
    uint64_t head = 0, tail = 0;
    for (int step = 0; step < 20000; ++step) {
      if (!inFlight.empty() && random() % 3 == 0) {
        inFlight.pop_front();
        ++head;
        continue;
      }
      const size_t want = random() % 4 == 0 ? 0 : 1 + random() % kArea;
      FragmentPacker::Place place = packer.reserve(tail, head, want);
      if (!place.fits) {
        ASSERT_FALSE(inFlight.empty()) << "an empty FIFO must take any fragment";
        continue;
      }
      ASSERT_LE(place.offset + place.bytes, kArea);
      ASSERT_EQ(place.offset % 64, 0u);
      ASSERT_GE(place.bytes, std::min<size_t>(want, 64));
      for (const Span& other : inFlight) {
        const bool apart = place.offset + place.bytes <= other.offset ||
                           other.offset + other.bytes <= place.offset;
        ASSERT_TRUE(apart || place.bytes == 0 || other.bytes == 0)
            << "fragment " << tail << " at " << place.offset << " overlaps one at " << other.offset;
      }
      packer.commit(tail++, place);
      inFlight.push_back({place.offset, place.bytes});
      ASSERT_LE(inFlight.size(), headers);
    }
  }
}

// Two connectors joined by two FIFOs in this process's memory, laid out as the transport
// lays out a segment (4 KiB slots x 4: small fragments of 1 KiB below 32 KiB messages).
class InMemoryLink {
 public:
  InMemoryLink() {
    layout_ = *SegmentLayout::compute(2, 4096, 4);
    for (auto& segment : segments_) {
      segment.reset(static_cast<uint8_t*>(std::aligned_alloc(4096, layout_.totalBytes)));
      new (SegmentLayout::control(segment.get())) ControlBlock();
    }
    for (int owner = 0; owner < 2; ++owner) {
      new (inbound(owner).counters) FifoCounters();
    }
    for (int rank = 0; rank < 2; ++rank) {
      connectors_[rank] = std::make_unique<ShmConnector>(
          rank, 1 - rank, inbound(rank), inbound(1 - rank),
          SegmentLayout::control(segments_[rank].get()),
          SegmentLayout::control(segments_[1 - rank].get()), SingleCopyLink{});
    }
  }

  // The FIFO that `owner` receives from.
  FifoView inbound(int owner) const {
    return layout_.fifo(segments_[owner].get(), owner, 1 - owner);
  }
  ShmConnector& connector(int rank) { return *connectors_[rank]; }

  // Progresses both ends until every request is done or nothing moves any more.
  Status drive(const std::vector<Request*>& reqs) {
    for (int idle = 0; idle < 2;) {
      bool moved0 = false, moved1 = false;
      BRAID_RETURN_IF_ERROR(connectors_[0]->progress(&moved0));
      BRAID_RETURN_IF_ERROR(connectors_[1]->progress(&moved1));
      idle = moved0 || moved1 ? 0 : idle + 1;
    }
    for (Request* req : reqs) {
      if (!req->done) return Status(braidInternalError, "a request is not done");
    }
    return Status::ok();
  }

  const SegmentLayout& layout() const { return layout_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  SegmentLayout layout_;
  std::unique_ptr<uint8_t, Free> segments_[2];
  std::unique_ptr<ShmConnector> connectors_[2];
};

TEST(ShmFragmentPacking, ASmallMessageTravelsInContiguousSmallFragments) {
  InMemoryLink link;
  const FifoView fifo = link.inbound(1);  // rank 0 -> rank 1
  ASSERT_EQ(fifo.smallFragmentBytes, 1024u);
  ASSERT_EQ(fifo.smallMessageBytes, 32768u);
  ASSERT_EQ(fifo.nheaders, 16u);
  std::vector<uint8_t> src(3000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  Request send;
  ASSERT_TRUE(link.connector(0).postSend(src.data(), src.size(), &send).isOk());
  bool moved = false;
  ASSERT_TRUE(link.connector(0).progress(&moved).isOk());
  ASSERT_TRUE(send.done);
  // Three fragments (1024, 1024, 952 bytes) one after the other from offset 0.
  for (uint64_t f = 0; f < 3; ++f) {
    const SlotHeader& header = fifo.header(f);
    EXPECT_EQ(header.sequence.load(), f + 1);
    EXPECT_EQ(header.kind, SlotKind::kInline);
    EXPECT_EQ(header.dataOffset, f * 1024);
    EXPECT_EQ(header.fragmentBytes, f < 2 ? 1024u : 952u);
  }
  EXPECT_EQ(std::memcmp(fifo.data, src.data(), src.size()), 0);
}

TEST(ShmFragmentPacking, MessagesAcrossTheEndOfTheAreaArriveWhole) {
  InMemoryLink link;
  // Sizes that move the cursor off slot boundaries, so that fragments are cut at the end of
  // the 16 KiB area, mixed with large (4 KiB fragments) and header-only messages.
  const std::vector<size_t> sizes = {3000, 40, 5000,  0,     70000, 1,  12345, 4096,
                                     999,  64, 31000, 32768, 100,   41, 20000, 7};
  std::vector<std::vector<float>> src, dst, accum;
  std::vector<Request> sends(2 * sizes.size()), recvs(2 * sizes.size());
  std::vector<Request*> all;
  for (size_t k = 0; k < 2 * sizes.size(); ++k) {
    const size_t bytes = sizes[k % sizes.size()] / 4 * 4;
    const bool reduce = k >= sizes.size();
    src.emplace_back(bytes / 4);
    dst.emplace_back(bytes / 4, -1.0f);
    accum.emplace_back(bytes / 4);
    for (size_t i = 0; i < bytes / 4; ++i) {
      src[k][i] = static_cast<float>(k * 1000 + i % 977);
      accum[k][i] = static_cast<float>(i % 13);
    }
    ASSERT_TRUE(link.connector(0).postSend(src[k].data(), bytes, &sends[k]).isOk());
    RecvSink sink{reinterpret_cast<uint8_t*>(dst[k].data())};
    if (reduce) {
      sink.accum = reinterpret_cast<const uint8_t*>(accum[k].data());
      sink.reduce = coll::reducerFor(braidFloat32, braidSum);
      sink.elemSize = 4;
    }
    ASSERT_TRUE(link.connector(1).postRecv(sink, bytes, &recvs[k]).isOk());
    all.push_back(&sends[k]);
    all.push_back(&recvs[k]);
  }
  Status status = link.drive(all);
  ASSERT_TRUE(status.isOk()) << status.message();
  for (size_t k = 0; k < dst.size(); ++k) {
    for (size_t i = 0; i < dst[k].size(); ++i) {
      const float want = k >= sizes.size() ? src[k][i] + accum[k][i] : src[k][i];
      ASSERT_EQ(dst[k][i], want) << "message " << k << " element " << i;
    }
  }
}

TEST(ShmFragmentPacking, AFragmentOutsideTheAreaIsAnErrorNotARead) {
  InMemoryLink link;
  std::vector<uint8_t> src(2000, 5), dst(2000, 0);
  Request send, recv;
  ASSERT_TRUE(link.connector(0).postSend(src.data(), src.size(), &send).isOk());
  bool moved = false;
  ASSERT_TRUE(link.connector(0).progress(&moved).isOk());
  // A peer that writes nonsense into the header: the offset lies past the data area.
  link.inbound(1).header(0).dataOffset = link.inbound(1).dataBytes() - 512;
  ASSERT_TRUE(link.connector(1).postRecv({dst.data()}, dst.size(), &recv).isOk());
  Status status = link.connector(1).progress(&moved);
  EXPECT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("corrupt fragment"), std::string::npos) << status.message();
  EXPECT_FALSE(recv.done);
}

}  // namespace
}  // namespace braid::transport::shm
