// What an algorithm is asked to build a schedule for. Plain data, the same on
// every rank except `rank` (and per-rank counts for all-to-all-v).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/types.h"
#include "kernels/codec.h"

namespace braid::algo {

enum class Collective : uint8_t {
  kAllReduce = 1,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllv,
  kSendRecv,  // point to point (tags only; no algorithm)
  kBarrier,
  kGather,   // every rank's block to the root, in rank order
  kScatter,  // the root's rank-ordered blocks, one to each rank
};
constexpr int kNumCollectives = 12;

const char* collectiveName(Collective c);  // "allreduce", "broadcast", ...
bool parseCollective(const char* name, Collective* out);

// Collectives with a root rank (CollectiveArgs::root means something).
constexpr bool isRooted(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kGather ||
         c == Collective::kScatter;
}

struct CollectiveArgs {
  Collective collective = Collective::kAllReduce;
  int nranks = 1;
  int rank = 0;
  // Elements: allreduce/broadcast/reduce: the vector; allgather, gather:
  // per-rank send count; reducescatter, scatter: per-rank recv count;
  // alltoall: per peer.
  size_t count = 0;
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;
  // PreMulSum (all-reduce, reduce, reduce-scatter; op is kSum): this rank's
  // input is multiplied by its own scalar before the sum (algorithms/premul).
  // The scalar is a dtype value in preMulScalar's first bytes. Ranks may pass
  // different scalars; the schedule's shape does not depend on them.
  bool preMultiply = false;
  uint64_t preMulScalar = 0;
  int root = 0;
  // All-to-all-v, in elements, nranks entries each.
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;
  // Host of each rank (small integers, equal for ranks on one host), for the
  // hierarchical algorithms; empty: every rank on a host of its own.
  std::vector<int> hostOf;
  // Pipelining granularity chosen by the caller (tuner / BRAID_CHUNK_BYTES).
  size_t chunkBytes = 128 * 1024;
  // Quantized all-to-all(v) / all-gather (algorithms/quantized): values cross
  // the wire in codec's format; dtype is codec.hostType.
  bool quantized = false;
  kernels::CodecParams codec;
  // Quantized, with the input and output already in codec's wire format
  // (encoded and decoded elsewhere: on the GPU, core/device_staging.h): the
  // schedule only moves wire bytes. Block p of count values lies at p *
  // encodedBytes(codec, count) of its buffer. All-to-all and all-gather.
  bool preEncoded = false;

  size_t elemSize() const { return dataTypeSize(dtype); }
};

}  // namespace braid::algo
