// braidMemAlloc's memory (base/shareable_memory.h): what the registry finds,
// what it refuses, and a peer's view of a region through pidfd_getfd (this
// process standing in for the peer: it may always take its own descriptors).
#include "base/shareable_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "base/peer_regions.h"
#include "core/executor.h"

namespace braid {
namespace {

int openOwnPidfd() { return static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0)); }

TEST(ShareableMemory, FindsTheRegionHoldingARangeAndNothingElse) {
  void* p = nullptr;
  ASSERT_TRUE(allocateShareable(10000, &p).isOk());
  const long page = sysconf(_SC_PAGESIZE);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % page, 0u);
  auto* bytes = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < 10000; ++i) EXPECT_EQ(bytes[i], 0) << "zeroed";
  const ShareableRange all = findShareable(p, 10000);
  ASSERT_TRUE(all.shareable());
  EXPECT_EQ(all.offset, static_cast<uint64_t>(page)) << "after the header page";
  EXPECT_EQ(all.mapBytes % page, 0u);
  EXPECT_GE(all.mapBytes, 10000u + page);
  const ShareableRange inside = findShareable(bytes + 100, 50);
  EXPECT_EQ(inside.regionId, all.regionId);
  EXPECT_EQ(inside.offset, all.offset + 100);
  EXPECT_FALSE(findShareable(bytes - 1, 10).shareable()) << "starts before the region";
  EXPECT_FALSE(findShareable(bytes, all.mapBytes).shareable()) << "runs past its end";
  int local = 0;
  EXPECT_FALSE(findShareable(&local, sizeof(local)).shareable());
  EXPECT_TRUE(freeShareable(p).isOk());
  EXPECT_FALSE(findShareable(p, 1).shareable()) << "freed";
}

TEST(ShareableMemory, RefusesBadSizesAndPointersItDidNotMake) {
  void* p = reinterpret_cast<void*>(0x1234);
  EXPECT_EQ(allocateShareable(0, &p).code(), Code::kInvalidArgument);
  EXPECT_EQ(allocateShareable(SIZE_MAX, &p).code(), Code::kInvalidArgument);
  EXPECT_EQ(allocateShareable(SIZE_MAX - 4095, &p).code(), Code::kInvalidArgument);
  EXPECT_EQ(p, reinterpret_cast<void*>(0x1234)) << "unchanged";
  int local = 0;
  EXPECT_EQ(freeShareable(&local).code(), Code::kInvalidArgument);
  ASSERT_TRUE(allocateShareable(1, &p).isOk());
  EXPECT_EQ(freeShareable(static_cast<char*>(p) + 1).code(), Code::kInvalidArgument) << "not its start";
  EXPECT_TRUE(freeShareable(p).isOk());
  EXPECT_EQ(freeShareable(p).code(), Code::kInvalidArgument) << "freed twice";
}

TEST(ShareableMemory, APeerMapsTheRegionAndSeesItsWritesAndItsFree) {
  void* p = nullptr;
  ASSERT_TRUE(allocateShareable(3 * 4096, &p).isOk());
  std::memset(p, 0x3c, 3 * 4096);
  const ShareableRange range = findShareable(p, 3 * 4096);
  const int pidfd = openOwnPidfd();
  ASSERT_GE(pidfd, 0);
  const char* base = nullptr;
  size_t bytes = 0;
  ASSERT_TRUE(mapPeerShareable(pidfd, range.regionId, range.fd, &base, &bytes).isOk());
  EXPECT_EQ(bytes, range.mapBytes);
  EXPECT_NE(base, static_cast<const char*>(p) - range.offset) << "a mapping of its own";
  EXPECT_EQ(shareableHeader(base).ownerBase, reinterpret_cast<uintptr_t>(p) - range.offset);
  EXPECT_EQ(std::memcmp(base + range.offset, p, 3 * 4096), 0);
  static_cast<char*>(p)[5000] = 7;
  EXPECT_EQ(base[range.offset + 5000], 7) << "the same pages";
  EXPECT_EQ(shareableHeader(base).freed.load(), 0u);
  EXPECT_TRUE(freeShareable(p).isOk());
  EXPECT_EQ(shareableHeader(base).freed.load(), 1u) << "the reader learns of the free";
  EXPECT_EQ(base[range.offset + 5000], 7) << "and its pages live while it maps them";
  munmap(const_cast<char*>(base), range.mapBytes);
  close(pidfd);
}

TEST(ShareableMemory, ThisKernelLetsPeersMapIt) {
  const Status st = probeShareableMapping();
  EXPECT_TRUE(st.isOk()) << st.message();
}

TEST(ShareableMemory, AnnouncementsThatAreNotTheRegionAreRefused) {
  void* p = nullptr;
  void* q = nullptr;
  ASSERT_TRUE(allocateShareable(4096, &p).isOk());
  ASSERT_TRUE(allocateShareable(8192, &q).isOk());
  const ShareableRange good = findShareable(p, 4096);
  const int pidfd = openOwnPidfd();
  ASSERT_GE(pidfd, 0);
  const char* base = nullptr;
  size_t bytes = 0;
  EXPECT_EQ(mapPeerShareable(pidfd, good.regionId + 1000, good.fd, &base, &bytes).code(),
            Code::kInvalidArgument)
      << "another id";
  EXPECT_EQ(mapPeerShareable(pidfd, good.regionId, findShareable(q, 1).fd, &base, &bytes).code(),
            Code::kInvalidArgument)
      << "another region's descriptor";
  EXPECT_EQ(mapPeerShareable(pidfd, good.regionId, pidfd, &base, &bytes).code(), Code::kInvalidArgument)
      << "a descriptor that is no file";
  EXPECT_EQ(mapPeerShareable(pidfd, good.regionId, 100000, &base, &bytes).code(), Code::kSystemError)
      << "no such descriptor";
  EXPECT_EQ(mapPeerShareable(pidfd, 0, good.fd, &base, &bytes).code(), Code::kInvalidArgument) << "id 0";
  EXPECT_EQ(base, nullptr);
  EXPECT_TRUE(freeShareable(p).isOk());
  EXPECT_TRUE(freeShareable(q).isOk());
  close(pidfd);
}

// PeerRegions (core/peer_regions.h) maps a region once, lets go of it once
// freed, reads nothing of a region that is not the one announced (and still
// maps the next good one), and gives up on a peer it cannot open.
TEST(PeerRegions, MapsOnceReleasesFreedRegionsAndGivesUpOnAPeerItCannotOpen) {
  PeerRegions regions("test");
  void* p = nullptr;
  void* q = nullptr;
  ASSERT_TRUE(allocateShareable(4096, &p).isOk());
  ASSERT_TRUE(allocateShareable(8192, &q).isOk());
  static_cast<char*>(p)[10] = 42;
  const pid_t me = getpid();
  const ShareableRange rp = findShareable(p, 1);
  auto at = [](void* base, size_t off) { return reinterpret_cast<uintptr_t>(base) + off; };
  const char* seen = regions.find(me, rp.regionId, rp.fd, at(p, 10), 1);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(*seen, 42);
  EXPECT_EQ(regions.find(me, rp.regionId, rp.fd, at(p, 10), 1), seen) << "the mapping made before";
  EXPECT_EQ(regions.find(me, rp.regionId, rp.fd, at(p, 0), 4096), seen - 10) << "all of it";
  EXPECT_EQ(regions.mapped(), 1u);
  // Ranges the region does not hold all of: nothing is read.
  EXPECT_EQ(regions.find(me, rp.regionId, rp.fd, at(p, 1), 4096), nullptr) << "past its end";
  EXPECT_EQ(regions.find(me, rp.regionId, rp.fd, at(p, 0) - 8, 8), nullptr) << "its header";
  EXPECT_EQ(regions.find(me, rp.regionId, rp.fd, at(p, 0) + (uint64_t{1} << 40), 1), nullptr) << "elsewhere";
  const ShareableRange rq = findShareable(q, 1);
  EXPECT_EQ(regions.find(me, rq.regionId + 77, rq.fd, at(q, 0), 1), nullptr) << "not the region announced";
  EXPECT_TRUE(freeShareable(p).isOk());
  ASSERT_NE(regions.find(me, rq.regionId, rq.fd, at(q, 0), 8192), nullptr)
      << "a bad announcement ends nothing";
  EXPECT_EQ(regions.mapped(), 1u) << "the freed region let go";
  EXPECT_EQ(regions.find(me, 0, rq.fd, at(q, 0), 1), nullptr) << "not shareable";
  EXPECT_TRUE(freeShareable(q).isOk());

  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);  // its pid now names nobody
  void* r = nullptr;
  ASSERT_TRUE(allocateShareable(4096, &r).isOk());
  const ShareableRange rr = findShareable(r, 1);
  EXPECT_EQ(regions.find(child, rr.regionId, rr.fd, at(r, 0), 1), nullptr);
  EXPECT_EQ(regions.find(child, rr.regionId, rr.fd, at(r, 0), 1), nullptr) << "given up, not retried";
  EXPECT_NE(regions.find(me, rr.regionId, rr.fd, at(r, 0), 1), nullptr) << "other peers go on";
  EXPECT_TRUE(freeShareable(r).isOk());
}

// The executor's blocks (core/executor.h) come from shareable memory once
// the communicator shares them with its host, so that a peer reads what is
// sent from them through a mapping; a block that grows is remade, and the
// old region freed.
TEST(ExecutorMemoryBlocks, AreShareableWhenSharedWithTheHost) {
  core::ExecutorMemory plain;
  char* p = plain.scratch(0, 100000);
  EXPECT_FALSE(findShareable(p, 100000).shareable());
  core::ExecutorMemory shared;
  shared.shareBlocksWithTheHost();
  char* s = shared.scratch(0, 100000);
  const ShareableRange first = findShareable(s, 100000);
  ASSERT_TRUE(first.shareable());
  std::memset(s, 7, 100000);
  EXPECT_EQ(shared.scratch(0, 5000), s) << "big enough: kept";
  char* grown = shared.scratch(0, 300000);
  EXPECT_TRUE(findShareable(grown, 300000).shareable());
  EXPECT_NE(findShareable(grown, 1).regionId, first.regionId);
  EXPECT_FALSE(findShareable(s, 1).shareable() && findShareable(s, 1).regionId == first.regionId) << "freed";
  char* staging = shared.staging(3, 64);
  EXPECT_TRUE(findShareable(staging, 64).shareable());
}

}  // namespace
}  // namespace braid
