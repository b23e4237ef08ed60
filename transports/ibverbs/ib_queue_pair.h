// QueuePair: one end of an ibverbs connection: its completion queue, its
// reliable-connected queue pair, and its registered control slots and bounce
// slots. It posts work and hands back completions; what they mean (matching,
// requests, failures) is the comm's (ib_comm.h).
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <string>

#include "base/status.h"
#include "transports/ibverbs/ib_devices.h"
#include "transports/ibverbs/ib_wire.h"

namespace braid::ibverbs {

// What a completion's wr_id says: the kind of work in its top byte.
enum class Work : uint8_t { kCtrlRecv = 1, kCtrlSend = 2, kWrite = 3 };
constexpr uint64_t kLastPiece = uint64_t{1} << 55;
inline uint64_t workId(Work w, uint64_t value) { return (uint64_t{static_cast<uint8_t>(w)} << 56) | value; }
inline Work workOf(uint64_t wrId) { return static_cast<Work>(wrId >> 56); }
inline uint64_t valueOf(uint64_t wrId) { return wrId & ((uint64_t{1} << 55) - 1); }

class QueuePair {
 public:
  // The queue pair in INIT, its control receives posted.
  static Status create(const VerbsApi& api, const IbPort& port, std::unique_ptr<QueuePair>* out);
  ~QueuePair();
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  QpInfo localInfo() const;
  // To ready-to-receive with the peer's address, then ready-to-send.
  Status connect(const QpInfo& peer);

  // Completions, at most n; -1 when the completion queue itself failed.
  int poll(ibv_wc* wc, int n) { return ibv_poll_cq(cq_, n, wc); }
  std::string describe(const ibv_wc& wc) const;

  const CtrlMsg& received(uint32_t slot) const {
    return *reinterpret_cast<const CtrlMsg*>(memory_.get() + size_t{slot} * kSlotBytes);
  }
  Status repost(uint32_t slot);

  // A control message from the next free send slot (false: none free now;
  // slots free in order as their sends complete, see ctrlSent()).
  bool canSendCtrl() const { return ctrlInFlight_ < kSendSlots; }
  Status sendCtrl(const CtrlMsg& msg);
  void ctrlSent() { --ctrlInFlight_; }
  bool ctrlIdle() const { return ctrlInFlight_ == 0; }

  // One RDMA write of [local, local + bytes) into the peer's (remote, rkey),
  // signaled with `wrId`; the last piece of a message carries `imm`.
  Status write(uint64_t wrId, const void* local, uint32_t lkey, size_t bytes, uint64_t remote, uint32_t rkey,
               bool withImm, uint32_t imm);
  // Whether another write may go on the send queue now (its completions free it).
  bool canWrite() const { return writesInFlight_ < kMaxWritesInFlight; }
  void writeDone() { --writesInFlight_; }

  uint8_t* bounce(uint64_t seq) const { return bounce_ + (seq % kDepth) * kBounceBytes; }
  uint32_t lkey() const { return mr_->lkey; }
  uint32_t rkey() const { return mr_->rkey; }
  // Registers a caller's buffer with this queue pair's protection domain:
  // as an RDMA target (remoteWrite), or as a send's source.
  Status registerBuffer(void* data, size_t bytes, bool remoteWrite, ibv_mr** mr) const;
  void deregister(ibv_mr* mr) const;
  size_t maxWriteBytes() const { return maxWriteBytes_; }
  const std::string& portName() const { return port_.name; }
  const ibv_pd* pd() const { return port_.device->pd(); }

 private:
  static constexpr uint32_t kSlotBytes = 64;
  static constexpr uint32_t kSendQueueDepth = 128;
  static constexpr uint32_t kMaxWritesInFlight = kSendQueueDepth - kSendSlots;

  QueuePair(const VerbsApi& api, const IbPort& port) : api_(api), port_(port) {}
  CtrlMsg* sendSlot(uint32_t i) const {
    return reinterpret_cast<CtrlMsg*>(memory_.get() + (kRecvSlots + i) * kSlotBytes);
  }
  Status fail(const char* call, int err) const;

  const VerbsApi& api_;
  IbPort port_;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::unique_ptr<uint8_t[]> memory_;  // recv slots | send slots | bounce slots
  uint8_t* bounce_ = nullptr;
  uint32_t psn_ = 0;
  uint32_t nextSendSlot_ = 0, ctrlInFlight_ = 0, writesInFlight_ = 0;
  size_t maxWriteBytes_ = 0;
};

}  // namespace braid::ibverbs
