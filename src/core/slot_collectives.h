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
// same bits, as with the executor's algorithms. A call fits when what a rank
// publishes fits a slot; the decision depends only on the call's shape, so all
// ranks take the same path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "algorithms/collective.h"
#include "base/status.h"
#include "core/executor.h"
#include "core/host_slots.h"

namespace braid::core {

struct SlotCall {
  algo::Collective collective = algo::Collective::kAllReduce;
  DataType dtype = DataType::kUint8;
  RedOp op = RedOp::kSum;
  size_t count = 0;  // as in algo::CollectiveArgs
  int root = 0;
  const void* input = nullptr;
  void* output = nullptr;
};

// Whether `args` (a collective of `nranks`) runs on slots of `slotBytes`.
bool fitsSlots(const algo::CollectiveArgs& args, size_t slotBytes);

// What the call writes into its slot's signature word: its collective, type,
// op, root and count, so that a reader can tell when ranks called different
// collectives (reported as RemoteError naming both calls, as the executor
// reports a tag mismatch).
uint64_t slotSignature(const SlotCall& call);
std::string describeSlotSignature(uint64_t signature);

// Runs `call` as op number `opNumber` on `slots` (op numbers count the calls
// on these slots from 1, the same on every rank). Every wait honours ctx's
// halt flag and deadline and spins / yields / sleeps as ctx says; on failure
// ctx.suspect names the rank waited for.
Status runOnSlots(const HostSlots& slots, uint32_t opNumber, const SlotCall& call, ExecutionContext& ctx);

}  // namespace braid::core
