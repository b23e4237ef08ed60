// Communicator: one rank's membership in a group of ranks that run collectives
// together. It owns the bootstrap, the connections to its peers, the memory the
// executor reuses, and the order in which ops run.
//
// Ordering: every launch takes a ticket when it is issued (inline or onto a
// stream) and runs when all earlier tickets have finished, so ops run in issue
// order whatever thread or stream runs them; that order must match across ranks.
//
// Failure: the first failure puts the communicator in an error state: its
// connections are closed (in-flight requests may reference user buffers) and
// every pending and later op returns that error; braidCommGetAsyncError
// reports it. A failure is either seen here (an op failed, braidCommAbort) and
// then told to every other rank through the watchdog (watchdog.h), or told to
// us by the watchdog (a rank died, went silent, failed or aborted), which halts
// the running op at once. A rank whose op failed on a broken link first waits
// a short grace for the watchdog to name the root cause (the neighbour of a
// dead rank closes its links too), so that every rank names the same culprit;
// when the hub itself has gone quiet, it waits for its own verdict on the hub.
//
// Lifetime: the C handle holds a shared_ptr; queued stream work holds another,
// so a communicator outlives the ops queued on it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "algorithms/registry.h"
#include "algorithms/tuner/tuner.h"
#include "base/futex_mutex.h"
#include "base/status.h"
#include "core/bootstrap/unique_id.h"
#include "core/connections.h"
#include "core/executor.h"
#include "core/fault.h"
#include "core/fault_inject.h"
#include "core/flight_recorder.h"
#include "core/host_slots.h"
#include "core/op.h"
#include "core/plan_cache.h"
#include "core/registrations.h"
#include "core/watchdog.h"
#include "topo/comm_view.h"

namespace braid::bootstrap {
class Bootstrap;
}

namespace braid::core {
class IpcWorkspaces;  // ipc_workspaces.h
}

namespace braid::core {

struct CommConfig {
  int timeoutMs = 300000;
  int nSocks = 0;  // 0: the transport decides per peer
  int socketTrafficClass = -1;  // BRAID_SOCKET_TC: TCP sockets' IP TOS byte (-1: the system's)
  std::string socketIfname;
  size_t chunkBytes = 128 * 1024;
  size_t traceBufferSize = 1024;  // BRAID_TRACE_BUFFER_SIZE: ops the flight recorder keeps
  std::string traceDir;          // BRAID_TRACE_DIR: where traces are dumped on failure
  std::string transport;  // BRAID_TRANSPORT: force one for every pair ("" = per pair)
  std::string network;    // BRAID_NET: the transport between hosts ("" = tcp)
  size_t slotBytes = 262144;   // BRAID_SHM_SLOT_BYTES: per-rank slot of the shared slots on one host (0: off)
  int64_t streamBytes = 0;  // BRAID_SHM_STREAM_BYTES: outputs the slots write streaming (0: auto, <0: none)
  size_t pullBytes =
      65536;  // BRAID_SHM_PULL_BYTES: all-to-all blocks the slots pull from the peers (0: never)
  size_t maxMessageBytes = 0;  // BRAID_MAX_MESSAGE_BYTES: transfers larger go as several messages (0: any)
  int heartbeatMs = 1000;      // BRAID_HEARTBEAT_MS (0: off)
  int heartbeatMisses = 10;    // BRAID_HEARTBEAT_MISSES
  FaultInjection faultInjection;  // BRAID_FAULT_INJECT (tests only)
  algo::AlgorithmOverrides overrides;

  // Defaults from the BRAID_* environment (errors: a bad BRAID_ALGO).
  static Status fromEnvironment(CommConfig* out);
};

class Communicator {
 public:
  static Status create(int nranks, const bootstrap::UniqueId& id, int rank, const CommConfig& config,
                       std::shared_ptr<Communicator>* out);
  ~Communicator();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const CommConfig& config() const { return config_; }
  const topo::CommTopology& topology() const { return topology_; }

  // Builds the op for a collective with the selected algorithm; the plan comes
  // from the plan cache when a call of the same shape came before.
  Status buildCollective(const algo::CollectiveArgs& args, const void* input, void* output, Op* op);
  // A send or receive of `bytes` (zero is a valid message) with `peer`.
  Status buildPointToPoint(bool isSend, const void* buffer, size_t bytes, int peer, Op* op);
  // Makes a plan for this rank from a schedule built outside the algorithms
  // (a fused group).
  Status makeOwnPlan(algo::Schedule&& schedule, std::string algorithm,
                     std::shared_ptr<const Plan>* out) const;
  algo::CollectiveArgs argsFor(algo::Collective c) const;
  size_t cachedPlans() const { return plans_.size(); }
  // Whether small collectives run on shared slots (every rank on this host).
  bool hasSlots() const { return slots_ != nullptr; }

  // Takes an op's place in the issue order. Lock-free: a caller queuing
  // small collectives on a stream back to back would otherwise hand the
  // mutex to and from the stream's worker at every op (a cache miss each way
  // per hand-over: 1.1 against 0.38 us an op with 1 rank, measured).
  uint64_t takeTicket() { return nextTicket_.fetch_add(1, std::memory_order_relaxed); }
  // Records the op (queued at queuedAtNs, 0: now) in the flight recorder, then
  // runs it once every earlier ticket is done. Always consumes the ticket.
  Status run(uint64_t ticket, Op& op, uint64_t queuedAtNs = 0);
  // takeTicket + run in one, for the calling thread (a NULL stream).
  Status runInline(Op& op);
  // Waits until every ticket taken so far has finished (deadline: timeoutMs).
  Status drain();
  // Ops whose ticket comes after this call fail with InvalidUsage; drains
  // the ones before and returns the first error the communicator met.
  Status finalize();

  // Thread-safe: flags the abort, wakes waiters, tells the other ranks;
  // pending and later ops return Aborted here and RemoteError on the others.
  void abort();
  Status asyncError() const;

  // For split/shrink (comm_split.h): the out-of-band channel, and a counter
  // that advances identically on every rank with each split.
  bootstrap::Bootstrap& bootstrap() { return *bootstrap_; }
  uint32_t nextSplitSequence() { return splits_++; }

  // The device-direct IPC workspaces (ipc_workspaces.h), set up under the mutex by
  // the first call that needs them; freed with the communicator.
  std::mutex& ipcWorkspacesMutex() { return ipcWorkspacesMu_; }
  std::shared_ptr<IpcWorkspaces>& ipcWorkspaces() { return ipcWorkspaces_; }

  // braidCommRegister / braidCommDeregister: buffers the transports register
  // once instead of per message (registrations.h). Thread-safe.
  Status registerBuffer(void* data, size_t size, void** handle);
  Status deregisterBuffer(void* handle);

  // Writes the flight recorder as JSON to `path` ("" = the default file in
  // BRAID_TRACE_DIR, or the current directory).
  Status dumpTrace(const std::string& path) const;
  std::string defaultTracePath() const;

 private:
  // Quantized all-to-all(v) / all-gather: fixed schedules, not the tuner's.
  Status buildQuantized(const algo::CollectiveArgs& args, std::shared_ptr<const Plan>* out) const;
  // The tuner's pick for args, built into a plan.
  Status buildPlan(const algo::CollectiveArgs& args, std::shared_ptr<const Plan>* out) const;
  Communicator(int nranks, int rank, const CommConfig& config);
  Status connectPeers();
  // Sets up slots_ when every rank is on this host (collective over the bootstrap).
  Status establishSlots();
  // How a call of this shape runs on slots_, if at all (the same on every rank).
  SlotPath slotPathFor(const algo::CollectiveArgs& args) const;
  // BRAID_SHM_STREAM_BYTES, or cacheShareBytes() when 0 (auto); SIZE_MAX: never.
  size_t streamThreshold() const;
  // The last-level cache over twice this host's ranks; SIZE_MAX when unknown.
  size_t cacheShareBytes() const;
  // After an op failed with `local`: the status the op returns (the root cause
  // when another rank reported one), recorded and told to the others if first.
  Status settle(const Status& local, const ExecutionContext& ctx);
  // The watchdog's thread: another rank (or the hub) reported a fault.
  void onFault(const Fault& fault);
  // Records the op of `ticket` in the flight recorder; mu_ held.
  void recordLocked(const Op& op, uint64_t ticket, uint64_t atNs);
  // The rest of run() with mu_ held by `lock`; `now`: a clock reading taken
  // when the turn had already come (the epoch: read one once it comes).
  Status runTurn(std::unique_lock<FutexMutex>& lock, uint64_t ticket, Op& op, Clock::time_point now);
  // The op as the slots see it (also for the announcement of executor ops).
  SlotCall slotCallOf(const Op& op, uint64_t ticket) const;
  // Why a halted op stops (for the executor).
  Status haltReason() const;
  // The op's plan; for an op on the slots, the empty plan that names it.
  const Plan& planOf(const Op& op) const {
    if (op.slotPath == SlotPath::kNone) return *op.plan;
    if (op.slotPath == SlotPath::kPulled) return pulledSlotsPlan_;
    return op.slotPath == SlotPath::kWhole ? slotsPlan_ : chunkedSlotsPlan_;
  }
  // Sets spinNs_ / yield_ from how many of the communicator's ranks share this
  // host with us against the cores this process may run on.
  void choosePolling();
  // The communicator's tuner, made on first use (it needs the host layout).
  algo::Tuner& tuner() const;

  const int nranks_, rank_;
  const CommConfig config_;
  std::mutex ipcWorkspacesMu_;
  std::shared_ptr<IpcWorkspaces> ipcWorkspaces_;  // guarded by ipcWorkspacesMu_
  std::unique_ptr<bootstrap::Bootstrap> bootstrap_;
  Connections connections_;
  ExecutorMemory memory_;
  // After connections_, so that it deregisters while the transports live.
  std::unique_ptr<Registrations> registrations_;  // set once the peers are connected
  PlanCache plans_;
  std::unique_ptr<HostSlots> slots_;
  Plan slotsPlan_, chunkedSlotsPlan_,
      pulledSlotsPlan_;                    // what the flight recorder shows for slots ops (planOf)
  uint32_t slotOps_ = 0;                   // ops run on slots_ so far; only touched by the ticket holder
  size_t streamOutputBytes_ = SIZE_MAX;    // slot calls with outputs this large stream them (SlotCall)
  std::atomic<bool> aborted_{false};
  // braidCommFinalize: tickets from finalizedAt_ on are refused (under mu_).
  bool finalized_ = false;
  uint64_t finalizedAt_ = 0;
  std::atomic<bool> halted_{false};  // aborted_ or a fault from anywhere: running ops stop
  std::unique_ptr<Watchdog> watchdog_;  // destroyed first (its thread calls onFault)
  FlightRecorder recorder_;
  topo::CommTopology topology_;  // who shares a host / NUMA node, per-host NICs
  uint32_t splits_ = 0;
  int spinNs_ = 0;
  bool yield_ = false;

  // The op queue, error state and flight recorder. A FutexMutex: taken twice
  // per collective, where pthread_mutex costs ~4x the instructions.
  mutable FutexMutex mu_;
  std::condition_variable_any turn_;
  int turnWaiters_ = 0;      // guarded by mu_: threads waiting on turn_ (none: no notify)
  // takeTicket(); runInline takes one under mu_. A cache line of its own: a
  // caller queuing on a stream takes a ticket per op while the stream's
  // worker writes the state around mu_, and sharing the line cost both a
  // transfer of it per op.
  alignas(64) std::atomic<uint64_t> nextTicket_{0};
  alignas(64) uint64_t serving_ = 0;  // guarded by mu_
  Status error_;             // guarded by mu_: the first failure
  bool remoteFault_ = false; // guarded by mu_: error_ came from another rank
  std::condition_variable_any faultSeen_;           // error_ was set
  uint64_t opsByKind_[algo::kNumCollectives] = {};  // only touched by the ticket holder
  mutable std::once_flag tunerOnce_;
  mutable std::unique_ptr<algo::Tuner> tuner_;  // set once under tunerOnce_
};

}  // namespace braid::core
