#include "transports/netplugin/netplugin_comm.h"

#include <climits>

namespace braid::netplugin {

// Nothing may touch the user's buffers once the comm is gone: registrations
// are dropped and the plugin's comm closed (which ends its requests).
NetPluginComm::~NetPluginComm() {
  const NetApi& net = lib_->net();
  for (auto& r : inFlight_)
    if (r->mhandle) net.deregMr(comm_, r->mhandle);
  if (receiving_)
    net.closeRecv(comm_);
  else
    net.closeSend(comm_);
}

Status NetPluginComm::fail(Status st) {
  broken_ = st;
  return st;
}

Status NetPluginComm::post(void* data, size_t size, uint32_t tag, transport::Request** out) {
  *out = nullptr;
  if (!broken_.isOk()) return broken_;
  if (size > static_cast<size_t>(INT_MAX))
    return invalidArgument("netplugin: a message of " + std::to_string(size) +
                           " bytes is over the 2 GiB - 1 an NCCL plugin can report (test's sizes are int)");
  auto r = std::make_unique<NetPluginRequest>();
  r->comm = this;
  r->data = data;
  r->size = size;
  r->tag = tag;
  NetPluginRequest* raw = r.get();
  inFlight_.push_back(std::move(r));
  // Posted in order: behind an earlier request the plugin could not take yet,
  // this one waits too.
  if (inFlight_.size() == 1 || inFlight_[inFlight_.size() - 2]->request)
    if (Status st = start(raw); !st.isOk()) {
      forget(raw);  // and its registration, if the plugin made one
      return fail(st);
    }
  *out = raw;
  return Status::ok();
}

Status NetPluginComm::start(NetPluginRequest* r) {
  const NetApi& net = lib_->net();
  if (!r->mhandle)
    BRAID_RETURN_IF_ERROR(statusOf(net.regMr(comm_, r->data, r->size, NCCL_PTR_HOST, &r->mhandle), "regMr"));
  size_t size = r->size;
  int tag = static_cast<int>(r->tag);
  if (receiving_)
    return statusOf(net.irecv(comm_, 1, &r->data, &size, &tag, &r->mhandle, &r->request),
                    "irecv from " + peer_);
  return statusOf(net.isend(comm_, r->data, size, tag, r->mhandle, &r->request), "isend to " + peer_);
}

Status NetPluginComm::poll(NetPluginRequest* r) {
  if (!r->request) {
    BRAID_RETURN_IF_ERROR(start(r));
    if (!r->request) return Status::ok();  // still not taken
  }
  int done = 0, size = 0;
  BRAID_RETURN_IF_ERROR(statusOf(lib_->net().test(r->request, &done, &size), "test with " + peer_));
  if (done) {
    r->done = true;
    if (receiving_) r->size = static_cast<size_t>(size);
    lib_->net().deregMr(comm_, r->mhandle);
    r->mhandle = nullptr;
  }
  return Status::ok();
}

void NetPluginComm::forget(NetPluginRequest* r) {
  for (auto it = inFlight_.begin(); it != inFlight_.end(); ++it)
    if (it->get() == r) {
      if (r->mhandle) lib_->net().deregMr(comm_, r->mhandle);
      inFlight_.erase(it);
      return;
    }
}

Status NetPluginComm::test(NetPluginRequest* r, bool* done, size_t* size) {
  *done = false;
  if (!broken_.isOk()) {
    forget(r);  // an error completes the request, and frees it
    return broken_;
  }
  // Progress from the oldest request up to r: r is done only once every
  // earlier one is (they stay queued until their own test reports them).
  for (auto& q : inFlight_) {
    if (!q->done)
      if (Status st = poll(q.get()); !st.isOk()) {
        forget(r);
        return fail(st);
      }
    if (!q->done) return Status::ok();
    if (q.get() == r) break;
  }
  *done = true;
  *size = r->size;
  forget(r);
  return Status::ok();
}

}  // namespace braid::netplugin
