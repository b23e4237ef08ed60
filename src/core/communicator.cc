#include "core/communicator.h"

#include <sched.h>

#include "base/env.h"
#include "base/log.h"
#include "core/bootstrap/bootstrap.h"
#include "transports/registry.h"

namespace braid::core {

Status CommConfig::fromEnvironment(CommConfig* out) {
  CommConfig c;
  c.timeoutMs = static_cast<int>(env::getInt("BRAID_TIMEOUT_MS"));
  c.nSocks = static_cast<int>(env::getInt("BRAID_NSOCKS"));
  c.socketIfname = env::getString("BRAID_SOCKET_IFNAME");
  int64_t chunk = env::getInt("BRAID_CHUNK_BYTES");
  if (chunk < 1024 || chunk > (int64_t(1) << 30))
    return invalidArgument("BRAID_CHUNK_BYTES=" + std::to_string(chunk) + " is outside [1024, 1 GiB]");
  c.chunkBytes = static_cast<size_t>(chunk);
  std::string transport = env::getString("BRAID_TRANSPORT");
  if (!transport.empty()) c.transport = transport;
  BRAID_RETURN_IF_ERROR(algo::AlgorithmOverrides::parse(env::getString("BRAID_ALGO"), &c.overrides));
  *out = c;
  return Status::ok();
}

Communicator::Communicator(int nranks, int rank, const CommConfig& config)
    : nranks_(nranks), rank_(rank), config_(config) {}

Communicator::~Communicator() { connections_.closeAll(); }

Status Communicator::create(int nranks, const bootstrap::UniqueId& id, int rank,
                            const CommConfig& config, std::shared_ptr<Communicator>* out) {
  std::shared_ptr<Communicator> comm(new Communicator(nranks, rank, config));
  log::setThreadRank(rank);
  BRAID_RETURN_IF_ERROR(
      bootstrap::Bootstrap::create(id, rank, nranks, config.timeoutMs, &comm->bootstrap_));
  BRAID_RETURN_IF_ERROR(comm->connectPeers());
  comm->choosePolling();
  BRAID_INFO("communicator of %d ranks ready (transport %s, %d sockets per peer, poll %d ns%s before sleeping)",
             nranks, config.transport.c_str(), config.nSocks, comm->spinNs_, comm->yield_ ? " yielding" : "");
  *out = std::move(comm);
  return Status::ok();
}

// Full mesh: one SendComm to and one RecvComm from every peer. Connects and
// accepts are interleaved on this thread, both non-blocking, so two ranks
// connecting to each other at the same moment cannot deadlock.
Status Communicator::connectPeers() {
  transport::Options options;
  options.secret = bootstrap_->secret();
  options.nSocks = config_.nSocks;
  options.ifname = config_.socketIfname;
  options.handshakeTimeoutMs = std::min(config_.timeoutMs, 5000);
  options.rank = rank_;
  BRAID_RETURN_IF_ERROR(transport::createTransport(config_.transport, options, &connections_.transport));
  transport::Transport& tr = *connections_.transport;
  connections_.peers.resize(nranks_);
  if (nranks_ == 1) return Status::ok();

  transport::Handle mine;
  std::unique_ptr<transport::ListenComm> listener;
  BRAID_RETURN_IF_ERROR(tr.listen(0, &mine, &listener));
  std::vector<uint8_t> handles(nranks_ * transport::kHandleBytes);
  std::copy(mine.bytes.begin(), mine.bytes.end(), handles.begin() + rank_ * transport::kHandleBytes);
  BRAID_RETURN_IF_ERROR(bootstrap_->allGather(handles.data(), transport::kHandleBytes));

  Deadline deadline(config_.timeoutMs);
  int connected = 0, accepted = 0;
  const int others = nranks_ - 1;
  while (connected < others || accepted < others) {
    bool progressed = false;
    for (int k = 1; k < nranks_; ++k) {  // nearest right neighbour first: rings start sooner
      int p = (rank_ + k) % nranks_;
      if (connections_.peers[p].send) continue;
      transport::Handle h;
      std::copy_n(handles.begin() + p * transport::kHandleBytes, transport::kHandleBytes, h.bytes.begin());
      Status st = tr.connect(0, h, static_cast<uint64_t>(rank_), &connections_.peers[p].send);
      if (!st.isOk()) return st.prefix("connecting to rank " + std::to_string(p));
      if (connections_.peers[p].send) ++connected, progressed = true;
    }
    std::unique_ptr<transport::RecvComm> recv;
    uint64_t from = 0;
    BRAID_RETURN_IF_ERROR(tr.accept(*listener, &recv, &from));
    if (recv) {
      progressed = true;
      if (from >= static_cast<uint64_t>(nranks_) || static_cast<int>(from) == rank_ ||
          connections_.peers[from].recv) {
        // It proved the secret, so it is one of ours behaving wrongly.
        return remoteError("a peer connected claiming to be rank " + std::to_string(from) +
                           ", which is out of range or already connected");
      }
      connections_.peers[from].recv = std::move(recv);
      ++accepted;
    }
    if (progressed) continue;
    if (aborted_.load()) return abortedError("communicator init aborted");
    if (deadline.expired()) {
      std::string missing;
      for (int p = 0; p < nranks_; ++p) {
        if (p == rank_) continue;
        if (!connections_.peers[p].send) missing += " to " + std::to_string(p);
        if (!connections_.peers[p].recv) missing += " from " + std::to_string(p);
      }
      return timeoutError("connecting to peers timed out after " + std::to_string(config_.timeoutMs) +
                          " ms; still missing connections" + missing);
    }
    BRAID_RETURN_IF_ERROR(tr.wait(1));
  }
  return Status::ok();
}

void Communicator::choosePolling() {
  int local = 0;
  for (int r = 0; r < nranks_; ++r) local += bootstrap_->hostId(r) == bootstrap_->hostId(rank_);
  cpu_set_t set;
  int cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  // Measured on a 2-core VM with 4 ranks: yielding for up to 1 ms halves the
  // latency of small all-reduces against sleeping in poll() at once, and
  // raises 2 MiB busbw by 1.5x; after 1 ms the rank sleeps so that a peer that
  // is busy computing does not cost a core.
  const bool oversubscribed = local > cores;
  spinNs_ = oversubscribed ? 1000000 : 50000;
  yield_ = oversubscribed;
}

algo::CollectiveArgs Communicator::argsFor(algo::Collective c) const {
  algo::CollectiveArgs a;
  a.collective = c;
  a.nranks = nranks_;
  a.rank = rank_;
  a.chunkBytes = config_.chunkBytes;
  return a;
}

Status Communicator::buildCollective(const algo::CollectiveArgs& args, const void* input,
                                     void* output, Op* op) const {
  const algo::Algorithm* algorithm =
      algo::selectAlgorithm(args.collective, args.count * args.elemSize(), nranks_, config_.overrides);
  if (algorithm == nullptr)
    return notSupported(std::string("no algorithm for ") + algo::collectiveName(args.collective));
  op->collective = args.collective;
  op->algorithm = algorithm->name;
  op->schedule = algo::Schedule();
  BRAID_RETURN_IF_ERROR(algorithm->build(args, &op->schedule));
  op->buffers = {{const_cast<void*>(input), 0}, {output, 0}};
  return Status::ok();
}

uint64_t Communicator::takeTicket() {
  std::lock_guard<std::mutex> lock(mu_);
  return nextTicket_++;
}

Status Communicator::run(uint64_t ticket, Op& op) {
  std::unique_lock<std::mutex> lock(mu_);
  // Earlier ops are bounded by their own deadlines, so this wait is too.
  turn_.wait(lock, [&] { return serving_ == ticket || aborted_.load(); });
  auto finish = [&](Status s) {
    if (serving_ == ticket) serving_++;
    turn_.notify_all();
    return s;
  };
  if (aborted_.load()) return finish(abortedError("the communicator was aborted"));
  if (!error_.isOk())
    return finish(Status(error_.code(), "the communicator failed earlier: " + error_.message()));
  lock.unlock();

  log::setThreadRank(rank_);
  uint64_t seq = ++opsByKind_[static_cast<int>(op.collective)];
  ExecutionContext ctx;
  ctx.connections = &connections_;
  ctx.memory = &memory_;
  ctx.aborted = &aborted_;
  ctx.timeoutMs = config_.timeoutMs;
  ctx.spinNs = spinNs_;
  ctx.yieldWhileSpinning = yield_;
  ctx.rank = rank_;
  ctx.opName = std::string(algo::collectiveName(op.collective)) + " #" + std::to_string(seq);
  BRAID_TRACE("%s (%s): %zu steps", ctx.opName.c_str(), op.algorithm.c_str(), op.schedule.steps.size());
  Status status = execute(op.schedule, op.buffers, ctx);

  lock.lock();
  if (!status.isOk()) {
    BRAID_WARN("%s failed: %s", ctx.opName.c_str(), status.message().c_str());
    lock.unlock();
    fail(status);
    lock.lock();
  }
  return finish(status);
}

void Communicator::fail(const Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.isOk()) error_ = status;
  }
  connections_.closeAll();  // only the ticket holder gets here: nobody else uses them
}

Status Communicator::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  Deadline deadline(config_.timeoutMs);
  while (serving_ != nextTicket_) {
    if (deadline.expired())
      return timeoutError("communicator still has " + std::to_string(nextTicket_ - serving_) +
                          " ops queued after " + std::to_string(config_.timeoutMs) + " ms");
    turn_.wait_for(lock, std::chrono::milliseconds(deadline.remainingMs(100)));
  }
  return Status::ok();
}

void Communicator::abort() {
  aborted_.store(true);
  std::lock_guard<std::mutex> lock(mu_);
  turn_.notify_all();
}

Status Communicator::asyncError() const {
  if (aborted_.load()) return abortedError("the communicator was aborted");
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace braid::core
