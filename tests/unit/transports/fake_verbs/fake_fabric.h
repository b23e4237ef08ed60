// The model behind the fake libibverbs: one RDMA fabric shared by every
// endpoint in the process. Tests drive both ends of a connection, sometimes
// from several threads, so every piece of state here is guarded by
// Fabric::mutex, which each exported entry point takes once.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

namespace braid::fake_verbs {

// Small on purpose, so that callers must split large RDMA writes.
inline constexpr uint32_t kMaxMessageBytes = 256 * 1024;
inline constexpr uint32_t kMaxInlineBytes = 64;
inline constexpr uint16_t kPortLid = 1;
inline constexpr uint32_t kMaxQpWr = 4096;
inline constexpr uint32_t kMaxSge = 16;
inline constexpr int kMaxCqe = 65536;

// Each Fake* starts with the ibv_* struct handed to the caller, so the
// caller's pointer casts back to the Fake* (see fake()).
struct FakeContext {
  ibv_context context;
  int pds = 0;
  int cqs = 0;
};

struct FakePd {
  ibv_pd pd;
  int mrs = 0;
  int qps = 0;
};

struct FakeMr {
  ibv_mr mr;
  int access = 0;
};

struct FakeCq {
  ibv_cq cq;
  std::deque<ibv_wc> completions;
  bool overrun = false;  // sticky, as IBV_EVENT_CQ_ERR is on hardware
  int qps = 0;
};

struct SendWork {
  uint64_t wrId = 0;
  ibv_wr_opcode opcode = IBV_WR_SEND;
  bool signaled = false;
  uint32_t immData = 0;  // network byte order, passed through untouched
  uint64_t remoteAddr = 0;
  uint32_t rkey = 0;
  uint64_t length = 0;
  std::vector<ibv_sge> sges;        // gathered at execution time
  std::vector<uint8_t> inlineData;  // copied at post time instead of sges
};

struct RecvWork {
  uint64_t wrId = 0;
  std::vector<ibv_sge> sges;
};

struct FakeQp {
  ibv_qp qp;
  ibv_qp_cap cap{};
  bool signalAll = false;
  uint32_t destQpNum = 0;
  std::deque<SendWork> sends;  // posted and not yet executed, in posting order
  std::deque<RecvWork> recvs;
};

struct Fabric {
  std::mutex mutex;
  std::map<uint32_t, FakeMr*> mrsByLkey;
  std::map<uint32_t, FakeMr*> mrsByRkey;
  std::map<uint32_t, FakeQp*> qpsByNum;
  // Different bases, so a caller that mixes up the keys or a key with a QP
  // number names nothing.
  uint32_t nextLkey = 0x1000;
  uint32_t nextRkey = 0x80001000;
  uint32_t nextQpNum = 0x11;
  uint32_t nextHandle = 1;
};

Fabric& fabric();

template <typename Fake, typename Verbs>
Fake* fake(Verbs* verbs) {
  return reinterpret_cast<Fake*>(verbs);
}

// The ibv_context ops that verbs.h's inline ibv_poll_cq, ibv_post_send and
// ibv_post_recv dispatch to. Each takes the fabric lock.
int pollCq(ibv_cq* cq, int capacity, ibv_wc* out);
int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr);
int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr);

// The rest expect the fabric lock held.
FakeQp* findQp(uint32_t qpNum);
void moveToError(FakeQp& qp);  // flushes every queued send and posted recv
void moveToReset(FakeQp& qp);  // drops them silently

}  // namespace braid::fake_verbs
