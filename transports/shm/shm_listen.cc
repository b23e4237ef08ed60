#include "transports/shm/shm_listen.h"

#include <sys/socket.h>

#include <cstring>

#include "base/cross_memory.h"
#include "base/log.h"
#include "transports/net/auth.h"

namespace braid::shm {
namespace {
constexpr int kMaxAcceptsPerCall = 64;  // bounds the work of one accept() under a flood
constexpr size_t kMaxPending = 1024;    // beyond this, the oldest stranger goes first
}  // namespace

ShmListenComm::ShmListenComm(net::Fd fd, const ListenerName& name, std::shared_ptr<LocalEnd> local)
    : fd_(std::move(fd)), name_(name), local_(std::move(local)) {
  local_->waitSet->add(this);
}

ShmListenComm::~ShmListenComm() { local_->waitSet->remove(this); }

Status ShmListenComm::acceptNew() {
  for (int i = 0; i < kMaxAcceptsPerCall; ++i) {
    int raw = accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (raw < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED || errno == EINTR) return Status::ok();
      return systemError("shm listener " + describe(name_) + ": accept", errno);
    }
    Pending p{net::Fd(raw), 0, Clock::now()};
    Status st = peerPid(p.fd.get(), &p.pid);
    if (!st.isOk()) BRAID_WARN("shm listener %s: %s", describe(name_).c_str(), st.message().c_str());
    if (pending_.size() >= kMaxPending) {
      BRAID_WARN("shm listener %s: too many unauthenticated connections; dropping the one from pid %d",
                 describe(name_).c_str(), static_cast<int>(pending_.front().pid));
      pending_.erase(pending_.begin());
    }
    pending_.push_back(std::move(p));
  }
  return Status::ok();
}

bool ShmListenComm::probeCma(pid_t pid, const Hello& hello) const {
  if (!local_->config.cma() || !(hello.flags & kFlagCma)) return false;
  int err = 0;
  if (probeCrossMemory(pid, reinterpret_cast<const void*>(hello.probeAddr), hello.probeValue, &err))
    return true;
  BRAID_INFO("shm: cross-memory attach to peer process %d is not possible (%s); this connection streams large "
             "messages through the ring",
             static_cast<int>(pid), err ? std::strerror(err) : "probe value mismatch");
  return false;
}

Status ShmListenComm::answer(Pending& p, const Hello& hello, std::vector<net::Fd>& fds) {
  if (fds.size() != 2) return remoteError("expected 2 descriptors, got " + std::to_string(fds.size()));
  uint64_t ringBytes = hello.ringBytes;
  if (ringBytes < (64u << 10) || ringBytes > (256u << 20) || (ringBytes & (ringBytes - 1)) != 0)
    return remoteError("bad ring size " + std::to_string(ringBytes));
  CommParts parts;
  BRAID_RETURN_IF_ERROR(mapSegment(fds[0].get(), kControlBytes + ringBytes, &parts.ring));
  const RingControl* ctl = static_cast<const RingControl*>(parts.ring.get());
  if (ctl->magic != kRingMagic || ctl->version != kRingVersion || ctl->dataBytes != ringBytes)
    return remoteError("the ring segment is not initialised");
  BRAID_RETURN_IF_ERROR(mapSegment(fds[1].get(), kDoorbellBytes, &parts.peerBell));
  parts.peerPid = p.pid;
  parts.cma = probeCma(p.pid, hello);
  parts.cmaThreshold = local_->config.cmaThreshold;
  parts.local = local_;
  Reply reply;
  reply.flags = parts.cma ? kFlagCma : 0;
  reply.nonce = hello.nonce;
  reply.probeAddr = reinterpret_cast<uintptr_t>(&processProbeWord());
  reply.probeValue = processProbeWord();
  reply.mac = replyMac(local_->options.secret, name_, reply);
  int bell = local_->bellFd.get();
  BRAID_RETURN_IF_ERROR(sendWithFds(p.fd.get(), &reply, sizeof(reply), &bell, 1));
  BRAID_INFO("shm listener %s: accepted connector %llu (pid %d, %s)", describe(name_).c_str(),
             static_cast<unsigned long long>(hello.connectorId), static_cast<int>(p.pid),
             parts.cma ? "cross-memory attach" : "ring only");
  ready_.push(std::make_unique<ShmRecvComm>(std::move(parts)), hello.connectorId);
  return Status::ok();
}

bool ShmListenComm::drive(Pending& p) {
  auto drop = [&](const std::string& why) {
    BRAID_WARN("shm listener %s: dropping connection from pid %d: %s", describe(name_).c_str(),
               static_cast<int>(p.pid), why.c_str());
    return false;
  };
  Hello hello;
  std::vector<net::Fd> fds;
  bool got = false;
  Status st = recvWithFds(p.fd.get(), &hello, sizeof(hello), 2, &fds, &got);
  if (!st.isOk()) return drop(st.message() == "closed" ? "closed before sending its hello" : st.message());
  if (!got) {
    int ms = local_->options.handshakeTimeoutMs;
    if (Clock::now() - p.start > std::chrono::milliseconds(ms))
      return drop("no hello within " + std::to_string(ms) + " ms");
    return true;
  }
  Hello expected;
  if (hello.magic != expected.magic || hello.version != expected.version) return drop("not a braid shm hello");
  uint64_t mac = helloMac(local_->options.secret, name_, hello);
  if (!net::constantTimeEqual(&mac, &hello.mac, sizeof(mac)))
    return drop("it does not prove the communicator's secret (MAC mismatch)");
  st = answer(p, hello, fds);
  if (!st.isOk()) return drop(st.message());
  return false;
}

Status ShmListenComm::accept(std::unique_ptr<transport::RecvComm>* recvComm, uint64_t* connectorId) {
  recvComm->reset();
  if (ready_.empty()) {
    BRAID_RETURN_IF_ERROR(acceptNew());
    transport::driveEach(pending_, [&](Pending& p) { return drive(p); });
  }
  ready_.pop(recvComm, connectorId);
  return Status::ok();
}

bool ShmListenComm::addPollFds(std::vector<pollfd>* fds) const {
  fds->push_back({fd_.get(), POLLIN, 0});
  for (const Pending& p : pending_) fds->push_back({p.fd.get(), POLLIN, 0});
  return !ready_.empty();
}

}  // namespace braid::shm
