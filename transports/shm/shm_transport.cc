#include "transports/shm/shm_transport.h"

#include <unistd.h>

#include <algorithm>

#include "base/log.h"
#include "transports/net/auth.h"
#include "transports/registry.h"
#include "transports/shm/handshake.h"
#include "transports/shm/shm_listen.h"

namespace braid::shm {

Status ShmTransport::create(const transport::Options& options, const ShmConfig& config,
                            std::unique_ptr<transport::Transport>* out) {
  BRAID_RETURN_IF_ERROR(config.validate());
  if (options.handshakeTimeoutMs <= 0) return invalidArgument("shm: handshake timeout must be positive");
  auto local = std::make_shared<LocalEnd>();
  local->options = options;
  local->config = config;
  BRAID_RETURN_IF_ERROR(createSegment(kDoorbellBytes, &local->bellFd, &local->bell));
  new (local->bell.get()) DoorbellPage{};
  out->reset(new ShmTransport(std::move(local)));
  return Status::ok();
}

Status ShmTransport::checkDevice(int dev) const {
  if (dev != 0) return invalidArgument("shm: device " + std::to_string(dev) + " out of range (1 device)");
  return Status::ok();
}

Status ShmTransport::deviceProperties(int dev, transport::DeviceProperties* props) const {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  props->name = "shm";
  props->address = host;
  props->speedMbps = 0;  // memory bandwidth: not a link speed the OS reports
  props->latencyUs = 1;  // a rough figure for the cost model
  props->maxComms = 65536;
  return Status::ok();
}

Status ShmTransport::listen(int dev, transport::Handle* handle, std::unique_ptr<transport::ListenComm>* listenComm) {
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  HandleInfo info;
  info.pid = getpid();
  info.locality = localityKey();
  BRAID_RETURN_IF_ERROR(net::randomBytes(info.name.data(), info.name.size()));
  net::Fd fd;
  BRAID_RETURN_IF_ERROR(listenAbstract(info.name, &fd));
  encodeHandle(info, handle);
  *listenComm = std::make_unique<ShmListenComm>(std::move(fd), info.name, local_);
  BRAID_INFO("shm: listening on %s", describe(info.name).c_str());
  return Status::ok();
}

Status ShmTransport::connect(int dev, const transport::Handle& handle, uint64_t connectorId,
                             std::unique_ptr<transport::SendComm>* sendComm) {
  sendComm->reset();
  BRAID_RETURN_IF_ERROR(checkDevice(dev));
  PendingConnect* attempt = connects_.find(dev, handle, connectorId);
  if (attempt == nullptr) {
    HandleInfo info;
    if (!decodeHandle(handle, &info)) return invalidArgument("shm connect: the handle was not made by an shm listen()");
    if (info.locality != localityKey())
      return notSupported("shm connect: the listener (pid " + std::to_string(info.pid) +
                          ") is on another host or in another network namespace; use a network transport");
    attempt =
        connects_.add(dev, handle, connectorId, std::make_unique<PendingConnect>(connectorId, info, local_));
  }
  std::unique_ptr<ShmSendComm> comm;
  Status st = attempt->step(&comm);
  if (st.isOk() && !comm) return Status::ok();
  connects_.remove(attempt);
  BRAID_RETURN_IF_ERROR(st);
  *sendComm = std::move(comm);
  return Status::ok();
}

Status ShmTransport::accept(transport::ListenComm& listenComm, std::unique_ptr<transport::RecvComm>* recvComm,
                            uint64_t* connectorId) {
  auto* listener = dynamic_cast<ShmListenComm*>(&listenComm);
  if (!listener) return invalidArgument("shm accept: the listen comm does not belong to the shm transport");
  return listener->accept(recvComm, connectorId);
}

Status ShmTransport::test(transport::Request* req, bool* done, size_t* size) {
  if (!req) return invalidArgument("shm test: null request");
  ShmRequest* r = static_cast<ShmRequest*>(req);
  return r->comm->test(r, done, size);
}

Status ShmTransport::wait(int timeoutMs) {
  const WaitSet& set = *local_->waitSet;
  pollFds_.clear();
  if (set.collectSetup(&pollFds_)) return Status::ok();
  if (!pollFds_.empty()) {
    bool data = set.anyPending();
    int rc = poll(pollFds_.data(), pollFds_.size(), data ? 0 : timeoutMs);
    if (rc < 0 && errno != EINTR) return systemError("shm wait: poll", errno);
    if (rc != 0 || !data) return Status::ok();
    timeoutMs = std::min(timeoutMs, 1);
  }
  if (!set.anyPending()) return Status::ok();
  waitDoorbell(local_->page(), [&set] { return set.anyReady(); }, local_->config.spinUs, timeoutMs);
  return Status::ok();
}

BRAID_REGISTER_TRANSPORT(shm, [](const transport::Options& options, std::unique_ptr<transport::Transport>* out) {
  ShmConfig config;
  BRAID_RETURN_IF_ERROR(ShmConfig::fromEnv(&config));
  return ShmTransport::create(options, config, out);
});

}  // namespace braid::shm
