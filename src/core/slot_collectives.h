// Small collectives on HostSlots (host_slots.h): every rank publishes its
// input in its slot, then computes its own output from the slots it needs.
//
//   allreduce      publishes its vector; reduces all slots, in rank order
//   reduce         publishes its vector; the root reduces all slots
//   broadcast      the root publishes its vector; the others copy it
//   allgather      publishes its block; copies every rank's block
//   reducescatter  publishes its n blocks; reduces block `rank` of every slot
//   alltoall       publishes its n blocks; takes block `rank` of every slot
//   barrier        publishes nothing; waits for every rank
//
// Every rank reduces the same slots in the same order, so all of them hold the
// same bits, as with the executor's algorithms. A call runs whole when what a
// rank publishes fits a slot and kWholeMaxBytes (beyond that, every rank
// reducing every input costs more than an algorithm that splits the work).
//
// Larger all-reduces run in chunks of a slot, two ops per chunk, the work
// split as reduce-scatter + all-gather: every rank publishes its chunk; rank r
// folds block r of every rank's chunk (in rank order) into its next slot and
// publishes that; every rank copies the n folded blocks out. Per byte a rank
// copies in, reads 1x to reduce and copies out: no transport, no staging, and
// 2 waits per chunk, where the executor's ring over shm copies each byte twice
// per hop. A reduce runs the same way, but only its root waits for the folded
// blocks and copies them out: every rank still folds a share, where the
// executor's chain left all the reducing to the ranks in line one after
// another (a 2-rank reduce took twice an all-reduce's time).
//
// Larger all-gathers run in chunks too, one op per slot of the block: a rank
// publishes the next piece of its block, then copies the others' pieces out
// and its own straight from its input while that is still in cache. Every
// piece goes into shared memory once and out to every rank, where the
// transport's single-copy pull (process_vm_readv) reads a block once per
// peer and pins its pages each time: on the 2-core VM a pull moves about
// 7 GB/s where a memcpy in cache moves 20.
//
// Larger reduce-scatters run in chunks as well, one op per piece of every
// block (a slot's n-th): a rank publishes its share of every block's next
// piece, then folds piece `rank` of every slot into its output, which is the
// all-reduce's first half without the copy-out.
//
// Larger broadcasts run in chunks of a slot: the root publishes the next piece
// and the others copy it out, while the root fills its other slot.
//
// Larger all-to-alls run in chunks too: a rank publishes its next piece of
// every other rank's block, then copies its own piece out of every slot.
// They fan nothing out, so this is two copies against a pull's one; a
// memcpy in cache outruns a pull threefold, so this wins while every core's
// writes reach the others fast.
//
// All-to-alls in the pull window (HostSlots::pulls(): blocks from 64 KiB,
// outputs under the cache's share), and all-gathers there with 2 ranks, are
// pulled instead: every rank publishes where its input is, reads what it
// needs of every peer's input straight into its output (process_vm_readv,
// base/cross_memory.h: one copy, by the kernel; or, for an input from
// braidMemAlloc, memcpy through a mapping of the peer's region,
// base/peer_regions.h, which saves the kernel's pinning of every page),
// then publishes again, so that no rank returns and reuses its input while a
// peer still reads it.
// Two waits a call whatever its size. On the 2-core VM (a KVM guest on an
// EPYC host) a chunked 1 MiB all-to-all of 2 ranks takes 56 us in some runs
// and 220 in others, switching with the host's placement of the two vCPUs
// (a fresh slot area does not change it, minutes do): every byte it moves
// crosses between the cores twice, as a line one core wrote and the other
// reads. A pull takes 85 in either state: it reads the peer's input once,
// and a benchmark's unchanged input not at all after the first call. An
// all-to-all's pulls save half its copies at any rank count; an
// all-gather's save one of n (the copy in), which outweighs the kernel
// copy's cost only with 2 ranks (with 4, pulled all-gathers measured
// 0.55-0.65x the chunks from 16 MiB). A broadcast's chunks pipeline the
// root's copy in with the others' copies out and stayed ahead of pulls at
// every size. Past the cache the chunked paths with streamed outputs move
// less over the memory bus than the kernel's copy, which reads every output
// line before writing it.
//
// Chunked all-gathers, all-to-alls, broadcasts, reduce-scatters and
// all-reduces whose every buffer the peers read (inputs; an all-reduce's
// outputs too; a broadcast's root's input alone) came from braidMemAlloc run
// their first piece in the slots and the rest straight from those buffers,
// through mappings (slot_collectives.cc, announcesInput): a reduce-scatter
// folds its block from every input, an all-reduce does that into its output
// and then copies the others' folded blocks from their outputs (NCCL's
// "two-shot" on registered buffers), the others copy what they need. That
// saves every copy into the slots and all but two or three waits. Each
// rank's op 1 says where its buffers are in its control line, so all ranks
// see the same and take the same turn; with plain buffers nothing changes.
// On the 2-core VM, against the chunks: all-reduce 1.2-1.7x from 1 MiB,
// reduce-scatter 1.4-4x, broadcast 1.5-2.4x, 4-rank all-to-all 1.4-1.9x
// from 4 MiB.
//
// A chunked reduce whose every input and root's output came from
// braidMemAlloc runs the rest the same way, split: every rank folds its
// block of the rest from every input straight into the root's output,
// through a mapping made writable for it (base/peer_regions.h; a rank that
// cannot map it leaves its block to the root). With only the root's buffers plain, a reduce of more
// than 3 ranks has the root fold the rest from the others' inputs alone; of
// 2 or 3, it stays in chunks, which keep every rank busy. On the 2-core VM,
// against the chunks: 1.2-1.9x with 2 ranks, 2.5-4.4x with 4.
//
// Outputs that outgrow the cache are written with streaming stores
// (SlotCall::streamOutput), which save the read of every destination line a
// plain copy makes: past that size every library is bound by the memory bus
// (on the 2-core VM all sit at about the same busbw from 16 MiB), and the
// copy-outs are most of what the slots move. The slots themselves are
// written plainly: their readers want them in cache.
//
// The path depends only on the call's shape, so all ranks take the same one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "algorithms/collective.h"
#include "base/status.h"
#include "core/executor.h"
#include "core/host_slots.h"

namespace braid::core {

// Per-rank input up to which a collective runs whole on the slots.
constexpr size_t kWholeMaxBytes = 16384;

enum class SlotPath : uint8_t { kNone, kWhole, kChunked, kPulled };

struct SlotCall {
  algo::Collective collective = algo::Collective::kAllReduce;
  DataType dtype = DataType::kUint8;
  RedOp op = RedOp::kSum;
  size_t count = 0;  // as in algo::CollectiveArgs
  int root = 0;
  const void* input = nullptr;
  void* output = nullptr;
  SlotPath path = SlotPath::kWhole;
  uint64_t ticket = 0;  // the op's place in the communicator's order (HostSlots::announce)
  // PreMulSum (op kSum): the input goes into the slot multiplied by the scalar
  // (as in algo::CollectiveArgs), so that the sums read scaled inputs only;
  // read straight from a peer's buffer, it is scaled by the scalar that peer
  // announced.
  bool preMultiply = false;
  uint64_t preMulScalar = 0;
  // Chunked paths write the output with streaming stores (kernels/stream_copy.h):
  // set for outputs too large to stay in the cache, where a plain copy's
  // reads of the destination cost a third of the memory bus.
  bool streamOutput = false;
};

// Bytes `call` writes into this rank's output on a communicator of `nranks`
// (the largest rank's, for rooted collectives); SIZE_MAX on overflow.
size_t slotOutputBytes(const SlotCall& call, int nranks);

// How `args` (a collective of `nranks`) runs on slots of `slotBytes`, where
// calls in `pulls` may pull (HostSlots::pulls()).
SlotPath slotPath(const algo::CollectiveArgs& args, size_t slotBytes, HostSlots::PullWindow pulls = {0, 0});

// What the call writes into its slot's signature word: its collective, type,
// op, root and count, so that a reader can tell when ranks called different
// collectives (reported as RemoteError naming both calls, as the executor
// reports a tag mismatch).
uint64_t slotSignature(const SlotCall& call);
// "allreduce of 4 x float (sum)". The signature holds the count's low 24
// bits; pass the whole count where it is known (the call's own, or a peer's
// announcement).
std::string describeSlotSignature(uint64_t signature);
std::string describeSlotSignature(uint64_t signature, uint64_t count);

// Runs `call` on `slots` as the next op number(s) after *opNumber, which it
// advances (op numbers count from 1 and advance alike on every rank). Every
// wait honours ctx's halt flag and deadline and spins / yields / sleeps as ctx
// says; on failure ctx.suspect names the rank waited for.
Status runOnSlots(const HostSlots& slots, uint32_t* opNumber, const SlotCall& call, ExecutionContext& ctx);

}  // namespace braid::core
