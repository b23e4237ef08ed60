#include "core/device_direct.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "core/device_pools.h"
#include "core/device_queue.h"
#include "core/device_staging.h"
#include "core/ipc_workspaces.h"
#include "core/launch.h"
#include "kernels/device_loader.h"

namespace braid::core {

namespace {

// On the H200 with every rank a process on the one GPU, each step boundary
// (stream synchronize, host barrier, the GPU switching between the ranks'
// contexts) cost about 200 us whatever the bytes: 64 MiB chunks keep that
// under a tenth of a big call, at 128 MiB of device memory per rank. Below
// 4 MiB staging was as fast (2 MiB: 3.8 GB/s staged, 3.5 direct).
constexpr size_t kDefaultHalfBytes = size_t{64} << 20;
constexpr size_t kDefaultMinBytes = size_t{4} << 20;
constexpr size_t kSliceAlign = 256;  // bytes: slices start on the kernels' vector boundaries

enum class Mode { kAuto, kOff, kRequire };

Mode mode() {
  static const Mode m = [] {
    const std::string v = env::getString("BRAID_CUDA_IPC");
    if (v == "off" || v == "0") return Mode::kOff;
    if (v == "require") return Mode::kRequire;
    return Mode::kAuto;
  }();
  return m;
}

size_t halfBytesFromEnv() {
  const int64_t configured = env::getInt("BRAID_CUDA_IPC_CHUNK_BYTES");
  const size_t bytes = configured > 0 ? static_cast<size_t>(configured) : kDefaultHalfBytes;
  return std::max(kSliceAlign, bytes / kSliceAlign * kSliceAlign);
}

size_t minBytesFromEnv() {
  if (env::getString("BRAID_CUDA_IPC_MIN_BYTES").empty()) return kDefaultMinBytes;
  std::string error;
  const int64_t configured = env::getInt("BRAID_CUDA_IPC_MIN_BYTES", &error);
  return configured >= 0 && error.empty() ? static_cast<size_t>(configured) : kDefaultMinBytes;
}

bool allOnOneHost(const Communicator& comm) {
  const std::vector<int>& hostOf = comm.topology().hostOf;
  return !hostOf.empty() && std::all_of(hostOf.begin(), hostOf.end(), [&](int h) { return h == hostOf[0]; });
}

using algo::Collective;

// Blocks of `count` elements in one chunk of a workspace half: a piece of
// every rank's block for reduce-scatter and all-to-all, else one block.
size_t blocksPerChunk(Collective c, int nranks) {
  return c == Collective::kReduceScatter || c == Collective::kAllToAll ? static_cast<size_t>(nranks) : 1;
}

// The largest buffer of a call, in multiples of `count`: all-gather's output,
// reduce-scatter's input and all-to-all's buffers hold a block per rank.
size_t largestBufferBlocks(Collective c, int nranks) {
  return c == Collective::kAllReduce || c == Collective::kReduce || c == Collective::kBroadcast
             ? 1
             : static_cast<size_t>(nranks);
}

// One call, from enqueue to its end.
struct DirectCall {
  const kernels::DeviceModule* m = nullptr;
  std::shared_ptr<IpcWorkspaces> ws;
  DirectRequest c;
  int nranks = 1, rank = 0;
  size_t es = 1;
  // The call goes in chunks of `unit` elements of `count`: of the vector
  // (all-reduce, reduce, broadcast), of each rank's block (all-gather), of
  // every block at once (reduce-scatter, all-to-all).
  size_t unit = 1, chunks = 0;
  // One barrier per step boundary: two per chunk, one at the end.
  std::vector<int32_t> votes;
  std::vector<Op> barriers;
  void* stream = nullptr;
  CudaStreamOrder* order = nullptr;
  void* ready = nullptr;
  uint32_t sequence = 0;
  // The run's state: the first failure, and whether this rank's device work failed.
  Status first;
  bool failed = false;

  ~DirectCall() {
    if (m == nullptr) return;
    releaseEvent(order ? order->device() : c.device, ready);
    releaseStream(c.device, stream);
  }

  // Whether the call fits the workspaces (every block's piece of a chunk).
  bool plan() {
    unit = ws->halfBytes() / (blocksPerChunk(c.collective, nranks) * es);
    if (unit == 0) return false;
    chunks = (c.count + unit - 1) / unit;
    return true;
  }

  Status build(Communicator& comm) {
    const size_t barrierCount = 2 * chunks + 1;
    votes.assign(barrierCount, 0);  // never resized again: the ops point into it
    barriers.resize(barrierCount);
    for (size_t k = 0; k < barrierCount; ++k)
      BRAID_RETURN_IF_ERROR(buildMinOp(comm, &votes[k], &barriers[k]));
    DeviceScope scope(*m, c.device);
    BRAID_RETURN_IF_ERROR(scope.status());
    return acquireStream(*m, c.device, &stream);
  }

  // Slice r of a chunk of `count` elements that the ranks reduce: [*lo, *hi).
  void slice(size_t count, int r, size_t* lo, size_t* hi) const {
    const size_t align = kSliceAlign / es;
    size_t per = (count + nranks - 1) / nranks;
    per = (per + align - 1) / align * align;
    *lo = std::min(count, per * r);
    *hi = std::min(count, per * (r + 1));
  }

  void cudaFailed(int err, const char* what) {
    if (first.isOk())
      first = cudaFailure(*m, err,
                          std::string("device-direct ") + algo::collectiveName(c.collective) + ": " + what);
    failed = true;
  }
  void copy(void* dst, const void* src, size_t bytes, const char* what) {
    if (failed || bytes == 0) return;
    if (int err = m->copy(dst, src, bytes, stream); err != 0) cudaFailed(err, what);
  }
  void finish(const char* what) {
    if (failed) return;
    if (int err = m->synchronize(stream); err != 0) cudaFailed(err, what);
  }
  // dst = the reduction over every rank r of `len` elements at at(r), in rank order.
  template <class At>
  void reduceOver(uint8_t* dst, At at, size_t len) {
    if (failed || len == 0) return;
    const int dtype = static_cast<int>(c.dtype), op = static_cast<int>(c.op);
    if (nranks == 1) {
      copy(dst, at(0), len * es, "copying the slice");
    } else if (int err = m->reduce(dst, at(0), at(1), len, dtype, op, stream); err != 0) {
      cudaFailed(err, "reducing");
    }
    for (int r = 2; r < nranks && !failed; ++r)
      if (int err = m->reduce(dst, dst, at(r), len, dtype, op, stream); err != 0) cudaFailed(err, "reducing");
    if (c.op == RedOp::kAvg && !failed)
      if (int err = m->divide(dst, len, dtype, static_cast<uint64_t>(nranks), stream); err != 0)
        cudaFailed(err, "averaging");
  }

  const uint8_t* in(size_t element) const { return static_cast<const uint8_t*>(c.input) + element * es; }
  uint8_t* out(size_t element) const { return static_cast<uint8_t*>(c.output) + element * es; }

  // Step 1: this rank's part of chunk [begin, begin + n) into its input half.
  void stepIn(size_t begin, size_t n) {
    uint8_t* mine = ws->in(rank);
    switch (c.collective) {
      case Collective::kBroadcast:
        if (rank == c.root) copy(mine, in(begin), n * es, "copying the input");
        break;
      case Collective::kReduceScatter:
      case Collective::kAllToAll:
        for (int b = 0; b < nranks; ++b)
          copy(mine + b * n * es, in(b * c.count + begin), n * es, "copying the input");
        break;
      default:
        copy(mine, in(begin), n * es, "copying the input");
        break;
    }
    finish("copying the input");
  }

  // Step 2: what this rank takes from every rank's input half.
  void stepTake(size_t begin, size_t n) {
    switch (c.collective) {
      case Collective::kAllReduce:
      case Collective::kReduce: {
        size_t lo, hi;
        slice(n, rank, &lo, &hi);
        reduceOver(
            ws->out(rank) + lo * es, [&](int r) { return ws->in(r) + lo * es; }, hi - lo);
        break;
      }
      case Collective::kReduceScatter:
        reduceOver(
            ws->out(rank), [&](int r) { return ws->in(r) + rank * n * es; }, n);
        break;
      case Collective::kAllGather:
        for (int r = 0; r < nranks; ++r) copy(out(r * c.count + begin), ws->in(r), n * es, "copying a block");
        break;
      case Collective::kAllToAll:
        for (int r = 0; r < nranks; ++r)
          copy(out(r * c.count + begin), ws->in(r) + rank * n * es, n * es, "copying a block");
        break;
      case Collective::kBroadcast:
        copy(out(begin), ws->in(c.root), n * es, "copying the root's data");
        break;
      default:
        break;
    }
    finish("reducing or copying");
  }

  // Step 3: results out of the output halves.
  void stepOut(size_t begin, size_t n) {
    const bool slices =
        c.collective == Collective::kAllReduce || (c.collective == Collective::kReduce && rank == c.root);
    if (slices) {
      for (int r = 0; r < nranks; ++r) {
        size_t lo, hi;
        slice(n, r, &lo, &hi);
        copy(out(begin + lo), ws->out(r) + lo * es, (hi - lo) * es, "copying the result");
      }
    } else if (c.collective == Collective::kReduceScatter) {
      copy(out(begin), ws->out(rank), n * es, "copying the result");
    } else {
      return;
    }
    finish("copying the result");
  }

  Status run(Communicator& comm, const uint64_t* tickets) {
    // Every barrier runs (its ticket is consumed) whatever happened before;
    // its vote tells every rank whether some rank's device work failed.
    size_t next = 0;
    auto barrier = [&]() {
      const size_t k = next++;
      votes[k] = failed ? rank : INT32_MAX;
      Status s = tickets ? comm.run(tickets[k], barriers[k]) : comm.runInline(barriers[k]);
      if (!s.isOk()) {
        if (first.isOk()) first = s;
        failed = true;
      } else if (votes[k] != INT32_MAX && !failed) {
        first = remoteError(std::string("device-direct ") + algo::collectiveName(c.collective) + ": rank " +
                            std::to_string(votes[k]) + "'s device work failed (see its error)");
        failed = true;
      }
    };
    DeviceScope scope(*m, c.device);
    if (!scope.status().isOk()) {
      first = scope.status();
      failed = true;
    }
    if (order && !failed)
      if (int err = m->eventSynchronize(ready); err != 0)
        cudaFailed(err, "waiting for the CUDA stream's earlier work");
    for (size_t k = 0; k < chunks; ++k) {
      const size_t begin = k * unit, n = std::min(unit, c.count - begin);
      stepIn(begin, n);
      barrier();
      stepTake(begin, n);
      barrier();
      stepOut(begin, n);
    }
    barrier();  // nobody reads a workspace any more: it may be reused or freed
    if (order) order->release(sequence);
    return first;
  }
};

std::shared_ptr<IpcWorkspaces> workspacesOf(Communicator& comm, const kernels::DeviceModule& m, int device,
                                            Status* status) {
  std::lock_guard<std::mutex> lock(comm.ipcWorkspacesMutex());
  std::shared_ptr<IpcWorkspaces>& ws = comm.ipcWorkspaces();
  if (!ws) {
    auto made = std::make_shared<IpcWorkspaces>(m, device);
    *status = made->setUp(comm, halfBytesFromEnv());
    if (!status->isOk()) return nullptr;
    ws = std::move(made);
  }
  return ws;
}

}  // namespace

bool hasDirectForm(algo::Collective c) {
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kReduce:
    case Collective::kBroadcast:
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return true;
    default:
      return false;
  }
}

Status launchDirect(const std::shared_ptr<Communicator>& comm, Stream* stream, CudaStreamOrder* order,
                    const DirectRequest& call, bool* taken) {
  *taken = false;
  const Mode how = mode();
  const kernels::DeviceModule* m = kernels::deviceModule();
  // Calls on a braid stream bound to a CUDA stream go direct too: the
  // worker's first kernel launch once hung rank 0 on an H200 (CUDA loads a
  // kernel lazily, under locks the user's thread, blocked in another CUDA
  // call, may hold); preloadKernels at setup ended that (H200, 2026-11-26:
  // the bound-stream matrix passes). BRAID_CUDA_IPC_BOUND=0 makes them stage.
  // Small calls stage too (see kDefaultMinBytes). Every one of these choices
  // depends only on what every rank's call has alike.
  static const size_t minBytes = minBytesFromEnv();
  static const bool boundStreams = env::getString("BRAID_CUDA_IPC_BOUND") != "0";
  const int n = comm->nranks();
  const size_t largest = call.count * largestBufferBlocks(call.collective, n) * dataTypeSize(call.dtype);
  if (how == Mode::kOff || m == nullptr || call.device < 0 || !hasDirectForm(call.collective) || inGroup() ||
      (order && !boundStreams) || largest < minBytes)
    return Status::ok();
  if (!allOnOneHost(*comm)) {
    if (how == Mode::kRequire) return notSupported("BRAID_CUDA_IPC=require: the ranks are on several hosts");
    return Status::ok();
  }
  Status s;
  std::shared_ptr<IpcWorkspaces> ws = workspacesOf(*comm, *m, call.device, &s);
  BRAID_RETURN_IF_ERROR(s);
  if (!ws->usable()) {
    if (how == Mode::kRequire) return notSupported("BRAID_CUDA_IPC=require: " + ws->reason());
    return Status::ok();
  }
  if (ws->device() != call.device) {
    if (how == Mode::kRequire)
      return notSupported("BRAID_CUDA_IPC=require: the workspaces are on CUDA device " +
                          std::to_string(ws->device()) + ", this call's buffers on device " +
                          std::to_string(call.device));
    return Status::ok();
  }
  auto direct = std::make_shared<DirectCall>();
  direct->m = m;
  direct->ws = ws;
  direct->c = call;
  direct->nranks = n;
  direct->rank = comm->rank();
  direct->es = dataTypeSize(call.dtype);
  if (!direct->plan()) {
    direct->m = nullptr;  // nothing acquired
    if (how == Mode::kRequire)
      return notSupported("BRAID_CUDA_IPC=require: a workspace half of " + std::to_string(ws->halfBytes()) +
                          " bytes holds no piece of " + std::to_string(n) + " blocks");
    return Status::ok();
  }
  BRAID_RETURN_IF_ERROR(direct->build(*comm));
  *taken = true;
  if (stream == nullptr) return direct->run(*comm, nullptr);
  return queueDeviceCall(comm, *stream, order, direct, direct->barriers.size());
}

}  // namespace braid::core
