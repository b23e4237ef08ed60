// IbComm: one direction of an ibverbs connection: its queue pair, the side
// channel that tells when the peer process is gone, and the requests in
// flight in posting order. IbSendComm / IbRecvComm (ib_send.cc, ib_recv.cc)
// run the two halves of ib_wire.h's protocol.
//
// Progress happens only inside the caller's calls (isend / irecv / test), as
// transport.h promises. Requests complete in posting order. After an error the
// comm is dead: every request in flight and every new one fails with it.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "transports/ibverbs/ib_queue_pair.h"
#include "transports/net/socket.h"
#include "transports/transport.h"

namespace braid::ibverbs {

class IbComm;

struct IbRequest : transport::Request {
  IbComm* comm = nullptr;
  uint64_t seq = 0;
  uint32_t tag = 0;
  uint8_t* data = nullptr;
  size_t size = 0;         // send: the message; recv: the capacity
  size_t bytes = 0;        // what arrived (recv) or went (send)
  size_t written = 0;      // send: bytes posted so far
  ibv_mr* mr = nullptr;    // the caller's buffer, registered for this message or by regMr
  bool ownsMr = false;     // mr was registered for this message: deregistered with it
  bool announced = false;  // recv: clear-to-send sent; send: matched with one
  bool posted = false;     // send: every piece of the write is on the queue
  bool done = false;
  uint64_t remote = 0;  // send: where the clear-to-send said the data goes
  uint32_t rkey = 0;
};

class IbComm {
 public:
  IbComm(std::unique_ptr<QueuePair> qp, net::Fd side, std::string peer);
  virtual ~IbComm();
  IbComm(const IbComm&) = delete;
  IbComm& operator=(const IbComm&) = delete;

  // Transport::test for a request of this comm.
  Status test(IbRequest* req, bool* done, size_t* size);

  // How often an idle comm with work in flight asks the side channel whether
  // the peer process still exists (a dead peer's queue pair never answers,
  // and the hardware's retries take seconds to give up).
  static constexpr std::chrono::milliseconds kLivenessEvery{10};

 protected:
  // Handles one successful completion of the kind this side expects.
  virtual Status onCompletion(const ibv_wc& wc) = 0;
  // Posts what the protocol allows now (clear-to-sends, writes).
  virtual Status advance() = 0;

  Status progress();
  IbRequest* newRequest(uint32_t tag, void* data, size_t size);
  // The registration in `mhandle` (regMr's) for a message at data, checked
  // before the message takes a sequence number: the handle must cover it
  // (transport.h). Null without a handle, and for a receive into a handle
  // that is not writable (registered per message then, as without one).
  Status registrationFor(const void* data, size_t size, void* mhandle, bool forReceive, ibv_mr** mr) const;
  // Registers the request's buffer for this message, unless a handle did.
  Status registerForMessage(IbRequest* r, bool remoteWrite);
  // The first request of `requests_` that `pred` holds for, or null.
  template <typename Pred>
  IbRequest* firstWhere(Pred pred) const {
    for (IbRequest* r : requests_)
      if (pred(*r)) return r;
    return nullptr;
  }
  void finish(IbRequest* r, size_t bytes);
  // Deregisters the request's buffer if this message registered it.
  void dropRegistration(IbRequest* r);
  void release(IbRequest* r);
  Status fail(Status st);
  Status closedByPeer(const std::string& how) const;
  // Tells the peer this end is closing, and waits briefly for the message to
  // leave (destroying the queue pair would drop it).
  void sayGoodbye();

  std::unique_ptr<QueuePair> qp_;
  std::string peer_;
  Status failed_;
  uint64_t nextSeq_ = 0;
  std::deque<IbRequest*> requests_;  // in flight, in posting order

 private:
  // Takes every completion waiting in the queue; *any: there was one.
  Status pollCompletions(bool* any);
  Status checkPeerAlive();

  net::Fd side_;
  std::vector<std::unique_ptr<IbRequest>> pool_;
  std::vector<IbRequest*> free_;
  std::chrono::steady_clock::time_point nextLivenessCheck_{};
};

class IbSendComm final : public transport::SendComm, public IbComm {
 public:
  using IbComm::IbComm;
  ~IbSendComm() override { sayGoodbye(); }
  Status isend(const void* data, size_t size, uint32_t tag, void* mhandle, transport::Request** req) override;

 private:
  Status onCompletion(const ibv_wc& wc) override;
  Status advance() override;
  Status match(IbRequest* r, const CtrlMsg& cts);
  Status writeSome(IbRequest* r);

  // Whether the bounce slot r would write from is free (the message kDepth
  // earlier, which used it, completed).
  bool bounceFree(const IbRequest& r) const;

  std::deque<CtrlMsg> clearToSend_;  // arrived, not yet matched with a send
};

class IbRecvComm final : public transport::RecvComm, public IbComm {
 public:
  using IbComm::IbComm;
  ~IbRecvComm() override { sayGoodbye(); }
  Status irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, transport::Request** req) override;

 private:
  Status onCompletion(const ibv_wc& wc) override;
  Status advance() override;
  Status refused(const CtrlMsg& msg);

  uint32_t credits_ = kDepth;  // clear-to-sends the sender can take now
};

}  // namespace braid::ibverbs
