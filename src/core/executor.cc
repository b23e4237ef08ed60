#include "core/executor.h"

#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "algorithms/collective.h"
#include "base/log.h"
#include "algorithms/local_step.h"
#include "kernels/reduce.h"

namespace braid::core {

using algo::Schedule;
using algo::Step;
using algo::StepId;
using algo::StepKind;

char* ExecutorMemory::ensure(std::vector<Block>& blocks, size_t index, size_t bytes) {
  if (blocks.size() <= index) blocks.resize(index + 1);
  Block& b = blocks[index];
  if (b.bytes < bytes) {
    b.data.reset(new char[bytes]);
    b.bytes = bytes;
  }
  return b.data.get();
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

bool isComm(StepKind k) {
  return k == StepKind::kSend || k == StepKind::kRecv || k == StepKind::kRecvReduce;
}

// One run of one schedule. Plain state arrays indexed by step id.
class Run {
 public:
  Run(const Schedule& s, const std::vector<BufferBinding>& buffers, ExecutionContext& ctx)
      : s_(s), buffers_(buffers), ctx_(ctx), deadline_(ctx.timeoutMs) {}

  Status go();

 private:
  struct Channel {
    std::vector<StepId> queue;  // comm steps of this (peer, direction), schedule order
    size_t head = 0;            // next to issue
    size_t reduceInFlight = 0;  // recv-reduces holding a staging slot
  };
  struct InFlight {
    StepId step;
    transport::Request* request;
    char* staging;  // recv-reduce only
    size_t stagingSlot;
  };

  char* address(const algo::Region& r) const;
  Status prepare();
  Status ready(StepId id);
  Status runLocal(StepId id);
  Status complete(StepId id);
  Status issue(Channel& ch, bool isRecv);
  Status pollInFlight(bool* progressed);
  // "to receive 64 KiB from rank 2 and to send 64 KiB to rank 3 (after 3 of 12 steps)"
  std::string waitingFor();
  // Names the peer and the bytes of the failed step, and for a tag mismatch
  // the collective the peer is in.
  Status failedStep(Status status, const Step& st, bool issuing);

  const Schedule& s_;
  const std::vector<BufferBinding>& buffers_;
  ExecutionContext& ctx_;
  Deadline deadline_;
  std::vector<char*> scratch_;
  std::vector<uint32_t> waitingOn_;      // unfinished deps per step
  std::vector<uint8_t> isReady_;         // dependencies done (and a local step run)
  std::vector<uint32_t> dependentsBegin_;  // CSR of reverse edges
  std::vector<StepId> dependents_;
  std::vector<Channel> sendCh_, recvCh_;
  std::vector<InFlight> inFlight_;
  std::vector<size_t> freeStaging_;
  size_t nextStagingSlot_ = 0;
  size_t done_ = 0;
};

char* Run::address(const algo::Region& r) const {
  char* base = algo::isScratch(r.buffer) ? scratch_[algo::scratchIndex(r.buffer)]
                                         : static_cast<char*>(buffers_[r.buffer].data);
  return base + r.offset;
}

Status Run::prepare() {
  const size_t n = s_.steps.size();
  for (size_t i = 0; i < s_.scratchBytes.size(); ++i)
    scratch_.push_back(ctx_.memory->scratch(i, s_.scratchBytes[i]));
  waitingOn_.assign(n, 0);
  isReady_.assign(n, 0);
  dependentsBegin_.assign(n + 1, 0);
  for (const Step& st : s_.steps)
    for (uint32_t k = 0; k < st.depCount; ++k) dependentsBegin_[s_.deps[st.depBegin + k] + 1]++;
  for (size_t i = 0; i < n; ++i) dependentsBegin_[i + 1] += dependentsBegin_[i];
  dependents_.resize(s_.deps.size());
  std::vector<uint32_t> fill(dependentsBegin_.begin(), dependentsBegin_.end() - 1);
  const size_t nranks = ctx_.connections->peers.size();
  sendCh_.assign(nranks, {});
  recvCh_.assign(nranks, {});
  for (size_t i = 0; i < n; ++i) {
    const Step& st = s_.steps[i];
    waitingOn_[i] = st.depCount;
    for (uint32_t k = 0; k < st.depCount; ++k) dependents_[fill[s_.deps[st.depBegin + k]]++] = i;
    if (isComm(st.kind)) {
      if (st.peer < 0 || static_cast<size_t>(st.peer) >= nranks || st.peer == ctx_.rank)
        return internalError(ctx_.opName + ": schedule step " + std::to_string(i) +
                             " names peer " + std::to_string(st.peer));
      (st.kind == StepKind::kSend ? sendCh_ : recvCh_)[st.peer].queue.push_back(i);
    }
  }
  return Status::ok();
}

Status Run::runLocal(StepId id) {
  const Step& st = s_.steps[id];
  // Divide reads and writes dst; its src region is unset.
  algo::runLocalStep(st, st.kind == StepKind::kDivide ? nullptr : address(st.src), address(st.dst));
  return complete(id);
}

// A step whose dependencies are all done.
Status Run::ready(StepId id) {
  const Step& st = s_.steps[id];
  isReady_[id] = 1;  // set for local steps too, so that go() never runs one twice
  if (!isComm(st.kind)) return runLocal(id);
  if (st.kind == StepKind::kSend) return issue(sendCh_[st.peer], false);
  return issue(recvCh_[st.peer], true);
}

Status Run::complete(StepId id) {
  ++done_;
  for (uint32_t k = dependentsBegin_[id]; k < dependentsBegin_[id + 1]; ++k) {
    StepId d = dependents_[k];
    if (--waitingOn_[d] == 0) BRAID_RETURN_IF_ERROR(ready(d));
  }
  return Status::ok();
}

Status Run::issue(Channel& ch, bool isRecv) {
  while (ch.head < ch.queue.size() && isReady_[ch.queue[ch.head]]) {
    StepId id = ch.queue[ch.head];
    const Step& st = s_.steps[id];
    PeerLink& link = ctx_.connections->peers[st.peer];
    InFlight f{id, nullptr, nullptr, 0};
    Status status;
    if (!isRecv) {
      status = link.send->isend(address(st.src), st.src.bytes, wireTag(st.tagKind, link.sent), nullptr,
                                &f.request);
      link.sent++;
    } else {
      char* dst = address(st.dst);
      if (st.kind == StepKind::kRecvReduce) {
        if (ch.reduceInFlight >= kRecvReduceWindow) break;  // resumes when one lands
        if (freeStaging_.empty()) freeStaging_.push_back(nextStagingSlot_++);
        f.stagingSlot = freeStaging_.back();
        freeStaging_.pop_back();
        f.staging = ctx_.memory->staging(f.stagingSlot, st.dst.bytes);
        dst = f.staging;
        ch.reduceInFlight++;
      }
      status = link.recv->irecv(dst, st.dst.bytes, wireTag(st.tagKind, link.received), nullptr,
                                &f.request);
      link.received++;
    }
    if (!status.isOk()) return failedStep(std::move(status), st, true);
    BRAID_TRACE("%s: step %u (%s %s rank %d) issued", ctx_.opName.c_str(), id, algo::stepKindName(st.kind),
                isRecv ? "from" : "to", st.peer);
    inFlight_.push_back(f);
    ch.head++;
  }
  return Status::ok();
}

Status Run::pollInFlight(bool* progressed) {
  for (size_t i = 0; i < inFlight_.size();) {
    InFlight f = inFlight_[i];
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
    inFlight_[i] = inFlight_.back();
    inFlight_.pop_back();
    if (st.kind != StepKind::kSend && moved != st.dst.bytes) {
      ctx_.suspect = st.peer;
      return remoteError(ctx_.opName + ": rank " + std::to_string(st.peer) + " sent " +
                         std::to_string(moved) + " bytes where " + std::to_string(st.dst.bytes) +
                         " were expected (do all ranks pass the same count?)");
    }
    if (st.kind == StepKind::kRecvReduce) {
      kernels::reduce(address(st.dst), address(st.src), f.staging,
                      st.dst.bytes / dataTypeSize(st.dtype), st.dtype, st.op);
      freeStaging_.push_back(f.stagingSlot);
      Channel& ch = recvCh_[st.peer];
      ch.reduceInFlight--;
      BRAID_RETURN_IF_ERROR(issue(ch, true));  // a window slot opened
    }
    BRAID_TRACE("%s: step %u (%s %s rank %d, %zu bytes) done", ctx_.opName.c_str(), f.step,
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
  for (const InFlight& f : inFlight_) {
    const Step& st = s_.steps[f.step];
    if (st.kind == StepKind::kSend) add(sends, st.peer, st.src.bytes);
    else add(recvs, st.peer, st.dst.bytes);
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
  std::string what = ctx_.opName + ": " + (issuing ? "starting to " : "") + (send ? "send " : "receive ") +
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
              algo::collectiveName(static_cast<algo::Collective>(kind)) + ", this rank in " + ctx_.opName +
              ": the ranks called different collectives)";
  }
  return Status(status.code(), what);
}

Status Run::go() {
  BRAID_RETURN_IF_ERROR(prepare());
  for (size_t i = 0; i < s_.steps.size(); ++i)
    if (waitingOn_[i] == 0 && !isReady_[i]) BRAID_RETURN_IF_ERROR(ready(i));
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
      Status why = ctx_.haltReason ? ctx_.haltReason() : abortedError("the communicator was halted");
      return Status(why.code(), ctx_.opName + ": " + why.message() + " while waiting " + waitingFor());
    }
    if (deadline_.expired())
      return timeoutError(ctx_.opName + " timed out (BRAID_TIMEOUT_MS=" + std::to_string(ctx_.timeoutMs) +
                          ") waiting " + waitingFor());
    if (inFlight_.empty())
      return internalError(ctx_.opName + ": schedule stalled with nothing in flight after " +
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

Status execute(const Schedule& schedule, const std::vector<BufferBinding>& buffers,
               ExecutionContext& context) {
  Run run(schedule, buffers, context);
  return run.go();
}

}  // namespace braid::core
