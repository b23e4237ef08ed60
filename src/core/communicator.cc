#include "core/communicator.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string_view>

#include "algorithms/premul/pre_multiply.h"
#include "algorithms/quantized/quantized.h"
#include "base/env.h"
#include "base/log.h"
#include "core/bootstrap/bootstrap.h"
#include "core/bootstrap/root.h"
#include "core/comm_topology.h"
#include "core/engine_thread.h"
#include "core/launch.h"
#include "core/peer_connector.h"
#include "core/slot_collectives.h"
#include "core/trace_signal.h"

namespace braid::core {

Status CommConfig::fromEnvironment(CommConfig* out) {
  CommConfig c;
  c.timeoutMs = static_cast<int>(env::getInt("BRAID_TIMEOUT_MS"));
  c.nSocks = static_cast<int>(env::getInt("BRAID_NSOCKS"));
  c.socketIfname = env::getString("BRAID_SOCKET_IFNAME");
  c.socketTrafficClass = static_cast<int>(env::getInt("BRAID_SOCKET_TC"));
  if (c.socketTrafficClass < -1 || c.socketTrafficClass > 255)
    return invalidArgument("BRAID_SOCKET_TC=" + std::to_string(c.socketTrafficClass) +
                           " is outside [-1, 255]");
  if (env::raw("BRAID_CHUNK_BYTES")) {  // unset: the tuner chooses per call
    int64_t chunk = env::getInt("BRAID_CHUNK_BYTES");
    if (chunk < 1024 || chunk > (int64_t(1) << 30))
      return invalidArgument("BRAID_CHUNK_BYTES=" + std::to_string(chunk) + " is outside [1024, 1 GiB]");
    c.chunkBytes = static_cast<size_t>(chunk);
  }
  c.transport = env::getString("BRAID_TRANSPORT");
  c.network = env::getString("BRAID_NET");
  const int64_t slot = env::getInt("BRAID_SHM_SLOT_BYTES");
  if (slot < 0 || slot > (int64_t{1} << 20))
    return invalidArgument("BRAID_SHM_SLOT_BYTES=" + std::to_string(slot) + " is outside [0, 1048576]");
  c.slotBytes = static_cast<size_t>(slot);
  c.streamBytes = env::getInt("BRAID_SHM_STREAM_BYTES");
  const int64_t pull = env::getInt("BRAID_SHM_PULL_BYTES");
  if (pull < 0) return invalidArgument("BRAID_SHM_PULL_BYTES=" + std::to_string(pull) + " is negative");
  c.pullBytes = static_cast<size_t>(pull);
  const int64_t maxMessage = env::getInt("BRAID_MAX_MESSAGE_BYTES");
  // At least a page: a step goes out as all its messages at once.
  if (maxMessage < 0 || (maxMessage > 0 && maxMessage < 4096))
    return invalidArgument("BRAID_MAX_MESSAGE_BYTES=" + std::to_string(maxMessage) +
                           " is neither 0 nor at least 4096");
  c.maxMessageBytes = static_cast<size_t>(maxMessage);
  int64_t traceSize = env::getInt("BRAID_TRACE_BUFFER_SIZE");
  if (traceSize < 1 || traceSize > (1 << 20))
    return invalidArgument("BRAID_TRACE_BUFFER_SIZE=" + std::to_string(traceSize) + " is outside [1, 1048576]");
  c.traceBufferSize = static_cast<size_t>(traceSize);
  c.traceDir = env::getString("BRAID_TRACE_DIR");
  const int64_t beat = env::getInt("BRAID_HEARTBEAT_MS"), misses = env::getInt("BRAID_HEARTBEAT_MISSES");
  if (beat < 0 || beat > 3600000)
    return invalidArgument("BRAID_HEARTBEAT_MS=" + std::to_string(beat) + " is outside [0, 3600000]");
  if (misses < 2 || misses > 1000)
    return invalidArgument("BRAID_HEARTBEAT_MISSES=" + std::to_string(misses) + " is outside [2, 1000]");
  c.heartbeatMs = static_cast<int>(beat);
  c.heartbeatMisses = static_cast<int>(misses);
  BRAID_RETURN_IF_ERROR(FaultInjection::parse(env::getString("BRAID_FAULT_INJECT"), &c.faultInjection));
  BRAID_RETURN_IF_ERROR(algo::AlgorithmOverrides::parse(env::getString("BRAID_ALGO"), &c.overrides));
  *out = c;
  return Status::ok();
}

Communicator::Communicator(int nranks, int rank, const CommConfig& config)
    : nranks_(nranks), rank_(rank), config_(config), recorder_(config.traceBufferSize) {}

Communicator::~Communicator() {
  watchdog_.reset();  // says goodbye to the others and joins its thread
  connections_.closeAll(aborted_.load() || !error_.isOk());
  // Rendezvous roots this process served (for this communicator or a split of
  // it) have finished once it formed; free their threads' leftovers now rather
  // than when the next root starts.
  (void)bootstrap::runningRoots();
}

Status Communicator::create(int nranks, const bootstrap::UniqueId& id, int rank,
                            const CommConfig& config, std::shared_ptr<Communicator>* out) {
  std::shared_ptr<Communicator> comm(new Communicator(nranks, rank, config));
  log::setThreadRank(rank);
  BRAID_RETURN_IF_ERROR(
      bootstrap::Bootstrap::create(id, rank, nranks, config.timeoutMs, &comm->bootstrap_));
  BRAID_RETURN_IF_ERROR(gatherTopology(*comm->bootstrap_, &comm->topology_));
  WatchdogOptions wd;
  wd.heartbeatMs = config.heartbeatMs;
  wd.misses = config.heartbeatMisses;
  wd.setupTimeoutMs = config.timeoutMs;
  Communicator* raw = comm.get();  // the watchdog dies first in ~Communicator
  BRAID_RETURN_IF_ERROR(Watchdog::create(*comm->bootstrap_, wd, [raw](const Fault& f) { raw->onFault(f); },
                                         &comm->watchdog_));
  BRAID_RETURN_IF_ERROR(comm->connectPeers());
  std::vector<transport::Transport*> transports;
  for (auto& t : comm->connections_.transports) transports.push_back(t.get());
  comm->registrations_ = std::make_unique<Registrations>(std::move(transports));
  if (comm->registrations_->registersAny()) comm->memory_.registerBlocksWith(comm->registrations_.get());
  for (auto& t : comm->connections_.transports)
    if (std::string_view(t->name()) == "shm") comm->memory_.shareBlocksWithTheHost();
  BRAID_RETURN_IF_ERROR(comm->establishSlots());
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
  setup.network = config_.network;
  setup.maxMessageBytes = config_.maxMessageBytes;
  setup.options.secret = bootstrap_->secret();
  setup.options.nSocks = config_.nSocks;
  setup.options.ifname = config_.socketIfname;
  setup.options.trafficClass = config_.socketTrafficClass;
  setup.options.handshakeTimeoutMs = std::min(config_.timeoutMs, 5000);
  setup.options.rank = rank_;
  setup.aborted = &halted_;
  return core::connectPeers(*bootstrap_, setup, &connections_);
}

namespace {

std::string describePulls(HostSlots::PullWindow pulls) {
  if (!pulls.on()) return "are never pulled";
  std::string text = "are pulled from blocks of " + std::to_string(pulls.minBlockBytes) + " B";
  if (pulls.maxOutputBytes != SIZE_MAX)
    text += " to outputs under " + std::to_string(pulls.maxOutputBytes) + " B";
  return text;
}

}  // namespace

Status Communicator::establishSlots() {
  // Decided by the topology alone, which every rank holds identically, so
  // either all ranks take part in the setup or none does.
  if (nranks_ < 2 || topology_.hosts.size() != 1) return Status::ok();
  // A rank forced onto another transport (BRAID_TRANSPORT=tcp measures TCP)
  // declines; then nobody uses slots.
  const bool wanted = config_.transport.empty() || config_.transport == "shm";
  // Pulls stop where outputs stream by default (slot_collectives.h says why).
  const HostSlots::PullWindow pulls{config_.pullBytes, cacheShareBytes()};
  BRAID_RETURN_IF_ERROR(HostSlots::establish(*bootstrap_, wanted ? config_.slotBytes : 0, pulls, &slots_));
  if (!slots_) return Status::ok();
  slotsPlan_.algorithm = "shm-slots";
  chunkedSlotsPlan_.algorithm = "shm-slots-chunked";
  pulledSlotsPlan_.algorithm = "shm-slots-pulled";
  streamOutputBytes_ = streamThreshold();
  BRAID_INFO(
      "collectives of up to %zu B per rank, and larger all-reduces, reduces, all-gathers, reduce-scatters, "
      "broadcasts and all-to-alls in chunks of %zu B, run on shared slots; all-to-alls %s; "
      "outputs from %s are written streaming",
      std::min(slots_->slotBytes(), kWholeMaxBytes), slots_->slotBytes(),
      describePulls(slots_->pulls()).c_str(),
      streamOutputBytes_ == SIZE_MAX ? "(never)" : (std::to_string(streamOutputBytes_) + " B").c_str());
  return Status::ok();
}

size_t Communicator::streamThreshold() const {
  if (config_.streamBytes < 0) return SIZE_MAX;
  if (config_.streamBytes > 0) return static_cast<size_t>(config_.streamBytes);
  return cacheShareBytes();
}

size_t Communicator::cacheShareBytes() const {
  // Once the inputs and outputs of all ranks on this host together outgrow
  // the last-level cache, the copies into the outputs are bound by the
  // memory bus. Measured on the 2-core VM (32 MiB L3), streaming against plain
  // copies, busbw of all-reduce / all-gather / broadcast / all-to-all (medians
  // of 4-6 alternated runs): with 2 ranks 0.68-1.13x, mostly below 1, up to
  // 4 MiB and 1.02-1.66x from 8 MiB; with 4 ranks 0.67-1.19x up to 2 MiB and
  // 0.90-1.86x, mostly above 1.2, from 4 MiB.
  const topo::HostTopology* host = nullptr;
  if (!localHostTopology(&host).isOk() || host == nullptr) return SIZE_MAX;
  const uint64_t lastLevel = host->lastLevelCacheBytes();
  return lastLevel == 0 ? SIZE_MAX : static_cast<size_t>(lastLevel / (2 * static_cast<uint64_t>(nranks_)));
}

SlotPath Communicator::slotPathFor(const algo::CollectiveArgs& args) const {
  if (!slots_) return SlotPath::kNone;
  // An algorithm the user forced (BRAID_ALGO) is what they want measured or tested.
  if (config_.overrides.forced(args.collective, args.count * args.elemSize()) != nullptr)
    return SlotPath::kNone;
  return slotPath(args, slots_->slotBytes(), slots_->pulls());
}

void Communicator::choosePolling() {
  // Measured on a 2-core VM with 4 ranks: yielding for up to 1 ms halves the
  // latency of small all-reduces against sleeping in poll() at once, and
  // raises 2 MiB busbw by 1.5x; after 1 ms the rank sleeps so that a peer that
  // is busy computing does not cost a core. Judged from every local rank's
  // CPU set, not this rank's alone: 2 ranks pinned to a core each see one CPU
  // apiece but do not compete, and yielding on every poll there took 0.83 us
  // an 8 B all-reduce against 0.58 spinning.
  const bool oversubscribed = topology_.competesForCpus(rank_);
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
    const bool sharedMemory = algo::sharedMemoryInsideHosts(config_.transport);
    tuner_ = std::make_unique<algo::Tuner>(
        algo::TunerConfig::make(nranks_, ranksPerHost, link, fixedChunk, config_.chunkBytes, sharedMemory));
  });
  return *tuner_;
}

namespace {

// The shape of a call, which is all its plan depends on. All-to-all-v's
// counts make every call a shape of its own: not cached.
bool keyOf(const algo::CollectiveArgs& args, PlanKey* key) {
  if (args.collective == algo::Collective::kAllToAllv) return false;
  key->collective = static_cast<uint8_t>(args.collective);
  key->dtype = static_cast<uint8_t>(args.dtype);
  key->op = static_cast<uint8_t>(args.op);
  key->rootOrPeer = args.root;
  key->count = args.count;
  key->preMultiply = args.preMultiply;
  key->preMulScalar = args.preMultiply ? args.preMulScalar : 0;
  if (args.quantized) {
    // Pre-encoded plans move wire bytes only: another variant of the same call.
    key->variant = static_cast<uint8_t>(static_cast<int>(args.codec.format) + 1 + (args.preEncoded ? 8 : 0));
    key->codecHost = static_cast<uint8_t>(args.codec.hostType);
    key->codecBlock = args.codec.blockSize;
    std::memcpy(&key->codecScaleBits, &args.codec.lossScale, sizeof(float));
  }
  return true;
}

}  // namespace

Status Communicator::makeOwnPlan(algo::Schedule&& schedule, std::string algorithm,
                                 std::shared_ptr<const Plan>* out) const {
  return makePlan(std::move(schedule), std::move(algorithm), nranks_, rank_, out);
}

Status Communicator::buildPlan(const algo::CollectiveArgs& args, std::shared_ptr<const Plan>* out) const {
  if (args.quantized) return buildQuantized(args, out);
  algo::Pick pick = tuner().pick(args.collective, args.count * args.elemSize(), config_.overrides);
  if (pick.algorithm == nullptr)
    return notSupported(std::string("no algorithm for ") + algo::collectiveName(args.collective));
  algo::CollectiveArgs tuned = args;
  tuned.chunkBytes = pick.chunkBytes;
  tuned.hostOf = topology_.hostOf;  // hierarchical algorithms (the others ignore it)
  algo::Schedule schedule;
  if (args.preMultiply) {
    BRAID_RETURN_IF_ERROR(algo::buildPreMultiplied(*pick.algorithm, tuned, &schedule));
    return makeOwnPlan(std::move(schedule), std::string("premul+") + pick.algorithm->name, out);
  }
  BRAID_RETURN_IF_ERROR(pick.algorithm->build(tuned, &schedule));
  return makeOwnPlan(std::move(schedule), pick.algorithm->name, out);
}

Status Communicator::buildCollective(const algo::CollectiveArgs& args, const void* input, void* output,
                                     Op* op) {
  op->collective = args.collective;
  op->dtype = args.dtype;
  op->count = args.count;
  op->redOp = args.op;
  op->preMultiply = args.preMultiply;
  op->preMulScalar = args.preMulScalar;
  if (algo::isRooted(args.collective)) op->rootOrPeer = args.root;
  op->buffers = BufferList({const_cast<void*>(input), 0}, {output, 0});
  // A call inside braidGroupStart/End joins the group's fused schedule, so it
  // needs one of its own.
  if (!inGroup() && (op->slotPath = slotPathFor(args)) != SlotPath::kNone) return Status::ok();
  PlanKey key;
  const bool cacheable = keyOf(args, &key);
  if (cacheable && (op->plan = plans_.find(key))) return Status::ok();
  BRAID_RETURN_IF_ERROR(buildPlan(args, &op->plan));
  if (cacheable) plans_.insert(key, op->plan);
  return Status::ok();
}

Status Communicator::buildPointToPoint(bool isSend, const void* buffer, size_t bytes, int peer, Op* op) {
  op->collective = algo::Collective::kSendRecv;
  op->buffers = BufferList({const_cast<void*>(buffer), bytes}, {const_cast<void*>(buffer), bytes});
  PlanKey key;
  key.collective = static_cast<uint8_t>(algo::Collective::kSendRecv);
  key.variant = isSend ? 1 : 2;
  key.rootOrPeer = peer;
  key.count = bytes;
  if ((op->plan = plans_.find(key))) return Status::ok();
  const uint8_t tag = static_cast<uint8_t>(algo::Collective::kSendRecv);
  algo::Schedule schedule;
  if (isSend)
    schedule.add(algo::sendStep(peer, {algo::kInput, 0, bytes}, tag), {}, true);
  else
    schedule.add(algo::recvStep(peer, {algo::kOutput, 0, bytes}, tag), {}, true);
  // A send to or receive from the own rank is valid only inside a group,
  // where launch.cc pairs it with its match as a copy: no plan of its own.
  if (peer == rank_) {
    auto own = std::make_shared<Plan>();
    own->algorithm = isSend ? "send" : "recv";
    own->schedule = std::move(schedule);
    op->plan = std::move(own);
    return Status::ok();
  }
  BRAID_RETURN_IF_ERROR(makeOwnPlan(std::move(schedule), isSend ? "send" : "recv", &op->plan));
  plans_.insert(key, op->plan);
  return Status::ok();
}

Status Communicator::buildQuantized(const algo::CollectiveArgs& args,
                                    std::shared_ptr<const Plan>* out) const {
  algo::Schedule schedule;
  BRAID_RETURN_IF_ERROR(args.collective == algo::Collective::kAllGather
                            ? algo::buildQuantizedAllGather(args, &schedule)
                            : algo::buildQuantizedAllToAll(args, &schedule));
  return makeOwnPlan(std::move(schedule),
                     std::string(args.collective == algo::Collective::kAllGather ? "ring" : "pairwise") +
                         "+" + kernels::wireFormatName(args.codec.format) + (args.preEncoded ? "-wire" : ""),
                     out);
}

void Communicator::recordLocked(const Op& op, uint64_t ticket, uint64_t atNs) {
  OpRecord& record = recorder_.enqueued(ticket, atNs);
  record.collective = op.collective;
  record.dtype = op.dtype;
  record.count = op.count;
  record.rootOrPeer = op.rootOrPeer;
  record.algorithm = planOf(op).algorithm;
}

std::string Communicator::defaultTracePath() const {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string dir = config_.traceDir.empty() ? "." : config_.traceDir;
  return dir + "/braid-trace." + host + "." + std::to_string(getpid()) + ".rank" + std::to_string(rank_) + ".json";
}

Status Communicator::dumpTrace(const std::string& path) const {
  std::string json;
  {
    std::lock_guard<FutexMutex> lock(mu_);
    json = recorder_.toJson(rank_, nranks_);
  }
  return FlightRecorder::writeJson(path.empty() ? defaultTracePath() : path, json);
}

Status Communicator::run(uint64_t ticket, Op& op, uint64_t queuedAtNs) {
  std::unique_lock<FutexMutex> lock(mu_);
  // Recorded now, not when queued (that took no lock): a dump lists the ops
  // a worker has reached, the one it is stuck in among them.
  recordLocked(op, ticket, queuedAtNs != 0 ? queuedAtNs : coarseNowNs());
  return runTurn(lock, ticket, op, Clock::time_point{});
}

Status Communicator::runInline(Op& op) {
  // One lock and one clock reading both queue the op and, when its turn has
  // come already (the usual case), start it.
  const Clock::time_point now = coarseNow();
  std::unique_lock<FutexMutex> lock(mu_);
  const uint64_t ticket = nextTicket_.fetch_add(1, std::memory_order_relaxed);
  recordLocked(op, ticket,
               std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  return runTurn(lock, ticket, op, serving_ == ticket ? now : Clock::time_point{});
}

Status Communicator::runTurn(std::unique_lock<FutexMutex>& lock, uint64_t ticket, Op& op,
                             Clock::time_point now) {
  // Earlier ops are bounded by their own deadlines, so this wait is too.
  if (serving_ != ticket && !aborted_.load()) {
    ++turnWaiters_;
    turn_.wait(lock, [&] { return serving_ == ticket || aborted_.load(); });
    --turnWaiters_;
  }
  auto finish = [&](Status s) {
    recorder_.finished(ticket, s);
    if (serving_ == ticket) serving_++;
    if (turnWaiters_ > 0) turn_.notify_all();
    return s;
  };
  const char* kind = algo::collectiveName(op.collective);
  if (aborted_.load()) return finish(abortedError(std::string(kind) + ": the communicator was aborted"));
  if (finalized_ && ticket >= finalizedAt_)
    return finish(invalidUsage(
        std::string(kind) +
        ": the communicator was finalized (braidCommFinalize); only braidCommDestroy may follow"));
  if (!error_.isOk())
    return finish(Status(error_.code(), std::string(kind) + ": the communicator failed earlier: " + error_.message()));
  const uint64_t seq = ++opsByKind_[static_cast<int>(op.collective)];
  if (now == Clock::time_point{}) now = coarseNow();
  const Plan& plan = planOf(op);
  recorder_.started(ticket, seq, plan.bytesMoved,
                    std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  lock.unlock();

  log::setThreadRank(rank_);
  bindEngineThreadOnce(topology_, rank_);
  ExecutionContext ctx;
  ctx.connections = &connections_;
  ctx.memory = &memory_;
  ctx.halted = &halted_;
  ctx.haltReasonFn = [](const void* self) { return static_cast<const Communicator*>(self)->haltReason(); };
  ctx.haltReasonArg = this;
  ctx.timeoutMs = config_.timeoutMs;
  ctx.spinNs = spinNs_;
  ctx.yieldWhileSpinning = yield_;
  ctx.rank = rank_;
  ctx.opKind = kind;
  ctx.opSeq = seq;
  BRAID_TRACE("%s (%s): %zu steps", ctx.opName().c_str(), plan.algorithm.c_str(), plan.schedule.steps.size());
  ctx.startedAt = now;
  Status status;
  if (config_.faultInjection.armedFor(rank_, ticket + 1)) status = config_.faultInjection.apply(nranks_, connections_);
  if (status.isOk() && slots_) {
    const SlotCall call = slotCallOf(op, ticket);
    slots_->announce(ticket, slotSignature(call), call.count);
    if (op.slotPath != SlotPath::kNone) status = runOnSlots(*slots_, &slotOps_, call, ctx);
  }
  if (status.isOk() && op.slotPath == SlotPath::kNone) {
    // Held until the op ends: a range deregistered meanwhile stays registered for it.
    const std::shared_ptr<const Registrations::Table> registered = registrations_->snapshot();
    ctx.registered = registered.get();
    status = execute(*op.plan, op.buffers.view(), ctx);
  }
  // Aborted while it ran: it may have completed with what peers had sent, but
  // the caller asked for it to stop, and gets Aborted as every other op does.
  if (status.isOk() && aborted_.load())
    status = abortedError(std::string(kind) + ": the communicator was aborted while this op ran");

  if (!status.isOk()) {
    status = settle(status, ctx);
    BRAID_WARN("%s failed: %s", ctx.opName().c_str(), status.message().c_str());
    connections_.closeAll(true);  // only the ticket holder gets here: nobody else uses them
    lock.lock();
    recorder_.finished(ticket, status);  // so that the dump below shows it failed
    lock.unlock();
    if (!config_.traceDir.empty()) {
      Status dumped = dumpTrace("");
      if (dumped.isOk()) BRAID_WARN("flight recorder written to %s", defaultTracePath().c_str());
      else BRAID_WARN("could not write the flight recorder: %s", dumped.message().c_str());
    }
  }
  lock.lock();
  return finish(status);
}

SlotCall Communicator::slotCallOf(const Op& op, uint64_t ticket) const {
  SlotCall call;
  call.collective = op.collective;
  call.dtype = op.dtype;
  call.op = op.redOp;
  call.preMultiply = op.preMultiply;
  call.preMulScalar = op.preMulScalar;
  call.count = op.count;
  call.root = op.rootOrPeer < 0 ? 0 : op.rootOrPeer;
  call.input = op.buffers[0].data;
  call.output = op.buffers[1].data;
  call.path = op.slotPath;
  call.ticket = ticket;
  call.streamOutput = (op.slotPath == SlotPath::kChunked || op.slotPath == SlotPath::kPulled) &&
                      slotOutputBytes(call, nranks_) >= streamOutputBytes_;
  return call;
}

// How long a rank whose link broke waits for the watchdog to name a root cause
// before it reports its own view: the hub's relay takes a few milliseconds
// (two socket hops); this leaves room for a loaded machine.
constexpr auto kRootCauseGrace = std::chrono::milliseconds(300);

// A failure this rank may only be seeing second-hand: a link that closed or a
// peer that exited (its neighbour may have failed first and closed its links),
// or a deadline that passed while waiting on a rank that waits on another.
// Bad data on a link (a tag, size or frame check failed) is first-hand: this
// rank is the one that can tell, so it reports at once.
static bool maybeCollateral(const Status& s) {
  if (s.code() == Code::kTimeout) return true;
  if (s.code() != Code::kRemoteError) return false;
  for (const char* firstHand : {"tag mismatch", "different collectives", "corrupt", "out of step",
                                "too large", "were expected", "unexpected"})
    if (s.message().find(firstHand) != std::string::npos) return false;
  return true;
}

Status Communicator::registerBuffer(void* data, size_t size, void** handle) {
  return registrations_->add(data, size, handle);
}

Status Communicator::deregisterBuffer(void* handle) { return registrations_->remove(handle); }

Status Communicator::settle(const Status& local, const ExecutionContext& ctx) {
  if (aborted_.load())  // whatever broke after our own abort, the abort is the cause
    return local.code() == Code::kAborted ? local
                                          : abortedError(ctx.opName() + ": the communicator was aborted (braidCommAbort on "
                                                                      "this rank); then: " + local.message());
  std::unique_lock<FutexMutex> lock(mu_);
  if (maybeCollateral(local) && error_.isOk()) {
    // When the hub itself has gone quiet (its host cut off or hung), no relay
    // will come, and the neighbour that closed on us most likely just judged
    // the hub silent first: wait for our own verdict (at most one heartbeat
    // period behind theirs) rather than name a healthy neighbour.
    auto grace = kRootCauseGrace;
    if (watchdog_) grace += std::chrono::milliseconds(watchdog_->msUntilHubVerdict());
    faultSeen_.wait_for(lock, grace, [&] { return !error_.isOk(); });
  }
  if (!error_.isOk()) {
    // The op was halted by it (the message already says so), or its link broke
    // as a consequence of it: the root cause first, then what we saw.
    if (local.message().find(error_.message()) != std::string::npos) return local;
    return Status(error_.code(), ctx.opName() + ": " + error_.message() + "; on this rank: " + local.message());
  }
  error_ = local;
  lock.unlock();
  Fault f;
  f.code = local.code();
  f.culprit = ctx.suspect;
  f.reporter = rank_;
  f.what = local.message();
  if (watchdog_) watchdog_->report(f);
  return local;
}

void Communicator::onFault(const Fault& fault) {
  {
    std::lock_guard<FutexMutex> lock(mu_);
    if (!error_.isOk()) return;  // ours came first (and was reported)
    error_ = fault.asRemoteStatus();
    remoteFault_ = true;
    halted_.store(true);
    faultSeen_.notify_all();
    turn_.notify_all();
  }
  BRAID_WARN("communicator failed: %s", fault.asRemoteStatus().message().c_str());
}

Status Communicator::haltReason() const {
  if (aborted_.load()) return abortedError("the communicator was aborted (braidCommAbort on this rank)");
  std::lock_guard<FutexMutex> lock(mu_);
  return error_;
}

Status Communicator::drain() {
  std::unique_lock<FutexMutex> lock(mu_);
  Deadline deadline(config_.timeoutMs);
  while (serving_ != nextTicket_.load()) {
    if (deadline.expired())
      return timeoutError("communicator still has " + std::to_string(nextTicket_.load() - serving_) +
                          " ops queued after " + std::to_string(config_.timeoutMs) + " ms");
    ++turnWaiters_;
    turn_.wait_for(lock, std::chrono::milliseconds(deadline.remainingMs(100)));
    --turnWaiters_;
  }
  return Status::ok();
}

Status Communicator::finalize() {
  {
    std::lock_guard<FutexMutex> lock(mu_);
    if (!finalized_) {
      finalized_ = true;
      finalizedAt_ = nextTicket_.load();
    }
  }
  BRAID_RETURN_IF_ERROR(drain());
  return haltReason();
}

void Communicator::abort() {
  const bool first = !aborted_.exchange(true);
  halted_.store(true);
  {
    std::lock_guard<FutexMutex> lock(mu_);
    turn_.notify_all();
  }
  if (!first || !watchdog_) return;
  Fault f;
  f.code = Code::kRemoteError;
  f.culprit = rank_;
  f.reporter = rank_;
  f.what = "rank " + std::to_string(rank_) + " aborted the communicator (braidCommAbort)";
  watchdog_->report(f);
}

Status Communicator::asyncError() const {
  if (aborted_.load()) return abortedError("the communicator was aborted");
  std::lock_guard<FutexMutex> lock(mu_);
  return error_;
}

}  // namespace braid::core
