// All-reduce of device buffers between the ranks of one host, device to
// device over CUDA IPC, with no host copy of the data.
//
// Staging (device_staging.h) moves every byte device -> host -> wire -> host
// -> device and reduces on the CPU: a few GB/s. When every rank of the
// communicator is on one host and each rank's device can map the others'
// memory (the same GPU, or peer-capable GPUs), the ranks instead share device
// workspaces: each rank exports a workspace with cudaIpcGetMemHandle at the
// communicator's first device all-reduce, and every rank maps the others'.
// A call then runs in chunks of the workspace's size, each in three steps
// separated by host barriers (one-integer all-reduces through the
// communicator, which also carry "my device work failed" so that all ranks
// stop together):
//   1. every rank copies its chunk of input into its workspace's input half;
//   2. rank r reduces slice r of the chunk, reading the slice from every
//      rank's input half in rank order (so every rank's result has the same
//      bits), with the module's kernels, into its output half;
//   3. every rank copies every slice from its owner's output half into its
//      output buffer.
// Each rank finishes its device work (stream synchronize) before it enters a
// barrier, so nothing is overwritten while a peer reads it; a last barrier
// per call keeps the workspaces alive until every peer is done with them.
//
// Only calls of at least BRAID_CUDA_IPC_MIN_BYTES (default 4 MiB) go this
// way, inline or on a braid stream; smaller ones, and calls on a stream
// bound to a CUDA stream, stage. Workspaces: two halves of
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

#include "base/status.h"
#include "base/types.h"
#include "core/communicator.h"
#include "core/stream.h"

namespace braid::core {

class CudaStreamOrder;

struct DirectAllReduce {
  const void* input = nullptr;
  void* output = nullptr;
  size_t count = 0;
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;
  int device = -1;  // the device holding the call's device buffer(s)
};

// Runs or queues the all-reduce device-direct and sets *taken, or leaves
// *taken false (nothing done) when this call must be staged instead. The
// first call on a communicator may set up the workspaces (collectively, on
// the calling thread; it waits for the ops queued before it).
Status launchDirectAllReduce(const std::shared_ptr<Communicator>& comm, Stream* stream,
                             CudaStreamOrder* order, const DirectAllReduce& call, bool* taken);

}  // namespace braid::core
