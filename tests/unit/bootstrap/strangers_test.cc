// Connections that cannot prove the secret are dropped without holding up the
// genuine ranks, at the root and at a rank's own bootstrap listener.
#include <gtest/gtest.h>

#include "test_util.h"
#include "transports/net/auth.h"

namespace braid::bootstrap {
namespace {

using testing::joinAll;
using testing::msSince;
using testing::ranksOf;

constexpr int kRanks = 4;
// The root drops a silent stranger only after this; the ranks must not wait for it.
constexpr int kHandshakeMs = 6000;

transport::Secret otherSecret(const transport::Secret& s) {
  transport::Secret o = s;
  o[0] ^= 0xff;
  return o;
}

// True when the peer closed (or reset) the connection within the deadline.
bool closedByPeer(int fd, int timeoutMs) {
  uint8_t byte;
  Status st = net::recvAll(fd, &byte, 1, Deadline(timeoutMs));
  return !st.isOk() && st.code() != Code::kTimeout;
}

enum class Stranger { kWrongSecret, kGarbage, kSilent };

class RootStranger : public ::testing::TestWithParam<Stranger> {};

TEST_P(RootStranger, IsDroppedAndRanksStillFormPromptly) {
  RootOptions options;
  options.handshakeTimeoutMs = kHandshakeMs;
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id, options).isOk());

  // The stranger connects first, so the root is busy with it when ranks arrive.
  net::Fd fd;
  ASSERT_TRUE(net::connectTo(id.root, Deadline(2000), &fd).isOk());
  Status strangerAuth;
  std::thread stranger;
  if (GetParam() == Stranger::kWrongSecret) {
    stranger = std::thread([&] {
      strangerAuth = net::authenticateConnector(fd.get(), otherSecret(id.secret),
                                                net::Purpose::kBootstrap, 0, Deadline(3000));
    });
  } else if (GetParam() == Stranger::kGarbage) {
    uint8_t junk[64];
    ASSERT_TRUE(net::randomBytes(junk, sizeof(junk)).isOk());
    ASSERT_TRUE(net::sendAll(fd.get(), junk, sizeof(junk), Deadline(2000)).isOk());
  }

  auto start = std::chrono::steady_clock::now();
  auto joined = joinAll(id, ranksOf(kRanks), 20000);
  int64_t formedMs = msSince(start);
  for (int r = 0; r < kRanks; ++r)
    EXPECT_TRUE(joined[r].status.isOk()) << "rank " << r << ": " << joined[r].status.message();
  EXPECT_LT(formedMs, kHandshakeMs / 2) << "a stranger held up the rendezvous";

  if (stranger.joinable()) {
    stranger.join();
    EXPECT_FALSE(strangerAuth.isOk()) << "a connector with the wrong secret was admitted";
  }
  // Whatever it did, the stranger's connection ends: at once for a failed
  // handshake, and for a silent one when the root ends after forming.
  EXPECT_TRUE(closedByPeer(fd.get(), kHandshakeMs));
  // And the communicator works.
  testing::onThreads(kRanks, [&](int r) { EXPECT_TRUE(joined[r].boot->barrier().isOk()); });
}

INSTANTIATE_TEST_SUITE_P(Kinds, RootStranger,
                         ::testing::Values(Stranger::kWrongSecret, Stranger::kGarbage,
                                           Stranger::kSilent));

TEST(RankListenerStranger, IsDroppedAndPeersStillTalk) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  auto joined = joinAll(id, ranksOf(3), 10000);
  for (int r = 0; r < 3; ++r) ASSERT_TRUE(joined[r].status.isOk()) << joined[r].status.message();
  const net::SocketAddress& target = joined[0].boot->address(0);

  net::Fd silent, wrong, liar;
  ASSERT_TRUE(net::connectTo(target, Deadline(2000), &silent).isOk());
  ASSERT_TRUE(net::connectTo(target, Deadline(2000), &wrong).isOk());
  Status st = net::authenticateConnector(wrong.get(), otherSecret(id.secret),
                                         net::Purpose::kBootstrap, 1, Deadline(3000));
  EXPECT_FALSE(st.isOk());
  // Right secret but a rank that does not exist: admitted by the handshake,
  // then dropped by the inbox.
  ASSERT_TRUE(net::connectTo(target, Deadline(2000), &liar).isOk());
  ASSERT_TRUE(net::authenticateConnector(liar.get(), id.secret, net::Purpose::kBootstrap, 77,
                                         Deadline(3000))
                  .isOk());
  EXPECT_TRUE(closedByPeer(liar.get(), 3000));

  testing::onThreads(3, [&](int r) {
    int v = r;
    std::vector<int> all(3, -1);
    all[r] = v;
    EXPECT_TRUE(joined[r].boot->allGather(all.data(), sizeof(int)).isOk());
    for (int p = 0; p < 3; ++p) EXPECT_EQ(all[p], p);
  });
}

}  // namespace
}  // namespace braid::bootstrap
