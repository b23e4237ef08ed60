// Everything the trainer says to other ranks, through braid's C API only.
//
// Tables are owned round robin (table t on rank t % nranks). A step moves:
//   indices     each rank's batch indices to the tables' owners (all-to-allv,
//               int32), so owners look rows up for the global batch;
//   forward     the pooled rows back to the ranks whose samples they are
//               (all-to-allv, fp32 or a codec: fp16 / bf16 / fp8 on the wire);
//   backward    their gradients to the owners again (same shape reversed);
//   gradients   the replicated MLP's gradients, summed by an all-reduce.
//
// Buffer layouts (B = batch per rank, P = pooling, E = embedding dim):
//   by owner    [owner q][q's tables][B][E or P]: what a rank sends for its
//               own samples, and receives for them
//   by sample   [rank p][my tables][B][E or P]: what an owner holds for every
//               rank's samples
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace braid::trainer {

struct Ownership {
  Ownership(int nranks, int tables);
  int owner(int table) const { return table % nranks; }
  int nranks;
  std::vector<std::vector<int>> tablesOf;  // [rank] -> its tables, ascending
};

struct WireCodecs {
  braidCodec_t forward = braidCodecNone;
  braidCodec_t backward = braidCodecNone;
  float backwardLossScale = 1.0f;  // fp16 gradients: scaled up on the wire
};

class Exchange {
 public:
  Exchange(braidComm_t comm, int rank, const Ownership& owners, int batch, int pooling, int dim,
           WireCodecs codecs);

  // indices by owner -> by sample.
  std::string indices(const int32_t* byOwner, int32_t* bySample);
  // pooled rows by sample -> by owner.
  std::string forward(const float* bySample, float* byOwner);
  // gradients by owner -> by sample.
  std::string backward(const float* byOwner, float* bySample);
  // The MLP's gradients summed over ranks, in place; on `stream` when given
  // (returns at once; braidStreamSynchronize before reading them).
  std::string sumGradients(float* grads, size_t count, braidStream_t stream);

  // Elements in a layout of `width` per sample.
  size_t byOwnerCount(int width) const { return static_cast<size_t>(tables_) * batch_ * width; }
  size_t bySampleCount(int width) const { return static_cast<size_t>(nranks_) * myTables_ * batch_ * width; }
  // Offset of table t's block for this rank's samples in a by-owner layout.
  size_t byOwnerOffset(int table, int width) const;

 private:
  struct Counts {
    std::vector<size_t> send, sendDispl, recv, recvDispl;
  };
  Counts countsFor(int width, bool toOwners) const;
  std::string failed(const char* call, braidResult_t rc) const;

  braidComm_t comm_;
  int nranks_, tables_, batch_, pooling_, dim_, myTables_;
  Ownership owners_;
  WireCodecs codecs_;
  Counts indexCounts_, forwardCounts_, backwardCounts_;
  std::vector<size_t> blockOf_;  // [table] -> its block in a by-owner layout
};

}  // namespace braid::trainer
