#include "transports/shm/shm_connect.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "base/cross_memory.h"
#include "base/log.h"
#include "transports/net/auth.h"

namespace braid::shm {

PendingConnect::PendingConnect(uint64_t connectorId, const HandleInfo& info, std::shared_ptr<LocalEnd> local)
    : connectorId_(connectorId),
      info_(info),
      local_(std::move(local)),
      refusedDeadline_(local_->options.handshakeTimeoutMs) {
  local_->waitSet->add(this);
}

PendingConnect::~PendingConnect() { local_->waitSet->remove(this); }

std::string PendingConnect::listener() const {
  return "shm listener " + describe(info_.name) + " of process " + std::to_string(info_.pid);
}

Status PendingConnect::tryConnect() {
  if (Clock::now() < retryAt_) return Status::ok();
  int err = 0;
  BRAID_RETURN_IF_ERROR(connectAbstract(info_.name, &sock_, &err));
  if (err == EAGAIN || err == ECONNREFUSED) {  // full backlog, or not (yet / any more) listening
    if (refusedDeadline_.expired())
      return remoteError(listener() + " refused every connection for " +
                         std::to_string(local_->options.handshakeTimeoutMs) + " ms (" + std::strerror(err) + ")");
    retryAt_ = Clock::now() + std::chrono::milliseconds(backoffMs_);
    backoffMs_ = std::min(backoffMs_ * 2, 100);
    return Status::ok();
  }
  if (err != 0) return systemError("shm: connect to " + listener(), err);
  BRAID_RETURN_IF_ERROR(peerPid(sock_.get(), &peerPid_));
  BRAID_RETURN_IF_ERROR(sendHello());
  state_ = State::kReply;
  return Status::ok();
}

Status PendingConnect::sendHello() {
  uint64_t ringBytes = local_->config.ringBytes;
  net::Fd ringFd;
  BRAID_RETURN_IF_ERROR(createSegment(kControlBytes + ringBytes, &ringFd, &ring_));
  RingControl* ctl = new (ring_.get()) RingControl{};
  ctl->magic = kRingMagic;
  ctl->version = kRingVersion;
  ctl->dataBytes = ringBytes;
  uint64_t probe = 0;
  BRAID_RETURN_IF_ERROR(net::randomBytes(&nonce_, sizeof(nonce_)));
  BRAID_RETURN_IF_ERROR(net::randomBytes(&probe, sizeof(probe)));
  probe_ = probe;
  Hello hello;
  hello.flags = local_->config.cma() ? kFlagCma : 0;
  hello.nonce = nonce_;
  hello.connectorId = connectorId_;
  hello.ringBytes = ringBytes;
  hello.probeAddr = reinterpret_cast<uintptr_t>(&probe_);
  hello.probeValue = probe;
  hello.mac = helloMac(local_->options.secret, info_.name, hello);
  int fds[2] = {ringFd.get(), local_->bellFd.get()};
  return sendWithFds(sock_.get(), &hello, sizeof(hello), fds, 2).prefix("shm: hello to " + listener());
}

bool PendingConnect::probePush(const Reply& reply) const {
  int err = 0;
  if (probeCrossMemory(peerPid_, reinterpret_cast<const void*>(reply.probeAddr), reply.probeValue, &err))
    return true;
  BRAID_INFO("shm: %s may not be written by cross-memory attach (%s); it pulls every large message itself",
             listener().c_str(), err ? std::strerror(err) : "probe value mismatch");
  return false;
}

Status PendingConnect::readReply(std::unique_ptr<ShmSendComm>* out) {
  Reply reply;
  std::vector<net::Fd> fds;
  bool got = false;
  Status st = recvWithFds(sock_.get(), &reply, sizeof(reply), 1, &fds, &got);
  if (!st.isOk() && st.message() == "closed")
    return remoteError(listener() + " closed the connection without accepting it: it does not share this "
                       "communicator's secret, or it was closed");
  BRAID_RETURN_IF_ERROR(st.prefix("shm: reply from " + listener()));
  if (!got) return Status::ok();
  Reply expected;
  uint64_t mac = replyMac(local_->options.secret, info_.name, reply);
  if (reply.magic != expected.magic || reply.version != expected.version || reply.nonce != nonce_ ||
      !net::constantTimeEqual(&mac, &reply.mac, sizeof(mac)) || fds.size() != 1)
    return remoteError(listener() + " answered without proving the communicator's secret; connection refused");
  CommParts parts;
  BRAID_RETURN_IF_ERROR(mapSegment(fds[0].get(), kDoorbellBytes, &parts.peerBell));
  parts.ring = std::move(ring_);
  parts.peerPid = peerPid_;
  parts.cma = (reply.flags & kFlagCma) != 0;
  parts.cmaThreshold = local_->config.cmaThreshold;
  parts.push = parts.cma && local_->config.push && probePush(reply);
  parts.local = local_;
  *out = std::make_unique<ShmSendComm>(std::move(parts));
  return Status::ok();
}

Status PendingConnect::step(std::unique_ptr<ShmSendComm>* out) {
  out->reset();
  if (state_ == State::kConnect) BRAID_RETURN_IF_ERROR(tryConnect());
  if (state_ == State::kReply) BRAID_RETURN_IF_ERROR(readReply(out));
  return Status::ok();
}

bool PendingConnect::addPollFds(std::vector<pollfd>* fds) const {
  if (state_ == State::kConnect) return Clock::now() >= retryAt_;  // a retry is due: no fd to wait on
  fds->push_back({sock_.get(), POLLIN, 0});
  return false;
}

}  // namespace braid::shm
