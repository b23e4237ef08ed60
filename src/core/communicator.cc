#include "core/communicator.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "algorithms/quantized/quantized.h"
#include "base/env.h"
#include "base/log.h"
#include "core/bootstrap/bootstrap.h"
#include "core/comm_topology.h"
#include "core/peer_connector.h"
#include "core/trace_signal.h"

namespace braid::core {

Status CommConfig::fromEnvironment(CommConfig* out) {
  CommConfig c;
  c.timeoutMs = static_cast<int>(env::getInt("BRAID_TIMEOUT_MS"));
  c.nSocks = static_cast<int>(env::getInt("BRAID_NSOCKS"));
  c.socketIfname = env::getString("BRAID_SOCKET_IFNAME");
  if (env::raw("BRAID_CHUNK_BYTES")) {  // unset: the tuner chooses per call
    int64_t chunk = env::getInt("BRAID_CHUNK_BYTES");
    if (chunk < 1024 || chunk > (int64_t(1) << 30))
      return invalidArgument("BRAID_CHUNK_BYTES=" + std::to_string(chunk) + " is outside [1024, 1 GiB]");
    c.chunkBytes = static_cast<size_t>(chunk);
  }
  c.transport = env::getString("BRAID_TRANSPORT");
  int64_t traceSize = env::getInt("BRAID_TRACE_BUFFER_SIZE");
  if (traceSize < 1 || traceSize > (1 << 20))
    return invalidArgument("BRAID_TRACE_BUFFER_SIZE=" + std::to_string(traceSize) + " is outside [1, 1048576]");
  c.traceBufferSize = static_cast<size_t>(traceSize);
  c.traceDir = env::getString("BRAID_TRACE_DIR");
  BRAID_RETURN_IF_ERROR(algo::AlgorithmOverrides::parse(env::getString("BRAID_ALGO"), &c.overrides));
  *out = c;
  return Status::ok();
}

Communicator::Communicator(int nranks, int rank, const CommConfig& config)
    : nranks_(nranks), rank_(rank), config_(config), recorder_(config.traceBufferSize) {}

Communicator::~Communicator() { connections_.closeAll(); }

Status Communicator::create(int nranks, const bootstrap::UniqueId& id, int rank,
                            const CommConfig& config, std::shared_ptr<Communicator>* out) {
  std::shared_ptr<Communicator> comm(new Communicator(nranks, rank, config));
  log::setThreadRank(rank);
  BRAID_RETURN_IF_ERROR(
      bootstrap::Bootstrap::create(id, rank, nranks, config.timeoutMs, &comm->bootstrap_));
  BRAID_RETURN_IF_ERROR(gatherTopology(*comm->bootstrap_, &comm->topology_));
  BRAID_RETURN_IF_ERROR(comm->connectPeers());
  comm->choosePolling();
  if (!config.traceDir.empty()) watchForTraceSignal(comm);
  BRAID_INFO("communicator of %d ranks ready (%zu transport(s), poll %d ns%s before sleeping)", nranks,
             comm->connections_.transports.size(), comm->spinNs_, comm->yield_ ? " yielding" : "");
  *out = std::move(comm);
  return Status::ok();
}

Status Communicator::connectPeers() {
  PeerSetup setup;
  setup.rank = rank_;
  setup.nranks = nranks_;
  setup.timeoutMs = config_.timeoutMs;
  setup.forcedTransport = config_.transport;
  setup.options.secret = bootstrap_->secret();
  setup.options.nSocks = config_.nSocks;
  setup.options.ifname = config_.socketIfname;
  setup.options.handshakeTimeoutMs = std::min(config_.timeoutMs, 5000);
  setup.options.rank = rank_;
  setup.aborted = &aborted_;
  return core::connectPeers(*bootstrap_, setup, &connections_);
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
  if (c == algo::Collective::kAllReduce) a.hostOf = hostOf();
  return a;
}

const std::vector<int>& Communicator::hostOf() const {
  std::call_once(hostOfOnce_, [&] {
    std::map<std::string, int> index;
    for (int r = 0; r < nranks_; ++r)
      hostOf_.push_back(index.emplace(bootstrap_->hostId(r), static_cast<int>(index.size())).first->second);
  });
  return hostOf_;
}

algo::Tuner& Communicator::tuner() const {
  std::call_once(tunerOnce_, [&] {
    // Ranks per host as the busiest host has them: the same on every rank.
    std::map<std::string, int> perHost;
    int ranksPerHost = 1;
    for (int r = 0; r < nranks_; ++r) ranksPerHost = std::max(ranksPerHost, ++perHost[bootstrap_->hostId(r)]);
    algo::LinkSettings link;
    Status st = algo::linkSettingsFromEnvironment(&link);
    if (!st.isOk()) BRAID_WARN("%s; using the default link model", st.message().c_str());
    // A chunk size the user chose is kept; otherwise the tuner picks one.
    const size_t fixedChunk = env::raw("BRAID_CHUNK_BYTES") ? config_.chunkBytes : 0;
    tuner_ = std::make_unique<algo::Tuner>(
        algo::TunerConfig::make(nranks_, ranksPerHost, link, fixedChunk, config_.chunkBytes));
  });
  return *tuner_;
}

Status Communicator::buildCollective(const algo::CollectiveArgs& args, const void* input,
                                     void* output, Op* op) const {
  if (args.quantized) return buildQuantized(args, input, output, op);
  algo::Pick pick = tuner().pick(args.collective, args.count * args.elemSize(), config_.overrides);
  if (pick.algorithm == nullptr)
    return notSupported(std::string("no algorithm for ") + algo::collectiveName(args.collective));
  algo::CollectiveArgs tuned = args;
  tuned.chunkBytes = pick.chunkBytes;
  op->collective = args.collective;
  op->algorithm = pick.algorithm->name;
  op->schedule = algo::Schedule();
  BRAID_RETURN_IF_ERROR(pick.algorithm->build(tuned, &op->schedule));
  op->buffers = {{const_cast<void*>(input), 0}, {output, 0}};
  return Status::ok();
}

Status Communicator::buildQuantized(const algo::CollectiveArgs& args, const void* input, void* output,
                                    Op* op) const {
  op->collective = args.collective;
  op->algorithm = std::string(args.collective == algo::Collective::kAllGather ? "ring" : "pairwise") + "+" +
                  kernels::wireFormatName(args.codec.format);
  op->schedule = algo::Schedule();
  BRAID_RETURN_IF_ERROR(args.collective == algo::Collective::kAllGather
                            ? algo::buildQuantizedAllGather(args, &op->schedule)
                            : algo::buildQuantizedAllToAll(args, &op->schedule));
  op->buffers = {{const_cast<void*>(input), 0}, {output, 0}};
  return Status::ok();
}

uint64_t Communicator::takeTicket(const Op& op) {
  std::lock_guard<std::mutex> lock(mu_);
  OpRecord record;
  record.ticket = nextTicket_;
  record.collective = op.collective;
  record.dtype = op.dtype;
  record.count = op.count;
  record.rootOrPeer = op.rootOrPeer;
  record.algorithm = op.algorithm;
  recorder_.enqueued(record);  // under mu_, so records go in ticket order
  return nextTicket_++;
}

static uint64_t bytesMoved(const algo::Schedule& s) {
  uint64_t bytes = 0;
  for (const algo::Step& st : s.steps) {
    if (st.kind == algo::StepKind::kSend) bytes += st.src.bytes;
    if (st.kind == algo::StepKind::kRecv || st.kind == algo::StepKind::kRecvReduce) bytes += st.dst.bytes;
  }
  return bytes;
}

std::string Communicator::defaultTracePath() const {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string dir = config_.traceDir.empty() ? "." : config_.traceDir;
  return dir + "/braid-trace." + host + "." + std::to_string(getpid()) + ".rank" + std::to_string(rank_) + ".json";
}

Status Communicator::dumpTrace(const std::string& path) const {
  return recorder_.dump(path.empty() ? defaultTracePath() : path, rank_, nranks_);
}

Status Communicator::run(uint64_t ticket, Op& op) {
  std::unique_lock<std::mutex> lock(mu_);
  // Earlier ops are bounded by their own deadlines, so this wait is too.
  turn_.wait(lock, [&] { return serving_ == ticket || aborted_.load(); });
  auto finish = [&](Status s) {
    recorder_.finished(ticket, s);
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
  recorder_.started(ticket, seq, bytesMoved(op.schedule));
  Status status = execute(op.schedule, op.buffers, ctx);

  lock.lock();
  if (!status.isOk()) {
    BRAID_WARN("%s failed: %s", ctx.opName.c_str(), status.message().c_str());
    lock.unlock();
    fail(status);
    recorder_.finished(ticket, status);
    if (!config_.traceDir.empty()) {
      Status dumped = dumpTrace("");
      if (dumped.isOk()) BRAID_WARN("flight recorder written to %s", defaultTracePath().c_str());
      else BRAID_WARN("could not write the flight recorder: %s", dumped.message().c_str());
    }
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
