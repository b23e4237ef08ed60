// Schedule: what one rank does for one collective, as data.
//
// An algorithm is a pure function (CollectiveArgs) -> Schedule. A Schedule is a
// list of steps over byte regions of a few buffers (the caller's input and
// output, and scratch the executor provides), each step with the steps it must
// wait for. Only the executor (src/core) turns steps into transport calls; the
// schedule simulator (later) runs the schedules of all ranks in one process.
//
// Matching contract: for every ordered pair (a -> b), the sends to b in rank
// a's schedule and the receives from a in rank b's schedule appear in the same
// order with the same byte counts. The executor issues each (peer, direction)
// channel strictly in schedule order, so this is all matching needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/types.h"
#include "kernels/codec.h"

namespace braid::algo {

// Buffer ids inside a schedule. Ids >= 0 index the caller's buffers (one op:
// kInput, kOutput; a fused group: op k's are 2k and 2k+1). Ids < 0 are scratch
// the executor provides: scratch i has id -1 - i.
constexpr int kInput = 0;   // the caller's send buffer (read only)
constexpr int kOutput = 1;  // the caller's receive buffer
constexpr int scratchId(int index) { return -1 - index; }
constexpr bool isScratch(int id) { return id < 0; }
constexpr int scratchIndex(int id) { return -1 - id; }

struct Region {
  int buffer = kInput;
  size_t offset = 0;  // bytes
  size_t bytes = 0;
};

enum class StepKind : uint8_t {
  kSend,        // send src to peer
  kRecv,        // receive from peer into dst
  kRecvReduce,  // receive from peer, then dst = src op received (src may equal dst)
  kCopy,        // dst = src (skipped when they are the same bytes)
  kReduce,      // dst = dst op src
  kDivide,      // dst /= divisor (Avg's one division at the end)
  kScale,       // dst = src * scalar (PreMulSum's multiply before the sum)
  kEncode,      // dst (wire bytes) = codec.encode(src host values); quantized collectives
  kDecode,      // dst (host values) = codec.decode(src wire bytes)
};

const char* stepKindName(StepKind kind);

using StepId = uint32_t;
constexpr StepId kNoStep = UINT32_MAX;

struct Step {
  StepKind kind = StepKind::kCopy;
  int peer = -1;
  Region src;
  Region dst;
  DataType dtype = DataType::kUint8;  // for reductions / division
  RedOp op = RedOp::kSum;
  uint64_t divisor = 1;     // kDivide
  uint64_t scalarBits = 0;  // kScale: the scalar, a dtype value in its first bytes (kernels::scaleBy)
  uint8_t tagKind = 0;  // which collective, folded into wire tags to catch mismatched calls
  kernels::CodecParams codec;  // kEncode / kDecode only
  uint32_t depBegin = 0, depCount = 0;  // into Schedule::deps
};

class Schedule {
 public:
  // Scratch buffers this schedule needs, by index (id scratchId(i)), in bytes.
  std::vector<size_t> scratchBytes;
  std::vector<Step> steps;
  std::vector<StepId> deps;  // flattened dependency lists

  // Adds a step depending on `after` (kNoStep entries are ignored). Steps that
  // move or touch zero bytes are dropped and return kNoStep, so that empty
  // segments need no special cases in algorithms (all ranks drop the same ones,
  // since they derive from the same counts). Exception: zero-byte messages
  // with keepEmpty (barrier tokens).
  StepId add(const Step& step, std::initializer_list<StepId> after = {}, bool keepEmpty = false);
  StepId add(const Step& step, const std::vector<StepId>& after, bool keepEmpty = false);
  int addScratch(size_t bytes);

  // Appends `other` (another op of a group) with its buffer ids shifted by
  // `bufferShift` and its scratch appended. Returns the step id offset.
  StepId append(const Schedule& other, int bufferShift);

  // Structural checks: deps point backwards, regions within the sizes given
  // for each caller buffer (and the declared scratch), peers in range.
  Status validate(int nranks, const std::vector<size_t>& bufferBytes) const;
  std::string describe() const;
};

// Step builders that keep algorithm code short.
Step sendStep(int peer, Region src, uint8_t tagKind);
Step recvStep(int peer, Region dst, uint8_t tagKind);
Step recvReduceStep(int peer, Region src, Region dst, DataType dtype, RedOp op, uint8_t tagKind);
Step copyStep(Region src, Region dst);
Step divideStep(Region dst, DataType dtype, uint64_t divisor);
Step scaleStep(Region src, Region dst, DataType dtype, uint64_t scalarBits);
// src: host values (codec.hostType); dst: their encodedBytes() wire bytes.
Step encodeStep(const kernels::CodecParams& codec, Region src, Region dst);
// src: wire bytes; dst: the host values they decode to.
Step decodeStep(const kernels::CodecParams& codec, Region src, Region dst);

// [begin, end) of part i when splitting `count` items into `parts` near-equal
// parts (the first count % parts parts get one more).
inline size_t partBegin(size_t count, size_t parts, size_t i) {
  size_t base = count / parts, extra = count % parts;
  return i * base + (i < extra ? i : extra);
}
inline size_t partSize(size_t count, size_t parts, size_t i) {
  return count / parts + (i < count % parts ? 1 : 0);
}

}  // namespace braid::algo
