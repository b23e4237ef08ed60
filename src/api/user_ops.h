// The reduction ops a user makes on a communicator (PreMulSum, as NCCL's
// ncclRedOpCreatePreMulSum), and how a braidRedOp_t value resolves to what a
// collective runs: a built-in op, or a sum with this rank's scalar.
//
// Made ops are numbered from braidNumOps up, per communicator; a destroyed
// op's number is reused by the next one made (NCCL does the same), so a stale
// number may name a newer op: as with NCCL, using an op after destroying it
// is the caller's bug, caught only while its number is unused.
#pragma once

#include <braid/braid.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "base/types.h"

namespace braid::api {

// What a braidRedOp_t stands for in one call.
struct ResolvedOp {
  RedOp op = RedOp::kSum;
  bool preMultiply = false;
  uint64_t preMulScalar = 0;  // a value of the call's dtype, in its first bytes
};

class UserRedOps {
 public:
  // Records a PreMulSum of `dtype` with the scalar's bits; *op its number.
  Status createPreMulSum(DataType dtype, uint64_t scalarBits, braidRedOp_t* op);
  Status destroy(const char* fn, braidRedOp_t op);
  // A made op (op >= braidNumOps) for a call of `dtype`; InvalidArgument if
  // there is none of that number or it was made for another type.
  Status resolve(const char* fn, braidRedOp_t op, DataType dtype, ResolvedOp* out) const;

 private:
  struct Entry {
    bool live = false;
    DataType dtype = DataType::kFloat32;
    uint64_t scalarBits = 0;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // entry i is op braidNumOps + i
};

}  // namespace braid::api
