// One UCP context and worker: what a UCX transport and all its endpoints
// share. Held by shared_ptr, so endpoints and comms may outlive the transport
// (the Transport interface allows comms to die in any order); the worker is
// destroyed after the last of them.
//
// Threading: UCS_THREAD_MODE_SERIALIZED, which is the transport contract: one
// thread at a time, not always the same one (init connects on the caller's
// thread, collectives run on the caller's or on a stream's). UCX's own async
// thread locks its side itself.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "transports/ucx/ucp_api.h"

namespace braid::ucx {

// Written by an endpoint's error callback (UCX calls it during progress). On
// the heap: the worker keeps it while the endpoint closes, which may outlast
// the Endpoint object.
struct EndpointHealth {
  ucs_status_t failed = UCS_OK;
};

class UcxWorker {
 public:
  // NotSupported (with the reason) when UCX cannot be loaded or initialised.
  static Status create(std::shared_ptr<UcxWorker>* out);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  const UcpApi& api() const { return *api_; }
  ucp_worker_h worker() const { return worker_; }
  // Runs UCX's progress until it reports nothing more to do (bounded, so a
  // flood of arrivals cannot keep the caller here).
  void progress();
  // Sleeps up to timeoutMs on the worker's event fd unless something is
  // pending already; spurious returns are allowed.
  Status wait(int timeoutMs);
  std::string describe(ucs_status_t status) const { return api_->statusString(status); }
  // Finishes a UCP operation's status pointer: ok (done at once), in
  // progress (*request set), or the error.
  Status started(ucs_status_ptr_t ptr, const char* what, void** request) const;
  // "UCX 1.13.1".
  std::string version() const;
  // Takes an endpoint (and its health record) to close. With `flush`, what
  // was sent on it first leaves for good; a UCP flush needs the peer's
  // worker to progress too, so it is not waited for here: it goes on with
  // every later progress, and the worker's destructor finishes all that are
  // left at once, under one deadline. Without, the close is forced at once.
  void retire(ucp_ep_h ep, EndpointHealth* health, bool flush);
  // What was sent need not arrive any more (the communicator failed or was
  // aborted): retiring endpoints are closed at once, flushing ones too.
  void dropUndelivered();

 private:
  struct Closing {
    ucp_ep_h ep;
    EndpointHealth* health;
    void* request;  // the flush, then the close
    bool flushing;
  };
  UcxWorker() = default;
  // Moves retiring endpoints along: a finished flush becomes a forced close,
  // a finished close frees its records. Returns whether any are left.
  bool reap();
  // Starts c's forced close; false when it finished at once.
  bool forceClose(Closing& c);
  std::vector<Closing> closing_;
  bool abandoned_ = false;  // dropUndelivered() was called
  const UcpApi* api_ = nullptr;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int efd_ = -1;
};

}  // namespace braid::ucx
