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

#include <functional>
#include <memory>
#include <string>

#include "base/deadline.h"
#include "base/peer_regions.h"
#include "base/status.h"
#include "transports/shm/doorbell.h"
#include "transports/shm/local_end.h"
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
  bool cma = false;   // large messages go by cross-memory attach
  bool push = false;  // sender: and it may push them (process_vm_writev)
  size_t cmaThreshold = 0;
  // This transport's end (its doorbell page holds the process's copy
  // counts): shared, as a comm may outlive the transport.
  std::shared_ptr<LocalEnd> local;
};

class ShmComm : public DataEndpoint {
 public:
  ShmComm(CommParts parts, bool sender);
  ~ShmComm() override;
  ShmComm(const ShmComm&) = delete;
  ShmComm& operator=(const ShmComm&) = delete;

  // Transport::test for a request of this comm.
  Status test(ShmRequest* req, bool* done, size_t* size);
  bool pending() const override { return inflightHead_ != nullptr; }
  bool usesCma() const { return cma_; }
  // This process's copies ahead in this end's direction (sends or receives).
  int32_t processPendingCopies() const { return pendingCopies_->load(std::memory_order_relaxed); }
  pid_t peerPid() const { return peer_.pid(); }
  // For tests: `fn` runs once, in the next test() whose progress moved
  // nothing, just before the peer's liveness is judged: the window in which
  // the peer may write its last message and close (test() takes a second
  // look then).
  void runAfterNextEmptyProgressForTest(std::function<void()> fn) { afterEmptyProgress_ = std::move(fn); }

 protected:
  // Moves what can be moved now; *moved when anything changed.
  virtual Status progress(bool* moved) = 0;
  // The peer's end is closed or failed and nothing it left can still arrive.
  virtual bool peerEndGone() const = 0;

  ShmRequest* newRequest(uint32_t tag, void* data, size_t capacity);
  // Counts r in this process's pending copies (DoorbellPage) until uncount(r).
  void count(ShmRequest* r);
  void uncount(ShmRequest* r) {
    if (!r->counted) return;
    r->counted = false;
    --counted_;
    pendingCopies_->fetch_sub(1, std::memory_order_relaxed);
  }
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
  std::shared_ptr<LocalEnd> local_;
  DoorbellPage* ownBell_;
  PeerProcess peer_;
  bool cma_;
  bool push_;
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
  std::atomic<int32_t>* pendingCopies_;  // ownBell_'s count for this end's direction
  int32_t counted_ = 0;                  // what this comm added to it
  RequestPool pool_;
  Clock::time_point lastLivenessCheck_{};
  std::function<void()> afterEmptyProgress_;
};

// Bytes moved between publications of head / tail, so that the peer copies one
// piece while we copy the next.
constexpr uint64_t kPublishBytes = 64 << 10;

class ShmSendComm final : public transport::SendComm, public ShmComm {
 public:
  explicit ShmSendComm(CommParts parts) : ShmComm(std::move(parts), true) {}
  Status isend(const void* data, size_t size, uint32_t tag, void* mhandle, transport::Request** req) override;
  bool mayProgress() const override;
  bool pushes() const { return push_; }
  uint64_t pushed() const { return pushed_; }  // CMA messages this end copied

 private:
  Status progress(bool* moved) override;
  bool peerEndGone() const override { return peerState_->load(std::memory_order_acquire) != 0; }
  // Writes queued frames, at most payloadBudget bytes of inline payload;
  // true when it wrote anything.
  bool writeFrames(uint64_t payloadBudget = UINT64_MAX);
  uint64_t freeBytes(uint64_t need);
  void publish();
  // Pushes the oldest CMA message not yet copied when the receiver offers
  // the receive it goes to and this end wins the claim; *moved if it did.
  Status tryPush(bool* moved);
  // The rule tryPush applies: this end has fewer copies ahead than the
  // receiver's, or as many and the receiver is busy with local work.
  bool mayPush() const;
  uint64_t head_ = 0, tailCache_ = 0, published_ = 0;
  uint64_t cmaSeen_ = 0;  // the receiver's cmaDone as last read
  uint64_t awaitedOffer_ = 0;  // the offerSeq that would let tryPush go on (0: none)
  uint64_t pushed_ = 0;
};

class ShmRecvComm final : public transport::RecvComm, public ShmComm {
 public:
  explicit ShmRecvComm(CommParts parts) : ShmComm(std::move(parts), false) {}
  // The caller frees its receive buffers next: waits for a push into one of
  // them that the sender has claimed, and keeps any other from starting.
  ~ShmRecvComm() override;
  Status irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, transport::Request** req) override;
  bool mayProgress() const override;
  void startingLocalWork() override {
    if (offered_) ringPeer();
  }
  uint64_t pulled() const { return pulled_; }  // CMA messages this end copied
  // Of those, the ones read through a mapping of the sender's braidMemAlloc
  // region rather than with process_vm_readv.
  uint64_t pulledFromMappings() const { return pulledFromMappings_; }

 private:
  Status progress(bool* moved) override;
  bool peerEndGone() const override;
  Status acceptHeader(ShmRequest* r, const FrameHeader& h);
  // Claims the copy of the CMA message whose header was just read: pulls it
  // and acknowledges, or leaves it to the sender that claimed it first.
  Status claimOrLeave(ShmRequest* r, const FrameHeader& h, bool* pulledIt);
  Status pull(ShmRequest* r, const FrameHeader& h);
  // Offers the cursor's receive for a push while its header has not come
  // and it could take a CMA message; withdraws the offer otherwise.
  void refreshOffer();
  void withdrawOffer();
  uint64_t available();
  void publish();
  uint64_t tail_ = 0, headCache_ = 0, published_ = 0;
  bool offered_ = false;
  uint32_t offeredSeq_ = 0;
  uint64_t pulled_ = 0;
  uint64_t pulledFromMappings_ = 0;
  // The sender's braidMemAlloc regions this end has mapped, to read its
  // messages from them with plain loads instead of process_vm_readv. Per
  // connection: its pid names the sender only while the connection lives.
  PeerRegions senderRegions_{"shm"};
};

}  // namespace braid::shm
