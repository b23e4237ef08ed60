#include "transports/tcp/tcp_transport.h"

#include "base/env.h"
#include "base/log.h"
#include "transports/net/address_handle.h"
#include "transports/registry.h"
#include "transports/tcp/frame.h"
#include "transports/tcp/tcp_comm.h"
#include "transports/tcp/tcp_listen.h"

namespace braid::tcp {
namespace {

constexpr uint8_t kHandleVersion = 1;

Status familyFromEnv(int* family) {
  std::string text = env::getString("BRAID_SOCKET_FAMILY");
  if (text.empty()) *family = AF_UNSPEC;
  else if (text == "AF_INET" || text == "4" || text == "ipv4") *family = AF_INET;
  else if (text == "AF_INET6" || text == "6" || text == "ipv6") *family = AF_INET6;
  else return invalidArgument("BRAID_SOCKET_FAMILY='" + text + "': expected AF_INET or AF_INET6");
  return Status::ok();
}

}  // namespace

TcpTransport::TcpTransport(const transport::Options& options, std::vector<net::Interface> devices)
    : options_(options), devices_(std::move(devices)) {}

Status TcpTransport::create(const transport::Options& options, std::unique_ptr<transport::Transport>* out) {
  if (options.nSocks < 0 || options.nSocks > kMaxSocks)
    return invalidArgument("tcp: BRAID_NSOCKS=" + std::to_string(options.nSocks) + " is out of range 1.. (0: automatic)" +
                           std::to_string(kMaxSocks));
  if (options.handshakeTimeoutMs <= 0) return invalidArgument("tcp: handshake timeout must be positive");
  if (options.trafficClass < -1 || options.trafficClass > 255)
    return invalidArgument("tcp: traffic class " + std::to_string(options.trafficClass) +
                           " is outside [0, 255] (-1: the system's)");
  int family = AF_UNSPEC;
  BRAID_RETURN_IF_ERROR(familyFromEnv(&family));
  std::vector<net::Interface> devices;
  BRAID_RETURN_IF_ERROR(net::findInterfaces(options.ifname, family, &devices));
  if (devices.empty())
    return notSupported("tcp: no network interface is up that matches BRAID_SOCKET_IFNAME='" + options.ifname + "'");
  out->reset(new TcpTransport(options, std::move(devices)));
  return Status::ok();
}

// True when `address` is this host's: one of our interface addresses or loopback.
bool TcpTransport::isLocal(const net::SocketAddress& address) const {
  if (address.isLoopback()) return true;
  net::SocketAddress bare = address;
  bare.setPort(0);
  for (const net::Interface& itf : devices_) {
    net::SocketAddress mine = itf.address;
    mine.setPort(0);
    if (mine.toString() == bare.toString()) return true;
  }
  return false;
}

Status TcpTransport::checkDevice(int dev) const {
  if (dev < 0 || dev >= deviceCount())
    return invalidArgument("tcp: device " + std::to_string(dev) + " out of range (" + std::to_string(deviceCount()) +
                           " devices)");
  return Status::ok();
}

Status TcpTransport::deviceProperties(int dev, transport::DeviceProperties* props) const {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  net::describeInterface(devices_[dev], props);
  return Status::ok();
}

Status TcpTransport::listen(int dev, transport::Handle* handle, std::unique_ptr<transport::ListenComm>* listenComm) {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  net::Fd fd;
  net::SocketAddress bound;
  BRAID_RETURN_IF_ERROR(net::listenOn(devices_[dev].address, 512, &fd, &bound));
  net::packAddressHandle(kHandleMagic, kHandleVersion, bound, handle);
  *listenComm = std::make_unique<TcpListenComm>(std::move(fd), bound, options_, pollSet_);
  if (options_.trafficClass >= 0)
    BRAID_INFO("tcp: listening on %s (%s); every data socket carries traffic class 0x%02x",
               bound.toString().c_str(), devices_[dev].name.c_str(), options_.trafficClass);
  else
    BRAID_INFO("tcp: listening on %s (%s)", bound.toString().c_str(), devices_[dev].name.c_str());
  return Status::ok();
}

Status TcpTransport::connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                             std::unique_ptr<transport::SendComm>* sendComm) {
  sendComm->reset();
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  PendingConnect* attempt = connects_.find(dev, handle, connectorId);
  if (attempt == nullptr) {
    net::SocketAddress address;
    if (!net::unpackAddressHandle(kHandleMagic, kHandleVersion, handle, &address))
      return invalidArgument("tcp connect: the handle was not made by a tcp listen()");
    transport::Options options = options_;
    if (options.nSocks == 0) options.nSocks = isLocal(address) ? 1 : 2;
    attempt = connects_.add(dev, handle, connectorId,
                            std::make_unique<PendingConnect>(connectorId, address, options, pollSet_));
  }
  bool finished = false;
  std::vector<net::Fd> socks;
  Status st = attempt->step(&finished, &socks);
  if (st.isOk() && !finished) return Status::ok();
  std::string peer = attempt->address().toString();
  connects_.remove(attempt);
  BRAID_RETURN_IF_ERROR(st);
  *sendComm = std::make_unique<TcpSendComm>(std::move(socks), std::move(peer), pollSet_);
  return Status::ok();
}

Status TcpTransport::accept(transport::ListenComm& listenComm, std::unique_ptr<transport::RecvComm>* recvComm,
                            uint64_t* connectorId) {
  auto* listener = dynamic_cast<TcpListenComm*>(&listenComm);
  if (!listener) return invalidArgument("tcp accept: the listen comm does not belong to the tcp transport");
  return listener->accept(recvComm, connectorId);
}

Status TcpTransport::test(transport::Request* req, bool* done, size_t* size) {
  if (!req) return invalidArgument("tcp test: null request");
  TcpRequest* r = static_cast<TcpRequest*>(req);
  return r->comm->test(r, done, size);
}

Status TcpTransport::wait(int timeoutMs) {
  pollFds_.clear();
  if (pollSet_->collect(&pollFds_) || pollFds_.empty()) return Status::ok();
  int rc = poll(pollFds_.data(), pollFds_.size(), timeoutMs);
  if (rc < 0 && errno != EINTR) return systemError("tcp wait: poll", errno);
  return Status::ok();
}

BRAID_REGISTER_TRANSPORT(tcp, TcpTransport::create);

}  // namespace braid::tcp
