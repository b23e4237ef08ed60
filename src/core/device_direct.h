// Collectives of device buffers between the ranks of one host, device to
// device over CUDA IPC, with no host copy of the data.
//
// Staging (device_staging.h) moves every byte device -> host -> wire -> host
// -> device and reduces on the CPU: a few GB/s. When every rank of the
// communicator is on one host and each rank's device can map the others'
// memory (the same GPU, or peer-capable GPUs), the ranks instead share device
// workspaces: each rank exports a workspace with cudaIpcGetMemHandle at the
// communicator's first such call, and every rank maps the others'.
// A call then runs in chunks that fit the workspace, each in three steps
// separated by host barriers (one-integer all-reduces through the
// communicator, which also carry "my device work failed" so that all ranks
// stop together):
//   1. every rank copies its chunk of input into its workspace's input half
//      (all-gather: its block; reduce-scatter and all-to-all: a piece of each
//      block; broadcast: the root only);
//   2. each rank takes what it needs from the others' input halves: its slice
//      reduced over every rank in rank order, with the module's kernels, into
//      its output half (all-reduce, reduce: so every rank's result has the
//      same bits; reduce-scatter: its block), or copies of the others' blocks
//      straight into its output (all-gather, all-to-all, broadcast);
//   3. all-reduce and reduce (the root) copy every slice from its owner's
//      output half, reduce-scatter its own block, into the output.
// Each rank finishes its device work (stream synchronize) before it enters a
// barrier, so nothing is overwritten while a peer reads it; a last barrier
// per call keeps the workspaces alive until every peer is done with them.
//
// Only calls of at least BRAID_CUDA_IPC_MIN_BYTES (default 4 MiB, of the
// largest buffer) go this way, inline, on a braid stream or on one bound to a
// CUDA stream (BRAID_CUDA_IPC_BOUND=0: those stage); smaller ones,
// all-to-all-v, quantized calls and group members stage. Workspaces: two halves of
// BRAID_CUDA_IPC_CHUNK_BYTES (default 64 MiB) per rank.
//
// Setup is collective and agreed: if any rank cannot export or map (another
// host, devices without peer access, no IPC in this build), every rank goes
// on staging for the life of the communicator. BRAID_CUDA_IPC=off skips it,
// =require makes a failed setup an error (for tests). Like every choice of
// path here it must be made alike on all ranks: a call's buffers are device
// memory on every rank or on none.
//
// Nothing here knows how an all-reduce travels between hosts: the barriers
// are ordinary collectives built by the communicator.
#pragma once

#include <cstddef>
#include <memory>

#include "algorithms/collective.h"
#include "base/status.h"
#include "base/types.h"
#include "core/communicator.h"
#include "core/stream.h"

namespace braid::core {

class CudaStreamOrder;

// One call, as the API layer checked it. count: as algo::CollectiveArgs
// (all-gather: per rank sent; reduce-scatter: per rank received; all-to-all:
// per peer). input / output: null where this rank does not use them.
struct DirectRequest {
  algo::Collective collective = algo::Collective::kAllReduce;
  const void* input = nullptr;
  void* output = nullptr;
  size_t count = 0;
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;
  int root = 0;
  int device = -1;  // the device holding the call's device buffer(s)
};

// Whether the collective has a device-direct form here.
bool hasDirectForm(algo::Collective c);

// Runs or queues the call device-direct and sets *taken, or leaves *taken
// false (nothing done) when it must be staged instead. The first call on a
// communicator may set up the workspaces (collectively, on the calling
// thread; it waits for the ops queued before it).
Status launchDirect(const std::shared_ptr<Communicator>& comm, Stream* stream, CudaStreamOrder* order,
                    const DirectRequest& call, bool* taken);

}  // namespace braid::core
