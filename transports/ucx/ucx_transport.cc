#include "transports/ucx/ucx_transport.h"

#include "base/log.h"
#include "transports/net/address_handle.h"
#include "transports/registry.h"
#include "transports/ucx/ucx_comm.h"
#include "transports/ucx/ucx_wire.h"

namespace braid::ucx {

Status UcxTransport::create(const transport::Options& options, std::unique_ptr<transport::Transport>* out) {
  if (options.handshakeTimeoutMs <= 0) return invalidArgument("ucx: handshake timeout must be positive");
  std::vector<net::Interface> devices;
  BRAID_RETURN_IF_ERROR(net::findInterfaces(options.ifname, AF_UNSPEC, &devices));
  if (devices.empty())
    return notSupported("ucx: no network interface is up that matches BRAID_SOCKET_IFNAME='" +
                        options.ifname + "' (UCX's connection manager needs an IP address)");
  std::shared_ptr<UcxWorker> worker;
  BRAID_RETURN_IF_ERROR(UcxWorker::create(&worker));
  BRAID_INFO("ucx: %s, listeners on %s", worker->version().c_str(), devices[0].name.c_str());
  out->reset(new UcxTransport(options, std::move(devices), std::move(worker)));
  return Status::ok();
}

// Pending connects hold endpoints on the worker: they go first.
UcxTransport::~UcxTransport() { connects_.clear(); }

Status UcxTransport::checkDevice(int dev) const {
  if (dev < 0 || dev >= deviceCount())
    return invalidArgument("ucx: device " + std::to_string(dev) + " out of range (" +
                           std::to_string(deviceCount()) + " devices)");
  return Status::ok();
}

Status UcxTransport::deviceProperties(int dev, transport::DeviceProperties* props) const {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  net::describeInterface(devices_[dev], props);  // the address a listener is reached at
  return Status::ok();
}

Status UcxTransport::listen(int dev, transport::Handle* handle,
                            std::unique_ptr<transport::ListenComm>* listenComm) {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  std::unique_ptr<UcxListenComm> listener;
  net::SocketAddress bound;
  BRAID_RETURN_IF_ERROR(
      UcxListenComm::create(worker_, devices_[dev].address, options_, keys_, &listener, &bound));
  net::packAddressHandle(kMagic, kHandleVersion, bound, handle);
  *listenComm = std::move(listener);
  BRAID_INFO("ucx: listening on %s (%s)", bound.toString().c_str(), devices_[dev].name.c_str());
  return Status::ok();
}

Status UcxTransport::connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                             std::unique_ptr<transport::SendComm>* sendComm) {
  sendComm->reset();
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  UcxConnect* attempt = connects_.find(dev, handle, connectorId);
  if (attempt == nullptr) {
    net::SocketAddress address;
    if (!net::unpackAddressHandle(kMagic, kHandleVersion, handle, &address))
      return invalidArgument("ucx connect: the handle was not made by a ucx listen()");
    auto c = std::make_unique<UcxConnect>(connectorId, options_.secret);
    BRAID_RETURN_IF_ERROR(c->start(worker_, address));
    attempt = connects_.add(dev, handle, connectorId, std::move(c));
  }
  worker_->progress();
  Status st = attempt->step(sendComm);
  if (st.isOk() && !*sendComm) return Status::ok();
  connects_.remove(attempt);
  return st;
}

Status UcxTransport::accept(transport::ListenComm& listenComm, std::unique_ptr<transport::RecvComm>* recvComm,
                            uint64_t* connectorId) {
  auto* listener = dynamic_cast<UcxListenComm*>(&listenComm);
  if (!listener) return invalidArgument("ucx accept: the listen comm does not belong to the ucx transport");
  return listener->accept(recvComm, connectorId);
}

Status UcxTransport::test(transport::Request* req, bool* done, size_t* size) {
  if (!req) return invalidArgument("ucx test: null request");
  auto* r = static_cast<UcxRequest*>(req);
  return r->comm->test(r, done, size);
}

Status UcxTransport::wait(int timeoutMs) { return worker_->wait(timeoutMs); }

BRAID_REGISTER_TRANSPORT(ucx, UcxTransport::create);

}  // namespace braid::ucx
