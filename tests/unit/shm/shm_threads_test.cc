// Two shm transports in one process, each driven by its own thread as two
// ranks would be, so that waits really sleep on the doorbells and wake on the
// other side's progress.
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <thread>

#include "shm_test_util.h"
#include "transports/shm/shm_comm.h"

namespace braid::transport {
namespace {

using namespace testing;

// Runs one request to completion on its own transport, sleeping in wait().
Status finish(Transport& t, Request* req, size_t* size, int timeoutMs = 10000) {
  Deadline deadline(timeoutMs);
  for (bool done = false; !done;) {
    BRAID_RETURN_IF_ERROR(t.test(req, &done, size));
    if (done) break;
    if (deadline.expired()) return timeoutError("request did not finish");
    BRAID_RETURN_IF_ERROR(t.wait(100));
  }
  return Status::ok();
}

double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

class ShmThreads : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    sender_ = makeShm(shmOptions(), shmConfig(GetParam()));
    receiver_ = makeShm(shmOptions(), shmConfig(GetParam()));
    ASSERT_TRUE(connectPair(*sender_, *receiver_, 7, &send_, &recv_).isOk());
  }
  std::unique_ptr<Transport> sender_, receiver_;
  std::unique_ptr<SendComm> send_;
  std::unique_ptr<RecvComm> recv_;
};

TEST_P(ShmThreads, StreamOfMixedSizes) {
  std::vector<size_t> sizes;
  for (int i = 0; i < 300; ++i) sizes.push_back(i % 50 == 7 ? (size_t{3} << 20) + i : static_cast<size_t>(i * 97 % 5000));
  for (size_t s : testSizes()) sizes.push_back(s);
  Status sendStatus;
  std::thread sender([&] {
    for (size_t i = 0; i < sizes.size() && sendStatus.isOk(); ++i) {
      std::vector<uint8_t> out = pattern(sizes[i], static_cast<uint32_t>(i));
      Request* req = nullptr;
      size_t size = 0;
      sendStatus = send_->isend(out.data(), out.size(), static_cast<uint32_t>(i), nullptr, &req);
      if (sendStatus.isOk()) sendStatus = finish(*sender_, req, &size);
    }
  });
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<uint8_t> in(sizes[i]);
    Request* req = nullptr;
    size_t size = 0;
    ASSERT_TRUE(recv_->irecv(in.data(), in.size(), static_cast<uint32_t>(i), nullptr, &req).isOk());
    Status st = finish(*receiver_, req, &size);
    ASSERT_TRUE(st.isOk()) << "message " << i << ": " << st.message();
    ASSERT_EQ(size, sizes[i]);
    ASSERT_EQ(in, pattern(sizes[i], static_cast<uint32_t>(i))) << "message " << i;
  }
  sender.join();
  EXPECT_TRUE(sendStatus.isOk()) << sendStatus.message();
  // Both ends race for every large message; each was copied once, by one of them.
  if (GetParam()) {
    const size_t large =
        std::count_if(sizes.begin(), sizes.end(), [](size_t s) { return s >= shmConfig().cmaThreshold; });
    EXPECT_EQ(dynamic_cast<shm::ShmSendComm*>(send_.get())->pushed() +
                  dynamic_cast<shm::ShmRecvComm*>(recv_.get())->pulled(),
              large);
  }
}

TEST_P(ShmThreads, WaitWakesOnArrival) {
  uint64_t word = 0x1234, back = 0;
  Request* rreq = nullptr;
  ASSERT_TRUE(recv_->irecv(&back, sizeof(back), 1, nullptr, &rreq).isOk());
  auto start = Clock::now();
  std::thread sender([&] {
    Request* req = nullptr;
    size_t size = 0;
    EXPECT_TRUE(send_->isend(&word, sizeof(word), 1, nullptr, &req).isOk());
    EXPECT_TRUE(finish(*sender_, req, &size).isOk());
  });
  // However the threads interleave, the receiver must not sleep out its 5 s.
  bool done = false;
  size_t size = 0;
  while (!done) {
    ASSERT_TRUE(receiver_->test(rreq, &done, &size).isOk());
    if (!done) {
      ASSERT_TRUE(receiver_->wait(5000).isOk());
    }
  }
  sender.join();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(2000));
  EXPECT_EQ(back, word);
}

TEST_P(ShmThreads, IdleWaitSleepsInsteadOfSpinning) {
  uint64_t back = 0;
  Request* rreq = nullptr;
  ASSERT_TRUE(recv_->irecv(&back, sizeof(back), 1, nullptr, &rreq).isOk());
  double cpu0 = threadCpuMs();
  auto start = Clock::now();
  while (Clock::now() - start < std::chrono::milliseconds(300)) {
    bool done = false;
    ASSERT_TRUE(receiver_->test(rreq, &done, nullptr).isOk());
    ASSERT_FALSE(done);
    ASSERT_TRUE(receiver_->wait(300).isOk());
  }
  EXPECT_LT(threadCpuMs() - cpu0, 60.0) << "wait() burned the core instead of sleeping";
}

INSTANTIATE_TEST_SUITE_P(CmaAndRing, ShmThreads, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Cma" : "RingOnly"; });

}  // namespace
}  // namespace braid::transport
