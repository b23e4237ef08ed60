// braidMemAlloc's memory (base/shareable_memory.h): what the registry finds,
// what it refuses, and a peer's view of a region through pidfd_getfd (this
// process standing in for the peer: it may always take its own descriptors).
#include "base/shareable_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

#include "base/cross_memory.h"
#include "base/peer_regions.h"
#include "core/executor.h"

namespace braid {
namespace {

int openOwnPidfd() { return static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0)); }

// This process standing in for a peer: its own shareable file, taken as a
// peer takes it.
int takeOwnFile(int fd) {
  const int pidfd = openOwnPidfd();
  int file = -1;
  EXPECT_TRUE(takePeerShareableFile(pidfd, fd, &file).isOk());
  close(pidfd);
  return file;
}

TEST(ShareableMemory, FindsTheRegionHoldingARangeAndNothingElse) {
  void* p = nullptr;
  ASSERT_TRUE(allocateShareable(10000, &p).isOk());
  const size_t page = pageBytes();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % page, 0u);
  auto* bytes = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < 10000; ++i) EXPECT_EQ(bytes[i], 0) << "zeroed";
  const ShareableRange all = findShareable(p, 10000);
  ASSERT_TRUE(all.shareable());
  EXPECT_GE(all.fd, 0);
  const ShareableRange inside = findShareable(bytes + 100, 50);
  EXPECT_EQ(inside.regionId, all.regionId);
  EXPECT_EQ(inside.fd, all.fd);
  EXPECT_TRUE(findShareable(bytes, 3 * page).shareable()) << "the whole pages are the region's";
  EXPECT_FALSE(findShareable(bytes - 1, 10).shareable()) << "starts before the region";
  EXPECT_FALSE(findShareable(bytes, 3 * page + 1).shareable()) << "runs past its end";
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

// Every allocation lives in the one file: a process that allocates many
// buffers holds one descriptor, and ids (offsets) are never given out twice.
TEST(ShareableMemory, AllocationsShareOneDescriptorAndNeverReuseAnId) {
  std::vector<void*> ps(3000);
  for (void*& p : ps) ASSERT_TRUE(allocateShareable(64, &p).isOk());
  const int fd = findShareable(ps[0], 64).fd;
  std::set<uint64_t> ids;
  for (void* p : ps) {
    EXPECT_EQ(findShareable(p, 64).fd, fd);
    ids.insert(findShareable(p, 64).regionId);
  }
  for (void* p : ps) ASSERT_TRUE(freeShareable(p).isOk());
  void* again = nullptr;
  ASSERT_TRUE(allocateShareable(64, &again).isOk());
  EXPECT_EQ(ids.count(findShareable(again, 64).regionId), 0u) << "a fresh id after the frees";
  EXPECT_EQ(ids.size(), ps.size());
  EXPECT_TRUE(freeShareable(again).isOk());
}

// Descriptors of this process that name a shareable file (its own, or a
// peer's it took).
int shareableFilesHeld() {
  int held = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(entry.path(), ec);
    held += !ec && target.string().find("braid-shareable") != std::string::npos;
  }
  return held;
}

// The file lives while a region does: a process that frees all of its
// shareable memory (a destroyed communicator's blocks included) holds no
// descriptor for it. Ids go on in the next file.
TEST(ShareableMemory, TheFileClosesWithItsLastRegionAndIdsGoOnInTheNext) {
  ASSERT_EQ(shareableFilesHeld(), 0) << "another test left shareable memory allocated";
  void* p = nullptr;
  void* q = nullptr;
  ASSERT_TRUE(allocateShareable(4096, &p).isOk());
  ASSERT_TRUE(allocateShareable(4096, &q).isOk());
  EXPECT_EQ(shareableFilesHeld(), 1);
  const uint64_t last = std::max(findShareable(p, 1).regionId, findShareable(q, 1).regionId);
  EXPECT_TRUE(freeShareable(p).isOk());
  EXPECT_EQ(shareableFilesHeld(), 1) << "q still lives";
  EXPECT_TRUE(freeShareable(q).isOk());
  EXPECT_EQ(shareableFilesHeld(), 0);
  void* r = nullptr;
  ASSERT_TRUE(allocateShareable(4096, &r).isOk());
  EXPECT_EQ(shareableFilesHeld(), 1);
  EXPECT_GT(findShareable(r, 1).regionId, last) << "no id again, in the next file either";
  EXPECT_TRUE(freeShareable(r).isOk());
}

TEST(ShareableMemory, APeerMapsTheRegionSeesItsWritesAndLosesItsPagesAtTheFree) {
  void* p = nullptr;
  ASSERT_TRUE(allocateShareable(3 * 4096, &p).isOk());
  std::memset(p, 0x3c, 3 * 4096);
  const ShareableRange range = findShareable(p, 3 * 4096);
  const int file = takeOwnFile(range.fd);
  ASSERT_GE(file, 0);
  PeerMapping m;
  ASSERT_TRUE(mapPeerShareable(file, range.regionId, &m).isOk());
  const size_t page = pageBytes();
  EXPECT_EQ(m.bytes, 3 * 4096 + page);
  EXPECT_EQ(m.ownerBase, reinterpret_cast<uintptr_t>(p) - page);
  EXPECT_NE(m.base + page, static_cast<const char*>(p)) << "a mapping of its own";
  EXPECT_EQ(std::memcmp(m.base + page, p, 3 * 4096), 0);
  static_cast<char*>(p)[5000] = 7;
  EXPECT_EQ(m.base[page + 5000], 7) << "the same pages";
  EXPECT_FALSE(peerShareableFreed(file, range.regionId));
  struct stat before {
  }, after{};
  ASSERT_EQ(fstat(file, &before), 0);
  EXPECT_TRUE(freeShareable(p).isOk());
  EXPECT_TRUE(peerShareableFreed(file, range.regionId)) << "the reader learns of the free";
  ASSERT_EQ(fstat(file, &after), 0);  // st_blocks: 512-byte units, of every region in the file
  EXPECT_EQ(before.st_blocks - after.st_blocks, static_cast<blkcnt_t>((3 * 4096 + page) / 512))
      << "the memory went back at the free, though a peer maps it";
  EXPECT_EQ(m.base[page + 5000], 0) << "it reads zeros now";
  munmap(const_cast<char*>(m.base), m.bytes);
  PeerMapping again;
  EXPECT_EQ(mapPeerShareable(file, range.regionId, &again).code(), Code::kInvalidArgument) << "freed";
  close(file);
}

TEST(ShareableMemory, ThisKernelLetsPeersMapIt) {
  const Status st = probeShareableMapping();
  EXPECT_TRUE(st.isOk()) << st.message();
}

TEST(ShareableMemory, AnnouncementsThatAreNotARegionAreRefused) {
  void* p = nullptr;
  ASSERT_TRUE(allocateShareable(4096, &p).isOk());
  const ShareableRange good = findShareable(p, 4096);
  const int pidfd = openOwnPidfd();
  ASSERT_GE(pidfd, 0);
  int file = -1;
  EXPECT_EQ(takePeerShareableFile(pidfd, pidfd, &file).code(), Code::kInvalidArgument)
      << "a descriptor that is no file";
  EXPECT_EQ(takePeerShareableFile(pidfd, 100000, &file).code(), Code::kSystemError) << "no such descriptor";
  EXPECT_EQ(takePeerShareableFile(pidfd, -1, &file).code(), Code::kInvalidArgument);
  EXPECT_EQ(file, -1);
  ASSERT_TRUE(takePeerShareableFile(pidfd, good.fd, &file).isOk());
  PeerMapping m;
  EXPECT_EQ(mapPeerShareable(file, good.regionId + 1, &m).code(), Code::kInvalidArgument)
      << "inside a region";
  EXPECT_EQ(mapPeerShareable(file, good.regionId + 100000, &m).code(), Code::kInvalidArgument)
      << "past the file";
  EXPECT_EQ(mapPeerShareable(file, 0, &m).code(), Code::kInvalidArgument) << "id 0";
  EXPECT_EQ(mapPeerShareable(file, UINT64_MAX, &m).code(), Code::kInvalidArgument)
      << "an id past all offsets";
  EXPECT_EQ(m.base, nullptr);
  EXPECT_TRUE(freeShareable(p).isOk());
  close(file);
  close(pidfd);
}

// PeerRegions (base/peer_regions.h) maps a region once, lets go of it once
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
  EXPECT_EQ(regions.find(me, rq.regionId + 1, rq.fd, at(q, 0), 1), nullptr) << "not the region announced";
  EXPECT_TRUE(freeShareable(p).isOk());
  ASSERT_NE(regions.find(me, rq.regionId, rq.fd, at(q, 0), 8192), nullptr)
      << "a bad announcement ends nothing";
  EXPECT_EQ(regions.mapped(), 1u) << "the freed region let go";
  EXPECT_EQ(regions.files(), 1u) << "one file for both regions";
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
  EXPECT_EQ(regions.files(), 1u);
  EXPECT_TRUE(freeShareable(r).isOk());
}

// A peer that freed all its memory and allocated again has another file
// (maybe under the same descriptor number): the reader follows it there.
TEST(PeerRegions, FollowsAPeerIntoItsNextFile) {
  PeerRegions regions("test");
  const pid_t me = getpid();
  auto at = [](void* base) { return reinterpret_cast<uintptr_t>(base); };
  void* p = nullptr;
  ASSERT_TRUE(allocateShareable(4096, &p).isOk());
  const ShareableRange rp = findShareable(p, 1);
  ASSERT_NE(regions.find(me, rp.regionId, rp.fd, at(p), 4096), nullptr);
  EXPECT_TRUE(freeShareable(p).isOk());  // its file closes
  void* q = nullptr;
  ASSERT_TRUE(allocateShareable(4096, &q).isOk());
  static_cast<char*>(q)[7] = 99;
  const ShareableRange rq = findShareable(q, 1);
  const char* seen = regions.find(me, rq.regionId, rq.fd, at(q), 4096);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen[7], 99);
  EXPECT_EQ(regions.mapped(), 1u) << "the old file's mapping let go";
  EXPECT_EQ(rq.fd, rp.fd) << "the lowest free number, as this test expects";
  EXPECT_EQ(regions.files(), 1u) << "the same number's file taken again, in place of the old";
  EXPECT_TRUE(freeShareable(q).isOk());
}

// A peer's region is mapped read-only until a write is wanted; then the
// same mapping takes writes, which the owner sees, but for its header page.
// (process_vm_writev into this process honours the pages' protection, so
// it tells a read-only page without a fault.)
TEST(PeerRegions, MapsForWritingOnlyWhenAWriteIsWanted) {
  PeerRegions regions("test");
  const pid_t me = getpid();
  void* p = nullptr;
  ASSERT_TRUE(allocateShareable(8192, &p).isOk());
  const ShareableRange rp = findShareable(p, 1);
  const auto at = reinterpret_cast<uintptr_t>(p);
  const char* seen = regions.find(me, rp.regionId, rp.fd, at, 8192);
  ASSERT_NE(seen, nullptr);
  const char byte = 17;
  EXPECT_EQ(writeProcessMemory(me, const_cast<char*>(seen) + 100, &byte, 1), EFAULT) << "read-only";
  char* writable = regions.findWritable(me, rp.regionId, rp.fd, at + 100, 10);
  ASSERT_EQ(writable, seen + 100) << "the same mapping, made writable";
  EXPECT_EQ(regions.made(), 1u);
  writable[0] = 23;
  EXPECT_EQ(static_cast<char*>(p)[100], 23) << "the owner sees the write";
  EXPECT_EQ(writeProcessMemory(me, writable + 1, &byte, 1), 0);
  EXPECT_EQ(static_cast<char*>(p)[101], byte);
  EXPECT_EQ(writeProcessMemory(me, const_cast<char*>(seen) - 8, &byte, 1), EFAULT) << "the header page";
  EXPECT_EQ(regions.findWritable(me, rp.regionId, rp.fd, at - 8, 8), nullptr) << "the header";
  EXPECT_EQ(regions.findWritable(me, rp.regionId, rp.fd, at + 8000, 500), nullptr) << "past its end";
  EXPECT_EQ(regions.findWritable(me, 0, rp.fd, at, 1), nullptr) << "not shareable";
  EXPECT_TRUE(freeShareable(p).isOk());
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
