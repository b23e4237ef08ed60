// Segments are mapped populated (every page resident from the start, so a
// ring's first pass pays no page faults) up to the process's budget, and a
// mapping released gives its share back.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "transports/net/socket.h"
#include "transports/shm/segment.h"

namespace braid::transport::testing {
namespace {

constexpr size_t kRing = size_t{1} << 20;

// Pages of the mapping that are resident (mincore).
size_t residentPages(const shm::Mapping& m) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((m.size() + page - 1) / page);
  if (mincore(m.get(), m.size(), in.data()) != 0) return 0;
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

size_t pages(size_t bytes) { return bytes / static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

TEST(ShmSegmentPopulate, WithinTheBudgetEveryPageIsResidentBeyondItNone) {
  std::vector<net::Fd> fds(80);
  std::vector<shm::Mapping> maps(80);
  size_t populated = 0, left = 0;
  for (size_t i = 0; i < maps.size(); ++i) {
    ASSERT_TRUE(shm::createSegment(kRing, &fds[i], &maps[i]).isOk()) << i;
    const size_t resident = residentPages(maps[i]);
    if (i == 0) {
      ASSERT_EQ(resident, pages(kRing)) << "a fresh process's first segment is populated";
    }
    EXPECT_TRUE(resident == pages(kRing) || resident == 0) << "segment " << i << ": " << resident << " pages";
    (resident == pages(kRing) ? populated : left)++;
  }
  // 80 MiB asked for, 64 MiB of budget (less what this process holds already).
  EXPECT_GE(populated, 1u);
  EXPECT_LE(populated, 64u);
  EXPECT_GE(left, 16u);
  // A released share is taken by the next segment.
  maps.front().reset();
  fds.front() = net::Fd();
  shm::Mapping again;
  net::Fd fd;
  ASSERT_TRUE(shm::createSegment(kRing, &fd, &again).isOk());
  EXPECT_EQ(residentPages(again), pages(kRing)) << "the budget was not given back";
}

// Writing every page (through a second mapping, as a peer would, and from
// any member's share on) leaves every byte as it was, the last partial
// page's included.
TEST(ShmSegmentPopulate, WritingEveryPageChangesNoByte) {
  const size_t bytes = 3 * static_cast<size_t>(sysconf(_SC_PAGESIZE)) + 100;
  net::Fd fd;
  shm::Mapping mine, theirs;
  ASSERT_TRUE(shm::createSegment(bytes, &fd, &mine).isOk());
  auto* data = static_cast<unsigned char*>(mine.get());
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 7 + 3);
  ASSERT_TRUE(shm::mapSegment(fd.get(), bytes, &theirs).isOk());
  shm::writeEveryPage(theirs, 2, 3);
  shm::writeEveryPage(mine);
  shm::writeEveryPage(mine, 63, 64);  // starts at the last page
  size_t changed = 0;
  for (size_t i = 0; i < bytes; ++i) changed += data[i] != static_cast<unsigned char>(i * 7 + 3);
  EXPECT_EQ(changed, 0u);
  EXPECT_EQ(std::memcmp(mine.get(), theirs.get(), bytes), 0);
}

}  // namespace
}  // namespace braid::transport::testing
