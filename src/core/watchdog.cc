#include "core/watchdog.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

#include "base/deadline.h"
#include "base/log.h"
#include "base/thread_name.h"
#include "core/bootstrap/bootstrap.h"
#include "core/bootstrap/gatekeeper.h"
#include "transports/net/auth.h"

namespace braid::core {
namespace {

constexpr int kGoodbyeFlushMs = 500;  // bounds how long destroy waits on a stalled hub
constexpr int kMaxAlsoSilentNamed = 64;  // keeps a fault's text far below kControlMaxText

std::string rankName(int r) { return std::string("rank ") + std::to_string(r); }

}  // namespace

Watchdog::Watchdog(int rank, const WatchdogOptions& options, OnFault onFault)
    : rank_(rank), options_(options), onFault_(std::move(onFault)) {}

Status Watchdog::create(bootstrap::Bootstrap& bs, const WatchdogOptions& options, OnFault onFault,
                        std::unique_ptr<Watchdog>* out) {
  std::unique_ptr<Watchdog> w(new Watchdog(bs.rank(), options, std::move(onFault)));
  if (bs.nranks() > 1) BRAID_RETURN_IF_ERROR(w->connectStar(bs).prefix("setting up the control plane"));
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return systemError("eventfd for the watchdog", errno);
  w->wake_.reset(fd);
  const uint64_t now = nowNs();
  for (Link& l : w->links_) l.lastHeardNs = now;
  w->hubHeardNs_.store(now);
  w->thread_ = std::thread([raw = w.get()] { raw->run(); });
  *out = std::move(w);
  return Status::ok();
}

// The hub listens on the address its bootstrap listener uses (reachable by
// every rank, as the bootstrap proved) and hands its port out by all-gather.
Status Watchdog::connectStar(bootstrap::Bootstrap& bs) {
  const int n = bs.nranks();
  const Deadline deadline(options_.setupTimeoutMs);
  std::vector<uint8_t> table(static_cast<size_t>(n) * net::SocketAddress::kPackedBytes, 0);
  net::Fd listener;
  if (rank_ == 0) {
    net::SocketAddress bind = bs.address(0), bound;
    bind.setPort(0);
    BRAID_RETURN_IF_ERROR(net::listenOn(bind, n, &listener, &bound));
    bound.pack(table.data());
  }
  BRAID_RETURN_IF_ERROR(bs.allGather(table.data(), net::SocketAddress::kPackedBytes));
  if (rank_ != 0) {
    net::SocketAddress hub;
    BRAID_RETURN_IF_ERROR(net::SocketAddress::unpack(table.data(), &hub));
    Link l;
    l.rank = 0;
    BRAID_RETURN_IF_ERROR(net::connectTo(hub, deadline, &l.fd));
    BRAID_RETURN_IF_ERROR(net::authenticateConnector(l.fd.get(), bs.secret(), net::Purpose::kBootstrap,
                                                     static_cast<uint64_t>(rank_), deadline));
    links_.push_back(std::move(l));
    return Status::ok();
  }
  links_.resize(static_cast<size_t>(n - 1));
  int joined = 0;
  bootstrap::Gatekeeper gate(bs.secret(), bootstrap::Gatekeeper::kDefaultHandshakeTimeoutMs, "watchdog hub");
  while (joined < n - 1) {
    if (deadline.expired())
      return timeoutError(std::to_string(n - 1 - joined) + " rank(s) never connected to the watchdog hub within " +
                          std::to_string(options_.setupTimeoutMs) + " ms");
    std::vector<pollfd> fds{{listener.get(), POLLIN, 0}};
    gate.addPollFds(&fds);
    int ready = poll(fds.data(), fds.size(), gate.msUntilNextExpiry(deadline.remainingMs(100)));
    if (ready < 0 && errno != EINTR) return systemError("poll on the watchdog hub", errno);
    if (ready > 0 && (fds[0].revents & POLLIN)) gate.acceptAll(listener.get());
    std::vector<bootstrap::Admitted> admitted;
    gate.service(fds, 1, &admitted);
    for (bootstrap::Admitted& a : admitted) {
      const uint64_t r = a.connectorId;
      if (r == 0 || r >= static_cast<uint64_t>(n) || links_[r - 1].fd.valid()) {
        BRAID_WARN("watchdog hub: dropping a connection claiming rank %llu", static_cast<unsigned long long>(r));
        continue;
      }
      links_[r - 1].fd = std::move(a.fd);
      links_[r - 1].rank = static_cast<int>(r);
      joined++;
    }
  }
  return Status::ok();
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  uint64_t one = 1;
  ssize_t n = write(wake_.get(), &one, sizeof(one));
  (void)n;  // a full counter wakes the thread as well
  thread_.join();
}

void Watchdog::report(const Fault& fault) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    outbox_.push_back(fault);
  }
  uint64_t one = 1;
  ssize_t n = write(wake_.get(), &one, sizeof(one));
  (void)n;
}

// A verdict comes at the first check (one per period) after the hub's silence
// reached misses periods; the extra millisecond rounds up. A hub link that is
// gone (closed: that fault is already raised; or the hub left) gets none.
int Watchdog::msUntilHubVerdict() const {
  if (rank_ == 0 || options_.heartbeatMs <= 0 || hubGone_.load()) return 0;
  const uint64_t periodNs = uint64_t(options_.heartbeatMs) * 1000000ull;
  const uint64_t silentNs = periodNs * uint64_t(options_.misses);
  const uint64_t now = nowNs(), heard = hubHeardNs_.load();
  const uint64_t quiet = now > heard ? now - heard : 0;
  if (quiet < 2 * periodNs) return 0;
  const uint64_t left = quiet >= silentNs ? 0 : silentNs - quiet;
  return static_cast<int>((left + periodNs) / 1000000) + 1;
}

void Watchdog::queue(Link& link, const ControlFrame& frame) {
  if (!link.gone) encodeControlFrame(frame, &link.out);
}

void Watchdog::flush(Link& link) {
  if (link.gone || link.out.empty()) return;
  size_t sent = 0;
  Status st = net::sendSome(link.fd.get(), link.out.data(), link.out.size(), &sent);
  link.out.erase(0, sent);
  if (!st.isOk()) lose(static_cast<size_t>(&link - links_.data()), st.message());
}

// Only the first fault counts: it is handed to the communicator and, on the
// hub, relayed to every rank but the one it came from.
void Watchdog::raise(const Fault& fault, int fromLink) {
  if (faulted_) return;
  faulted_ = true;
  onFault_(fault);
  if (rank_ != 0) return;
  ControlFrame frame;
  frame.type = ControlType::kFault;
  frame.fault = fault;
  for (size_t i = 0; i < links_.size(); ++i)
    if (static_cast<int>(i) != fromLink) queue(links_[i], frame);
}

void Watchdog::lose(size_t i, const std::string& why) {
  Link& link = links_[i];
  if (link.gone) return;
  link.gone = true;
  if (link.rank == 0) hubGone_.store(true);
  link.fd.reset();
  link.out.clear();
  Fault f;
  f.code = Code::kRemoteError;
  f.culprit = link.rank;
  f.reporter = rank_;
  f.what = rankName(link.rank) + " died (its control connection to " + rankName(rank_) + " closed: " + why + ")";
  raise(f, static_cast<int>(i));
}

void Watchdog::readFrom(size_t i) {
  Link& link = links_[i];
  char buf[4096];
  size_t got = 0;
  Status st = net::recvSome(link.fd.get(), buf, sizeof(buf), &got);
  link.in.append(buf, got);
  if (got > 0) {
    link.lastHeardNs = nowNs();
    if (link.rank == 0) hubHeardNs_.store(link.lastHeardNs);
  }
  for (;;) {
    ControlFrame frame;
    size_t used = 0;
    ParseResult r = parseControlFrame(reinterpret_cast<const uint8_t*>(link.in.data()), link.in.size(), &frame, &used);
    if (r == ParseResult::kNeedMore) break;
    if (r == ParseResult::kCorrupt) return lose(i, "corrupt control frame");
    link.in.erase(0, used);
    if (frame.type == ControlType::kBye) {
      link.gone = true;  // left on purpose: nothing to suspect
      if (link.rank == 0) hubGone_.store(true);
      link.fd.reset();
      return;
    }
    if (frame.type == ControlType::kFault) raise(frame.fault, static_cast<int>(i));
  }
  if (!st.isOk()) lose(i, st.message());
}

// Ranks cut off together (a host's link cut or its machine hung: all its
// ranks; the hub's host: every other rank, from the hub's side) fall silent at
// the same moment, but their heartbeat phases differ by up to one period, so
// they cross the threshold in successive checks and only the first would be
// named. Links already silent for all but one period of the threshold are
// therefore named in the same fault, so that survivors learn every rank behind
// the cut at once (the culprit field stays the first). A healthy link is never
// quiet that long unless it is about to be suspected anyway.
void Watchdog::beatAndCheck(uint64_t now) {
  ControlFrame beat;
  for (Link& l : links_) queue(l, beat);
  if (faulted_) return;
  const uint64_t periodNs = uint64_t(options_.heartbeatMs) * 1000000ull;
  const uint64_t silentNs = periodNs * uint64_t(options_.misses);
  const uint64_t alsoNs = std::max(silentNs - periodNs, 2 * periodNs);
  auto quiet = [&](const Link& l) { return l.gone ? 0 : now - l.lastHeardNs; };
  size_t first = links_.size();
  for (size_t i = 0; i < links_.size() && first == links_.size(); ++i)
    if (quiet(links_[i]) >= silentNs) first = i;
  if (first == links_.size()) return;
  Fault f;
  f.code = Code::kTimeout;
  f.culprit = links_[first].rank;
  f.reporter = rank_;
  f.what = rankName(f.culprit) + " is silent (no heartbeat for " + std::to_string(quiet(links_[first]) / 1000000) +
           " ms; BRAID_HEARTBEAT_MS=" + std::to_string(options_.heartbeatMs) +
           " x BRAID_HEARTBEAT_MISSES=" + std::to_string(options_.misses) + ")";
  std::string others;
  int named = 0, more = 0;
  uint64_t leastQuiet = std::numeric_limits<uint64_t>::max();
  for (size_t i = 0; i < links_.size(); ++i) {
    if (i == first || quiet(links_[i]) < alsoNs) continue;
    leastQuiet = std::min(leastQuiet, quiet(links_[i]));
    if (named++ < kMaxAlsoSilentNamed) others += (others.empty() ? "" : ", ") + std::to_string(links_[i].rank);
    else more++;
  }
  if (named > 0) {
    f.what += "; also silent for at least " + std::to_string(leastQuiet / 1000000) + " ms: rank" +
              (named > 1 ? "s " : " ") + others + (more > 0 ? " and " + std::to_string(more) + " more" : "");
  }
  raise(f, static_cast<int>(first));
}

void Watchdog::run() {
  nameThisThread("braid-watchdog");
  log::setThreadRank(rank_);
  const uint64_t periodNs = uint64_t(options_.heartbeatMs) * 1000000ull;
  uint64_t nextBeat = nowNs() + periodNs;
  for (;;) {
    std::vector<pollfd> fds{{wake_.get(), POLLIN, 0}};
    for (const Link& l : links_)
      fds.push_back({l.gone ? -1 : l.fd.get(), static_cast<short>(POLLIN | (l.out.empty() ? 0 : POLLOUT)), 0});
    int timeout = 1000;
    if (periodNs > 0) {
      const uint64_t now = nowNs();
      timeout = now >= nextBeat ? 0 : static_cast<int>((nextBeat - now) / 1000000 + 1);
    }
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      BRAID_WARN("watchdog: poll failed (errno %d); faults will no longer travel", errno);
      return;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t drained;
      ssize_t n = read(wake_.get(), &drained, sizeof(drained));
      (void)n;
    }
    std::vector<Fault> mine;
    bool stop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      mine.swap(outbox_);
      stop = stop_;
    }
    for (const Fault& f : mine) {
      if (rank_ == 0) {
        raise(f, -1);
      } else if (!faulted_) {
        faulted_ = true;
        ControlFrame frame;
        frame.type = ControlType::kFault;
        frame.fault = f;
        queue(links_[0], frame);
      }
    }
    // Input first: after a long descheduling, heartbeats waiting in the
    // sockets prove liveness before any silence is judged.
    for (size_t i = 0; i < links_.size(); ++i)
      if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) readFrom(i);
    if (stop) return goodbye();
    const uint64_t now = nowNs();
    if (periodNs > 0 && now >= nextBeat) {
      beatAndCheck(now);
      nextBeat = now + periodNs;
    }
    for (Link& l : links_) flush(l);
  }
}

// Says goodbye on every link and flushes (bounded), so that peers tell a rank
// that left from one that died.
void Watchdog::goodbye() {
  faulted_ = true;  // leaving: a link that breaks now is nobody's fault
  ControlFrame bye;
  bye.type = ControlType::kBye;
  for (Link& l : links_) queue(l, bye);
  const Deadline deadline(kGoodbyeFlushMs);
  for (;;) {
    std::vector<pollfd> fds;
    for (Link& l : links_) {
      flush(l);
      if (!l.gone && !l.out.empty()) fds.push_back({l.fd.get(), POLLOUT, 0});
    }
    if (fds.empty() || deadline.expired()) break;
    if (poll(fds.data(), fds.size(), deadline.remainingMs(100)) < 0 && errno != EINTR) break;
  }
  links_.clear();
}

}  // namespace braid::core
