#include "core/executor.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "algorithms/collective.h"
#include "algorithms/local_step.h"
#include "base/log.h"
#include "base/shareable_memory.h"
#include "kernels/reduce.h"

namespace braid::core {

using algo::Schedule;
using algo::Step;
using algo::StepId;
using algo::StepKind;

void FreeExecutorBlock::operator()(char* p) const {
  if (shareable)
    (void)freeShareable(p);
  else
    delete[] p;
}

std::unique_ptr<char[], FreeExecutorBlock> ExecutorMemory::allocate(size_t bytes) {
  if (shareable_) {
    void* p = nullptr;
    if (Status st = allocateShareable(std::max<size_t>(bytes, 1), &p); st.isOk())
      return {static_cast<char*>(p), FreeExecutorBlock{true}};
    else if (!warnedShareable_) {
      // Plain memory works too: its messages go by process_vm_readv.
      warnedShareable_ = true;
      BRAID_WARN("could not make %zu bytes of staging memory shareable: %s", bytes, st.message().c_str());
    }
  }
  return {new char[bytes], FreeExecutorBlock{false}};
}

char* ExecutorMemory::ensure(std::vector<Block>& blocks, size_t index, size_t bytes) {
  if (blocks.size() <= index) blocks.resize(index + 1);
  Block& b = blocks[index];
  if (b.bytes < bytes) {
    b.registration.reset();
    b.data = allocate(bytes);
    b.bytes = bytes;
    if (registrations_ != nullptr) {
      // Unregistered, the block still works: its messages register each.
      Status st = registrations_->registerOwn(b.data.get(), bytes, &b.registration);
      if (!st.isOk() && !warnedRegistration_) {
        warnedRegistration_ = true;
        BRAID_WARN("could not register %zu bytes of staging memory (messages through it register each): %s",
                   bytes, st.message().c_str());
      }
    }
  }
  return b.data.get();
}

void* ExecutorMemory::handleFor(const transport::Transport* transport, const void* data, size_t bytes) const {
  for (const std::vector<Block>* blocks : {&staging_, &scratch_})
    for (const Block& b : *blocks)
      if (b.registration && b.registration->covers(data, bytes)) return b.registration->handleFor(transport);
  return nullptr;
}

char* ExecutorMemory::staging(size_t slot, size_t bytes) { return ensure(staging_, slot, bytes); }
char* ExecutorMemory::scratch(size_t index, size_t bytes) { return ensure(scratch_, index, bytes); }

namespace {

// Receives that reduce need a staging buffer each; this many may be in flight
// per peer, which bounds staging memory at kRecvReduceWindow * chunk per peer.
constexpr size_t kRecvReduceWindow = 8;

// Longest sleep in a transport's wait() before the halt flag and the deadline
// are looked at again: how late a halted op notices (a fault from another
// rank or an abort). 50 wake-ups a second cost nothing while idle.
constexpr int kIdleWaitCapMs = 20;

// Local steps at least this large are announced to the transports
// (Transport::noteLocalWork): the size of a message the shm transport copies
// across; a shorter step is over before a peer would act on it.
constexpr size_t kLocalWorkHintBytes = size_t{32} << 10;

bool isComm(StepKind k) {
  return k == StepKind::kSend || k == StepKind::kRecv || k == StepKind::kRecvReduce;
}

// One run of one plan. State arrays indexed by step id and by peer, borrowed
// from ExecutorMemory (no allocation once warm).
class Run {
 public:
  Run(const Plan& p, std::span<const BufferBinding> buffers, ExecutionContext& ctx)
      : p_(p),
        s_(p.schedule),
        buffers_(buffers),
        ctx_(ctx),
        st_(ctx.memory->runState()),
        deadline_(ctx.timeoutMs, ctx.startedAt == Clock::time_point{} ? Clock::now() : ctx.startedAt) {}

  Status go();

 private:
  char* address(const algo::Region& r) const;
  Status prepare();
  Status ready(StepId id);
  Status runLocal(StepId id);
  Status complete(StepId id);
  Status issue(int peer, bool isRecv);
  Status pollInFlight(bool* progressed);
  // "to receive 64 KiB from rank 2 and to send 64 KiB to rank 3 (after 3 of 12 steps)"
  std::string waitingFor();
  // Names the peer and the bytes of the failed step, and for a tag mismatch
  // the collective the peer is in.
  Status failedStep(Status status, const Step& st, bool issuing);

  const Plan& p_;
  const Schedule& s_;
  std::span<const BufferBinding> buffers_;
  ExecutionContext& ctx_;
  RunState& st_;
  Deadline deadline_;
  size_t nextStagingSlot_ = 0;
  size_t done_ = 0;
};

char* Run::address(const algo::Region& r) const {
  char* base = algo::isScratch(r.buffer) ? st_.scratch[algo::scratchIndex(r.buffer)]
                                         : static_cast<char*>(buffers_[r.buffer].data);
  return base + r.offset;
}

Status Run::prepare() {
  const size_t n = s_.steps.size();
  const size_t peers = ctx_.connections->peers.size();
  if (p_.peerCount() != peers)
    return internalError(ctx_.opName() + ": plan made for " + std::to_string(p_.peerCount()) +
                         " ranks, run on " + std::to_string(peers));
  st_.scratch.clear();
  for (size_t i = 0; i < s_.scratchBytes.size(); ++i)
    st_.scratch.push_back(ctx_.memory->scratch(i, s_.scratchBytes[i]));
  st_.waitingOn.resize(n);
  for (size_t i = 0; i < n; ++i) st_.waitingOn[i] = s_.steps[i].depCount;
  st_.isReady.assign(n, 0);
  st_.messagesLeft.assign(n, 0);
  st_.sendHead.assign(p_.sendBegin.begin(), p_.sendBegin.end() - 1);
  st_.recvHead.assign(p_.recvBegin.begin(), p_.recvBegin.end() - 1);
  st_.reduceInFlight.assign(peers, 0);
  st_.inFlight.clear();
  st_.freeStaging.clear();
  return Status::ok();
}

Status Run::runLocal(StepId id) {
  const Step& st = s_.steps[id];
  // Divide reads and writes dst; its src region is unset.
  const char* src = st.kind == StepKind::kDivide ? nullptr : address(st.src);
  char* dst = address(st.dst);
  // A long local step with transfers in flight: the transports may let
  // peers make copies meanwhile that this rank would have to make after it.
  // (Not an in-place copy, which is no work: a peer pushing then would only
  // take over a copy this rank is about to make at once.)
  const bool hint = st.dst.bytes >= kLocalWorkHintBytes && !st_.inFlight.empty() &&
                    !(st.kind == StepKind::kCopy && src == dst);
  if (hint)
    for (auto& t : ctx_.connections->transports) t->noteLocalWork(true);
  algo::runLocalStep(st, src, dst);
  if (hint)
    for (auto& t : ctx_.connections->transports) t->noteLocalWork(false);
  return complete(id);
}

// A step whose dependencies are all done.
Status Run::ready(StepId id) {
  const Step& st = s_.steps[id];
  st_.isReady[id] = 1;  // set for local steps too, so that go() never runs one twice
  if (!isComm(st.kind)) return runLocal(id);
  return issue(st.peer, st.kind != StepKind::kSend);
}

Status Run::complete(StepId id) {
  ++done_;
  // Transfers before local steps: a send this step frees is out (its frame
  // written, or its CMA header up for the peer to pull) before this thread
  // starts a copy or a reduction, so the peer moves data meanwhile.
  for (bool comm : {true, false}) {
    for (uint32_t k = p_.dependentsBegin[id]; k < p_.dependentsBegin[id + 1]; ++k) {
      const StepId d = p_.dependents[k];
      if (isComm(s_.steps[d].kind) == comm && --st_.waitingOn[d] == 0) BRAID_RETURN_IF_ERROR(ready(d));
    }
  }
  return Status::ok();
}

// Issues the peer's channel (its sends, or its receives) in schedule order, as
// far as its steps are ready.
Status Run::issue(int peer, bool isRecv) {
  uint32_t& head = (isRecv ? st_.recvHead : st_.sendHead)[peer];
  const uint32_t end = (isRecv ? p_.recvBegin : p_.sendBegin)[peer + 1];
  const std::vector<StepId>& queue = isRecv ? p_.recvQueue : p_.sendQueue;
  PeerLink& link = ctx_.connections->peers[peer];
  while (head < end && st_.isReady[queue[head]]) {
    const StepId id = queue[head];
    const Step& st = s_.steps[id];
    InFlight f{id, nullptr, nullptr, 0, 0};
    const size_t bytes = isRecv ? st.dst.bytes : st.src.bytes;
    char* data = isRecv ? address(st.dst) : address(st.src);
    if (st.kind == StepKind::kRecvReduce) {
      if (st_.reduceInFlight[peer] >= kRecvReduceWindow) break;  // resumes when one lands
      if (st_.freeStaging.empty()) st_.freeStaging.push_back(nextStagingSlot_++);
      f.stagingSlot = st_.freeStaging.back();
      st_.freeStaging.pop_back();
      f.staging = ctx_.memory->staging(f.stagingSlot, bytes);
      data = f.staging;
      st_.reduceInFlight[peer]++;
    }
    // Both ends cut a step alike: the same bytes, the same link limit.
    const size_t most = link.maxMessageBytes == 0 ? bytes : link.maxMessageBytes;
    const size_t messages = bytes <= most ? 1 : (bytes + most - 1) / most;
    st_.messagesLeft[id] = static_cast<uint32_t>(messages);
    for (size_t m = 0; m < messages; ++m) {
      f.bytes = std::min(most, bytes - m * most);
      char* at = data + m * most;
      void* mhandle = nullptr;
      if (link.registersMemory) {
        if (ctx_.registered) mhandle = Registrations::find(*ctx_.registered, link.transport, at, f.bytes);
        if (mhandle == nullptr) mhandle = ctx_.memory->handleFor(link.transport, at, f.bytes);
      }
      Status status =
          isRecv ? link.recv->irecv(at, f.bytes, wireTag(st.tagKind, link.received++), mhandle, &f.request)
                 : link.send->isend(at, f.bytes, wireTag(st.tagKind, link.sent++), mhandle, &f.request);
      if (!status.isOk()) return failedStep(std::move(status), st, true);
      st_.inFlight.push_back(f);
    }
    BRAID_TRACE("%s: step %u (%s %s rank %d) issued", ctx_.opName().c_str(), id, algo::stepKindName(st.kind),
                isRecv ? "from" : "to", peer);
    head++;
  }
  return Status::ok();
}

Status Run::pollInFlight(bool* progressed) {
  std::vector<InFlight>& inFlight = st_.inFlight;
  for (size_t i = 0; i < inFlight.size();) {
    InFlight f = inFlight[i];
    const Step& st = s_.steps[f.step];
    bool finished = false;
    size_t moved = 0;
    Status status = ctx_.connections->peers[st.peer].transport->test(f.request, &finished, &moved);
    if (!status.isOk()) return failedStep(std::move(status), st, false);
    if (!finished) {
      ++i;
      continue;
    }
    *progressed = true;
    inFlight[i] = inFlight.back();
    inFlight.pop_back();
    if (st.kind != StepKind::kSend && moved != f.bytes) {
      ctx_.suspect = st.peer;
      return remoteError(ctx_.opName() + ": rank " + std::to_string(st.peer) + " sent " +
                         std::to_string(moved) + " bytes where " + std::to_string(f.bytes) +
                         " were expected (do all ranks pass the same count?)");
    }
    if (--st_.messagesLeft[f.step] > 0) continue;  // the step's other messages are still on their way
    if (st.kind == StepKind::kRecvReduce) {
      kernels::reduce(address(st.dst), address(st.src), f.staging,
                      st.dst.bytes / dataTypeSize(st.dtype), st.dtype, st.op);
      st_.freeStaging.push_back(f.stagingSlot);
      st_.reduceInFlight[st.peer]--;
      BRAID_RETURN_IF_ERROR(issue(st.peer, true));  // a window slot opened
    }
    BRAID_TRACE("%s: step %u (%s %s rank %d, %zu bytes) done", ctx_.opName().c_str(), f.step,
                algo::stepKindName(st.kind), st.kind == StepKind::kSend ? "to" : "from", st.peer, moved);
    BRAID_RETURN_IF_ERROR(complete(f.step));
  }
  return Status::ok();
}

std::string Run::waitingFor() {
  // Bytes outstanding per (peer, direction), in the order first seen.
  std::vector<std::pair<int, uint64_t>> sends, recvs;
  auto add = [](std::vector<std::pair<int, uint64_t>>& v, int peer, uint64_t bytes) {
    for (auto& [p, b] : v)
      if (p == peer) return void(b += bytes);
    v.push_back({peer, bytes});
  };
  for (const InFlight& f : st_.inFlight) {
    const Step& st = s_.steps[f.step];
    if (st.kind == StepKind::kSend)
      add(sends, st.peer, f.bytes);
    else
      add(recvs, st.peer, f.bytes);
  }
  if (ctx_.suspect < 0) ctx_.suspect = !recvs.empty() ? recvs[0].first : !sends.empty() ? sends[0].first : -1;
  std::string out;
  for (auto& [p, b] : recvs) out += (out.empty() ? "to receive " : ", to receive ") + formatBytes(b) + " from rank " + std::to_string(p);
  for (auto& [p, b] : sends) out += (out.empty() ? "to send " : ", to send ") + formatBytes(b) + " to rank " + std::to_string(p);
  if (out.empty()) out = "for nothing in flight";
  return out + " (after " + std::to_string(done_) + " of " + std::to_string(s_.steps.size()) + " steps)";
}

Status Run::failedStep(Status status, const Step& st, bool issuing) {
  ctx_.suspect = st.peer;
  const bool send = st.kind == StepKind::kSend;
  std::string what = ctx_.opName() + ": " + (issuing ? "starting to " : "") + (send ? "send " : "receive ") +
                     formatBytes(send ? st.src.bytes : st.dst.bytes) + (send ? " to" : " from") + " rank " +
                     std::to_string(st.peer) + " failed: " + status.message();
  // The collective kind rides in the top byte of the tag (wireTag), so a tag
  // mismatch tells which collective the peer is in.
  const size_t at = status.message().find("got tag ");
  if (!send && at != std::string::npos) {
    const unsigned long tag = std::strtoul(status.message().c_str() + at + 8, nullptr, 10);
    const int kind = static_cast<int>(tag >> 24);
    if (kind > 0 && kind < algo::kNumCollectives && kind != st.tagKind)
      what += std::string(" (rank ") + std::to_string(st.peer) + " is in a " +
              algo::collectiveName(static_cast<algo::Collective>(kind)) + ", this rank in " + ctx_.opName() +
              ": the ranks called different collectives)";
  }
  return Status(status.code(), what);
}

Status Run::go() {
  BRAID_RETURN_IF_ERROR(prepare());
  // Transfers first, as in complete(): a broadcast root's send is up before
  // its own copy into the output, which then overlaps the peer's pull.
  for (bool comm : {true, false})
    for (StepId id : p_.roots)
      if (isComm(s_.steps[id].kind) == comm && !st_.isReady[id]) BRAID_RETURN_IF_ERROR(ready(id));
  // Spin for spinNs before sleeping in poll(): on a quiet link a reply often
  // comes within microseconds, and poll's wake-up costs more than that.
  uint64_t idleSince = 0;
  while (done_ < s_.steps.size()) {
    bool progressed = false;
    BRAID_RETURN_IF_ERROR(pollInFlight(&progressed));
    if (progressed) {
      idleSince = 0;
      continue;
    }
    if (ctx_.halted && ctx_.halted->load(std::memory_order_relaxed)) {
      Status why = ctx_.whyHalted();
      return Status(why.code(), ctx_.opName() + ": " + why.message() + " while waiting " + waitingFor());
    }
    if (deadline_.expired())
      return timeoutError(ctx_.opName() + " timed out (BRAID_TIMEOUT_MS=" + std::to_string(ctx_.timeoutMs) +
                          ") waiting " + waitingFor());
    if (st_.inFlight.empty())
      return internalError(ctx_.opName() + ": schedule stalled with nothing in flight after " +
                           std::to_string(done_) + " of " + std::to_string(s_.steps.size()) + " steps");
    const uint64_t now = nowNs();
    if (idleSince == 0) idleSince = now;
    if (now - idleSince >= static_cast<uint64_t>(ctx_.spinNs))
      BRAID_RETURN_IF_ERROR(ctx_.connections->wait(deadline_.remainingMs(kIdleWaitCapMs)));
    else if (ctx_.yieldWhileSpinning)
      sched_yield();
  }
  return Status::ok();
}

}  // namespace

std::string formatBytes(uint64_t bytes) {
  if (bytes < 1024 || bytes % 1024 != 0) return std::to_string(bytes) + " B";
  if (bytes < (uint64_t{1} << 20) || bytes % (uint64_t{1} << 20) != 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes >> 20) + " MiB";
}

Status execute(const Plan& plan, std::span<const BufferBinding> buffers, ExecutionContext& context) {
  Run run(plan, buffers, context);
  return run.go();
}

}  // namespace braid::core
