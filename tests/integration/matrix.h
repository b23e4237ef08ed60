// The correctness matrix: every collective x dtype x op x count x in/out of
// place x root, run inside one communicator, each case checked bit-exactly
// against data.h's reference, with guard bytes around every buffer and the
// send buffer compared to its copy after out-of-place calls.
//
// Every rank builds the same case list in the same order (a pure function of
// nranks and the options), so they issue the same collectives.
#pragma once

#include <braid/braid.h>

#include <string>
#include <vector>

namespace braid::itest {

class DeviceMemory;

enum class Coll {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllv,
  kGather,
  kScatter,
  kRing,           // blocking Send/Recv around a ring (even ranks send first)
  kGroupRing,      // the ring inside GroupStart/GroupEnd
  kGroupAllToAll,  // a user-written all-to-all: Send/Recv to every peer in a group
  kBarrier,
};

struct Case {
  Coll coll;
  braidDataType_t type;
  braidRedOp_t op;  // reducing collectives only
  size_t count;     // the count argument (per block for the block collectives)
  bool inPlace;
  int root;
  int barrierRound;  // kBarrier: how many barriers came before this one
  uint64_t seed;
  // Ranks (below 64) whose buffers come from braidMemAlloc (CaseRun copies
  // them there and back), which peers on the host read through mappings.
  uint64_t shareableRanks = 0;
};

std::string describe(const Case& c);

struct MatrixOptions {
  std::vector<size_t> counts{0, 1, 7, 4099};
  // The large count, run for bigTypes only (0: none). The collectives whose
  // buffers hold nranks blocks use bigCount / nranks per block, so that every
  // case moves about bigCount elements per rank. The default bigTypes are a
  // representative subset (the stream run uses it); matrix_test.cc's
  // Matrix.Big tests cover all 12 dtypes in three groups.
  size_t bigCount = size_t{1} << 20;
  std::vector<braidDataType_t> bigTypes{braidFloat32, braidBfloat16, braidInt64, braidFloat8e5m2};
  size_t smallRootCount = 7;  // every root up to this count; roots 0 and n-1 above
  // In-place all-to-all (send == recv): the header's general in-place rule
  // covers it, but the implementation refuses it (see AllToAllInPlace in
  // matrix_test.cc), so it is a separate test and off in the main matrix.
  bool allToAllInPlace = false;
  std::vector<Coll> only;  // non-empty: just these collectives
  uint64_t shareableRanks = 0;  // Case::shareableRanks of every case
};

std::vector<Case> buildMatrix(int nranks, const MatrixOptions& options);

// A seeded random sequence of cases, for soak tests: every collective kind,
// dtype, op (PreMulSum included), root and in / out of place drawn alike, and
// sizes drawn so that consecutive calls keep crossing the places where the
// library changes its path (an op's data in the slots' control line, a cell
// or a slot; whole, chunked or pulled on the slots; the executor's algorithms
// and the transports' eager and large-message paths): a tenth empty, a third
// within an element of one of kSequenceEdges, the rest log-uniform up to
// maxBytes a rank. A pure function of its arguments, so every rank builds the
// same sequence.
struct SequenceOptions {
  size_t cases = 200;
  size_t maxBytes = size_t{1} << 20;  // per rank (per block for the block collectives: / nranks)
  bool shareableBuffers = true;       // each case's Case::shareableRanks drawn at random
};
constexpr size_t kSequenceEdges[] = {48, 64, 4096, 16384, 65536, 262144};
std::vector<Case> buildRandomSequence(int nranks, uint64_t seed, const SequenceOptions& options);

// Runs the cases one after another on the NULL stream (inline). Failures are
// reported with gtest; returns false (after reporting) when a call failed, in
// which case the communicator is no longer in step and the caller should stop.
// shared: at least sizeof(int) * 2 bytes of memory shared by all ranks, zeroed.
// device: run every case on device buffers (CaseRun::useDevice).
bool runInline(const std::vector<Case>& cases, braidComm_t comm, int rank, int nranks, void* shared,
               const DeviceMemory* device = nullptr);

// Runs the cases through a braidStream_t in batches of `batch`: each batch is
// enqueued whole, an event is recorded halfway, the first half is verified after
// braidEventSynchronize and the rest after braidStreamSynchronize.
// stream: the stream to use (e.g. one bound to CUDA), else one is created.
bool runOnStream(const std::vector<Case>& cases, braidComm_t comm, int rank, int nranks, void* shared,
                 size_t batch, const DeviceMemory* device = nullptr, braidStream_t stream = nullptr);

}  // namespace braid::itest
