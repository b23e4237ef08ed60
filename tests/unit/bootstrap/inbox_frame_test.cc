// InboxFrames: frames reassembled from any split of the stream, sizes bounded
// before allocation, memory following the bytes that arrived.
#include "core/bootstrap/inbox_frame.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/bootstrap/wire.h"

namespace {

using braid::bootstrap::InboxFrames;

std::vector<uint8_t> frame(uint32_t tag, uint64_t size, uint8_t fill) {
  std::vector<uint8_t> out;
  braid::bootstrap::wire::Writer w(&out);
  w.u32(tag);
  w.u64(size);
  out.resize(out.size() + size, fill);
  return out;
}

// Feeds `bytes` in pieces of at most `piece` bytes; collects finished frames.
braid::Status feed(InboxFrames& f, const std::vector<uint8_t>& bytes, size_t piece,
                   std::vector<InboxFrames::Frame>* out) {
  size_t at = 0;
  while (at < bytes.size()) {
    size_t room = 0;
    uint8_t* p = f.next(&room);
    EXPECT_GT(room, 0u);
    size_t n = std::min({room, piece, bytes.size() - at});
    std::memcpy(p, bytes.data() + at, n);
    at += n;
    braid::Status st = f.advance(n);
    if (!st.isOk()) return st;
    while (f.ready()) out->push_back(f.take());
  }
  return braid::Status::ok();
}

TEST(InboxFrames, ReassemblesAnySplit) {
  std::vector<uint8_t> stream = frame(1, 5, 0xa1);
  for (uint8_t b : frame(2, 0, 0)) stream.push_back(b);
  for (uint8_t b : frame(3, 200000, 0x5c)) stream.push_back(b);
  for (size_t piece : {size_t{1}, size_t{7}, size_t{12}, size_t{4096}, size_t{1} << 20}) {
    InboxFrames f;
    std::vector<InboxFrames::Frame> got;
    ASSERT_TRUE(feed(f, stream, piece, &got).isOk()) << piece;
    ASSERT_EQ(got.size(), 3u) << piece;
    EXPECT_EQ(got[0].tag, 1u);
    EXPECT_EQ(got[0].bytes, std::vector<uint8_t>(5, 0xa1));
    EXPECT_EQ(got[1].tag, 2u);
    EXPECT_TRUE(got[1].bytes.empty());
    EXPECT_EQ(got[2].tag, 3u);
    EXPECT_EQ(got[2].bytes, std::vector<uint8_t>(200000, 0x5c));
  }
}

TEST(InboxFrames, RefusesOversizedHeaderBeforeAllocating) {
  for (uint64_t size : {InboxFrames::kMaxMessageBytes + 1, uint64_t{1} << 32, ~uint64_t{0}}) {
    InboxFrames f;
    std::vector<InboxFrames::Frame> got;
    std::vector<uint8_t> header = frame(7, 0, 0);
    braid::bootstrap::wire::Writer w(&header);
    header.resize(4);
    w.u64(size);
    braid::Status st = feed(f, header, 12, &got);
    EXPECT_EQ(st.code(), braid::Code::kRemoteError) << size;
    EXPECT_NE(st.message().find("malformed frame"), std::string::npos) << st.message();
    EXPECT_EQ(f.bufferedCapacity(), 0u);
  }
}

TEST(InboxFrames, MemoryFollowsArrivedBytes) {
  // A frame at the limit whose sender stops after a few bytes holds 64 KiB, not 64 MiB.
  InboxFrames f;
  std::vector<InboxFrames::Frame> got;
  std::vector<uint8_t> head = frame(1, 0, 0);
  head.resize(4);
  braid::bootstrap::wire::Writer w(&head);
  w.u64(InboxFrames::kMaxMessageBytes);
  head.resize(head.size() + 100, 1);
  ASSERT_TRUE(feed(f, head, 1 << 20, &got).isOk());
  EXPECT_TRUE(got.empty());
  EXPECT_LE(f.bufferedCapacity(), size_t{64} << 10);
}

}  // namespace
