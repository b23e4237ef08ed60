// The two ends of a UCX connection: a UcxSendComm posts tagged sends on its
// endpoint, a UcxRecvComm posts tagged receives on the worker for its key
// (ucx_wire.h). Both keep their requests in posting order, so that test()
// reports them done in that order, as the transport contract promises.
//
// Requests come from a per-comm pool: the data path allocates nothing per
// message beyond what UCX allocates itself.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "transports/transport.h"
#include "transports/ucx/ucx_endpoint.h"

namespace braid::ucx {

class UcxComm;

struct UcxRequest : transport::Request {
  UcxComm* comm = nullptr;
  void* ucp = nullptr;    // UCX's request while it is in flight
  bool finished = false;  // UCX is done with it (error holds how)
  Status error;
  size_t size = 0;      // send: the size; recv: the bytes received
  size_t capacity = 0;  // recv: the posted capacity
  uint32_t tag = 0;
  ucp_tag_recv_info_t info{};
  UcxRequest* next = nullptr;  // in the pool's free list
};

// What both ends share: the endpoint, the key, the requests in flight.
class UcxComm {
 public:
  UcxComm(std::unique_ptr<Endpoint> endpoint, uint32_t key) : endpoint_(std::move(endpoint)), key_(key) {}
  virtual ~UcxComm() = default;
  UcxComm(const UcxComm&) = delete;
  UcxComm& operator=(const UcxComm&) = delete;

  // Transport::test for a request of this comm.
  Status test(UcxRequest* r, bool* done, size_t* size);
  uint32_t key() const { return key_; }

 protected:
  // A request from the pool, queued as the newest in flight.
  UcxRequest* take();
  // Back to the pool, out of the in-flight queue.
  void retire(UcxRequest* r);
  // Asks UCX whether r finished; fills r->finished, r->error, r->size.
  virtual void poll(UcxRequest* r) = 0;
  // r has not finished: the end's chance to give up on a dead peer.
  virtual void stalled() {}
  // Ends every request still in flight (a receiving end closes its endpoint
  // and cancels its receives; a sending end's close ends its sends), then
  // frees UCX's request objects. For the destructors, which must leave no
  // operation on the user's buffers.
  void endAll(bool receiving);

  std::unique_ptr<Endpoint> endpoint_;
  const uint32_t key_;
  Status dead_;  // once set, the comm refuses new requests with it
  std::deque<UcxRequest*> inflight_;

 private:
  std::vector<std::unique_ptr<UcxRequest>> all_;
  UcxRequest* free_ = nullptr;
};

class UcxSendComm final : public transport::SendComm, public UcxComm {
 public:
  using UcxComm::UcxComm;
  ~UcxSendComm() override;
  Status isend(const void* data, size_t size, uint32_t tag, void* mhandle, transport::Request** req) override;

 private:
  void poll(UcxRequest* r) override;
};

class UcxRecvComm final : public transport::RecvComm, public UcxComm {
 public:
  // `release` is called with the key when the comm goes (keys are unique
  // among the worker's live connections).
  UcxRecvComm(std::unique_ptr<Endpoint> endpoint, uint32_t key, std::function<void(uint32_t)> release)
      : UcxComm(std::move(endpoint), key), release_(std::move(release)) {}
  ~UcxRecvComm() override;
  Status irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, transport::Request** req) override;

 private:
  void poll(UcxRequest* r) override;
  void stalled() override;
  // The verdict on a received message (tag and size checks).
  void judge(UcxRequest* r, ucs_status_t status);
  std::function<void(uint32_t)> release_;
};

}  // namespace braid::ucx
