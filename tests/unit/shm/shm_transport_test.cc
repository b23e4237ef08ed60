// The shm transport end to end, both ends in this process, driven from one
// thread as the executor drives its transport.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "shm_test_util.h"
#include "transports/shm/handshake.h"
#include "transports/shm/shm_comm.h"

namespace braid::transport {
namespace {

using namespace testing;

TEST(ShmTransport, RegisteredAndDescribesItsDevice) {
  std::unique_ptr<Transport> t;
  ASSERT_TRUE(createTransport("shm", shmOptions(), &t).isOk());
  EXPECT_STREQ(t->name(), "shm");
  EXPECT_FALSE(t->capabilities().needsRegistration);
  ASSERT_EQ(t->deviceCount(), 1);
  DeviceProperties props;
  ASSERT_TRUE(t->deviceProperties(0, &props).isOk());
  EXPECT_EQ(props.name, "shm");
  EXPECT_EQ(t->deviceProperties(1, &props).code(), Code::kInvalidArgument);
}

TEST(ShmTransport, RejectsBadConfig) {
  std::unique_ptr<Transport> t;
  EXPECT_EQ(shm::ShmTransport::create(shmOptions(), shmConfig(true, 100000), &t).code(), Code::kInvalidArgument);
  EXPECT_EQ(shm::ShmTransport::create(shmOptions(), shmConfig(true, 32 << 10), &t).code(), Code::kInvalidArgument);
}

TEST(ShmTransport, ReadsItsEnvironment) {
  // setenv is safe here: this test runs no other thread.
  std::unique_ptr<Transport> t;
  setenv("BRAID_SHM_RING_BYTES", "12345", 1);
  EXPECT_EQ(createTransport("shm", shmOptions(), &t).code(), Code::kInvalidArgument);
  setenv("BRAID_SHM_RING_BYTES", "262144", 1);
  setenv("BRAID_SHM_CMA_THRESHOLD", "65536", 1);
  shm::ShmConfig c;
  EXPECT_TRUE(shm::ShmConfig::fromEnv(&c).isOk());
  EXPECT_EQ(c.ringBytes, 262144u);
  EXPECT_TRUE(c.cma());
  setenv("BRAID_SHM_CMA_THRESHOLD", "lots", 1);
  EXPECT_EQ(shm::ShmConfig::fromEnv(&c).code(), Code::kInvalidArgument);
  unsetenv("BRAID_SHM_RING_BYTES");
  unsetenv("BRAID_SHM_CMA_THRESHOLD");
  ASSERT_TRUE(shm::ShmConfig::fromEnv(&c).isOk());
  EXPECT_TRUE(c.cma()) << "cross-memory attach is on by default";
  EXPECT_EQ(c.cmaThreshold, size_t{32} << 10);
  setenv("BRAID_SHM_CMA_THRESHOLD", "0", 1);
  ASSERT_TRUE(shm::ShmConfig::fromEnv(&c).isOk());
  EXPECT_FALSE(c.cma()) << "0 turns it off";
  unsetenv("BRAID_SHM_CMA_THRESHOLD");
  ASSERT_TRUE(shm::ShmConfig::fromEnv(&c).isOk());
  EXPECT_TRUE(c.push) << "pushes are on by default";
  setenv("BRAID_SHM_PUSH", "0", 1);
  ASSERT_TRUE(shm::ShmConfig::fromEnv(&c).isOk());
  EXPECT_FALSE(c.push);
  setenv("BRAID_SHM_PUSH", "2", 1);
  EXPECT_EQ(shm::ShmConfig::fromEnv(&c).code(), Code::kInvalidArgument);
  unsetenv("BRAID_SHM_PUSH");
}

TEST(ShmTransport, RejectsForeignHandles) {
  auto t = makeShm();
  std::unique_ptr<SendComm> comm;
  Handle junk;
  junk.bytes.fill(0x77);
  EXPECT_EQ(t->connect(0, junk, 1, &comm).code(), Code::kInvalidArgument);
  // A genuine handle from another host (or network namespace) fails at once.
  shm::HandleInfo info;
  info.pid = 1;
  info.locality = shm::localityKey() ^ 1;
  Handle elsewhere;
  shm::encodeHandle(info, &elsewhere);
  EXPECT_EQ(t->connect(0, elsewhere, 1, &comm).code(), Code::kNotSupported);
  EXPECT_EQ(comm, nullptr);
}

TEST(ShmTransport, NothingInDevShmWhileConnected) {
  auto a = makeShm(), b = makeShm();
  std::unique_ptr<SendComm> s;
  std::unique_ptr<RecvComm> r;
  ASSERT_TRUE(connectPair(*a, *b, 1, &s, &r).isOk());
  EXPECT_TRUE(shmEntries().empty()) << shmEntries()[0];
}

struct Variant {
  const char* name;
  bool cma;
  size_t ringBytes;
  size_t cmaThreshold;
};

class ShmPair : public ::testing::TestWithParam<Variant>, protected ConnectedPair {
 protected:
  void SetUp() override {
    shm::ShmConfig c = shmConfig(GetParam().cma, GetParam().ringBytes);
    if (GetParam().cma) c.cmaThreshold = GetParam().cmaThreshold;
    sender_ = makeShm(shmOptions(), c);
    receiver_ = makeShm(shmOptions(), c);
    uint64_t id = 0;
    Status st = connectPair(*sender_, *receiver_, 42, &send_, &recv_, &id);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(id, 42u);
    EXPECT_EQ(dynamic_cast<shm::ShmRecvComm*>(recv_.get())->usesCma(), GetParam().cma);
  }
};

TEST_P(ShmPair, MessagesOfManySizes) {
  for (size_t size : testSizes()) {
    SCOPED_TRACE("size " + std::to_string(size));
    std::vector<uint8_t> out = pattern(size, static_cast<uint32_t>(size)), in(size + 13, 0xee);
    std::vector<Pending> reqs = {postRecv(in.data(), in.size(), 5), postSend(out.data(), out.size(), 5)};
    drive(reqs);
    ASSERT_TRUE(reqs[0].status.isOk()) << reqs[0].status.message();
    ASSERT_TRUE(reqs[1].status.isOk()) << reqs[1].status.message();
    EXPECT_EQ(reqs[0].size, size);
    EXPECT_EQ(reqs[1].size, size);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
    EXPECT_EQ(in[size], 0xee) << "wrote past the message";
  }
}

TEST_P(ShmPair, ManyMessagesMatchInOrder) {
  // Small, ring-sized and CMA-sized messages mixed, all posted before any
  // progress, so frames wrap the ring and CMA frames queue behind inline ones.
  constexpr int kCount = 200;
  std::vector<std::vector<uint8_t>> out(kCount), in(kCount);
  std::vector<Pending> reqs;
  for (int i = 0; i < kCount; ++i) {
    size_t size = i % 17 == 3 ? (300 << 10) + i : static_cast<size_t>(i * 37 % 300);
    out[i] = pattern(size, i);
    in[i].assign(size + 1, 0);
  }
  for (int i = 0; i < kCount; ++i) reqs.push_back(postSend(out[i].data(), out[i].size(), 100 + i));
  for (int i = 0; i < kCount; ++i) reqs.push_back(postRecv(in[i].data(), in[i].size(), 100 + i));
  drive(reqs);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(reqs[i].status.isOk()) << reqs[i].status.message();
    ASSERT_TRUE(reqs[kCount + i].status.isOk()) << reqs[kCount + i].status.message();
    ASSERT_EQ(reqs[kCount + i].size, out[i].size()) << "message " << i;
    EXPECT_TRUE(std::equal(out[i].begin(), out[i].end(), in[i].begin())) << "message " << i;
  }
}

TEST_P(ShmPair, APostedSendIsVisibleBeforeTheSenderTestsIt) {
  // Two ranks that each test their receive before their send must not take
  // turns: the receiver finds the frame (a CMA header, or a small message
  // whole) with no test() of the send yet. The big message is over every
  // variant's CMA threshold; over the ring it is pulled as far as the ring
  // holds, and the rest flows once the send is tested.
  for (size_t size : {size_t{8}, size_t{1} << 20}) {
    SCOPED_TRACE("size " + std::to_string(size));
    std::vector<uint8_t> out = pattern(size, 9), in(size, 0);
    Pending recv = postRecv(in.data(), in.size(), 7);
    Pending send = postSend(out.data(), out.size(), 7);
    const bool whole = size <= shm::kPublishBytes || dynamic_cast<shm::ShmRecvComm*>(recv_.get())->usesCma();
    Deadline deadline(2000);
    while (!recv.done && !deadline.expired()) {
      ASSERT_TRUE(receiver_->test(recv.req, &recv.done, &recv.size).isOk());
      if (!recv.done && !whole) break;  // the ring's first piece only: checked below
    }
    if (whole) {
      ASSERT_TRUE(recv.done) << "the receiver never saw the posted send";
      EXPECT_EQ(recv.size, size);
      EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
    } else {
      EXPECT_TRUE(std::equal(out.begin(), out.begin() + shm::kPublishBytes, in.begin()))
          << "the first piece was not written at isend";
    }
    std::vector<Pending> rest = {send};
    if (!recv.done) rest.push_back(recv);
    drive(rest);
    for (const Pending& p : rest) ASSERT_TRUE(p.status.isOk()) << p.status.message();
    EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
  }
}

TEST_P(ShmPair, RequestsCompleteInPostingOrder) {
  std::vector<uint8_t> big = pattern(4 << 20, 1), small = pattern(8, 2), inBig(big.size()), inSmall(8);
  std::vector<Pending> reqs = {postSend(big.data(), big.size(), 1), postSend(small.data(), small.size(), 2),
                               postRecv(inBig.data(), inBig.size(), 1), postRecv(inSmall.data(), inSmall.size(), 2)};
  Deadline deadline(10000);
  while (!(reqs[0].done && reqs[1].done && reqs[2].done && reqs[3].done) && !deadline.expired()) {
    for (int i : {1, 0, 3, 2}) {  // test the later request first
      if (reqs[i].done) continue;
      ASSERT_TRUE(reqs[i].transport->test(reqs[i].req, &reqs[i].done, &reqs[i].size).isOk());
      if (reqs[i].done && (i == 1 || i == 3)) {
        Pending& e = reqs[i - 1];  // the earlier request must be complete by now
        if (!e.done) {
          ASSERT_TRUE(e.transport->test(e.req, &e.done, &e.size).isOk());
        }
        EXPECT_TRUE(e.done) << "request " << i << " completed before request " << i - 1;
      }
    }
    ASSERT_TRUE(sender_->wait(1).isOk());
    ASSERT_TRUE(receiver_->wait(1).isOk());
  }
  EXPECT_EQ(inBig, big);
  EXPECT_EQ(inSmall, small);
}

TEST_P(ShmPair, TagMismatchIsRemoteErrorOnBothEnds) {
  std::vector<uint8_t> out = pattern(1 << 20, 3), in(1 << 20);
  std::vector<Pending> reqs = {postSend(out.data(), out.size(), 7), postRecv(in.data(), in.size(), 8)};
  drive(reqs);
  EXPECT_EQ(reqs[1].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[1].status.message().find("expected tag 8, got tag 7"), std::string::npos) << reqs[1].status.message();
  // The sender learns too (its 1 MiB did not fit the ring or waited for a pull).
  EXPECT_EQ(reqs[0].status.code(), Code::kRemoteError) << reqs[0].status.message();
  Request* req = nullptr;
  EXPECT_EQ(recv_->irecv(in.data(), 4, 7, nullptr, &req).code(), Code::kRemoteError);
  EXPECT_EQ(req, nullptr);
}

TEST_P(ShmPair, TooSmallCapacityIsRemoteError) {
  std::vector<uint8_t> out(1000), in(999);
  std::vector<Pending> reqs = {postSend(out.data(), out.size(), 3), postRecv(in.data(), in.size(), 3)};
  drive(reqs);
  EXPECT_EQ(reqs[1].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[1].status.message().find("at most 999 bytes, got 1000 bytes"), std::string::npos)
      << reqs[1].status.message();
}

TEST_P(ShmPair, PeerCloseIsRemoteError) {
  uint32_t word = 9, back = 0;
  std::vector<Pending> sent = {postSend(&word, 4, 1)};
  drive(sent);
  send_.reset();
  // What was sent before the close still arrives; the next receive fails.
  std::vector<Pending> reqs = {postRecv(&back, 4, 1), postRecv(&back, 4, 2)};
  drive(reqs);
  EXPECT_TRUE(reqs[0].status.isOk()) << reqs[0].status.message();
  EXPECT_EQ(back, 9u);
  EXPECT_EQ(reqs[1].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[1].status.message().find("connection closed by peer process"), std::string::npos)
      << reqs[1].status.message();
}

TEST_P(ShmPair, SendToClosedReceiverIsRemoteError) {
  recv_.reset();
  std::vector<uint8_t> out(4 << 20);  // more than the ring holds, or a pull nobody makes
  std::vector<Pending> reqs = {postSend(out.data(), out.size(), 1)};
  drive(reqs);
  EXPECT_EQ(reqs[0].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[0].status.message().find("connection closed by peer process"), std::string::npos)
      << reqs[0].status.message();
}

TEST_P(ShmPair, NullBufferIsInvalidArgument) {
  Request* req = nullptr;
  EXPECT_EQ(send_->isend(nullptr, 4, 1, nullptr, &req).code(), Code::kInvalidArgument);
  EXPECT_EQ(recv_->irecv(nullptr, 4, 1, nullptr, &req).code(), Code::kInvalidArgument);
  EXPECT_EQ(req, nullptr);
}

// Who copies a CMA message: the end with fewer copies ahead (counted per
// process), and between equals the receiver, unless it is busy with local
// work (Transport::noteLocalWork). One thread plays both ends here,
// so the order of its tests decides when each end looks.
TEST_P(ShmPair, TheEndWithFewerCopiesAheadCopiesAndBetweenEqualsTheReceiverUnlessBusy) {
  if (!GetParam().cma) GTEST_SKIP() << "ring only: nothing is copied across";
  auto* send = dynamic_cast<shm::ShmSendComm*>(send_.get());
  auto* recv = dynamic_cast<shm::ShmRecvComm*>(recv_.get());
  ASSERT_TRUE(send->pushes()) << "this process may write into itself";
  const size_t size = (size_t{1} << 20) + 3;
  std::vector<uint8_t> out = pattern(size, 4), out2 = pattern(size, 5), in(size + 64, 0xee), in2(size);
  auto check = [&](const char* what) {
    EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin())) << what;
    EXPECT_EQ(in[size], 0xee) << what << ": wrote past the message";
    std::fill(in.begin(), in.end(), 0xee);
  };

  // The receiver has two receives ahead, the sender one send: the sender,
  // tested alone, pushes into the first, and is done with no test of it.
  Pending r1 = postRecv(in.data(), size, 11), r2 = postRecv(in2.data(), size, 12),
          s1 = postSend(out.data(), size, 11);
  Deadline deadline(5000);
  while (!s1.done && !deadline.expired()) ASSERT_TRUE(sender_->test(s1.req, &s1.done, &s1.size).isOk());
  EXPECT_TRUE(s1.done) << "the sender did not push into the offered receive";
  EXPECT_EQ(send->pushed(), 1u);
  // One send against the one receive left: equals, so the sender waits for
  // the receiver to pull, however long.
  Pending s2 = postSend(out2.data(), size, 12);
  Deadline wait(50);
  while (!wait.expired()) ASSERT_TRUE(sender_->test(s2.req, &s2.done, &s2.size).isOk());
  EXPECT_FALSE(s2.done) << "the sender pushed to a receiver with no more copies ahead than itself";
  std::vector<Pending> rest = {r1, r2, s2};
  drive(rest);
  for (const Pending& p : rest) ASSERT_TRUE(p.status.isOk()) << p.status.message();
  EXPECT_EQ(rest[0].size, size);
  EXPECT_EQ(in2, out2);
  EXPECT_EQ(send->pushed(), 1u);
  EXPECT_EQ(recv->pulled(), 1u);
  check("pushed");

  // The send is up before its receive: the receiver, once its receive is up,
  // pulls.
  Pending s = postSend(out.data(), size, 13);
  ASSERT_TRUE(sender_->test(s.req, &s.done, &s.size).isOk());
  EXPECT_FALSE(s.done);
  Pending r = postRecv(in.data(), size, 13);
  ASSERT_TRUE(receiver_->test(r.req, &r.done, &r.size).isOk());
  EXPECT_TRUE(r.done) << "the receiver did not pull";
  rest = {s};
  drive(rest);
  ASSERT_TRUE(rest[0].status.isOk()) << rest[0].status.message();
  EXPECT_EQ(send->pushed(), 1u);
  EXPECT_EQ(recv->pulled(), 2u);
  check("pulled");

  // Equals again, but the receiving end is busy with local work: the
  // sender, tested alone, pushes.
  receiver_->noteLocalWork(true);
  r = postRecv(in.data(), size, 14);
  s = postSend(out.data(), size, 14);
  Deadline busy(5000);
  while (!s.done && !busy.expired()) ASSERT_TRUE(sender_->test(s.req, &s.done, &s.size).isOk());
  EXPECT_TRUE(s.done) << "the sender did not push into a busy receiver";
  receiver_->noteLocalWork(false);
  rest = {r};
  drive(rest);
  ASSERT_TRUE(rest[0].status.isOk()) << rest[0].status.message();
  EXPECT_EQ(send->pushed(), 2u);
  EXPECT_EQ(recv->pulled(), 2u);
  check("pushed into a busy receiver");
  EXPECT_EQ(send->processPendingCopies(), 0);
  EXPECT_EQ(recv->processPendingCopies(), 0);
}

// A sender with more copies ahead than its receiver (a scatter's root) leaves
// them all to the receiver, however long it waits; and every copy counted
// ahead is counted off once done.
TEST_P(ShmPair, ASenderWithMoreCopiesAheadThanItsReceiverLeavesThemToIt) {
  if (!GetParam().cma) GTEST_SKIP() << "ring only: nothing is copied across";
  auto* send = dynamic_cast<shm::ShmSendComm*>(send_.get());
  auto* recv = dynamic_cast<shm::ShmRecvComm*>(recv_.get());
  const size_t size = size_t{1} << 20;
  std::vector<uint8_t> out1 = pattern(size, 1), out2 = pattern(size, 2), in1(size), in2(size);
  Pending r1 = postRecv(in1.data(), size, 21), s1 = postSend(out1.data(), size, 21),
          s2 = postSend(out2.data(), size, 22);
  EXPECT_EQ(send->processPendingCopies(), 2);
  EXPECT_EQ(recv->processPendingCopies(), 1);
  Deadline deadline(100);  // far past any wait for a pull
  while (!deadline.expired()) ASSERT_TRUE(sender_->test(s1.req, &s1.done, &s1.size).isOk());
  EXPECT_FALSE(s1.done) << "the sender pushed with more copies ahead than its receiver";
  std::vector<Pending> reqs = {r1, postRecv(in2.data(), size, 22), s1, s2};
  drive(reqs);
  for (const Pending& p : reqs) ASSERT_TRUE(p.status.isOk()) << p.status.message();
  EXPECT_EQ(in1, out1);
  EXPECT_EQ(in2, out2);
  EXPECT_EQ(send->pushed(), 0u);
  EXPECT_EQ(recv->pulled(), 2u);
  EXPECT_EQ(send->processPendingCopies(), 0);
  EXPECT_EQ(recv->processPendingCopies(), 0);
}

// A receive too small or with another tag is left to the receiver, which
// fails it naming both sides: nothing lands in it.
TEST_P(ShmPair, AReceiveThatCannotTakeTheMessageIsNeverPushedInto) {
  if (!GetParam().cma) GTEST_SKIP() << "ring only: nothing is copied across";
  const size_t size = size_t{1} << 20;
  std::vector<uint8_t> out = pattern(size, 5), in(size, 0xee);
  Pending r = postRecv(in.data(), size - 1, 5), s = postSend(out.data(), size, 5);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(sender_->test(s.req, &s.done, &s.size).isOk());
  EXPECT_FALSE(s.done);
  std::vector<Pending> reqs = {r, s};
  drive(reqs);
  EXPECT_EQ(reqs[0].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[0].status.message().find("got 1048576 bytes"), std::string::npos)
      << reqs[0].status.message();
  EXPECT_EQ(dynamic_cast<shm::ShmSendComm*>(send_.get())->pushed(), 0u);
  EXPECT_TRUE(std::all_of(in.begin(), in.end(), [](uint8_t b) { return b == 0xee; }));
  // Both ends failed: what they counted ahead is counted off.
  EXPECT_EQ(dynamic_cast<shm::ShmSendComm*>(send_.get())->processPendingCopies(), 0);
  EXPECT_EQ(dynamic_cast<shm::ShmRecvComm*>(recv_.get())->processPendingCopies(), 0);
}

// Closing the receiving end takes its offer back: the caller frees the
// buffers of its receives next.
TEST_P(ShmPair, AClosedReceiverIsNeverPushedInto) {
  if (!GetParam().cma) GTEST_SKIP() << "ring only: nothing is copied across";
  const size_t size = size_t{1} << 20;
  std::vector<uint8_t> out = pattern(size, 6), in(size, 0xee);
  (void)postRecv(in.data(), size, 6);
  recv_.reset();
  std::vector<Pending> reqs = {postSend(out.data(), size, 6)};
  drive(reqs);
  EXPECT_EQ(reqs[0].status.code(), Code::kRemoteError);
  EXPECT_NE(reqs[0].status.message().find("connection closed by peer process"), std::string::npos)
      << reqs[0].status.message();
  EXPECT_EQ(dynamic_cast<shm::ShmSendComm*>(send_.get())->pushed(), 0u);
  EXPECT_TRUE(std::all_of(in.begin(), in.end(), [](uint8_t b) { return b == 0xee; }));
  EXPECT_EQ(dynamic_cast<shm::ShmSendComm*>(send_.get())->processPendingCopies(), 0);
}

// BRAID_SHM_PUSH=0 (ShmConfig::push) at the sender: the receiver always pulls.
TEST(ShmTransport, WithPushesOffTheReceiverAlwaysPulls) {
  shm::ShmConfig c = shmConfig(true);
  c.push = false;
  std::unique_ptr<Transport> sender = makeShm(shmOptions(), c),
                             receiver = makeShm(shmOptions(), shmConfig(true));
  std::unique_ptr<SendComm> send;
  std::unique_ptr<RecvComm> recv;
  ASSERT_TRUE(connectPair(*sender, *receiver, 1, &send, &recv).isOk());
  EXPECT_FALSE(dynamic_cast<shm::ShmSendComm*>(send.get())->pushes());
  const size_t size = size_t{1} << 20;
  std::vector<uint8_t> out = pattern(size, 7), in(size);
  Request *r = nullptr, *s = nullptr;
  ASSERT_TRUE(recv->irecv(in.data(), size, 1, nullptr, &r).isOk());
  ASSERT_TRUE(send->isend(out.data(), size, 1, nullptr, &s).isOk());
  bool sent = false, received = false;
  size_t bytes = 0;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(sender->test(s, &sent, &bytes).isOk());
  EXPECT_FALSE(sent) << "the sender pushed with pushes off";
  ASSERT_TRUE(receiver->test(r, &received, &bytes).isOk());
  EXPECT_TRUE(received);
  Deadline deadline(5000);
  while (!sent && !deadline.expired()) ASSERT_TRUE(sender->test(s, &sent, &bytes).isOk());
  EXPECT_TRUE(sent);
  EXPECT_EQ(dynamic_cast<shm::ShmRecvComm*>(recv.get())->pulled(), 1u);
  EXPECT_EQ(out, in);
}

INSTANTIATE_TEST_SUITE_P(Variants, ShmPair,
                         ::testing::Values(Variant{"Cma", true, 1 << 20, 256 << 10},
                                           Variant{"RingOnly", false, 1 << 20, 256 << 10},
                                           Variant{"SmallRingEagerCma", true, 64 << 10, 4096}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace braid::transport
