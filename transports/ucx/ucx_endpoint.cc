#include "transports/ucx/ucx_endpoint.h"

#include "base/deadline.h"
#include "base/log.h"

namespace braid::ucx {
Endpoint::Endpoint(std::shared_ptr<UcxWorker> worker, std::string peer)
    : worker_(std::move(worker)), peer_(std::move(peer)) {}

Status Endpoint::create(ucp_ep_params_t* params) {
  params->field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params->err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params->err_handler.cb = &Endpoint::onError;
  params->err_handler.arg = health_;
  ucs_status_t st = worker_->api().epCreate(worker_->worker(), params, &ep_);
  if (st != UCS_OK) {
    ep_ = nullptr;
    return remoteError("ucx: cannot create an endpoint to " + peer_ + ": " + worker_->describe(st));
  }
  return Status::ok();
}

Status Endpoint::connect(std::shared_ptr<UcxWorker> worker, const net::SocketAddress& address,
                         std::unique_ptr<Endpoint>* out) {
  std::unique_ptr<Endpoint> e(new Endpoint(std::move(worker), address.toString()));
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
  params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&address.storage);
  params.sockaddr.addrlen = address.length;
  BRAID_RETURN_IF_ERROR(e->create(&params));
  *out = std::move(e);
  return Status::ok();
}

Status Endpoint::accept(std::shared_ptr<UcxWorker> worker, ucp_conn_request_h request, std::string peer,
                        std::unique_ptr<Endpoint>* out) {
  std::unique_ptr<Endpoint> e(new Endpoint(std::move(worker), std::move(peer)));
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
  params.conn_request = request;
  BRAID_RETURN_IF_ERROR(e->create(&params));
  *out = std::move(e);
  return Status::ok();
}

void Endpoint::onError(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* health = static_cast<EndpointHealth*>(arg);
  if (health->failed == UCS_OK) health->failed = status;
}

Status Endpoint::failure() const {
  if (health_ == nullptr) return remoteError("ucx: the endpoint to " + peer_ + " is closed");
  if (health_->failed == UCS_OK) return Status::ok();
  return remoteError("connection closed by peer " + peer_ + " (ucx: " + worker_->describe(health_->failed) +
                     ")");
}

void Endpoint::close(bool flush) {
  if (ep_ == nullptr) {
    delete health_;  // never connected, or closed: no callback can come
    health_ = nullptr;
    return;
  }
  worker_->retire(ep_, health_, flush);
  ep_ = nullptr;
  health_ = nullptr;
}

void Endpoint::closeForcibly() {
  close(false);
  // A forced close ends the endpoint's operations within a progress or two.
  worker_->progress();
}

Endpoint::~Endpoint() { close(true); }

}  // namespace braid::ucx
