// Collectives on CUDA device buffers, and ops on braid streams bound to a
// cudaStream_t.
//
// braid's algorithms and transports work on host memory. A call whose buffers
// are device memory runs the same host op over page-locked staging copies:
// the input is copied down, the op runs, the output is copied up. All-reduce,
// broadcast and reduce are cut into pieces (BRAID_CUDA_CHUNK_BYTES) so that
// the copy-down of piece k+1 and the copy-up of piece k-1 run on the copy
// engines while piece k is on the wire and in the reduction; all-gather,
// reduce-scatter and all-to-all with both sides on the device too, a piece
// being the same elements of every block. Every piece is a
// collective of its own, so every rank must cut the same way: a call's
// buffers must be device memory on every rank or on none (as with NCCL, where
// they always are). Quantized calls may instead be coded on the device
// (StagingRequest::deviceCodes): the staging then holds wire bytes.
//
// Nothing here knows what a collective is: the caller says which bytes are
// read and written and how to build the host op over any (input, output).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "base/status.h"
#include "core/communicator.h"
#include "core/device_pools.h"
#include "core/op.h"
#include "core/stream.h"
#include "kernels/device_module.h"

namespace braid::core {

// A braid stream bound to a CUDA stream (braidStreamWrapCuda). An op queued
// on it runs after the work the CUDA stream held when the op was queued, and
// work queued on the CUDA stream afterwards waits for the op, with no host
// thread blocked: the CUDA stream waits on a flag in mapped host memory that
// the braid stream's worker sets when the op is done, failed or not.
class CudaStreamOrder {
 public:
  // cudaStream belongs to the calling thread's current device.
  static Status create(const kernels::DeviceModule& m, void* cudaStream,
                       std::unique_ptr<CudaStreamOrder>* out);
  ~CudaStreamOrder();
  CudaStreamOrder(const CudaStreamOrder&) = delete;
  CudaStreamOrder& operator=(const CudaStreamOrder&) = delete;

  int device() const { return device_; }
  void* cudaStream() const { return stream_; }
  // On the enqueueing thread, in queue order: an event at the CUDA stream's
  // current end, and the number the op's completion will carry.
  Status markReady(void** readyEvent, uint32_t* sequence);
  // Then, once the op is queued: later work on the CUDA stream waits for it.
  Status holdStream(uint32_t sequence);
  // On the worker, when the op is over.
  void release(uint32_t sequence);

 private:
  CudaStreamOrder(const kernels::DeviceModule& m, void* stream, int device, uint32_t* flag)
      : m_(m), stream_(stream), device_(device), flag_(flag), issued_(*flag) {}
  const kernels::DeviceModule& m_;
  void* const stream_;
  const int device_;
  uint32_t* const flag_;
  std::atomic<uint32_t> issued_;
};

// Page-locked staging that the ops queued on one stream share (they run one
// at a time), taken on the enqueueing thread. A stream's worker never
// allocates: a user thread blocked in a CUDA call (a pageable copy,
// cudaStreamSynchronize) behind a bound stream's wait could hold what the
// allocation needs while that stream waits for the worker, directly or
// through the communicator's op order. An op queued before a larger one
// keeps its smaller block alive until it has run.
class StreamStaging {
 public:
  // which: the call's first or second staging area.
  Status take(const kernels::DeviceModule& m, int which, size_t bytes, std::shared_ptr<PinnedBlock>* out);

 private:
  std::mutex mu_;
  std::shared_ptr<PinnedBlock> blocks_[2];  // guarded by mu_
};

struct StagingRequest {
  // The bytes this rank reads and writes (0: none here, e.g. a broadcast's
  // input on a non-root). Either side may be host or device memory.
  const void* input = nullptr;
  size_t inputBytes = 0;
  void* output = nullptr;
  size_t outputBytes = 0;
  // Elementwise calls (output element i depends on input elements i alone)
  // may be cut into pieces of whole elements.
  bool elementwise = false;
  size_t elementSize = 1;
  size_t count = 0;
  // Calls whose input and output are inBlocks / outBlocks blocks of
  // `count` elements, element i of an output block depending on element i of
  // the input blocks alone (all-gather, reduce-scatter, all-to-all): with both
  // sides on the device, they are cut into pieces of the same elements of
  // every block, each piece's blocks side by side in the staging as its host
  // op wants them. 0: not such a call.
  size_t inBlocks = 0, outBlocks = 0;
  // Where the output has gaps the call must leave alone (all-to-all-v): the
  // (offset, bytes) blocks it writes. Empty: all of outputBytes.
  std::vector<std::pair<size_t, size_t>> outputBlocks;
  // Builds the host op over (input, output) for `count` elements (the whole
  // call's count when not elementwise).
  std::function<Status(const void* input, void* output, size_t count, Op* op)> build;
  // A quantized call whose input and output are both device memory: the
  // device encodes the input's blocks into the input staging and decodes the
  // output's from the output staging (the module's kernels reach page-locked
  // memory directly), so only wire bytes cross the bus and the CPU converts
  // nothing; build() then gets wire buffers of wireInputBytes and
  // wireOutputBytes. Not cut into pieces.
  struct WireBlock {
    size_t valueOffset;  // bytes into the device buffer
    size_t count;        // values
    size_t wireOffset;   // bytes into the wire buffer
  };
  bool deviceCodes = false;
  kernels::DeviceCodec codec{};
  size_t wireInputBytes = 0, wireOutputBytes = 0;
  std::vector<WireBlock> encodeBlocks, decodeBlocks;
};

// Whether a call must go through launchStaged: its buffers include device
// memory, or the stream is bound to CUDA.
bool needsStaging(const void* input, const void* output, const CudaStreamOrder* order);

// Runs the call now (stream == nullptr) or queues it on stream (order: the
// stream's CUDA binding, or nullptr). Fails without running anything when the
// staging resources cannot be had; a CUDA failure once the op has started
// aborts the communicator, since the peers already take part in it. Inside
// braidGroupStart/End the call joins the group (launch.h) with its staging
// taken now, and runs at groupEnd through launchStagedGroup.
Status launchStaged(const std::shared_ptr<Communicator>& comm, Stream* stream, CudaStreamOrder* order,
                    StagingRequest&& request);

// What a group member staged: its page-locked blocks and the copies to run
// before and after the group's fused op.
struct GroupStaging;

// A group's fused op whose members staged device buffers (null entries:
// members on host memory), or whose stream is bound to CUDA.
Status launchStagedGroup(const std::shared_ptr<Communicator>& comm, Stream* stream, Op&& fused,
                         const std::vector<std::shared_ptr<GroupStaging>>& members);

}  // namespace braid::core
