// Communicators of several sizes form, and their ranks can message each other.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "core/bootstrap/host_id.h"
#include "test_util.h"

namespace braid::bootstrap {
namespace {

using testing::contains;
using testing::joinAll;
using testing::onThreads;
using testing::ranksOf;

constexpr int kTimeoutMs = 10000;

std::vector<std::unique_ptr<Bootstrap>> formOrFail(int nranks, UniqueId* idOut = nullptr) {
  UniqueId id;
  EXPECT_TRUE(startRoot("", &id).isOk());
  if (idOut) *idOut = id;
  auto joined = joinAll(id, ranksOf(nranks), kTimeoutMs);
  std::vector<std::unique_ptr<Bootstrap>> boots;
  for (int r = 0; r < nranks; ++r) {
    EXPECT_TRUE(joined[r].status.isOk()) << "rank " << r << ": " << joined[r].status.message();
    boots.push_back(std::move(joined[r].boot));
  }
  return boots;
}

class Formation : public ::testing::TestWithParam<int> {};

TEST_P(Formation, AllGatherSendRecvBarrier) {
  const int n = GetParam();
  UniqueId id;
  auto boots = formOrFail(n, &id);
  ASSERT_EQ(static_cast<int>(boots.size()), n);
  for (const auto& b : boots) ASSERT_NE(b, nullptr);

  onThreads(n, [&](int r) {
    Bootstrap& b = *boots[r];
    EXPECT_EQ(b.rank(), r);
    EXPECT_EQ(b.nranks(), n);
    EXPECT_EQ(b.secret(), id.secret);
    for (int p = 0; p < n; ++p) EXPECT_EQ(b.hostId(p), localHostId());

    // allGather twice, with different sizes, to check successive calls stay apart.
    for (size_t per : {size_t{24}, size_t{5}}) {
      std::vector<uint8_t> slots(per * n, 0);
      for (size_t i = 0; i < per; ++i) slots[r * per + i] = static_cast<uint8_t>(r * 31 + i + per);
      ASSERT_TRUE(b.allGather(slots.data(), per).isOk());
      for (int p = 0; p < n; ++p)
        for (size_t i = 0; i < per; ++i)
          ASSERT_EQ(slots[p * per + i], static_cast<uint8_t>(p * 31 + i + per)) << "slot " << p;
    }

    // Two tags to the next rank; the previous rank receives them in the other
    // order, so the first must wait in the inbox.
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    int a = 1000 + r, c = 2000 + r;
    ASSERT_TRUE(b.send(next, 5, &a, sizeof(a)).isOk());
    ASSERT_TRUE(b.send(next, 6, &c, sizeof(c)).isOk());
    int gotC = 0, gotA = 0;
    ASSERT_TRUE(b.recv(prev, 6, &gotC, sizeof(gotC)).isOk());
    ASSERT_TRUE(b.recv(prev, 5, &gotA, sizeof(gotA)).isOk());
    EXPECT_EQ(gotA, 1000 + prev);
    EXPECT_EQ(gotC, 2000 + prev);

    for (int i = 0; i < 3; ++i) ASSERT_TRUE(b.barrier().isOk());
  });
}

INSTANTIATE_TEST_SUITE_P(Sizes, Formation, ::testing::Values(1, 2, 3, 5, 8));

TEST(Bootstrap, LargeSimultaneousSendsDoNotDeadlock) {
  auto boots = formOrFail(2);
  ASSERT_EQ(boots.size(), 2u);
  const size_t bytes = 8 << 20;  // far beyond socket buffers
  onThreads(2, [&](int r) {
    std::vector<uint8_t> out(bytes), in(bytes);
    std::iota(out.begin(), out.end(), static_cast<uint8_t>(r));
    ASSERT_TRUE(boots[r]->send(1 - r, 1, out.data(), bytes).isOk());
    ASSERT_TRUE(boots[r]->recv(1 - r, 1, in.data(), bytes).isOk());
    EXPECT_EQ(in[0], static_cast<uint8_t>(1 - r));
    EXPECT_EQ(in[bytes - 1], static_cast<uint8_t>(1 - r + bytes - 1));
  });
}

TEST(Bootstrap, SendToSelf) {
  auto boots = formOrFail(1);
  ASSERT_EQ(boots.size(), 1u);
  int x = 42, y = 0;
  ASSERT_TRUE(boots[0]->send(0, 3, &x, sizeof(x)).isOk());
  ASSERT_TRUE(boots[0]->recv(0, 3, &y, sizeof(y)).isOk());
  EXPECT_EQ(y, 42);
}

TEST(Bootstrap, RejectsBadPeersAndReservedTags) {
  auto boots = formOrFail(1);
  ASSERT_EQ(boots.size(), 1u);
  int x = 0;
  EXPECT_EQ(boots[0]->send(1, 3, &x, sizeof(x)).code(), Code::kInvalidArgument);
  EXPECT_EQ(boots[0]->recv(-1, 3, &x, sizeof(x)).code(), Code::kInvalidArgument);
  EXPECT_EQ(boots[0]->send(0, Bootstrap::kReservedTagBase, &x, sizeof(x)).code(),
            Code::kInvalidArgument);
  // Over the inbox's limit: refused before a byte is read (x is never touched).
  EXPECT_EQ(boots[0]->send(0, 3, &x, braid::bootstrap::Inbox::kMaxMessageBytes + 1).code(),
            Code::kInvalidArgument);
}

TEST(Bootstrap, SizeMismatchIsAnError) {
  auto boots = formOrFail(2);
  ASSERT_EQ(boots.size(), 2u);
  int64_t big = 7;
  ASSERT_TRUE(boots[1]->send(0, 9, &big, sizeof(big)).isOk());
  int32_t small = 0;
  Status st = boots[0]->recv(1, 9, &small, sizeof(small));
  EXPECT_EQ(st.code(), Code::kInvalidUsage);
  EXPECT_TRUE(contains(st.message(), "rank 1 sent a bootstrap message of 8 bytes")) << st.message();
}

TEST(Bootstrap, PeerThatClosesIsNamed) {
  auto boots = formOrFail(2);
  ASSERT_EQ(boots.size(), 2u);
  int x = 1;
  ASSERT_TRUE(boots[1]->send(0, 1, &x, sizeof(x)).isOk());
  boots[1].reset();  // rank 1 goes away after one message
  int y = 0;
  ASSERT_TRUE(boots[0]->recv(1, 1, &y, sizeof(y)).isOk());  // what it sent still arrives
  Status st = boots[0]->recv(1, 2, &y, sizeof(y));
  EXPECT_EQ(st.code(), Code::kRemoteError);
  EXPECT_TRUE(contains(st.message(), "rank 1 closed its bootstrap connection")) << st.message();
}

TEST(Bootstrap, SilentPeerTimesOutNamingIt) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  const int timeoutMs = 400;
  auto joined = joinAll(id, ranksOf(2), timeoutMs);
  ASSERT_TRUE(joined[0].status.isOk()) << joined[0].status.message();
  ASSERT_TRUE(joined[1].status.isOk()) << joined[1].status.message();
  auto start = std::chrono::steady_clock::now();
  int y = 0;
  Status st = joined[0].boot->recv(1, 4, &y, sizeof(y));
  int64_t ms = testing::msSince(start);
  EXPECT_EQ(st.code(), Code::kTimeout);
  EXPECT_TRUE(contains(st.message(), "from rank 1 (tag 4) within 400 ms")) << st.message();
  EXPECT_GE(ms, timeoutMs - 5);
  EXPECT_LT(ms, timeoutMs + 1000);
}

}  // namespace
}  // namespace braid::bootstrap
