#include "core/slot_collectives.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "base/cross_memory.h"
#include "base/deadline.h"
#include "base/shareable_memory.h"
#include "kernels/reduce.h"
#include "kernels/stream_copy.h"

namespace braid::core {
namespace {

using algo::Collective;
using Lane = HostSlots::Lane;

// Longest sleep before the halt flag and the deadline are looked at again.
constexpr int kSleepCapMs = 20;

bool reduces(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduce || c == Collective::kReduceScatter;
}

// Bytes rank `rank` publishes; false on overflow or a collective slots do not run.
bool publishedBytes(Collective c, size_t count, DataType t, int nranks, bool isRoot, size_t* out) {
  const size_t block = count * dataTypeSize(t);
  if (dataTypeSize(t) != 0 && block / dataTypeSize(t) != count) return false;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kReduce:
    case Collective::kAllGather:
      *out = block;
      return true;
    case Collective::kBroadcast:
      *out = isRoot ? block : 0;
      return true;
    case Collective::kGather:
      *out = block;
      return true;
    case Collective::kScatter:
      *out = 0;
      return !isRoot || !__builtin_mul_overflow(block, static_cast<size_t>(nranks), out);
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return !__builtin_mul_overflow(block, static_cast<size_t>(nranks), out);
    case Collective::kBarrier:
      *out = 0;
      return true;
    default:
      return false;
  }
}

// What a chunked all-gather moves per op (a slot) or a chunked reduce-scatter
// per op and block (a slot's n-th), in whole cache lines, so that every copy
// starts aligned and holds whole elements of any type; 0 when less than a
// line fits.
size_t pieceBytes(size_t slotBytes) {
  constexpr size_t kLine = 64;
  return slotBytes / kLine * kLine;
}

// What a chunked all-to-all moves per op and peer block (a slot holds one
// piece of each of the other ranks' blocks).
size_t allToAllPieceBytes(size_t slotBytes, int nranks) {
  return pieceBytes(slotBytes / static_cast<size_t>(std::max(1, nranks - 1)));
}

// Who a rank must see published before it computes its output: everyone,
// one rank (the root), or nobody (-2).
constexpr int kEveryone = -1, kNobody = -2;
int sources(const SlotCall& c, int rank) {
  if (c.collective == Collective::kBroadcast) return rank == c.root ? kNobody : c.root;
  if (c.collective == Collective::kReduce || c.collective == Collective::kGather)
    return rank == c.root ? kEveryone : kNobody;
  if (c.collective == Collective::kScatter) return rank == c.root ? kNobody : c.root;
  return kEveryone;
}

// Waits for ranks to publish an op number, spinning, then yielding or
// sleeping, as the context says; the halt flag and deadline end any wait.
class Waiter {
 public:
  Waiter(const HostSlots& slots, const SlotCall& call, ExecutionContext& ctx)
      : slots_(slots),
        call_(call),
        signature_(slotSignature(call)),
        ctx_(ctx),
        deadline_(ctx.timeoutMs, ctx.startedAt) {}

  uint64_t signature() const { return signature_; }
  const SlotCall& call() const { return call_; }

  // Waits for every other rank to publish op `opNumber` only as long as a
  // wait spins before it sleeps (ctx.spinNs); false when they did not, or
  // the op was halted (the wait after it reports that). Never an error.
  bool waitBriefly(uint32_t opNumber) {
    uint64_t since = 0;
    for (int r = 0; r < slots_.nranks(); ++r) {
      for (unsigned i = 1; r != slots_.rank() && !slots_.hasPublished(r, opNumber); ++i) {
        if (ctx_.halted && ctx_.halted->load(std::memory_order_relaxed)) return false;
        pause();
        if (i % 64 != 0) continue;
        const uint64_t now = nowNs();
        if (since == 0) since = now;
        if (now - since >= static_cast<uint64_t>(ctx_.spinNs)) return false;
      }
    }
    return true;
  }

  // Every rank but this one when who == kEveryone, else rank `who`.
  Status wait(int who, uint32_t opNumber, const char* why) {
    if (who == kNobody) return Status::ok();
    if (who != kEveryone)
      return slots_.hasPublished(who, opNumber) ? Status::ok() : waitOne(who, opNumber, why);
    for (int r = 0; r < slots_.nranks(); ++r)
      if (r != slots_.rank() && !slots_.hasPublished(r, opNumber))
        BRAID_RETURN_IF_ERROR(waitOne(r, opNumber, why));
    return Status::ok();
  }

 private:
  Status waitOne(int r, uint32_t opNumber, const char* why) {
    // Spin (or yield) for ctx.spinNs of this wait, then sleep: each wait of a
    // chunked op gets its own spin, as the executor's idle clock restarts on
    // progress.
    uint64_t idleSince = 0;
    for (unsigned i = 1; !slots_.hasPublished(r, opNumber); ++i) {
      if (ctx_.halted && ctx_.halted->load(std::memory_order_relaxed)) {
        ctx_.suspect = r;
        Status reason = ctx_.whyHalted();
        return Status(reason.code(), ctx_.opName() + ": " + reason.message() + " while waiting for rank " +
                                         std::to_string(r) + " " + why + " (shared slots)");
      }
      pause();
      if (i % 64 != 0) continue;
      if (HostSlots::OtherCall theirs; slots_.announcedOther(r, call_.ticket, signature_, &theirs)) {
        // Rank r is in another call at this place: one the executor runs
        // (the slots never see it) or one that waits for us elsewhere.
        ctx_.suspect = r;
        const std::string what = theirs.known ? describeSlotSignature(theirs.signature, theirs.count)
                                              : std::string("a different collective");
        return remoteError(ctx_.opName() + ": rank " + std::to_string(r) + " called " + what + " as op " +
                           std::to_string(call_.ticket + 1) + " of the communicator while this rank called " +
                           describeSlotSignature(signature_, call_.count) +
                           ": the ranks called different collectives");
      }
      const uint64_t now = nowNs();
      if (idleSince == 0) idleSince = now;
      if (now - idleSince < static_cast<uint64_t>(ctx_.spinNs)) continue;
      if (deadline_.expired()) {
        ctx_.suspect = r;
        return timeoutError(ctx_.opName() + " timed out (BRAID_TIMEOUT_MS=" + std::to_string(ctx_.timeoutMs) +
                            ") waiting for rank " + std::to_string(r) + " " + why + " (shared slots)");
      }
      slots_.sleepUntilPublished(r, opNumber, deadline_.remainingMs(kSleepCapMs));
    }
    return Status::ok();
  }

  // One poll's pause: a yield where ranks share cores, else a spin hint.
  void pause() const {
    if (ctx_.yieldWhileSpinning)
      sched_yield();
    else
      cpuRelax();
  }

  const HostSlots& slots_;
  const SlotCall& call_;
  const uint64_t signature_;
  ExecutionContext& ctx_;
  Deadline deadline_;
};

// dst = source(0) op source(1) op ... source(n-1) over `count` elements, in
// rank order (so every rank that folds the same sources gets the same bits),
// then divided by n for an average. dst may be source(0) or source(1) (the
// first fold reads each element before writing it), not a later one.
template <typename Source>
void foldInRankOrder(void* dst, Source source, int n, size_t count, const SlotCall& c) {
  if (n == 1) {
    std::memmove(dst, source(0), count * dataTypeSize(c.dtype));
  } else {
    kernels::reduce(dst, source(0), source(1), count, c.dtype, c.op);
    for (int r = 2; r < n; ++r) kernels::reduce(dst, dst, source(r), count, c.dtype, c.op);
  }
  if (c.op == RedOp::kAvg) kernels::divideBy(dst, count, c.dtype, static_cast<uint64_t>(n));
}

// Ranks up to which reduceSlots copies tiny inputs out of the slots' lines
// before folding them (3 KiB of stack).
constexpr int kStagedLineRanks = 64;

// out = the slots' inputs folded in rank order, from `offset`.
//
// Inputs in the control lines (Lane::kLine, at most kLineBytes a rank) are
// first copied out, each line's with one memcpy, and folded from the copies.
// Measured on the 2-core VM, 2 ranks, 8-48 B all-reduces, interleaved runs:
// when the VM is in its slow state (a cross-core line transfer ~0.13 us),
// folding straight from the lines took 0.56-0.62 us a call and from the
// copies 0.44-0.47 (Open MPI: 0.50-0.55), the same with the code laid out
// differently; when it is in its fast one, 0.26 and 0.25. perf puts the
// difference on the reduction kernel's first load from a line, a stall the
// size of a transfer that a plain copy of the same bytes does not pay; why
// the kernel's element loads pay it is not established. Reduce-scatters of
// 32 B: 0.285 -> 0.25 us. Larger inputs (a cell or a slot) showed no gain.
void reduceSlots(const HostSlots& slots, uint32_t opNumber, Lane lane, size_t offset, const SlotCall& c,
                 void* out) {
  const int n = slots.nranks();
  if (lane == Lane::kLine && n <= kStagedLineRanks) {
    // Every row the fold reads is copied first (GCC cannot see that the
    // copies cover what the kernels read, hence the pragma).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    alignas(64) char staged[kStagedLineRanks][HostSlots::kLineBytes];
    const size_t bytes = c.count * dataTypeSize(c.dtype);
    for (int r = 0; r < n; ++r) std::memcpy(staged[r], slots.data(r, opNumber, lane) + offset, bytes);
    foldInRankOrder(
        out, [&](int r) -> const char* { return staged[r]; }, n, c.count, c);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    return;
  }
  foldInRankOrder(
      out, [&](int r) { return slots.data(r, opNumber, lane) + offset; }, n, c.count, c);
}

// This rank's output of a whole op, from the data every rank published in
// `lane`.
void derive(const HostSlots& slots, uint32_t opNumber, Lane lane, const SlotCall& c) {
  const int n = slots.nranks(), me = slots.rank();
  auto in = [&](int r) -> const char* { return slots.data(r, opNumber, lane); };
  const size_t block = c.count * dataTypeSize(c.dtype);
  if (block == 0) return;  // nothing to compute (and the buffers may be NULL)
  char* out = static_cast<char*>(c.output);
  switch (c.collective) {
    case Collective::kAllReduce:
      reduceSlots(slots, opNumber, lane, 0, c, out);
      break;
    case Collective::kReduce:
      if (me == c.root) reduceSlots(slots, opNumber, lane, 0, c, out);
      break;
    case Collective::kBroadcast:
      if (me != c.root)
        std::memcpy(out, in(c.root), block);
      else if (out != c.input)
        std::memcpy(out, c.input, block);
      break;
    case Collective::kAllGather:
      for (int r = 0; r < n; ++r) std::memcpy(out + r * block, in(r), block);
      break;
    case Collective::kReduceScatter:
      reduceSlots(slots, opNumber, lane, me * block, c, out);
      break;
    case Collective::kAllToAll:
      for (int r = 0; r < n; ++r) std::memcpy(out + r * block, in(r) + me * block, block);
      break;
    case Collective::kGather:
      if (me == c.root)
        for (int r = 0; r < n; ++r) std::memcpy(out + r * block, in(r), block);
      break;
    case Collective::kScatter:
      if (me != c.root)
        std::memcpy(out, in(c.root) + me * block, block);
      else if (out != static_cast<const char*>(c.input) + me * block)
        std::memcpy(out, static_cast<const char*>(c.input) + me * block, block);
      break;
    default:
      break;  // barrier: nothing to compute
  }
}

Status checkSignatures(const HostSlots& slots, uint32_t opNumber, int who, uint64_t mine,
                       ExecutionContext& ctx) {
  for (int r = 0; r < slots.nranks(); ++r) {
    if (r == slots.rank() || (who != kEveryone && who != r)) continue;
    const uint64_t theirs = slots.signatureOf(r, opNumber);
    if (theirs == mine) continue;
    ctx.suspect = r;
    // Worded as news from elsewhere: the rank's own reason (a fault the
    // watchdog relays) is the root cause to report.
    if (theirs == HostSlots::kFailedSignature)
      return remoteError(ctx.opName() + ": rank " + std::to_string(r) +
                         " gave up on this op (it failed there)");
    return remoteError(ctx.opName() + ": rank " + std::to_string(r) + " called " +
                       describeSlotSignature(theirs) + " while this rank called " +
                       describeSlotSignature(mine) + ": the ranks called different collectives");
  }
  return Status::ok();
}

}  // namespace

size_t slotOutputBytes(const SlotCall& call, int nranks) {
  size_t block = 0, all = 0;
  if (__builtin_mul_overflow(call.count, dataTypeSize(call.dtype), &block) ||
      __builtin_mul_overflow(block, static_cast<size_t>(nranks), &all))
    return SIZE_MAX;
  switch (call.collective) {
    case Collective::kAllGather:
    case Collective::kAllToAll:
    case Collective::kGather:
      return all;
    default:
      return block;
  }
}

namespace {

// Whether a call whose output is n blocks of args' count pulls (the caller
// checked that one block's bytes do not overflow).
bool inPullWindow(const algo::CollectiveArgs& args, HostSlots::PullWindow pulls) {
  const size_t block = args.count * args.elemSize();
  size_t output = 0;
  return pulls.on() && block >= pulls.minBlockBytes &&
         !__builtin_mul_overflow(block, static_cast<size_t>(args.nranks), &output) &&
         output < pulls.maxOutputBytes;
}

}  // namespace

SlotPath slotPath(const algo::CollectiveArgs& args, size_t slotBytes, HostSlots::PullWindow pulls) {
  if (args.quantized || slotBytes == 0) return SlotPath::kNone;
  size_t bytes = 0;
  // The root publishes the most (broadcast, scatter): judge by it so every
  // rank agrees.
  if (!publishedBytes(args.collective, args.count, args.dtype, args.nranks, true, &bytes))
    return SlotPath::kNone;
  if (bytes <= std::min(slotBytes, kWholeMaxBytes) && args.count < (size_t{1} << 24)) return SlotPath::kWhole;
  switch (args.collective) {
    case Collective::kAllReduce:  // a chunk holds at least one element per rank
    case Collective::kReduce:
      return slotBytes / args.elemSize() >= static_cast<size_t>(args.nranks) ? SlotPath::kChunked
                                                                             : SlotPath::kNone;
    case Collective::kAllGather:  // pulled with 2 ranks (slot_collectives.h), else in chunks of a slot
      if (args.nranks == 2 && inPullWindow(args, pulls)) return SlotPath::kPulled;
      return pieceBytes(slotBytes) > 0 ? SlotPath::kChunked : SlotPath::kNone;
    case Collective::kBroadcast:
      return pieceBytes(slotBytes) > 0 ? SlotPath::kChunked : SlotPath::kNone;
    case Collective::kReduceScatter:  // a piece of every block per slot
      return pieceBytes(slotBytes / static_cast<size_t>(args.nranks)) > 0 ? SlotPath::kChunked
                                                                          : SlotPath::kNone;
    case Collective::kAllToAll:  // pulled, or a piece of every other rank's block per slot
      if (inPullWindow(args, pulls)) return SlotPath::kPulled;
      return allToAllPieceBytes(slotBytes, args.nranks) > 0 ? SlotPath::kChunked : SlotPath::kNone;
    default:
      return SlotPath::kNone;
  }
}

// In a signature's op byte: the sum is a PreMulSum (ranks may pass different
// scalars, but all must pre-multiply or none).
constexpr int kPreMulBit = 0x80;

uint64_t slotSignature(const SlotCall& c) {
  const bool rooted = algo::isRooted(c.collective);
  return static_cast<uint64_t>(c.collective) | static_cast<uint64_t>(c.dtype) << 8 |
         static_cast<uint64_t>(
             reduces(c.collective) ? static_cast<int>(c.op) | (c.preMultiply ? kPreMulBit : 0) : 0)
             << 16 |
         static_cast<uint64_t>(rooted ? c.root & 0xffff : 0) << 24 |
         static_cast<uint64_t>(c.count & 0xffffff) << 40;
}

std::string describeSlotSignature(uint64_t s) { return describeSlotSignature(s, s >> 40); }

std::string describeSlotSignature(uint64_t s, uint64_t count) {
  const int kind = static_cast<int>(s & 0xff), type = static_cast<int>(s >> 8 & 0xff),
            op = static_cast<int>(s >> 16 & 0x7f);
  const bool preMultiplied = (s >> 16 & kPreMulBit) != 0;
  if (kind < 1 || kind >= algo::kNumCollectives || !isValidDataType(type) || !isValidRedOp(op))
    return "an unknown collective (signature " + std::to_string(s) + ")";
  const auto c = static_cast<Collective>(kind);
  std::string out = std::string(algo::collectiveName(c));
  if (c == Collective::kBarrier) return out;
  // Calls only the executor runs, met in a peer's announcement: their counts
  // say nothing (per-peer counts, or a group's several sends and receives).
  if (c == Collective::kSendRecv) return "a send or receive (or a group of them)";
  if (c == Collective::kAllToAllv) return out + " of " + dataTypeName(static_cast<DataType>(type));
  out += " of " + std::to_string(count) + " x " + dataTypeName(static_cast<DataType>(type));
  if (reduces(c))
    out += std::string(" (") + (preMultiplied ? "premulsum" : redOpName(static_cast<RedOp>(op))) + ")";
  if (algo::isRooted(c)) out += " with root " + std::to_string(s >> 24 & 0xffff);
  return out;
}

namespace {

// This rank's input into its slot: PreMulSum's multiplied by its scalar (only
// reductions pre-multiply), anything else as it is.
void fillSlot(char* slot, const void* data, size_t bytes, const SlotCall& call) {
  if (call.preMultiply)
    kernels::scaleBy(slot, data, bytes / dataTypeSize(call.dtype), call.dtype, call.preMulScalar);
  else
    std::memcpy(slot, data, bytes);
}

// A chunked path's copy into the user's output: streaming when the call
// says so (SlotCall::streamOutput).
void copyOut(const SlotCall& call, char* out, const void* from, size_t bytes) {
  if (call.streamOutput)
    kernels::copyStreaming(out, from, bytes);
  else
    std::memcpy(out, from, bytes);
}

// One op on the slots: this rank's `bytes` from `data` go into its `lane` of
// `opNumber` (data null: the caller wrote its slot already, which is only
// allowed once every rank published HostSlots::reusableAfter(opNumber,
// kSlot)), the op is published, then `who` is waited for and their calls
// checked against this one.
Status exchange(const HostSlots& slots, Waiter& waiter, uint32_t opNumber, Lane lane, const void* data,
                size_t bytes, int who, const char* why, ExecutionContext& ctx) {
  // Everyone is past the last read of what is written now once it has
  // published this op (usually seen in an earlier op already). A rank that
  // ran a window of cells ahead first waits a while (a spin's length) for the
  // others to be half a window behind it: then it runs kCells / 2 ops on
  // before it looks at their lines again, rather than taking a line from a
  // peer about to write it at every op. Only a while: a peer held elsewhere
  // (in a call on another communicator that waits for this rank's next one)
  // must not hold this rank where the cell itself is free.
  const uint32_t past = HostSlots::reusableAfter(opNumber, lane);
  if (lane != Lane::kSlot && !slots.sawEveryonePublish(past))
    waiter.waitBriefly(opNumber - HostSlots::kCells / 2);
  BRAID_RETURN_IF_ERROR(waiter.wait(kEveryone, past, "to finish its previous op"));
  if (data != nullptr && bytes > 0) fillSlot(slots.myData(opNumber, lane), data, bytes, waiter.call());
  slots.setMySignature(opNumber, waiter.signature());
  slots.publish(opNumber);
  if (Status waited = waiter.wait(who, opNumber, why); !waited.isOk()) {
    // Halted or timed out after publishing: peers still to check this op must
    // not complete it with this input. (A mismatch below needs no mark: the
    // peers see the mismatching signature themselves.)
    slots.markMyOpFailed(opNumber);
    return waited;
  }
  return checkSignatures(slots, opNumber, who, waiter.signature(), ctx);
}

// Where a whole op's data goes (the same lane on every rank: it depends on
// the call alone). Tiny data shares the control line. A rooted collective's
// data goes into the cells when every rank's fits there, so that the ranks
// that wait for nobody run ahead (host_slots.h). Where every rank waits for
// every other, nobody can run ahead, and the data stays in the two slots:
// spread over all the cells it would leave the L1 cache (2-rank all-reduces
// of 512 B and 4 KiB took 7% and 15% longer through the cells).
// rootBytes / otherBytes: what the root and the other ranks publish.
Lane wholeLane(const SlotCall& call, const HostSlots& slots, size_t rootBytes, size_t otherBytes) {
  const size_t most = std::max(rootBytes, otherBytes);
  if (most <= HostSlots::kLineBytes) return Lane::kLine;
  const int n = slots.nranks();
  const bool someoneRunsAhead =
      sources(call, call.root) == kNobody || sources(call, (call.root + 1) % n) == kNobody;
  return someoneRunsAhead && most <= slots.cellBytes() ? Lane::kCell : Lane::kSlot;
}

Status runWhole(const HostSlots& slots, uint32_t opNumber, const SlotCall& call, ExecutionContext& ctx) {
  Waiter waiter(slots, call, ctx);
  size_t rootBytes = 0, otherBytes = 0;
  publishedBytes(call.collective, call.count, call.dtype, slots.nranks(), true, &rootBytes);
  publishedBytes(call.collective, call.count, call.dtype, slots.nranks(), false, &otherBytes);
  const size_t bytes = slots.rank() == call.root ? rootBytes : otherBytes;
  const int who = sources(call, slots.rank());
  const Lane lane = wholeLane(call, slots, rootBytes, otherBytes);
  BRAID_RETURN_IF_ERROR(
      exchange(slots, waiter, opNumber, lane, call.input, bytes, who, "to publish its input", ctx));
  // Where everyone is past the last use of this rank's next cell (always
  // when it waited for everyone), fetch it now, while the output is computed
  // and the next call is made, rather than when the next op publishes.
  if (slots.sawEveryonePublish(HostSlots::reusableAfter(opNumber + 1, Lane::kCell)))
    slots.prefetchMyCell(opNumber + 1);
  derive(slots, opNumber, lane, call);
  // The next call most likely has this one's shape (calls in a loop), and
  // its data then goes where this rank's next op writes: fetch that too,
  // while the next call is made. Only after the output: fetched before it,
  // the lines held up the output's reads of the peers' data (2-rank
  // all-gathers of 1-2 KiB took 7-15% longer). Interleaved runs of 2-rank
  // calls on the 2-core VM, us: all-reduce 1 KiB 0.84 -> 0.64, 256 B 0.63 ->
  // 0.58; all-gather 256 B 0.58 -> 0.43, 4 KiB 1.15 -> 0.97.
  slots.prefetchMyData(opNumber + 1, lane, bytes);
  return Status::ok();
}

// Elements [blockBegin(len, n, p), blockBegin(len, n, p + 1)) of a chunk of
// len elements are rank p's to fold: sizes differ by at most one.
size_t blockBegin(size_t len, int n, int p) { return len * static_cast<size_t>(p) / static_cast<size_t>(n); }

// What a pulled call reads of rank p's input (at `from` past the address p
// published) into this rank's output (at `to`), from byte `skip` of the
// part on; bytes 0: nothing.
struct PullPart {
  size_t from = 0, to = 0, bytes = 0;
};
PullPart pullPart(const SlotCall& call, int me, int p, size_t block, size_t skip) {
  PullPart part;
  switch (call.collective) {
    case Collective::kAllToAll:  // p's block `me`
      part = {me * block, p * block, block};
      break;
    case Collective::kAllGather:  // p's block
      part = {0, p * block, block};
      break;
    case Collective::kBroadcast:  // the root's vector, for the others
      if (p == call.root && me != call.root) part = {0, 0, block};
      break;
    default:
      break;
  }
  if (part.bytes <= skip) return {};
  return {part.from + skip, part.to + skip, part.bytes - skip};
}

// This rank's own part, from byte `skip` on: input to output directly
// (nothing in place).
void copyOwnPart(const SlotCall& call, int me, size_t block, size_t skip) {
  if (skip >= block) return;
  const char* in = static_cast<const char*>(call.input);
  char* out = static_cast<char*>(call.output);
  const size_t rest = block - skip;
  switch (call.collective) {
    case Collective::kAllToAll:
      copyOut(call, out + me * block + skip, in + me * block + skip, rest);
      break;
    case Collective::kAllGather:
      if (in != out + me * block) copyOut(call, out + me * block + skip, in + skip, rest);
      break;
    case Collective::kBroadcast:
      if (me == call.root && in != out) copyOut(call, out + skip, in + skip, rest);
      break;
    default:
      break;
  }
}

// What a rank publishes of its input for a read straight from it: the
// address, for process_vm_readv, and the shareable region holding it when it
// came from braidMemAlloc, for a reader that maps it (base/peer_regions.h).
struct PulledInput {
  uint64_t address = 0;
  uint64_t regionId = 0;  // 0: not braidMemAlloc memory
  int32_t regionFd = -1;  // the owner's shareable file
};
static_assert(sizeof(PulledInput) <= HostSlots::kLineBytes, "fits a control line");

size_t pulledInputBytes(const SlotCall& call, int n) {
  const size_t block = call.count * dataTypeSize(call.dtype);
  const bool nBlocks =
      call.collective == Collective::kAllToAll || call.collective == Collective::kReduceScatter;
  return nBlocks ? block * static_cast<size_t>(n) : block;
}

PulledInput describeInput(const SlotCall& call, int n) {
  const ShareableRange region = findShareable(call.input, pulledInputBytes(call, n));
  return {reinterpret_cast<uintptr_t>(call.input), region.regionId, region.fd};
}

// Where this process maps `part` of rank p's input, or null (then it reads it
// with process_vm_readv).
const char* mappedInput(const HostSlots& slots, int p, const PulledInput& theirs, const PullPart& part) {
  PeerRegions* regions = slots.peerRegions();
  if (regions == nullptr || theirs.regionId == 0) return nullptr;
  return regions->find(slots.pidOf(p), theirs.regionId, theirs.regionFd, theirs.address + part.from,
                       part.bytes);
}

// Chunked all-gathers, all-to-alls, broadcasts, reduce-scatters and
// all-reduces: op 1 also says, in each publishing rank's control line, where
// its input is (and, for an all-reduce, its output). When every buffer the
// call reads from the peers (the root's input alone for a broadcast) came
// from braidMemAlloc, the ranks read the rest of the call straight from those
// buffers through mappings, instead of through the slots: no copy in, and
// two or three ops instead of one or two a slot. Every rank reads the same
// lines, so all take the same turn. Plain buffers pay nothing: the line is
// the one a reader takes anyway to see the op published.
//
// A PreMulSum's ranks also announce their scalars (announceInput): the
// readers scale every input as they fold it.
bool announcesInput(const HostSlots& slots, const SlotCall& call) {
  if (slots.peerRegions() == nullptr) return false;  // pulls off (and so mappings)
  switch (call.collective) {
    case Collective::kAllGather:
    case Collective::kAllToAll:
    case Collective::kReduceScatter:
    case Collective::kAllReduce:
    case Collective::kReduce:
      return true;
    case Collective::kBroadcast:
      return slots.rank() == call.root;
    default:
      return false;
  }
}

// The buffers a rank announces: its input, then its output.
struct Announced {
  PulledInput input, output;
};
static_assert(sizeof(Announced) <= HostSlots::kLineBytes, "fits a control line");

Announced announcedBy(const HostSlots& slots, int r, uint32_t op) {
  Announced a;
  std::memcpy(&a, slots.data(r, op, Lane::kLine), sizeof(a));
  return a;
}

// Where a PreMulSum's rank announces its scalar in op `op`: the first bytes
// of its cell, which ops on the slots leave unused (the control line is full
// with Announced). The cell is as free as the slot once every rank published
// op - 1 (host_slots.h: nobody reads anything older), and stays so until
// they all publish op + kCells - 1; the readers read it before their next op.
char* scalarCell(const HostSlots& slots, int r, uint32_t op) { return slots.data(r, op, Lane::kCell); }

// Writes where this rank's buffers are into its control line of op `op`
// (and a PreMulSum's scalar into its cell), once every rank is past that
// op's slot's last use (the wait exchange makes before it writes the slot).
Status announceInput(const HostSlots& slots, Waiter& waiter, uint32_t op, const SlotCall& call) {
  BRAID_RETURN_IF_ERROR(
      waiter.wait(kEveryone, HostSlots::reusableAfter(op, Lane::kSlot), "to finish its previous op"));
  Announced mine{describeInput(call, slots.nranks()), {}};
  if (call.collective == Collective::kAllReduce ||
      (call.collective == Collective::kReduce && slots.rank() == call.root)) {
    const size_t bytes = call.count * dataTypeSize(call.dtype);
    const ShareableRange region = findShareable(call.output, bytes);
    mine.output = {reinterpret_cast<uintptr_t>(call.output), region.regionId, region.fd};
  }
  std::memcpy(slots.myData(op, Lane::kLine), &mine, sizeof(mine));
  if (call.preMultiply)
    std::memcpy(scalarCell(slots, slots.rank(), op), &call.preMulScalar, sizeof(call.preMulScalar));
  return Status::ok();
}

// Whether every buffer `call` reads of the peers was announced in op `op` as
// braidMemAlloc memory (read only where announcesInput holds, or, for a
// broadcast, holds at its root). A reduce's root reads only the others'.
bool inputsMapped(const HostSlots& slots, uint32_t op, const SlotCall& call) {
  for (int r = 0; r < slots.nranks(); ++r) {
    if (call.collective == Collective::kBroadcast && r != call.root) continue;
    if (call.collective == Collective::kReduce && r == call.root) continue;
    const Announced theirs = announcedBy(slots, r, op);
    if (theirs.input.regionId == 0) return false;
    if (call.collective == Collective::kAllReduce && theirs.output.regionId == 0) return false;
  }
  return true;
}

// A failed process_vm_readv of `bytes` of rank p's `what` ("input"), with
// p as the suspect.
Status peerReadError(ExecutionContext& ctx, int p, size_t bytes, const char* what, int err) {
  ctx.suspect = p;
  if (err == ESRCH) return remoteError(ctx.opName() + ": rank " + std::to_string(p) + " exited");
  return systemError(ctx.opName() + ": reading " + std::to_string(bytes) + " bytes of rank " +
                         std::to_string(p) + "'s " + what,
                     err);
}

// Copies `part` of rank p's buffer `theirs` (its `what`) into this rank's
// output: through a mapping, else with process_vm_readv.
Status copyFromPeer(const HostSlots& slots, const SlotCall& call, int p, const PulledInput& theirs,
                    const PullPart& part, const char* what, ExecutionContext& ctx) {
  char* out = static_cast<char*>(call.output);
  if (const char* mapped = mappedInput(slots, p, theirs, part)) {
    copyOut(call, out + part.to, mapped, part.bytes);
    return Status::ok();
  }
  const int err = readProcessMemory(slots.pidOf(p), reinterpret_cast<const void*>(theirs.address + part.from),
                                    out + part.to, part.bytes);
  return err == 0 ? Status::ok() : peerReadError(ctx, p, part.bytes, what, err);
}

// `bytes` of rank p's buffer `theirs` (of its announcement), at `from` past
// its start: through a mapping, or read into *staging with
// process_vm_readv (a peer this process may not map); null on failure, with
// *st saying why.
const char* peerBytes(const HostSlots& slots, int p, const PulledInput& theirs, size_t from, size_t bytes,
                      std::vector<char>* staging, ExecutionContext& ctx, Status* st) {
  if (const char* mapped = mappedInput(slots, p, theirs, PullPart{from, 0, bytes})) return mapped;
  staging->resize(bytes);
  const int err = readProcessMemory(slots.pidOf(p), reinterpret_cast<const void*>(theirs.address + from),
                                    staging->data(), bytes);
  if (err == 0) return staging->data();
  *st = peerReadError(ctx, p, bytes, "input", err);
  return nullptr;
}

// Every rank's input at byte `from`, `bytes` of it, as announced in op
// `where`: this rank's own, the others' through mappings (or read into
// `staging` with process_vm_readv); for a PreMulSum, every rank's scalar.
struct InputSources {
  std::vector<const char*> at;
  std::vector<std::vector<char>> staging;
  std::vector<uint64_t> scalars;  // PreMulSum's, by rank; else empty
  const char* operator()(int r) const { return at[r]; }
};

Status readInputs(const HostSlots& slots, const SlotCall& call, uint32_t where, size_t from, size_t bytes,
                  ExecutionContext& ctx, InputSources* sources) {
  const int n = slots.nranks(), me = slots.rank();
  sources->at.assign(n, nullptr);
  sources->staging.resize(n);
  Status st;
  for (int r = 0; r < n && st.isOk(); ++r)
    sources->at[r] = r == me ? static_cast<const char*>(call.input) + from
                             : peerBytes(slots, r, announcedBy(slots, r, where).input, from, bytes,
                                         &sources->staging[r], ctx, &st);
  sources->scalars.clear();
  if (call.preMultiply) {
    sources->scalars.resize(n);
    for (int r = 0; r < n; ++r)
      std::memcpy(&sources->scalars[r], scalarCell(slots, r, where), sizeof(uint64_t));
  }
  return st;
}

// A staging buffer for folds in pieces, cache-line aligned. On the heap: a
// thread_local this size would not fit the static TLS block of a library
// that is dlopen'ed (PyTorch's backend loads braid so).
class FoldStage {
 public:
  // Left uninitialised: every byte read is written first.
  explicit FoldStage(size_t bytes) : lines_(new Line[(bytes + sizeof(Line) - 1) / sizeof(Line)]) {}
  char* at(size_t byte) { return reinterpret_cast<char*>(lines_.get()) + byte; }

 private:
  struct alignas(64) Line {
    char bytes[64];
  };
  std::unique_ptr<Line[]> lines_;
};
constexpr size_t kFoldStageBytes = 64 * 1024;

// A PreMulSum's fold of every rank's input, each multiplied by its rank's
// scalar first, in rank order: the bits the chunks give, which fold inputs
// scaled into the slots. In pieces through two buffers, the sum and the
// scaled input, so dst may be any source.
void foldScaledInputs(char* dst, const InputSources& sources, int n, size_t count, const SlotCall& c) {
  FoldStage stage(kFoldStageBytes);
  char* sum = stage.at(0);
  char* scaled = stage.at(kFoldStageBytes / 2);
  const size_t es = dataTypeSize(c.dtype), per = kFoldStageBytes / 2 / es;
  for (size_t at = 0; at < count; at += per) {
    const size_t len = std::min(per, count - at);
    kernels::scaleBy(sum, sources(0) + at * es, len, c.dtype, sources.scalars[0]);
    for (int r = 1; r < n; ++r) {
      kernels::scaleBy(scaled, sources(r) + at * es, len, c.dtype, sources.scalars[r]);
      kernels::reduce(sum, sum, scaled, len, c.dtype, c.op);
    }
    if (c.op == RedOp::kAvg) kernels::divideBy(sum, len, c.dtype, static_cast<uint64_t>(n));
    std::memcpy(dst + at * es, sum, len * es);
  }
}

// dst = every rank's input folded in rank order (scaled first for a
// PreMulSum), where dst may be source(aliased) (in place, the own input, or
// a reduce's root's; -1: none): in pieces through a buffer when dst is a
// source past the second, which the first fold would overwrite before it is
// read.
void foldInputs(char* dst, const InputSources& sources, int n, int aliased, size_t count, const SlotCall& c) {
  if (c.preMultiply) {
    foldScaledInputs(dst, sources, n, count, c);
    return;
  }
  if (aliased < 2 || sources(aliased) != dst) {
    foldInRankOrder(dst, sources, n, count, c);
    return;
  }
  FoldStage stage(kFoldStageBytes);
  const size_t es = dataTypeSize(c.dtype), per = kFoldStageBytes / es;
  for (size_t at = 0; at < count; at += per) {
    const size_t len = std::min(per, count - at);
    foldInRankOrder(
        stage.at(0), [&](int r) { return sources(r) + at * es; }, n, len, c);
    std::memcpy(dst + at * es, stage.at(0), len * es);
  }
}

// Fails op `opNumber` for the peers at once (they wait for it) rather than at
// their deadline, then waits for `who` all the same: they may still read
// this rank's buffers, which the caller may reuse once this returns.
Status failOp(const HostSlots& slots, Waiter& waiter, uint32_t opNumber, int who, Status why) {
  slots.setMySignature(opNumber, HostSlots::kFailedSignature);
  slots.publish(opNumber);
  (void)waiter.wait(who, opNumber, "to finish reading the inputs");
  return why;
}

// Reads what this rank needs of the inputs the others described in op
// `where` (`inLine`: in its control line, else in its slot) straight into
// its output, from byte `skip` of every part on, then says so in one op
// more, so that no rank returns and reuses its input while a peer still
// reads it: all ranks wait for all, but for a broadcast, whose root alone
// waits.
Status pullRest(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call, Waiter& waiter,
                uint32_t where, bool inLine, size_t skip, ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const size_t block = call.count * dataTypeSize(call.dtype);
  copyOwnPart(call, me, block, skip);
  Status pulled;
  for (int k = 1; k < n && pulled.isOk(); ++k) {
    const int p = (me + k) % n;  // each rank reads a different peer at a time
    const PullPart part = pullPart(call, me, p, block, skip);
    if (part.bytes == 0) continue;
    PulledInput theirs;
    if (inLine)
      theirs = announcedBy(slots, p, where).input;
    else
      std::memcpy(&theirs, slots.slot(p, where), sizeof(theirs));
    pulled = copyFromPeer(slots, call, p, theirs, part, "input", ctx);
  }
  const int who = call.collective == Collective::kBroadcast && me != call.root ? kNobody : kEveryone;
  const uint32_t done = ++*opNumber;
  if (!pulled.isOk()) return failOp(slots, waiter, done, who, pulled);
  return exchange(slots, waiter, done, Lane::kSlot, nullptr, 0, who, "to finish reading the inputs", ctx);
}

// The rest of a reduce-scatter, from element `skip` of every block, folded
// straight from the inputs announced in op `where`; then one op to say all
// reads are done.
Status reduceScatterRest(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call, Waiter& waiter,
                         uint32_t where, size_t skip, ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const size_t es = dataTypeSize(call.dtype), from = (me * call.count + skip) * es,
               bytes = (call.count - skip) * es;
  InputSources sources;
  Status read = readInputs(slots, call, where, from, bytes, ctx, &sources);
  const uint32_t done = ++*opNumber;
  if (!read.isOk()) return failOp(slots, waiter, done, kEveryone, read);
  foldInputs(static_cast<char*>(call.output) + skip * es, sources, n, me, call.count - skip, call);
  return exchange(slots, waiter, done, Lane::kSlot, nullptr, 0, kEveryone, "to finish reading the inputs",
                  ctx);
}

// The rest of an all-reduce, from element `skip` on, split as a
// reduce-scatter and an all-gather: this rank folds its block of the rest
// straight from every rank's input into its output and says so in one op;
// then copies every other rank's folded block from that rank's output, and
// says so in one op more. In place, a rank writes only its own block of its
// buffer while the others read theirs of it.
Status allReduceRest(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call, Waiter& waiter,
                     uint32_t where, size_t skip, ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const size_t es = dataTypeSize(call.dtype), rest = call.count - skip;
  const size_t lo = skip + blockBegin(rest, n, me), hi = skip + blockBegin(rest, n, me + 1);
  char* out = static_cast<char*>(call.output);
  InputSources sources;
  Status read = readInputs(slots, call, where, lo * es, (hi - lo) * es, ctx, &sources);
  const uint32_t folded = ++*opNumber;
  if (!read.isOk()) return failOp(slots, waiter, folded, kEveryone, read);
  foldInputs(out + lo * es, sources, n, me, hi - lo, call);
  BRAID_RETURN_IF_ERROR(exchange(slots, waiter, folded, Lane::kSlot, nullptr, 0, kEveryone,
                                 "to publish its reduced block", ctx));
  Status copied;
  for (int k = 1; k < n && copied.isOk(); ++k) {
    const int r = (me + k) % n;  // each rank reads a different peer at a time
    const size_t rlo = skip + blockBegin(rest, n, r), rhi = skip + blockBegin(rest, n, r + 1);
    const PullPart part{rlo * es, rlo * es, (rhi - rlo) * es};
    if (part.bytes > 0)
      copied = copyFromPeer(slots, call, r, announcedBy(slots, r, where).output, part, "output", ctx);
  }
  const uint32_t done = ++*opNumber;
  if (!copied.isOk()) return failOp(slots, waiter, done, kEveryone, copied);
  return exchange(slots, waiter, done, Lane::kSlot, nullptr, 0, kEveryone, "to finish reading the outputs",
                  ctx);
}

// Whether a reduce's root announced its input and output in op `op` as
// braidMemAlloc memory, which the others then read and write.
bool rootMapped(const HostSlots& slots, uint32_t op, const SlotCall& call) {
  const Announced root = announcedBy(slots, call.root, op);
  return root.input.regionId != 0 && root.output.regionId != 0;
}

// The rest of a reduce, from element `skip` on, when every buffer is
// braidMemAlloc memory: split as the all-reduce's first half, but every rank
// folds its block of the rest straight from every input into the root's
// output, through a writable mapping; then one op to say all reads and
// writes are done. Every input is read once and the output written once, by
// all ranks at a time.
//
// Only through a mapping: a write lands in the root's region of its
// shareable file, where a late one (a rank still writing after the root gave
// up on the call and freed its buffer) hits an offset no later allocation
// gets. process_vm_writev would write at the root's address, which a later
// mmap may reuse. So a rank that cannot map the root's output for writing
// (a kernel without pidfd_getfd) says so in its line of the done op instead,
// and the root folds that block itself once everyone is done, while the
// others wait for one op more: every rank reads every line of the done op,
// so all agree on whether that op comes.
Status reduceRestSplit(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call, Waiter& waiter,
                       uint32_t where, size_t skip, ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const bool root = me == call.root;
  const size_t es = dataTypeSize(call.dtype), rest = call.count - skip;
  auto blockOf = [&](int r) {
    return std::pair<size_t, size_t>{skip + blockBegin(rest, n, r), skip + blockBegin(rest, n, r + 1)};
  };
  auto [lo, hi] = blockOf(me);
  const size_t bytes = (hi - lo) * es;
  char* dst = nullptr;
  if (root) {
    dst = static_cast<char*>(call.output) + lo * es;
  } else if (bytes > 0) {
    const PulledInput target = announcedBy(slots, call.root, where).output;
    dst = slots.peerRegions()->findWritable(slots.pidOf(call.root), target.regionId, target.regionFd,
                                            target.address + lo * es, bytes);
  }
  const uint8_t unwritten = bytes > 0 && dst == nullptr;
  InputSources sources;
  Status st = unwritten ? Status::ok() : readInputs(slots, call, where, lo * es, bytes, ctx, &sources);
  const uint32_t done = ++*opNumber;
  if (!st.isOk()) return failOp(slots, waiter, done, kEveryone, st);
  // In place, the root's output is its input, source(root): also through
  // the one mapping of its region, so the same address.
  if (bytes > 0 && !unwritten) foldInputs(dst, sources, n, call.root, hi - lo, call);
  BRAID_RETURN_IF_ERROR(
      waiter.wait(kEveryone, HostSlots::reusableAfter(done, Lane::kSlot), "to finish its previous op"));
  *reinterpret_cast<uint8_t*>(slots.myData(done, Lane::kLine)) = unwritten;
  BRAID_RETURN_IF_ERROR(exchange(slots, waiter, done, Lane::kSlot, nullptr, 0, kEveryone,
                                 "to finish reading the inputs and writing the output", ctx));
  std::vector<int> leftToRoot;
  for (int r = 0; r < n; ++r)
    if (*reinterpret_cast<const uint8_t*>(slots.data(r, done, Lane::kLine)) != 0) leftToRoot.push_back(r);
  if (leftToRoot.empty()) return Status::ok();
  // The others' inputs are read until the root says so.
  const uint32_t refolded = ++*opNumber;
  for (size_t i = 0; root && i < leftToRoot.size() && st.isOk(); ++i) {
    auto [rlo, rhi] = blockOf(leftToRoot[i]);
    st = readInputs(slots, call, where, rlo * es, (rhi - rlo) * es, ctx, &sources);
    if (st.isOk())
      foldInputs(static_cast<char*>(call.output) + rlo * es, sources, n, call.root, rhi - rlo, call);
  }
  const int who = root ? kNobody : call.root;
  if (!st.isOk()) return failOp(slots, waiter, refolded, who, st);
  return exchange(slots, waiter, refolded, Lane::kSlot, nullptr, 0, who, "to finish reading the inputs", ctx);
}

// The rest of a reduce of more than kRootFoldsAllRanks ranks whose root's
// buffers are plain (the others can neither read its input nor write its
// output), from element `skip` on: the root folds it straight from every
// rank's input into its output, then says so in one op, for which the
// others wait (their inputs are read until then); the root waits for
// nobody. Against the chunks, this saves every copy into the slots and the
// folded blocks' way through them; on the 2-core VM 1.4-1.9x with 4 ranks.
// With 2 or 3 the chunks keep every rank busy and stay ahead.
Status reduceRestAtRoot(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call, Waiter& waiter,
                        uint32_t where, size_t skip, ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const bool root = me == call.root;
  const uint32_t done = ++*opNumber;
  const int who = root ? kNobody : call.root;
  if (!root)
    return exchange(slots, waiter, done, Lane::kSlot, nullptr, 0, who, "to finish reading the inputs", ctx);
  const size_t es = dataTypeSize(call.dtype), bytes = (call.count - skip) * es;
  InputSources sources;
  Status read = readInputs(slots, call, where, skip * es, bytes, ctx, &sources);
  if (!read.isOk()) return failOp(slots, waiter, done, who, read);
  foldInputs(static_cast<char*>(call.output) + skip * es, sources, n, me, call.count - skip, call);
  return exchange(slots, waiter, done, Lane::kSlot, nullptr, 0, who, "to finish reading the inputs", ctx);
}

// Also a reduce's of more than kRootFoldsAllRanks ranks: the same two ops a
// chunk, but the root folds its block straight into its output, and only it
// waits for the folded blocks and copies the others' out; the others publish
// theirs and go on.
Status runChunkedAllReduce(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call,
                           ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const bool reduceRoot = call.collective == Collective::kReduce && me == call.root;
  const bool copiesOut = call.collective != Collective::kReduce || reduceRoot;
  // A reduce's root folds its block into its output, unless that is its
  // input (in place) and read after the fold's first write (rank 2 on).
  const bool foldsIntoOutput = reduceRoot && (me < 2 || call.output != call.input || call.preMultiply);
  const size_t es = dataTypeSize(call.dtype), perChunk = slots.slotBytes() / es;
  const char* in = static_cast<const char*>(call.input);
  char* out = static_cast<char*>(call.output);
  const bool announces = announcesInput(slots, call);
  Waiter waiter(slots, call, ctx);
  for (size_t off = 0; off < call.count;) {
    const size_t len = std::min(perChunk, call.count - off);
    const size_t lo = blockBegin(len, n, me), hi = blockBegin(len, n, me + 1), count = hi - lo;
    // Phase 1: every rank's chunk in its slot, but for the block the rank
    // folds itself, which it reads from its input: one pass over 1/n of the
    // data saved (a quarter of what a rank copies with 2 ranks).
    const uint32_t gather = ++*opNumber;
    const bool first = off == 0;
    BRAID_RETURN_IF_ERROR(
        waiter.wait(kEveryone, HostSlots::reusableAfter(gather, Lane::kSlot), "to finish its previous op"));
    if (first && announces) BRAID_RETURN_IF_ERROR(announceInput(slots, waiter, gather, call));
    char* slot = slots.mySlot(gather);
    if (call.preMultiply) {  // the own block is read scaled too: from the slot
      fillSlot(slot, in + off * es, len * es, call);
    } else {
      std::memcpy(slot, in + off * es, lo * es);
      std::memcpy(slot + hi * es, in + (off + hi) * es, (len - hi) * es);
    }
    BRAID_RETURN_IF_ERROR(
        exchange(slots, waiter, gather, Lane::kSlot, nullptr, 0, kEveryone, "to publish its input", ctx));

    // Phase 2: this rank's block, folded over every rank's chunk in rank
    // order, goes to the same place in its next slot (every rank is past that
    // slot's last use: all published `gather`).
    const uint32_t fold = ++*opNumber;
    auto source = [&](int r) {
      return r == me && !call.preMultiply ? in + (off + lo) * es : slots.slot(r, gather) + lo * es;
    };
    // (In place, rank 0 or 1 folds onto its input block as the first or
    // second operand of the first fold: elementwise, each element is read
    // before it is written.)
    char* mine = foldsIntoOutput ? out + (off + lo) * es : slots.mySlot(fold) + lo * es;
    foldInRankOrder(mine, source, n, count, call);
    // A rank that copies nothing out waits for nobody: the next chunk's
    // first op waits for every rank to publish this one, and the root reads
    // the folded blocks before it publishes that, so none is overwritten
    // unread.
    BRAID_RETURN_IF_ERROR(exchange(slots, waiter, fold, Lane::kSlot, nullptr, 0,
                                   copiesOut ? kEveryone : kNobody, "to publish its reduced block", ctx));
    for (int r = 0; copiesOut && r < n; ++r) {
      if (foldsIntoOutput && r == me) continue;  // folded there
      const size_t rlo = blockBegin(len, n, r), rhi = blockBegin(len, n, r + 1);
      copyOut(call, out + (off + rlo) * es, slots.slot(r, fold) + rlo * es, (rhi - rlo) * es);
    }
    off += len;
    if (first && announces && off < call.count && inputsMapped(slots, gather, call))
      return call.collective != Collective::kReduce
                 ? allReduceRest(slots, opNumber, call, waiter, gather, off, ctx)
             : rootMapped(slots, gather, call)
                 ? reduceRestSplit(slots, opNumber, call, waiter, gather, off, ctx)
                 : reduceRestAtRoot(slots, opNumber, call, waiter, gather, off, ctx);
  }
  return Status::ok();
}

// Up to this many ranks, a chunked reduce's root folds every chunk itself.
// Splitting the fold (runChunkedAllReduce) makes the root copy its share of
// every peer's block in and their folded blocks out: in copies of a chunk,
// (n-1)/n + (n+1)/2n + (n-1)/n against (n+1)/2 for reading n inputs and
// writing one, the same at 3 ranks (where folding it all moves less in all)
// and less from 4.
constexpr int kRootFoldsAllRanks = 3;

// A reduce of up to kRootFoldsAllRanks ranks, one op a chunk: the others
// publish their chunk, and the root folds it with its own input straight into
// its output. The others copy the next chunk into their other slot while the
// root folds this one.
Status runChunkedReduceAtRoot(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call,
                              ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const bool root = me == call.root;
  const size_t es = dataTypeSize(call.dtype), perChunk = slots.slotBytes() / es;
  const char* in = static_cast<const char*>(call.input);
  char* out = static_cast<char*>(call.output);
  const bool announces = announcesInput(slots, call) && perChunk < call.count;
  Waiter waiter(slots, call, ctx);
  for (size_t off = 0; off < call.count;) {
    const size_t len = std::min(perChunk, call.count - off);
    const uint32_t op = ++*opNumber;
    const bool first = off == 0;
    // The root's own chunk goes into its slot only pre-multiplied (it is read
    // scaled, as the others' are), or in place from rank 2 on, where the
    // fold's first write into the output would clobber it before it is read.
    const bool publishes = !root || call.preMultiply || (me >= 2 && call.output == call.input);
    if (first && announces) BRAID_RETURN_IF_ERROR(announceInput(slots, waiter, op, call));
    // The others wait for nobody: the next chunk's op waits for every rank to
    // publish this one, which the root does once it has folded this one. But
    // on the first, a rank that announced braidMemAlloc memory waits for
    // every announcement, to see whether the rest runs straight from the
    // buffers (a rank with a plain input knows it does not).
    const bool readsAnnouncements =
        root || (first && announces && announcedBy(slots, me, op).input.regionId != 0);
    BRAID_RETURN_IF_ERROR(exchange(slots, waiter, op, Lane::kSlot, publishes ? in + off * es : nullptr,
                                   publishes ? len * es : 0, readsAnnouncements ? kEveryone : kNobody,
                                   "to publish its input", ctx));
    if (root) {
      auto source = [&](int r) { return r == me && !publishes ? in + off * es : slots.slot(r, op); };
      // In place, the output is rank 0's or 1's input, an operand of the
      // first fold: elementwise, each element is read before it is written.
      char* dst = out + off * es;
      foldInRankOrder(dst, source, n, len, call);
    }
    off += len;
    // With the root's buffers plain, the chunks stay: they keep both of 2
    // or 3 ranks busy, where the root alone would fold the rest.
    if (first && announces && readsAnnouncements && inputsMapped(slots, op, call) &&
        rootMapped(slots, op, call))
      return reduceRestSplit(slots, opNumber, call, waiter, op, off, ctx);
  }
  return Status::ok();
}

// One op per slot of the block: the rank publishes its next piece, then
// copies everyone's out, its own from its input (in cache: just read).
Status runChunkedAllGather(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call,
                           ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const size_t block = call.count * dataTypeSize(call.dtype);
  const size_t piece = pieceBytes(slots.slotBytes());
  const char* in = static_cast<const char*>(call.input);
  char* out = static_cast<char*>(call.output);
  const bool inPlace = in == out + me * block;
  const bool announces = announcesInput(slots, call);
  Waiter waiter(slots, call, ctx);
  for (size_t off = 0; off < block; off += piece) {
    const size_t len = std::min(piece, block - off);
    const uint32_t op = ++*opNumber;
    if (off == 0 && announces) BRAID_RETURN_IF_ERROR(announceInput(slots, waiter, op, call));
    BRAID_RETURN_IF_ERROR(
        exchange(slots, waiter, op, Lane::kSlot, in + off, len, kEveryone, "to publish its input", ctx));
    for (int r = 0; r < n; ++r)
      if (r != me) copyOut(call, out + r * block + off, slots.slot(r, op), len);
    if (!inPlace) copyOut(call, out + me * block + off, in + off, len);
    if (off == 0 && announces && len < block && inputsMapped(slots, op, call))
      return pullRest(slots, opNumber, call, waiter, op, true, len, ctx);
  }
  return Status::ok();
}

// One op per slot of the vector: the root publishes the next piece and the
// others copy it out, while the root fills its other slot with the piece
// after (it waits only until everyone took the one before).
Status runChunkedBroadcast(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call,
                           ExecutionContext& ctx) {
  const int me = slots.rank();
  const bool root = me == call.root;
  const size_t bytes = call.count * dataTypeSize(call.dtype);
  const size_t piece = pieceBytes(slots.slotBytes());
  const char* in = static_cast<const char*>(call.input);
  char* out = static_cast<char*>(call.output);
  const bool announces = announcesInput(slots, call), mayMap = slots.peerRegions() != nullptr;
  Waiter waiter(slots, call, ctx);
  for (size_t off = 0; off < bytes; off += piece) {
    const size_t len = std::min(piece, bytes - off);
    const uint32_t op = ++*opNumber;
    if (off == 0 && announces) BRAID_RETURN_IF_ERROR(announceInput(slots, waiter, op, call));
    BRAID_RETURN_IF_ERROR(exchange(slots, waiter, op, Lane::kSlot, root ? in + off : nullptr, root ? len : 0,
                                   sources(call, me), "to publish its input", ctx));
    if (!root)
      copyOut(call, out + off, slots.slot(call.root, op), len);
    else if (out != in)
      copyOut(call, out + off, in + off, len);
    if (off == 0 && mayMap && len < bytes && inputsMapped(slots, op, call))
      return pullRest(slots, opNumber, call, waiter, op, true, len, ctx);
  }
  return Status::ok();
}

// One op per piece of every block: piece p of the slot holds this rank's
// share of block p, and rank p folds piece p of every slot, in rank order,
// into its output. Its own piece it reads from its input, unless that must be
// scaled first (PreMulSum) or is the output itself (in place), which the
// folding overwrites while still reading it.
Status runChunkedReduceScatter(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call,
                               ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const size_t es = dataTypeSize(call.dtype), block = call.count * es;
  const size_t piece = pieceBytes(slots.slotBytes() / static_cast<size_t>(n));
  const char* in = static_cast<const char*>(call.input);
  char* out = static_cast<char*>(call.output);
  const bool ownFromSlot = call.preMultiply || in + me * block == out;
  const bool announces = announcesInput(slots, call);
  Waiter waiter(slots, call, ctx);
  for (size_t off = 0; off < block; off += piece) {
    const size_t len = std::min(piece, block - off), count = len / es;
    const uint32_t op = ++*opNumber;
    BRAID_RETURN_IF_ERROR(
        waiter.wait(kEveryone, HostSlots::reusableAfter(op, Lane::kSlot), "to finish its previous op"));
    if (off == 0 && announces) BRAID_RETURN_IF_ERROR(announceInput(slots, waiter, op, call));
    char* slot = slots.mySlot(op);
    for (int p = 0; p < n; ++p)
      if (p != me || ownFromSlot) fillSlot(slot + p * piece, in + p * block + off, len, call);
    BRAID_RETURN_IF_ERROR(
        exchange(slots, waiter, op, Lane::kSlot, nullptr, 0, kEveryone, "to publish its input", ctx));
    auto source = [&](int r) {
      return r == me && !ownFromSlot ? in + me * block + off : slots.slot(r, op) + me * piece;
    };
    foldInRankOrder(out + off, source, n, count, call);
    if (off == 0 && announces && len < block && inputsMapped(slots, op, call))
      return reduceScatterRest(slots, opNumber, call, waiter, op, count, ctx);
  }
  return Status::ok();
}

// Where rank `from`'s slot holds its piece of block `to` (to != from): the
// pieces of the other ranks' blocks in rank order, none for its own.
size_t allToAllPieceAt(int from, int to, size_t piece) {
  return static_cast<size_t>(to < from ? to : to - 1) * piece;
}

// One op per piece of every block: a rank's slot holds its next piece of
// every other rank's block, and rank p copies its piece out of every slot.
// The own block goes from input to output directly (all-to-all has no
// in-place form), so it takes no room in the slot: with 2 ranks a piece is
// a whole slot.
Status runChunkedAllToAll(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call,
                          ExecutionContext& ctx) {
  const int n = slots.nranks(), me = slots.rank();
  const size_t block = call.count * dataTypeSize(call.dtype);
  const size_t piece = allToAllPieceBytes(slots.slotBytes(), n);
  const char* in = static_cast<const char*>(call.input);
  char* out = static_cast<char*>(call.output);
  const bool announces = announcesInput(slots, call);
  Waiter waiter(slots, call, ctx);
  for (size_t off = 0; off < block; off += piece) {
    const size_t len = std::min(piece, block - off);
    const uint32_t op = ++*opNumber;
    BRAID_RETURN_IF_ERROR(
        waiter.wait(kEveryone, HostSlots::reusableAfter(op, Lane::kSlot), "to finish its previous op"));
    if (off == 0 && announces) BRAID_RETURN_IF_ERROR(announceInput(slots, waiter, op, call));
    char* slot = slots.mySlot(op);
    for (int p = 0; p < n; ++p)
      if (p != me) std::memcpy(slot + allToAllPieceAt(me, p, piece), in + p * block + off, len);
    BRAID_RETURN_IF_ERROR(
        exchange(slots, waiter, op, Lane::kSlot, nullptr, 0, kEveryone, "to publish its input", ctx));
    for (int r = 0; r < n; ++r)
      if (r != me)
        copyOut(call, out + r * block + off, slots.slot(r, op) + allToAllPieceAt(r, me, piece), len);
    copyOut(call, out + me * block + off, in + me * block + off, len);
    if (off == 0 && announces && len < block && inputsMapped(slots, op, call))
      return pullRest(slots, opNumber, call, waiter, op, true, len, ctx);
  }
  return Status::ok();
}

// Pulls what this rank needs of every peer's input straight into its output
// (see slot_collectives.h): one op to publish where the inputs are, one to
// say all reads are done.
Status runPulled(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call, ExecutionContext& ctx) {
  Waiter waiter(slots, call, ctx);
  const uint32_t where = ++*opNumber;
  BRAID_RETURN_IF_ERROR(
      waiter.wait(kEveryone, HostSlots::reusableAfter(where, Lane::kSlot), "to finish its previous op"));
  const PulledInput mine = describeInput(call, slots.nranks());
  std::memcpy(slots.mySlot(where), &mine, sizeof(mine));
  BRAID_RETURN_IF_ERROR(exchange(slots, waiter, where, Lane::kSlot, nullptr, 0, kEveryone,
                                 "to publish where its input is", ctx));
  return pullRest(slots, opNumber, call, waiter, where, false, 0, ctx);
}

}  // namespace

Status runOnSlots(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call, ExecutionContext& ctx) {
  if (call.path == SlotPath::kWhole) return runWhole(slots, ++*opNumber, call, ctx);
  if (call.path == SlotPath::kPulled) {
    const bool pulls = call.collective == Collective::kAllToAll || call.collective == Collective::kAllGather;
    if (!pulls || !slots.pulls().on())
      return internalError(std::string("no pulled slot path for ") + algo::collectiveName(call.collective));
    return runPulled(slots, opNumber, call, ctx);
  }
  switch (call.collective) {
    case Collective::kAllReduce:
      return runChunkedAllReduce(slots, opNumber, call, ctx);
    case Collective::kReduce:
      return slots.nranks() <= kRootFoldsAllRanks ? runChunkedReduceAtRoot(slots, opNumber, call, ctx)
                                                  : runChunkedAllReduce(slots, opNumber, call, ctx);
    case Collective::kAllGather:
      return runChunkedAllGather(slots, opNumber, call, ctx);
    case Collective::kReduceScatter:
      return runChunkedReduceScatter(slots, opNumber, call, ctx);
    case Collective::kBroadcast:
      return runChunkedBroadcast(slots, opNumber, call, ctx);
    case Collective::kAllToAll:
      return runChunkedAllToAll(slots, opNumber, call, ctx);
    default:
      return internalError(std::string("no chunked slot path for ") + algo::collectiveName(call.collective));
  }
}

}  // namespace braid::core
