#include "transports/ibverbs/ib_transport.h"

#include <thread>

#include "base/log.h"
#include "transports/ibverbs/ib_listen.h"
#include "transports/ibverbs/ib_memory.h"
#include "transports/net/address_handle.h"
#include "transports/registry.h"

namespace braid::ibverbs {

Status IbTransport::create(const transport::Options& options, std::unique_ptr<transport::Transport>* out) {
  if (options.handshakeTimeoutMs <= 0) return invalidArgument("ibverbs: handshake timeout must be positive");
  std::string whyNot;
  const VerbsApi* api = loadVerbs(&whyNot);
  if (api == nullptr) return notSupported("ibverbs: " + whyNot);
  IbPath path;
  BRAID_RETURN_IF_ERROR(IbPath::fromEnvironment(&path));
  std::vector<IbPort> ports;
  BRAID_RETURN_IF_ERROR(findPorts(*api, &ports));
  for (IbPort& port : ports) port.path = path;
  if (ports.empty())
    return notSupported("ibverbs: no active RDMA port (" + api->library +
                        " lists no device with an active port" + " that BRAID_IB_HCA lets in)");
  std::vector<net::Interface> interfaces;
  BRAID_RETURN_IF_ERROR(net::findInterfaces(options.ifname, AF_UNSPEC, &interfaces));
  if (interfaces.empty())
    return notSupported("ibverbs: no network interface for the side channel matches BRAID_SOCKET_IFNAME='" +
                        options.ifname + "'");
  out->reset(new IbTransport(options, *api, std::move(ports), interfaces.front()));
  return Status::ok();
}

Status IbTransport::checkDevice(int dev) const {
  if (dev < 0 || dev >= deviceCount())
    return invalidArgument("ibverbs: device " + std::to_string(dev) + " out of range (" +
                           std::to_string(deviceCount()) + " ports)");
  return Status::ok();
}

Status IbTransport::deviceProperties(int dev, transport::DeviceProperties* props) const {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  describePort(ports_[dev], props);
  return Status::ok();
}

Status IbTransport::listen(int dev, transport::Handle* handle,
                           std::unique_ptr<transport::ListenComm>* listenComm) {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  net::Fd fd;
  net::SocketAddress bound;
  BRAID_RETURN_IF_ERROR(net::listenOn(side_.address, 512, &fd, &bound));
  net::packAddressHandle(kHandleMagic, kHandleVersion, bound, handle);
  *listenComm = std::make_unique<IbListenComm>(std::move(fd), bound, api_, ports_[dev], options_);
  BRAID_INFO("ibverbs: listening on %s for connections to %s", bound.toString().c_str(),
             ports_[dev].name.c_str());
  return Status::ok();
}

Status IbTransport::connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                            std::unique_ptr<transport::SendComm>* sendComm) {
  sendComm->reset();
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  IbConnect* attempt = connects_.find(dev, handle, connectorId);
  if (attempt == nullptr) {
    net::SocketAddress address;
    if (!net::unpackAddressHandle(kHandleMagic, kHandleVersion, handle, &address))
      return invalidArgument("ibverbs connect: the handle was not made by an ibverbs listen()");
    attempt = connects_.add(dev, handle, connectorId,
                            std::make_unique<IbConnect>(connectorId, address, api_, ports_[dev], options_));
  }
  std::unique_ptr<IbSendComm> comm;
  Status st = attempt->step(&comm);
  if (st.isOk() && !comm) return Status::ok();
  connects_.remove(attempt);
  BRAID_RETURN_IF_ERROR(st);
  *sendComm = std::move(comm);
  return Status::ok();
}

Status IbTransport::accept(transport::ListenComm& listenComm, std::unique_ptr<transport::RecvComm>* recvComm,
                           uint64_t* connectorId) {
  auto* listener = dynamic_cast<IbListenComm*>(&listenComm);
  if (!listener)
    return invalidArgument("ibverbs accept: the listen comm does not belong to the ibverbs transport");
  return listener->accept(recvComm, connectorId);
}

Status IbTransport::regMr(void* data, size_t size, void** mhandle) {
  if (mhandle == nullptr) return invalidArgument("ibverbs regMr: null mhandle");
  *mhandle = nullptr;
  std::unique_ptr<IbMemory> memory;
  BRAID_RETURN_IF_ERROR(IbMemory::create(api_, ports_, data, size, &memory));
  *mhandle = memory.release();
  return Status::ok();
}

Status IbTransport::deregMr(void* mhandle) {
  delete static_cast<IbMemory*>(mhandle);
  return Status::ok();
}

Status IbTransport::test(transport::Request* req, bool* done, size_t* size) {
  if (!req) return invalidArgument("ibverbs test: null request");
  auto* r = static_cast<IbRequest*>(req);
  return r->comm->test(r, done, size);
}

Status IbTransport::wait(int timeoutMs) {
  (void)timeoutMs;
  std::this_thread::yield();
  return Status::ok();
}

BRAID_REGISTER_TRANSPORT(ibverbs, IbTransport::create);

}  // namespace braid::ibverbs
