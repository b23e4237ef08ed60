// ShmComm: what both ends of an shm connection share: the ring segment, the
// peer's doorbell, the watched peer process, the requests in flight (in posting
// order) and the failure state. ShmSendComm / ShmRecvComm (shm_send.cc,
// shm_recv.cc) add the data path.
//
// Progress happens inside test(), and at isend for a send with nothing
// queued ahead of it (its header and first piece go out at once). Requests
// complete in posting order.
// After an error the comm is dead: every request in flight and every new one
// fails with that error, and the peer is told (its end state becomes kFailed)
// so that it fails too instead of waiting. A test() that moves nothing checks
// the peer: a closed or failed end, or (at most every kLivenessCheckMs) a peer
// process that exited, becomes RemoteError naming its pid.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/deadline.h"
#include "base/status.h"
#include "transports/shm/doorbell.h"
#include "transports/shm/peer.h"
#include "transports/shm/ring.h"
#include "transports/shm/segment.h"
#include "transports/shm/shm_request.h"
#include "transports/shm/wait_set.h"
#include "transports/transport.h"

namespace braid::shm {

// What connection setup hands to a comm.
struct CommParts {
  Mapping ring;      // kControlBytes + ringBytes
  Mapping peerBell;  // the peer transport's DoorbellPage
  pid_t peerPid = 0;
  bool cma = false;  // large messages go through process_vm_readv
  size_t cmaThreshold = 0;
};

class ShmComm : public DataEndpoint {
 public:
  ShmComm(CommParts parts, bool sender, std::shared_ptr<WaitSet> waitSet);
  ~ShmComm() override;
  ShmComm(const ShmComm&) = delete;
  ShmComm& operator=(const ShmComm&) = delete;

  // Transport::test for a request of this comm.
  Status test(ShmRequest* req, bool* done, size_t* size);
  bool pending() const override { return inflightHead_ != nullptr; }
  bool usesCma() const { return cma_; }
  pid_t peerPid() const { return peer_.pid(); }

 protected:
  // Moves what can be moved now; *moved when anything changed.
  virtual Status progress(bool* moved) = 0;
  // The peer's end is closed or failed and nothing it left can still arrive.
  virtual bool peerEndGone() const = 0;

  ShmRequest* newRequest(uint32_t tag, void* data, size_t capacity);
  void retireCompleted();
  Status fail(Status st);
  Status checkPeer();
  std::string peerName() const { return "peer process " + std::to_string(peer_.pid()); }
  void ringPeer() { ringDoorbell(peerBell_); }

  Mapping ring_;
  Mapping bellMap_;
  RingControl* ctl_;
  RingData data_;
  uint64_t ringBytes_;
  DoorbellPage* peerBell_;
  PeerProcess peer_;
  bool cma_;
  size_t cmaThreshold_;
  std::atomic<uint32_t>* myState_;
  const std::atomic<uint32_t>* peerState_;
  Status failed_;
  uint32_t nextSeq_ = 0;
  ShmRequest* inflightHead_ = nullptr;
  ShmRequest* inflightTail_ = nullptr;
  ShmRequest* cursor_ = nullptr;  // the first request whose bytes are not all moved
  uint64_t nextCmaIndex_ = 0;

 private:
  RequestPool pool_;
  std::shared_ptr<WaitSet> waitSet_;
  Clock::time_point lastLivenessCheck_{};
};

// Bytes moved between publications of head / tail, so that the peer copies one
// piece while we copy the next.
constexpr uint64_t kPublishBytes = 64 << 10;

class ShmSendComm final : public transport::SendComm, public ShmComm {
 public:
  ShmSendComm(CommParts parts, std::shared_ptr<WaitSet> waitSet) : ShmComm(std::move(parts), true, std::move(waitSet)) {}
  Status isend(const void* data, size_t size, uint32_t tag, void* mhandle, transport::Request** req) override;
  bool mayProgress() const override;

 private:
  Status progress(bool* moved) override;
  bool peerEndGone() const override { return peerState_->load(std::memory_order_acquire) != 0; }
  // Writes queued frames, at most payloadBudget bytes of inline payload;
  // true when it wrote anything.
  bool writeFrames(uint64_t payloadBudget = UINT64_MAX);
  uint64_t freeBytes(uint64_t need);
  void publish();
  uint64_t head_ = 0, tailCache_ = 0, published_ = 0;
  uint64_t cmaSeen_ = 0;  // the receiver's cmaDone as last read
};

class ShmRecvComm final : public transport::RecvComm, public ShmComm {
 public:
  ShmRecvComm(CommParts parts, std::shared_ptr<WaitSet> waitSet) : ShmComm(std::move(parts), false, std::move(waitSet)) {}
  Status irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, transport::Request** req) override;
  bool mayProgress() const override;

 private:
  Status progress(bool* moved) override;
  bool peerEndGone() const override;
  Status acceptHeader(ShmRequest* r, const FrameHeader& h);
  Status pull(ShmRequest* r, uint64_t address);
  uint64_t available();
  void publish();
  uint64_t tail_ = 0, headCache_ = 0, published_ = 0;
};

}  // namespace braid::shm
