// The rendezvous fails fast and clearly: missing ranks, duplicate ranks,
// disagreeing nranks, a wrong secret, no root at all.
#include <gtest/gtest.h>

#include "core/bootstrap/protocol.h"
#include "test_util.h"
#include "transports/net/auth.h"

namespace braid::bootstrap {
namespace {

using testing::contains;
using testing::joinAll;

constexpr int kShortMs = 1500;
constexpr int kMarginMs = 1000;

TEST(Rendezvous, MissingRankTimesOutNamingIt) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  auto joined = joinAll(id, {{0, 4}, {1, 4}, {3, 4}}, kShortMs);
  for (const auto& j : joined) {
    EXPECT_EQ(j.status.code(), Code::kTimeout) << j.status.message();
    EXPECT_TRUE(contains(j.status.message(),
                         "rank 2 of 4 never arrived at the rendezvous within 1500 ms"))
        << j.status.message();
    EXPECT_GE(j.elapsedMs, kShortMs - 100);
    EXPECT_LT(j.elapsedMs, kShortMs + kMarginMs);
  }
}

// A rank that a loaded machine delays: it has proved the secret but not yet
// sent its join request when another rank's deadline fails the rendezvous. It
// must still learn which rank is missing, not find the root gone.
TEST(Rendezvous, ARankMidJoinWhenTheVerdictFallsStillGetsIt) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  net::Fd late;
  ASSERT_TRUE(net::connectTo(id.root, Deadline(3000), &late).isOk());
  ASSERT_TRUE(
      net::authenticateConnector(late.get(), id.secret, net::Purpose::kBootstrap, 1, Deadline(3000)).isOk());

  auto early = joinAll(id, {{0, 3}}, kShortMs);
  ASSERT_EQ(early[0].status.code(), Code::kTimeout) << early[0].status.message();

  protocol::JoinRequest join;
  join.rank = 1;
  join.nranks = 3;
  join.timeoutMs = kShortMs;
  join.remainingMs = kShortMs;
  ASSERT_TRUE(net::parseAddress("127.0.0.1:1", &join.listen).isOk());
  join.hostId = "late-host";
  std::vector<uint8_t> bytes;
  protocol::encodeJoin(join, &bytes);
  ASSERT_TRUE(net::sendAll(late.get(), bytes.data(), bytes.size(), Deadline(3000)).isOk());

  uint8_t header[protocol::kReplyHeaderBytes];
  Status st = net::recvAll(late.get(), header, sizeof(header), Deadline(3000));
  ASSERT_TRUE(st.isOk()) << "no verdict for the late rank: " << st.message();
  Code code = Code::kOk;
  size_t length = 0;
  ASSERT_TRUE(protocol::decodeReplyHeader(header, &code, &length).isOk());
  ASSERT_LT(length, 4096u);
  std::string message(length, '\0');
  ASSERT_TRUE(net::recvAll(late.get(), message.data(), length, Deadline(3000)).isOk());
  EXPECT_EQ(code, Code::kTimeout) << message;
  // Rank 1 had not joined when rank 0's deadline passed, so the verdict names it too.
  EXPECT_TRUE(contains(message, "ranks 1, 2 of 3 never arrived")) << message;
}

TEST(Rendezvous, SeveralMissingRanksAreListed) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  auto joined = joinAll(id, {{0, 8}, {1, 8}, {2, 8}, {4, 8}, {6, 8}, {7, 8}}, kShortMs);
  for (const auto& j : joined) {
    EXPECT_EQ(j.status.code(), Code::kTimeout) << j.status.message();
    EXPECT_TRUE(contains(j.status.message(),
                         "ranks 3, 5 of 8 never arrived at the rendezvous within 1500 ms"))
        << j.status.message();
    EXPECT_LT(j.elapsedMs, kShortMs + kMarginMs);
  }
}

TEST(Rendezvous, DuplicateRankFailsEveryonePromptly) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  auto joined = joinAll(id, {{0, 3}, {1, 3}, {1, 3}}, 20000);
  for (const auto& j : joined) {
    EXPECT_EQ(j.status.code(), Code::kInvalidUsage) << j.status.message();
    EXPECT_TRUE(contains(j.status.message(), "rank 1 joined twice")) << j.status.message();
    EXPECT_LT(j.elapsedMs, 5000);
  }
}

TEST(Rendezvous, DisagreeingNranksFailsEveryone) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  auto joined = joinAll(id, {{0, 2}, {1, 3}}, 20000);
  for (const auto& j : joined) {
    EXPECT_EQ(j.status.code(), Code::kInvalidUsage) << j.status.message();
    EXPECT_TRUE(contains(j.status.message(), "every rank must pass the same nranks"))
        << j.status.message();
    EXPECT_LT(j.elapsedMs, 5000);
  }
}

TEST(Rendezvous, BadArgumentsAreRejectedLocally) {
  UniqueId id;  // never contacted
  std::unique_ptr<Bootstrap> b;
  EXPECT_EQ(Bootstrap::create(id, 3, 3, 1000, &b).code(), Code::kInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id, -1, 3, 1000, &b).code(), Code::kInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id, 0, 0, 1000, &b).code(), Code::kInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id, 0, 1, 0, &b).code(), Code::kInvalidArgument);
  EXPECT_EQ(b, nullptr);
}

TEST(Rendezvous, WrongSecretIsRefusedAndTheRightOneStillJoins) {
  UniqueId id;
  ASSERT_TRUE(startRoot("", &id).isOk());
  UniqueId forged = id;
  forged.secret[3] ^= 1;
  auto bad = joinAll(forged, {{0, 1}}, 3000);
  EXPECT_FALSE(bad[0].status.isOk());
  EXPECT_TRUE(contains(bad[0].status.message(), "could not authenticate")) << bad[0].status.message();
  auto good = joinAll(id, {{0, 1}}, 3000);
  EXPECT_TRUE(good[0].status.isOk()) << good[0].status.message();
}

TEST(Rendezvous, NoRootTimesOut) {
  // A port that was just free: nothing listens there.
  net::Fd fd;
  net::SocketAddress loop, bound;
  ASSERT_TRUE(net::parseAddress("127.0.0.1:0", &loop).isOk());
  ASSERT_TRUE(net::listenOn(loop, 1, &fd, &bound).isOk());
  fd.reset();
  UniqueId id;
  id.root = bound;
  auto joined = joinAll(id, {{0, 2}}, 300);
  EXPECT_EQ(joined[0].status.code(), Code::kTimeout) << joined[0].status.message();
  EXPECT_TRUE(contains(joined[0].status.message(), "could not reach the rendezvous root"))
      << joined[0].status.message();
  EXPECT_LT(joined[0].elapsedMs, 300 + kMarginMs);
}

TEST(RootAt, FormsWithAGivenSecretAndChecksNranks) {
  net::SocketAddress want, bound;
  ASSERT_TRUE(net::parseAddress("127.0.0.1:0", &want).isOk());
  transport::Secret secret{};
  secret[0] = 9;
  RootOptions options;
  options.nranks = 2;
  ASSERT_TRUE(startRootAt(want, secret, options, &bound).isOk());
  UniqueId id{bound, secret};
  auto wrong = joinAll(id, {{0, 3}}, 3000);
  EXPECT_EQ(wrong[0].status.code(), Code::kInvalidUsage);
  EXPECT_TRUE(contains(wrong[0].status.message(), "the root was started for nranks=2"))
      << wrong[0].status.message();

  ASSERT_TRUE(startRootAt(want, secret, options, &bound).isOk());
  id.root = bound;
  auto joined = joinAll(id, testing::ranksOf(2), 5000);
  for (const auto& j : joined) EXPECT_TRUE(j.status.isOk()) << j.status.message();
}

TEST(RootAt, ThePortIsFreeAsSoonAsTheRanksHaveTheirTable) {
  // braidCommInitFromEnv forming communicators one after another at one address.
  net::SocketAddress want, bound;
  ASSERT_TRUE(net::parseAddress("127.0.0.1:0", &want).isOk());
  transport::Secret secret{};
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(startRootAt(want, secret, {}, &bound).isOk()) << "round " << round;
    want = bound;  // the same port from now on
    auto joined = joinAll(UniqueId{bound, secret}, testing::ranksOf(2), 5000);
    for (const auto& j : joined) ASSERT_TRUE(j.status.isOk()) << j.status.message();
  }
}

TEST(RootAt, FallsBackToEveryAddressForAForeignOne) {
  net::SocketAddress foreign, bound;
  ASSERT_TRUE(net::parseAddress("203.0.113.7:0", &foreign).isOk());  // TEST-NET-3, not ours
  transport::Secret secret{};
  ASSERT_TRUE(startRootAt(foreign, secret, {}, &bound).isOk());
  ASSERT_NE(bound.port(), 0);
  UniqueId id;
  ASSERT_TRUE(net::parseAddress("127.0.0.1:" + std::to_string(bound.port()), &id.root).isOk());
  id.secret = secret;
  auto joined = joinAll(id, {{0, 1}}, 5000);
  EXPECT_TRUE(joined[0].status.isOk()) << joined[0].status.message();
}

TEST(Roots, StopAllEndsWaitingRootsAtOnce) {
  UniqueId id;
  RootOptions options;
  options.idleTimeoutMs = 60000;
  ASSERT_TRUE(startRoot("", &id, options).isOk());
  auto start = std::chrono::steady_clock::now();
  stopAllRoots();
  EXPECT_LT(testing::msSince(start), 2000);
  EXPECT_EQ(runningRoots(), 0);
}

}  // namespace
}  // namespace braid::bootstrap
