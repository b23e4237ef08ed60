#include "core/bootstrap/inbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <utility>

#include "base/log.h"
#include "base/thread_name.h"

namespace braid::bootstrap {

Inbox::Inbox(net::Fd listener, const transport::Secret& secret, int rank, int nranks,
             int handshakeTimeoutMs)
    : listener_(std::move(listener)),
      rank_(rank),
      nranks_(nranks),
      gate_(secret, handshakeTimeoutMs, "bootstrap listener of rank " + std::to_string(rank)),
      peers_(static_cast<size_t>(nranks)) {}

Inbox::~Inbox() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    uint64_t one = 1;
    ssize_t n = write(wake_.get(), &one, sizeof(one));
    (void)n;  // a full counter already wakes the thread
    thread_.join();
  }
}

Status Inbox::start() {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return systemError("eventfd for the bootstrap inbox", errno);
  wake_.reset(fd);
  thread_ = std::thread([this] { run(); });
  return Status::ok();
}

void Inbox::run() {
  nameThisThread("braid-inbox");
  log::setThreadRank(rank_);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) break;
    }
    std::vector<pollfd> fds;
    fds.push_back(pollfd{wake_.get(), POLLIN, 0});
    fds.push_back(pollfd{listener_.get(), POLLIN, 0});
    size_t gateFirst = fds.size();
    gate_.addPollFds(&fds);
    size_t connFirst = fds.size();
    for (const Conn& c : conns_) fds.push_back(pollfd{c.fd.get(), POLLIN, 0});
    int n = poll(fds.data(), fds.size(), gate_.msUntilNextExpiry(1000));
    if (n < 0 && errno != EINTR) {
      std::lock_guard<std::mutex> lock(mu_);
      fatal_ = systemError("poll in the bootstrap inbox of rank " + std::to_string(rank_), errno);
      cv_.notify_all();
      break;
    }
    if (n > 0 && (fds[0].revents & POLLIN)) {
      uint64_t drained = 0;
      ssize_t r = read(wake_.get(), &drained, sizeof(drained));
      (void)r;
    }
    if (n > 0 && (fds[1].revents & POLLIN)) gate_.acceptAll(listener_.get());
    std::vector<Admitted> admitted;
    gate_.service(fds, gateFirst, &admitted);
    for (size_t i = 0; i < conns_.size(); ++i)
      if (fds[connFirst + i].revents != 0 && !readFrom(conns_[i])) conns_[i].fd.reset();
    std::erase_if(conns_, [](const Conn& c) { return !c.fd.valid(); });
    for (Admitted& a : admitted) admit(a);
  }
}

void Inbox::admit(Admitted& a) {
  int peer = static_cast<int>(a.connectorId);
  if (a.connectorId >= static_cast<uint64_t>(nranks_) || peer == rank_) {
    BRAID_WARN("bootstrap listener of rank %d: dropped %s: it claims to be rank %llu of %d",
               rank_, a.peer.toString().c_str(), static_cast<unsigned long long>(a.connectorId),
               nranks_);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (peers_[peer].connected) {
      BRAID_WARN("bootstrap listener of rank %d: dropped a second connection from rank %d (%s)",
                 rank_, peer, a.peer.toString().c_str());
      return;
    }
    peers_[peer].connected = true;
  }
  Conn c;
  c.fd = std::move(a.fd);
  c.peer = peer;
  conns_.push_back(std::move(c));
  // Data may already be waiting; the next poll reports it.
}

bool Inbox::readFrom(Conn& c) {
  for (;;) {
    size_t room = 0;
    uint8_t* at = c.frames.next(&room);
    size_t got = 0;
    Status st = net::recvSome(c.fd.get(), at, room, &got);
    if (st.isOk()) st = c.frames.advance(got);
    if (!st.isOk()) {
      markClosed(c.peer, st.message());
      return false;
    }
    if (c.frames.ready()) {
      InboxFrames::Frame f = c.frames.take();
      {
        std::lock_guard<std::mutex> lock(mu_);
        peers_[c.peer].queue.push_back(Message{f.tag, std::move(f.bytes)});
      }
      cv_.notify_all();
    } else if (got < room) {
      return true;  // drained: wait for the next poll
    }
  }
}

void Inbox::markClosed(int peer, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    peers_[peer].closed = true;
    peers_[peer].closeReason = reason;
  }
  cv_.notify_all();
}

void Inbox::putLocal(uint32_t tag, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  std::lock_guard<std::mutex> lock(mu_);
  peers_[rank_].queue.push_back(Message{tag, std::vector<uint8_t>(p, p + size)});
}

Status Inbox::take(int peer, uint32_t tag, void* data, size_t size, const Deadline& deadline,
                   int timeoutMs) {
  std::unique_lock<std::mutex> lock(mu_);
  PeerState& ps = peers_[peer];
  for (;;) {
    for (auto it = ps.queue.begin(); it != ps.queue.end(); ++it) {
      if (it->tag != tag) continue;
      std::vector<uint8_t> bytes = std::move(it->bytes);
      ps.queue.erase(it);
      lock.unlock();
      if (bytes.size() != size)
        return invalidUsage("rank " + std::to_string(peer) + " sent a bootstrap message of " +
                            std::to_string(bytes.size()) + " bytes with tag " +
                            std::to_string(tag) + " but rank " + std::to_string(rank_) +
                            " expected " + std::to_string(size) + " bytes");
      if (size > 0) std::memcpy(data, bytes.data(), size);
      return Status::ok();
    }
    if (ps.closed)
      return remoteError("rank " + std::to_string(peer) + " closed its bootstrap connection (" +
                         ps.closeReason + ") while rank " + std::to_string(rank_) +
                         " waited for a message with tag " + std::to_string(tag));
    if (!fatal_.isOk()) return fatal_;
    if (deadline.expired())
      return timeoutError("rank " + std::to_string(rank_) + " got no bootstrap message from rank " +
                          std::to_string(peer) + " (tag " + std::to_string(tag) + ") within " +
                          std::to_string(timeoutMs) + " ms");
    cv_.wait_for(lock, std::chrono::milliseconds(deadline.remainingMs(1000)));
  }
}

}  // namespace braid::bootstrap
