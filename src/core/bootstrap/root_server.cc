#include "core/bootstrap/root_server.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "base/log.h"

namespace braid::bootstrap {
namespace {

// No communicator this large; rejects a garbage nranks before allocating for it.
constexpr int kMaxRanks = 1 << 22;
constexpr int kPollCapMs = 1000;

bool later(const Deadline& a, const Deadline& b) {
  return a.remainingMs(INT32_MAX) > b.remainingMs(INT32_MAX);
}

}  // namespace

RootServer::RootServer(net::Fd listener, const transport::Secret& secret,
                       const RootOptions& options, std::string where)
    : listener_(std::move(listener)),
      options_(options),
      where_(std::move(where)),
      gate_(secret, options.handshakeTimeoutMs, "rendezvous root at " + where_),
      idle_(options.idleTimeoutMs) {
  if (options_.nranks > 0) {
    nranks_ = options_.nranks;
    memberOfRank_.assign(static_cast<size_t>(nranks_), -1);
  }
}

RootServer::~RootServer() = default;

Status RootServer::init() {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return systemError("eventfd for the rendezvous root", errno);
  wake_.reset(fd);
  return Status::ok();
}

void RootServer::stop() {
  stop_.store(true);
  uint64_t one = 1;
  ssize_t n = write(wake_.get(), &one, sizeof(one));
  (void)n;  // a full counter already means "wake up"
}

void RootServer::run() {
  while (!stop_.load() && !done()) {
    std::vector<pollfd> fds;
    fds.push_back(pollfd{wake_.get(), POLLIN, 0});
    // Once formed the listener is closed (get() is -1): nobody else may join.
    fds.push_back(pollfd{listener_.get(), POLLIN, 0});
    size_t gateFirst = fds.size();
    gate_.addPollFds(&fds);
    size_t memberFirst = fds.size();
    for (const Member& m : members_) {
      short events = m.phase == Phase::kReplying ? POLLOUT : POLLIN;
      fds.push_back(pollfd{m.phase == Phase::kClosed ? -1 : m.fd.get(), events, 0});
    }
    int n = poll(fds.data(), fds.size(), pollTimeoutMs());
    if (n < 0 && errno != EINTR) {
      BRAID_WARN("rendezvous root at %s: poll failed (errno %d); closing", where_.c_str(), errno);
      break;
    }
    if (n > 0 && (fds[1].revents & POLLIN)) gate_.acceptAll(listener_.get());
    std::vector<Admitted> admitted;
    gate_.service(fds, gateFirst, &admitted);
    size_t existing = members_.size();
    for (size_t i = 0; i < existing; ++i) {
      Member& m = members_[i];
      if (fds[memberFirst + i].revents == 0) continue;
      if (m.phase == Phase::kReadHeader || m.phase == Phase::kReadHostId) readJoin(i);
      else if (m.phase == Phase::kJoined) watchJoined(m);
      else if (m.phase == Phase::kReplying) writeReply(m);
    }
    for (Admitted& a : admitted) {
      Member m;
      m.fd = std::move(a.fd);
      m.peer = a.peer;
      m.connectorId = a.connectorId;
      m.readDeadline = Deadline(options_.handshakeTimeoutMs);
      m.in.resize(protocol::kJoinHeaderBytes);
      members_.push_back(std::move(m));
    }
    checkDeadlines();
    maybeComplete();
    // A failed root past its linger takes no one new; those already mid-join
    // still get the verdict (see done()).
    if (failed_ && linger_.expired()) listener_.reset();
  }
  // Close everything now rather than when the registry reaps us: waiting ranks
  // see the root go, strangers are cut off, late connectors are refused.
  members_.clear();
  gate_.clear();
  listener_.reset();
  finished_.store(true);
}

int RootServer::pollTimeoutMs() const {
  int ms = gate_.msUntilNextExpiry(kPollCapMs);
  bool anyJoined = false;
  for (const Member& m : members_) {
    if (m.phase == Phase::kReadHeader || m.phase == Phase::kReadHostId)
      ms = std::min(ms, m.readDeadline.remainingMs(kPollCapMs));
    if (m.phase == Phase::kJoined) {
      ms = std::min(ms, m.rankDeadline.remainingMs(kPollCapMs));
      anyJoined = true;
    }
  }
  if (!anyJoined) ms = std::min(ms, idle_.remainingMs(kPollCapMs));
  if (failed_ && !linger_.expired()) ms = std::min(ms, linger_.remainingMs(kPollCapMs));
  return ms;
}

void RootServer::closeMember(Member& m) {
  m.fd.reset();
  m.phase = Phase::kClosed;
}

void RootServer::readJoin(size_t index) {
  Member& m = members_[index];
  Status st = net::recvSome(m.fd.get(), m.in.data() + m.have, m.in.size() - m.have, &m.have);
  if (st.isOk() && m.have == m.in.size() && m.phase == Phase::kReadHeader) {
    size_t hostIdBytes = 0;
    st = protocol::decodeJoinHeader(m.in.data(), &m.join, &hostIdBytes);
    m.phase = Phase::kReadHostId;
    m.in.resize(m.in.size() + hostIdBytes);
    if (st.isOk() && hostIdBytes > 0)
      st = net::recvSome(m.fd.get(), m.in.data() + m.have, m.in.size() - m.have, &m.have);
  }
  if (!st.isOk()) {
    BRAID_WARN("rendezvous root at %s: dropped a join request from %s: %s", where_.c_str(),
               m.peer.toString().c_str(), st.message().c_str());
    closeMember(m);
    return;
  }
  if (m.phase == Phase::kReadHostId && m.have == m.in.size()) {
    m.join.hostId.assign(m.in.begin() + protocol::kJoinHeaderBytes, m.in.end());
    onJoined(index);
  }
}

void RootServer::onJoined(size_t index) {
  Member& m = members_[index];
  const protocol::JoinRequest& j = m.join;
  if (m.connectorId != static_cast<uint64_t>(static_cast<uint32_t>(j.rank))) {
    BRAID_WARN("rendezvous root at %s: dropped %s: it authenticated as rank %llu but joined as "
               "rank %d", where_.c_str(), m.peer.toString().c_str(),
               static_cast<unsigned long long>(m.connectorId), j.rank);
    closeMember(m);
    return;
  }
  m.phase = Phase::kJoined;
  m.rankDeadline = Deadline(j.remainingMs);
  if (later(m.rankDeadline, linger_)) linger_ = m.rankDeadline;  // failed roots linger so long
  BRAID_TRACE("rendezvous root at %s: rank %d of %d arrived from %s", where_.c_str(), j.rank,
              j.nranks, m.peer.toString().c_str());
  if (failed_) {
    reply(m, failCode_, failMessage_);
    return;
  }
  std::string who = "rank " + std::to_string(j.rank);
  if (j.nranks < 1 || j.nranks > kMaxRanks) {
    fail(Code::kInvalidUsage, who + " joined with nranks=" + std::to_string(j.nranks) +
                                  ", which is not in [1, " + std::to_string(kMaxRanks) + "]");
    return;
  }
  if (nranks_ == 0) {
    nranks_ = j.nranks;
    nranksFrom_ = j.rank;
    memberOfRank_.assign(static_cast<size_t>(nranks_), -1);
  }
  if (j.nranks != nranks_) {
    std::string other = nranksFrom_ >= 0 ? "rank " + std::to_string(nranksFrom_) + " joined with"
                                         : "the root was started for";
    fail(Code::kInvalidUsage, who + " joined with nranks=" + std::to_string(j.nranks) + " but " +
                                  other + " nranks=" + std::to_string(nranks_) +
                                  ": every rank must pass the same nranks");
    return;
  }
  if (j.rank < 0 || j.rank >= nranks_) {
    fail(Code::kInvalidUsage, who + " is out of range for nranks=" + std::to_string(nranks_) +
                                  ": ranks must be 0.." + std::to_string(nranks_ - 1));
    return;
  }
  int& slot = memberOfRank_[static_cast<size_t>(j.rank)];
  if (slot >= 0) {
    fail(Code::kInvalidUsage, who + " joined twice (from " +
                                  members_[static_cast<size_t>(slot)].peer.toString() + " and " +
                                  m.peer.toString() + "): every rank must pass a distinct rank");
    return;
  }
  slot = static_cast<int>(index);
}

void RootServer::watchJoined(Member& m) {
  // A joined rank sends nothing more until it has its reply: readable means it
  // left (EOF) or broke the protocol. Either way the communicator cannot form.
  uint8_t byte = 0;
  size_t got = 0;
  Status st = net::recvSome(m.fd.get(), &byte, 1, &got);
  std::string why = st.isOk() ? (got ? "sent unexpected data" : "") : "closed its connection";
  if (why.empty()) return;
  closeMember(m);
  std::string msg = "rank " + std::to_string(m.join.rank) + " left the rendezvous (" + why +
                    ") before all " + std::to_string(nranks_) + " ranks arrived";
  fail(Code::kRemoteError, msg);
}

void RootServer::reply(Member& m, Code code, const std::string& message) {
  reply(m, code, std::vector<uint8_t>(message.begin(), message.end()));
}

void RootServer::reply(Member& m, Code code, const std::vector<uint8_t>& payload) {
  m.out.clear();
  protocol::encodeReply(code, payload, &m.out);
  m.sent = 0;
  m.phase = Phase::kReplying;
  writeReply(m);
}

void RootServer::writeReply(Member& m) {
  Status st = net::sendSome(m.fd.get(), m.out.data() + m.sent, m.out.size() - m.sent, &m.sent);
  if (!st.isOk()) {
    BRAID_WARN("rendezvous root at %s: could not answer rank %d: %s", where_.c_str(), m.join.rank,
               st.message().c_str());
    closeMember(m);
  } else if (m.sent == m.out.size()) {
    closeMember(m);  // the rank reads the reply, then end of stream
  }
}

void RootServer::fail(Code code, const std::string& message) {
  if (failed_) return;
  failed_ = true;
  failCode_ = code;
  failMessage_ = message;
  BRAID_WARN("rendezvous root at %s: %s", where_.c_str(), message.c_str());
  for (Member& m : members_)
    if (m.phase == Phase::kJoined) reply(m, code, message);
}

void RootServer::maybeComplete() {
  if (formed_ || failed_ || nranks_ == 0) return;
  for (int idx : memberOfRank_)
    if (idx < 0) return;
  std::vector<protocol::PeerInfo> peers;
  peers.reserve(memberOfRank_.size());
  for (int idx : memberOfRank_) {
    const Member& m = members_[static_cast<size_t>(idx)];
    peers.push_back(protocol::PeerInfo{m.join.listen, m.join.hostId});
  }
  std::vector<uint8_t> table;
  protocol::encodeTable(peers, &table);
  formed_ = true;
  // Free the port before any rank has its table: a process that forms its next
  // communicator at the same address (braidCommInitFromEnv) can bind it at once.
  listener_.reset();
  BRAID_INFO("rendezvous root at %s: all %d ranks arrived", where_.c_str(), nranks_);
  for (int idx : memberOfRank_) reply(members_[static_cast<size_t>(idx)], Code::kOk, table);
}

void RootServer::checkDeadlines() {
  for (Member& m : members_) {
    bool reading = m.phase == Phase::kReadHeader || m.phase == Phase::kReadHostId;
    if (reading && m.readDeadline.expired()) {
      BRAID_WARN("rendezvous root at %s: dropped %s: no join request within %d ms",
                 where_.c_str(), m.peer.toString().c_str(), options_.handshakeTimeoutMs);
      closeMember(m);
    }
  }
  if (formed_ || failed_) return;
  for (const Member& m : members_) {
    if (m.phase == Phase::kJoined && m.rankDeadline.expired()) {
      fail(Code::kTimeout, missingRanksMessage(m));
      return;
    }
  }
}

std::string RootServer::missingRanksMessage(const Member& expired) const {
  constexpr size_t kMaxListed = 16;
  std::vector<int> missing;
  for (size_t r = 0; r < memberOfRank_.size(); ++r)
    if (memberOfRank_[r] < 0) missing.push_back(static_cast<int>(r));
  std::string list;
  for (size_t i = 0; i < missing.size() && i < kMaxListed; ++i)
    list += (i ? ", " : "") + std::to_string(missing[i]);
  if (missing.size() > kMaxListed) list += ", ... (" + std::to_string(missing.size()) + " in all)";
  return std::string(missing.size() == 1 ? "rank " : "ranks ") + list + " of " +
         std::to_string(nranks_) + " never arrived at the rendezvous within " +
         std::to_string(expired.join.timeoutMs) + " ms";
}

bool RootServer::done() const {
  bool replying = std::any_of(members_.begin(), members_.end(),
                              [](const Member& m) { return m.phase == Phase::kReplying; });
  if (formed_) return !replying;
  if (failed_) {
    // The linger covers the ranks that had joined when the verdict fell. A rank
    // that was still proving the secret or sending its request (one a loaded
    // machine delayed past another's deadline) would otherwise find the socket
    // closed and report "the root went away" instead of the missing ranks, so
    // the root stays until those are answered or their handshake deadline drops them.
    bool midJoin = std::any_of(members_.begin(), members_.end(), [](const Member& m) {
      return m.phase == Phase::kReadHeader || m.phase == Phase::kReadHostId;
    });
    return linger_.expired() && !replying && !midJoin && gate_.pending() == 0;
  }
  bool anyJoined = std::any_of(members_.begin(), members_.end(),
                               [](const Member& m) { return m.phase == Phase::kJoined; });
  if (!anyJoined && idle_.expired()) {
    BRAID_WARN("rendezvous root at %s: no rank arrived within %d ms; closing", where_.c_str(),
               options_.idleTimeoutMs);
    return true;
  }
  return false;
}

}  // namespace braid::bootstrap
