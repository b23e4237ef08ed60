#include "net_plugin.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "base/address_range.h"
#include "base/env.h"
#include "transports/net/auth.h"
#include "transports/registry.h"

namespace braid::ncclnet {
namespace {

// NCCL's own socket transport assumes this when the OS does not say.
constexpr int kUnknownSpeedMbps = 10000;

// The NIC's PCI device directory, which NCCL's topology search places the NIC
// by; empty for virtual interfaces (veth, bridges, loopback), which have none.
std::string pciPathOf(const std::string& ifname) {
  std::string link = "/sys/class/net/" + ifname + "/device";
  char resolved[PATH_MAX];
  if (!realpath(link.c_str(), resolved)) return {};
  return resolved;
}

}  // namespace

bool MemoryRegion::contains(const void* data, size_t bytes) const {
  return rangeCovers(begin, size, data, bytes);
}

Request* Comm::takeRequest() {
  if (free_.empty()) {
    requests_.push_back(std::make_unique<Request>());
    free_.push_back(requests_.back().get());
  }
  Request* r = free_.back();
  free_.pop_back();
  r->comm = this;
  r->inner = nullptr;
  return r;
}

void Comm::giveBack(Request* request) {
  request->inner = nullptr;
  free_.push_back(request);
}

ListenComm::~ListenComm() {
  std::lock_guard lock(endpoint->mu);
  inner.reset();
}

NetPlugin& NetPlugin::instance() {
  static NetPlugin* plugin = new NetPlugin;
  return *plugin;
}

Status NetPlugin::createTransport(const transport::Secret& secret, int trafficClass,
                                  std::unique_ptr<transport::Transport>* out) const {
  transport::Options options = options_;
  options.secret = secret;
  options.trafficClass = trafficClass;
  return transport::createTransport(transportKindName(kind_), options, out);
}

Status NetPlugin::init() {
  std::lock_guard lock(mu_);
  if (initialized_) return Status::ok();
  BRAID_RETURN_IF_ERROR(transportKindFromName(env::getString("BRAID_NCCL_NET"), &kind_));
  std::string error;
  options_.nSocks = static_cast<int>(env::getInt("BRAID_NSOCKS", &error));
  if (!error.empty()) return invalidArgument(error);
  options_.ifname = env::getString("BRAID_SOCKET_IFNAME");
  options_.trafficClass = static_cast<int>(env::getInt("BRAID_SOCKET_TC", &error));
  if (!error.empty()) return invalidArgument(error);
  if (options_.trafficClass < -1 || options_.trafficClass > 255)
    return invalidArgument("BRAID_SOCKET_TC=" + std::to_string(options_.trafficClass) +
                           " is outside [-1, 255]");
  BRAID_RETURN_IF_ERROR(net::randomBytes(options_.secret.data(), options_.secret.size()));

  auto local = std::make_shared<Endpoint>();
  BRAID_RETURN_IF_ERROR(createTransport(options_.secret, options_.trafficClass, &local->transport));
  std::vector<DeviceInfo> devices;
  for (int dev = 0; dev < local->transport->deviceCount(); ++dev) {
    transport::DeviceProperties props;
    BRAID_RETURN_IF_ERROR(local->transport->deviceProperties(dev, &props));
    DeviceInfo info;
    info.name = props.name;
    info.pciPath = pciPathOf(props.name);
    info.speedMbps = props.speedMbps > 0 ? static_cast<int>(props.speedMbps) : kUnknownSpeedMbps;
    info.maxComms = props.maxComms;
    devices.push_back(std::move(info));
  }
  if (devices.empty()) return notSupported(std::string("nccl-net: ") + transportName() + " offers no device");
  local_ = std::move(local);
  devices_ = std::move(devices);
  initialized_ = true;
  return Status::ok();
}

Status NetPlugin::checkDevice(int dev) const {
  if (!initialized_) return invalidUsage("nccl-net: called before init");
  if (dev < 0 || dev >= deviceCount())
    return invalidArgument("nccl-net: device " + std::to_string(dev) + " out of range (" +
                           std::to_string(deviceCount()) + " devices)");
  return Status::ok();
}

Status NetPlugin::device(int dev, const DeviceInfo** info) const {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  *info = &devices_[dev];
  return Status::ok();
}

Status NetPlugin::endpointFor(const transport::Secret& secret, int trafficClass,
                              std::shared_ptr<Endpoint>* out) {
  std::lock_guard lock(mu_);
  if (secret == options_.secret && trafficClass == options_.trafficClass) {
    *out = local_;
    return Status::ok();
  }
  auto it = remotes_.find({secret, trafficClass});
  if (it == remotes_.end()) {
    auto endpoint = std::make_shared<Endpoint>();
    BRAID_RETURN_IF_ERROR(createTransport(secret, trafficClass, &endpoint->transport));
    it = remotes_.emplace(std::make_pair(secret, trafficClass), std::move(endpoint)).first;
  }
  *out = it->second;
  return Status::ok();
}

Status NetPlugin::listen(int dev, uint8_t handle[kPluginHandleBytes], std::unique_ptr<ListenComm>* out) {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  PluginHandle mine;
  mine.kind = kind_;
  mine.secret = options_.secret;
  std::unique_ptr<transport::ListenComm> inner;
  {
    std::lock_guard lock(local_->mu);
    BRAID_RETURN_IF_ERROR(local_->transport->listen(dev, &mine.transportHandle, &inner));
  }
  auto listener = std::make_unique<ListenComm>(local_, std::move(inner));
  BRAID_RETURN_IF_ERROR(packPluginHandle(mine, handle));
  *out = std::move(listener);
  return Status::ok();
}

Status NetPlugin::connect(int dev, const uint8_t handle[kPluginHandleBytes], int trafficClass,
                          std::unique_ptr<SendComm>* out) {
  out->reset();
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  if (trafficClass == kDefaultTrafficClass) trafficClass = options_.trafficClass;
  if (trafficClass < -1 || trafficClass > 255)
    return invalidArgument("nccl-net: the communicator's traffic class " + std::to_string(trafficClass) +
                           " is outside [0, 255] (the IP TOS byte its packets carry)");
  // UCX has nothing to set it on: one endpoint per peer serves every class.
  if (kind_ != TransportKind::kTcp) trafficClass = options_.trafficClass;
  PluginHandle theirs;
  BRAID_RETURN_IF_ERROR(unpackPluginHandle(handle, &theirs));
  if (theirs.kind != kind_)
    return invalidUsage(std::string("nccl-net: this rank runs over ") + transportName() + ", the peer over " +
                        transportKindName(theirs.kind) + " (BRAID_NCCL_NET must be the same on every rank)");
  std::shared_ptr<Endpoint> endpoint;
  BRAID_RETURN_IF_ERROR(endpointFor(theirs.secret, trafficClass, &endpoint));
  std::unique_ptr<transport::SendComm> inner;
  {
    std::lock_guard lock(endpoint->mu);
    BRAID_RETURN_IF_ERROR(
        endpoint->transport->connect(dev, theirs.transportHandle, static_cast<uint64_t>(getpid()), &inner));
  }
  if (inner) *out = std::make_unique<SendComm>(std::move(endpoint), std::move(inner));
  return Status::ok();
}

Status NetPlugin::accept(ListenComm& listener, std::unique_ptr<RecvComm>* out) {
  out->reset();
  std::unique_ptr<transport::RecvComm> inner;
  uint64_t connectorId = 0;
  {
    std::lock_guard lock(listener.endpoint->mu);
    BRAID_RETURN_IF_ERROR(listener.endpoint->transport->accept(*listener.inner, &inner, &connectorId));
  }
  if (inner) *out = std::make_unique<RecvComm>(listener.endpoint, std::move(inner));
  return Status::ok();
}

// Takes a request from the comm's pool and lets `post` start it; the request
// goes back when the transport refuses.
template <typename Post>
Status NetPlugin::post(Comm& comm, Post&& start, Request** out) {
  std::lock_guard lock(comm.endpoint().mu);
  Request* request = comm.takeRequest();
  Status st = start(&request->inner);
  if (!st.isOk()) {
    comm.giveBack(request);
    return st;
  }
  *out = request;
  return Status::ok();
}

Status NetPlugin::isend(SendComm& comm, const void* data, size_t size, uint32_t tag,
                        const MemoryRegion* region, Request** out) {
  *out = nullptr;
  if (size > 0 && !data) return invalidArgument("nccl-net isend: null buffer");
  if (region && !region->contains(data, size))
    return invalidArgument("nccl-net isend: the buffer is outside the memory registered for it");
  return post(
      comm, [&](transport::Request** req) { return comm.inner->isend(data, size, tag, nullptr, req); }, out);
}

Status NetPlugin::irecv(RecvComm& comm, void* data, size_t capacity, uint32_t tag, const MemoryRegion* region,
                        Request** out) {
  *out = nullptr;
  if (capacity > 0 && !data) return invalidArgument("nccl-net irecv: null buffer");
  if (region && !region->contains(data, capacity))
    return invalidArgument("nccl-net irecv: the buffer is outside the memory registered for it");
  return post(
      comm, [&](transport::Request** req) { return comm.inner->irecv(data, capacity, tag, nullptr, req); },
      out);
}

Status NetPlugin::test(Request& request, bool* done, size_t* size) {
  Comm& comm = *request.comm;
  std::lock_guard lock(comm.endpoint().mu);
  *done = false;
  Status st = comm.endpoint().transport->test(request.inner, done, size);
  if (!st.isOk() || *done) comm.giveBack(&request);
  return st;
}

}  // namespace braid::ncclnet
