#include "transports/netplugin/netplugin_transport.h"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "base/env.h"
#include "transports/netplugin/connector_proof.h"
#include "transports/netplugin/netplugin_comm.h"
#include "transports/netplugin/netplugin_listen.h"
#include "transports/registry.h"

namespace braid::netplugin {
namespace {

static_assert(NCCL_NET_HANDLE_MAXSIZE == transport::kHandleBytes);

}  // namespace

Status NetPluginTransport::create(const transport::Options& options,
                                  std::unique_ptr<transport::Transport>* out) {
  std::string spec = env::getString("BRAID_NET_PLUGIN");
  if (spec.empty())
    return notSupported(
        "netplugin: BRAID_NET_PLUGIN names no NCCL net plugin (a path, or N for libnccl-net-N.so, e.g. "
        "braid)");
  const PluginLibrary* lib = nullptr;
  BRAID_RETURN_IF_ERROR(PluginLibrary::open(spec, &lib));
  int ndev = 0;
  BRAID_RETURN_IF_ERROR(statusOf(lib->net().devices(&ndev), "devices"));
  std::vector<Device> devices;
  for (int dev = 0; dev < ndev; ++dev) {
    ncclNetProperties_v11_t p{};
    BRAID_RETURN_IF_ERROR(statusOf(lib->net().getProperties(dev, &p), "getProperties"));
    if (!(p.ptrSupport & NCCL_PTR_HOST)) continue;  // braid hands it host memory
    // NCCL refuses a plugin whose device reports a limit outside this range.
    // NCCL refuses a plugin whose device reports a limit over 1 TiB (or 0);
    // braid also one under a page, as it does BRAID_MAX_MESSAGE_BYTES: a step
    // posts all its messages at once.
    if (p.maxP2pBytes < 4096 || p.maxP2pBytes > NCCL_MAX_NET_SIZE_BYTES)
      return notSupported("netplugin: " + lib->describe() + " device " + std::to_string(dev) +
                          " reports maxP2pBytes " + std::to_string(p.maxP2pBytes) +
                          ", outside what braid takes (4 KiB to 1 TiB)");
    Device d;
    d.pluginDev = dev;
    d.props.name = p.name ? p.name : "?";
    d.props.address = lib->describe();
    d.props.speedMbps = p.speed;
    d.props.latencyUs = p.latency;
    d.props.maxComms = p.maxComms;
    d.maxMessageBytes = std::min<size_t>(p.maxP2pBytes, NCCL_NET_DEFAULT_MAX_P2P_BYTES);
    devices.push_back(std::move(d));
  }
  if (devices.empty())
    return notSupported("netplugin: " + lib->describe() + " offers no device for host memory");
  out->reset(new NetPluginTransport(options, lib, std::move(devices)));
  return Status::ok();
}

NetPluginTransport::~NetPluginTransport() {
  connects_.forEach([this](PendingConnect& c) { abandon(c); });
}

Status NetPluginTransport::checkDevice(int dev) const {
  if (dev < 0 || dev >= deviceCount())
    return invalidArgument("netplugin: device " + std::to_string(dev) + " out of range (" +
                           std::to_string(deviceCount()) + " devices)");
  return Status::ok();
}

Status NetPluginTransport::deviceProperties(int dev, transport::DeviceProperties* props) const {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  *props = devices_[dev].props;
  return Status::ok();
}

Status NetPluginTransport::listen(int dev, transport::Handle* handle,
                                  std::unique_ptr<transport::ListenComm>* listenComm) {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  *handle = transport::Handle{};
  void* listen = nullptr;
  BRAID_RETURN_IF_ERROR(
      statusOf(lib_->net().listen(devices_[dev].pluginDev, handle->bytes.data(), &listen), "listen"));
  *listenComm = std::make_unique<NetPluginListenComm>(lib_, listen, *handle, options_);
  return Status::ok();
}

void NetPluginTransport::abandon(PendingConnect& c) {
  if (!c.comm) return;
  if (c.mhandle) lib_->net().deregMr(c.comm, c.mhandle);
  lib_->net().closeSend(c.comm);
  c.comm = nullptr;
}

Status NetPluginTransport::step(int dev, const transport::Handle& listener, uint64_t connectorId,
                                PendingConnect& c, bool* finished) {
  const NetApi& net = lib_->net();
  *finished = false;
  if (!c.comm) {
    BRAID_RETURN_IF_ERROR(
        statusOf(net.connect(devices_[dev].pluginDev, c.handle.bytes.data(), &c.comm), "connect"));
    if (!c.comm) return Status::ok();
    BRAID_RETURN_IF_ERROR(makeProof(options_.secret, listener, connectorId, c.proof));
    BRAID_RETURN_IF_ERROR(
        statusOf(net.regMr(c.comm, c.proof, kProofBytes, NCCL_PTR_HOST, &c.mhandle), "regMr"));
  }
  if (!c.request) {
    BRAID_RETURN_IF_ERROR(
        statusOf(net.isend(c.comm, c.proof, kProofBytes, kProofTag, c.mhandle, &c.request), "isend (proof)"));
    if (!c.request) return Status::ok();
  }
  int done = 0, size = 0;
  BRAID_RETURN_IF_ERROR(statusOf(net.test(c.request, &done, &size), "test (proof)"));
  if (!done) return Status::ok();
  net.deregMr(c.comm, c.mhandle);
  c.mhandle = nullptr;
  *finished = true;
  return Status::ok();
}

Status NetPluginTransport::connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                                   std::unique_ptr<transport::SendComm>* sendComm) {
  sendComm->reset();
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  PendingConnect* attempt = connects_.find(dev, handle, connectorId);
  if (attempt == nullptr) {
    auto c = std::make_unique<PendingConnect>();
    c->handle = handle;
    attempt = connects_.add(dev, handle, connectorId, std::move(c));
  }
  bool finished = false;
  Status st = step(dev, handle, connectorId, *attempt, &finished);
  if (st.isOk() && !finished) return Status::ok();
  if (st.isOk()) {
    *sendComm =
        std::make_unique<NetPluginSendComm>(lib_, attempt->comm, "listener on " + devices_[dev].props.name);
    attempt->comm = nullptr;
  } else {
    abandon(*attempt);
  }
  connects_.remove(attempt);
  return st;
}

Status NetPluginTransport::accept(transport::ListenComm& listenComm,
                                  std::unique_ptr<transport::RecvComm>* recvComm, uint64_t* connectorId) {
  auto* listener = dynamic_cast<NetPluginListenComm*>(&listenComm);
  if (!listener)
    return invalidArgument("netplugin accept: the listen comm does not belong to the netplugin transport");
  return listener->accept(recvComm, connectorId);
}

Status NetPluginTransport::test(transport::Request* req, bool* done, size_t* size) {
  if (!req) return invalidArgument("netplugin test: null request");
  auto* r = static_cast<NetPluginRequest*>(req);
  return r->comm->test(r, done, size);
}

Status NetPluginTransport::wait(int timeoutMs) {
  (void)timeoutMs;
  sched_yield();
  return Status::ok();
}

BRAID_REGISTER_TRANSPORT(netplugin, NetPluginTransport::create);

}  // namespace braid::netplugin
