#include "transports/ucx/ucx_listen.h"

#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "transports/ucx/ucx_comm.h"
#include "transports/ucx/ucx_wire.h"

namespace braid::ucx {

Status KeyRegistry::allocate(uint32_t* key) {
  do {  // 0 stands for "no key yet"
    BRAID_RETURN_IF_ERROR(net::randomBytes(key, sizeof(*key)));
  } while (*key == 0 || std::find(live_.begin(), live_.end(), *key) != live_.end());
  live_.push_back(*key);
  return Status::ok();
}

void KeyRegistry::release(uint32_t key) {
  auto it = std::find(live_.begin(), live_.end(), key);
  if (it != live_.end()) live_.erase(it);
}

Status UcxListenComm::create(std::shared_ptr<UcxWorker> worker, const net::SocketAddress& bind,
                             const transport::Options& options, std::shared_ptr<KeyRegistry> keys,
                             std::unique_ptr<UcxListenComm>* out, net::SocketAddress* bound) {
  std::unique_ptr<UcxListenComm> l(new UcxListenComm(std::move(worker), options, std::move(keys)));
  ucp_listener_params_t params{};
  params.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&bind.storage);
  params.sockaddr.addrlen = bind.length;
  params.conn_handler.cb = &UcxListenComm::onConnection;
  params.conn_handler.arg = l.get();
  const UcpApi& api = l->worker_->api();
  ucs_status_t st = api.listenerCreate(l->worker_->worker(), &params, &l->listener_);
  if (st != UCS_OK) {
    l->listener_ = nullptr;
    return Status(Code::kSystemError,
                  "ucx: cannot listen on " + bind.toString() + ": " + l->worker_->describe(st));
  }
  ucp_listener_attr_t attr{};
  attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  st = api.listenerQuery(l->listener_, &attr);
  if (st != UCS_OK) return Status(Code::kSystemError, "ucx: ucp_listener_query: " + l->worker_->describe(st));
  *bound = bind;
  std::memcpy(&bound->storage, &attr.sockaddr, std::min(sizeof(bound->storage), sizeof(attr.sockaddr)));
  *out = std::move(l);
  return Status::ok();
}

UcxListenComm::~UcxListenComm() {
  for (auto& p : pending_) {
    if (p->key != 0) keys_->release(p->key);
    p->endpoint->closeForcibly();  // strangers and half-done peers get no flush
  }
  pending_.clear();
  const UcpApi& api = worker_->api();
  if (listener_) {
    for (ucp_conn_request_h r : arrived_) api.listenerReject(listener_, r);
    api.listenerDestroy(listener_);
  }
}

// The connecting peer's address, for messages.
std::string UcxListenComm::clientOf(ucp_conn_request_h request) const {
  ucp_conn_request_attr_t attr{};
  attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
  if (worker_->api().connRequestQuery(request, &attr) != UCS_OK) return "a connecting peer";
  net::SocketAddress a;
  std::memcpy(&a.storage, &attr.client_address, std::min(sizeof(a.storage), sizeof(attr.client_address)));
  a.length = a.family() == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  return a.toString();
}

void UcxListenComm::onConnection(ucp_conn_request_h request, void* arg) {
  static_cast<UcxListenComm*>(arg)->arrived_.push_back(request);
}

Status UcxListenComm::step(Pending& p, bool* finished) {
  *finished = false;
  if (p.key == 0) {
    bool authenticated = false;
    BRAID_RETURN_IF_ERROR(p.handshake.step(p.channel, &authenticated));
    if (!authenticated) return Status::ok();
    BRAID_RETURN_IF_ERROR(keys_->allocate(&p.key));
    std::memcpy(p.reply, &kMagic, 4);
    std::memcpy(p.reply + 4, &p.key, 4);
  }
  BRAID_RETURN_IF_ERROR(p.channel.send(p.reply, kAcceptedBytes, &p.replied));
  *finished = p.replied == kAcceptedBytes;
  return Status::ok();
}

Status UcxListenComm::accept(std::unique_ptr<transport::RecvComm>* recvComm, uint64_t* connectorId) {
  recvComm->reset();
  worker_->progress();
  while (!arrived_.empty()) {
    ucp_conn_request_h request = arrived_.front();
    arrived_.pop_front();
    auto p = std::make_unique<Pending>(options_.secret, options_.handshakeTimeoutMs);
    Status st = Endpoint::accept(worker_, request, clientOf(request), &p->endpoint);
    if (!st.isOk()) {
      BRAID_WARN("ucx: dropped a connection request: %s", st.message().c_str());
      continue;
    }
    p->channel.attach(p->endpoint.get());
    pending_.push_back(std::move(p));
  }
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = *pending_[i];
    bool finished = false;
    Status st = step(p, &finished);
    if (st.isOk() && !finished && p.deadline.expired())
      st = timeoutError("did not complete the handshake within " +
                        std::to_string(options_.handshakeTimeoutMs) + " ms");
    if (!st.isOk()) {
      BRAID_WARN("ucx: dropped a connection: %s", st.message().c_str());
      if (p.key != 0) keys_->release(p.key);
      p.endpoint->closeForcibly();
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    if (!finished) {
      ++i;
      continue;
    }
    *connectorId = p.handshake.connectorId();
    std::shared_ptr<KeyRegistry> keys = keys_;
    *recvComm = std::make_unique<UcxRecvComm>(std::move(p.endpoint), p.key,
                                              [keys](uint32_t key) { keys->release(key); });
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    return Status::ok();
  }
  return Status::ok();
}

}  // namespace braid::ucx
