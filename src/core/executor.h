// The executor: runs one rank's Schedule (prepared as a Plan) over its Connections.
//
// It is the only code that moves data between algorithms and transports. Steps
// are issued as soon as their dependencies are done, each (peer, direction)
// channel strictly in schedule order (the matching contract of schedule.h);
// receives that reduce land in staging buffers and are reduced into place the
// moment they complete, while later chunks are still on the wire. Local steps
// (copy, reduce, divide) run as soon as they are ready. Every wait is bounded by
// the deadline and checks the abort flag.
//
// Threading: one executor call at a time per Connections (the communicator
// serialises ops). Buffers are the caller's until execute() returns; on error
// the caller must close the connections before giving the buffers back, since
// requests may still reference them.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "base/deadline.h"
#include "base/status.h"
#include "core/connections.h"
#include "core/plan.h"
#include "core/registrations.h"

namespace braid::core {

struct BufferBinding {
  void* data = nullptr;
  size_t bytes = 0;
};

// A request the executor has issued and not yet seen finish: one message of
// a step (a step larger than its link's maxMessageBytes goes as several).
struct InFlight {
  algo::StepId step;
  transport::Request* request;
  char* staging;  // recv-reduce only: the whole step's
  size_t stagingSlot;
  size_t bytes;  // this message's
};

// The state of one run that changes as it goes, by step and by peer. Kept in
// ExecutorMemory between runs only for its capacity: every run resets it.
struct RunState {
  std::vector<uint32_t> waitingOn;           // unfinished dependencies per step
  std::vector<uint8_t> isReady;              // dependencies done (and a local step run)
  std::vector<uint32_t> messagesLeft;        // per comm step: its messages not yet finished
  std::vector<uint32_t> sendHead, recvHead;  // per peer: next comm step of its queue to issue
  std::vector<uint32_t> reduceInFlight;      // per peer: recv-reduces holding a staging slot
  std::vector<InFlight> inFlight;
  std::vector<size_t> freeStaging;
  std::vector<char*> scratch;
};

// Frees an ExecutorMemory block, shareable or not.
struct FreeExecutorBlock {
  bool shareable = false;
  void operator()(char* p) const;
};

// Reusable memory for staging receives, scratch and the run state, kept by
// the communicator across ops so the hot path allocates nothing once warm.
class ExecutorMemory {
 public:
  char* staging(size_t slot, size_t bytes);
  char* scratch(size_t index, size_t bytes);
  RunState& runState() { return state_; }
  // From now on each block is registered, as it is made, with the transports
  // that register memory (ibverbs), so that the messages received into
  // staging or sent from scratch are not each registered (registrations.h).
  // `registrations` must outlive the runs that make blocks.
  void registerBlocksWith(Registrations* registrations) { registrations_ = registrations; }
  // From now on each block is made of shareable memory (base/
  // shareable_memory.h), so that a peer on this host receiving a large
  // message sent from scratch (a quantized all-to-all's codes, a Bruck
  // step's blocks) reads it through a mapping instead of process_vm_readv.
  void shareBlocksWithTheHost() { shareable_ = true; }
  // The handle `transport` has for the block holding [data, data + bytes),
  // or null (not a block, or not registered).
  void* handleFor(const transport::Transport* transport, const void* data, size_t bytes) const;

 private:
  struct Block {
    // Declared first, so destroyed last: the old data is freed only after
    // its registration ended (ensure() resets both in that order too).
    std::unique_ptr<char[], FreeExecutorBlock> data;
    size_t bytes = 0;
    std::shared_ptr<const Registrations::Range> registration;
  };
  char* ensure(std::vector<Block>& blocks, size_t index, size_t bytes);
  std::unique_ptr<char[], FreeExecutorBlock> allocate(size_t bytes);
  std::vector<Block> staging_, scratch_;
  RunState state_;
  Registrations* registrations_ = nullptr;
  bool warnedRegistration_ = false;
  bool shareable_ = false;
  bool warnedShareable_ = false;
};

struct ExecutionContext {
  Connections* connections = nullptr;
  ExecutorMemory* memory = nullptr;
  // Set (by any thread) when the op must stop: a local abort or a fault that
  // another rank reported. Read with one relaxed load when the op has nothing
  // to do; whyHalted() then says why (code and "rank 2 died ..." message).
  const std::atomic<bool>* halted = nullptr;
  // What whyHalted() asks. A function and its argument rather than a
  // std::function: a context is made for every op, small ones included.
  Status (*haltReasonFn)(const void* arg) = nullptr;
  const void* haltReasonArg = nullptr;
  Status whyHalted() const {
    return haltReasonFn ? haltReasonFn(haltReasonArg) : abortedError("the communicator was halted");
  }
  int timeoutMs = -1;
  // The deadline counts timeoutMs from here; unset (the epoch): from execute().
  Clock::time_point startedAt{};
  // How long to poll transports in a busy loop before sleeping in wait(), and
  // whether to sched_yield() between polls. Pure busy polling wins when every
  // rank has a core of its own. When ranks outnumber cores, a rank that spins
  // steals the core its peer needs to answer, and one that sleeps pays a
  // wake-up per message; yielding hands the core straight to the peer.
  int spinNs = 0;
  bool yieldWhileSpinning = false;
  int rank = 0;
  // Which op this is, for messages: opName() is "allreduce #12" (built only
  // when a message needs it, so the hot path makes no string).
  const char* opKind = "op";
  uint64_t opSeq = 0;
  std::string opName() const { return std::string(opKind) + " #" + std::to_string(opSeq); }
  int suspect = -1;    // out: on failure, the peer whose link or silence failed the op (-1: none)
  // The buffers registered with the communicator (null: none): a message in
  // one goes with its transport's handle.
  const Registrations::Table* registered = nullptr;
};

// "4 B", "64 KiB", "3 MiB": sizes for error messages.
std::string formatBytes(uint64_t bytes);

Status execute(const Plan& plan, std::span<const BufferBinding> buffers, ExecutionContext& context);

}  // namespace braid::core
