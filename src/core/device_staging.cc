#include "core/device_staging.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "core/device_pools.h"
#include "core/device_queue.h"
#include "core/launch.h"
#include "kernels/device_loader.h"

namespace braid::core {
namespace {

constexpr size_t kMinPiece = size_t{1} << 20;
constexpr size_t kMaxPiece = size_t{8} << 20;

bool within(const void* outer, size_t outerBytes, const void* inner, size_t innerBytes) {
  auto o = reinterpret_cast<uintptr_t>(outer), i = reinterpret_cast<uintptr_t>(inner);
  return i >= o && i - o <= outerBytes && innerBytes <= outerBytes - (i - o);
}

// Elements per piece of an elementwise call of `bytes`.
size_t pieceElements(size_t bytes, size_t elementSize) {
  static const int64_t configured = env::getInt("BRAID_CUDA_CHUNK_BYTES");
  size_t piece =
      configured > 0 ? static_cast<size_t>(configured) : std::clamp(bytes / 8, kMinPiece, kMaxPiece);
  return std::max<size_t>(1, piece / elementSize);
}

// Stand-in addresses of the two staging areas while a call is queued: far
// above any user-space mapping, so never confused with a user's buffer.
uint8_t* const kStandInA = reinterpret_cast<uint8_t*>(uintptr_t{1} << 62);
uint8_t* const kStandInB = reinterpret_cast<uint8_t*>(uintptr_t{3} << 61);

// Time per phase of one staged call, only when asked (a clock read costs).
class PhaseClock {
 public:
  enum Phase { kSetup, kCopyDown, kCollective, kCopyUp, kPhases };
  explicit PhaseClock(bool on) : on_(on) {
    if (on_) last_ = std::chrono::steady_clock::now();
  }
  void lap(Phase phase) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    us_[phase] += std::chrono::duration<double, std::micro>(now - last_).count();
    last_ = now;
  }
  void report(size_t pieces) const {
    if (on_)
      BRAID_TRACE(
          "staged call, %zu piece(s): setup %.1f us, copy-down waits %.1f us, collectives %.1f us, "
          "copy-up %.1f us",
          pieces, us_[kSetup], us_[kCopyDown], us_[kCollective], us_[kCopyUp]);
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point last_;
  double us_[kPhases] = {};
};

struct Copy {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
};

// Values to or from wire bytes, by the module's codec kernels.
struct Coding {
  const void* src = nullptr;
  void* dst = nullptr;
  size_t count = 0;
};

struct Piece {
  Op op;
  std::vector<Copy> down;      // device input to staging, before the op
  std::vector<Coding> encode;  // or device input encoded into staging
  std::vector<Copy> up;        // staging to device output, after it
  std::vector<Coding> decode;  // or staging decoded into the device output
  void* copied = nullptr;      // event: `down` and `encode` are done
  bool before() const { return !down.empty() || !encode.empty(); }
};

// One staged call, from enqueue to its end; owns its CUDA resources and
// gives them back to the pools when destroyed.
struct StagedCall {
  const kernels::DeviceModule* m = nullptr;
  int device = -1;  // -1: host buffers only (an op on a CUDA-bound stream)
  std::vector<Piece> pieces;
  kernels::DeviceCodec codec{};  // the codings' (StagingRequest::deviceCodes)
  // The staging areas. The pieces are built over stand-in addresses
  // (kStandInA / kStandInB) and rebased onto the blocks when the call runs,
  // so that the calls queued on a stream can share one block.
  size_t aBytes = 0, bBytes = 0;
  std::shared_ptr<PinnedBlock> a, b;               // a stream's are taken at enqueue (StreamStaging)
  std::vector<std::shared_ptr<PinnedBlock>> held;  // a group's members' staging
  void* downStream = nullptr;
  void* upStream = nullptr;
  CudaStreamOrder* order = nullptr;
  void* ready = nullptr;
  uint32_t sequence = 0;

  StagedCall() = default;
  StagedCall(const StagedCall&) = delete;
  StagedCall& operator=(const StagedCall&) = delete;
  ~StagedCall() {
    if (m == nullptr) return;
    const int eventDevice = order ? order->device() : device;
    releaseEvent(eventDevice, ready);
    for (Piece& p : pieces) releaseEvent(device, p.copied);
    releaseStream(device, downStream);
    releaseStream(device, upStream);
  }

  Status acquire() {
    if (device < 0) return Status::ok();
    DeviceScope scope(*m, device);
    BRAID_RETURN_IF_ERROR(scope.status());
    BRAID_RETURN_IF_ERROR(acquireStream(*m, device, &downStream));
    BRAID_RETURN_IF_ERROR(acquireStream(*m, device, &upStream));
    for (Piece& p : pieces)
      if (p.before()) BRAID_RETURN_IF_ERROR(acquireEvent(*m, device, &p.copied));
    return Status::ok();
  }

  // Takes the staging blocks and moves every piece onto them.
  Status takeStaging() {
    for (auto [block, bytes] : {std::pair{&a, aBytes}, std::pair{&b, bBytes}}) {
      if (bytes == 0 || *block) continue;
      *block = std::make_shared<PinnedBlock>();
      BRAID_RETURN_IF_ERROR(PinnedBlock::acquire(*m, bytes, block->get()));
    }
    auto rebase = [&](const void* p) -> uint8_t* {
      auto* at = static_cast<uint8_t*>(const_cast<void*>(p));
      if (aBytes && at >= kStandInA && at <= kStandInA + aBytes) return a->data() + (at - kStandInA);
      if (bBytes && at >= kStandInB && at <= kStandInB + bBytes) return b->data() + (at - kStandInB);
      return at;
    };
    for (Piece& p : pieces) {
      for (BufferBinding& binding : p.op.buffers.mutableView()) binding.data = rebase(binding.data);
      for (Copy& c : p.down) c.dst = rebase(c.dst);
      for (Copy& c : p.up) c.src = rebase(c.src);
      for (Coding& c : p.encode) c.dst = rebase(c.dst);
      for (Coding& c : p.decode) c.src = rebase(c.src);
    }
    return Status::ok();
  }

  // Runs every piece; tickets: taken at enqueue (a stream), or null to take
  // them one by one now (inline).
  Status run(Communicator& comm, const uint64_t* tickets) {
    Status first;
    bool aborted = false;
    // Where a staged call's time goes, at BRAID_DEBUG=TRACE: setup and the
    // wait for the bound stream, waits for copy-downs, the collectives, the
    // final copy-up.
    PhaseClock clock(log::enabled(log::Level::kTrace));
    auto cudaFailed = [&](int err, const char* what) {
      if (first.isOk()) first = cudaFailure(*m, err, what);
      if (!aborted) comm.abort();  // the peers are in the op already: fail it everywhere
      aborted = true;
    };
    std::unique_ptr<DeviceScope> scope;
    if (device >= 0) {
      scope = std::make_unique<DeviceScope>(*m, device);
      if (!scope->status().isOk()) {
        first = scope->status();
        comm.abort();
        aborted = true;
      }
    }
    if (first.isOk()) {
      Status s = takeStaging();
      if (!s.isOk()) {
        first = s;
        comm.abort();
        aborted = true;
      }
    }
    if (order && first.isOk())
      if (int err = m->eventSynchronize(ready); err != 0)
        cudaFailed(err, "waiting for the CUDA stream's earlier work");
    clock.lap(PhaseClock::kSetup);
    for (Piece& p : pieces) {
      if (!first.isOk() || !p.before()) continue;
      for (const Copy& c : p.down)
        if (int err = m->copy(c.dst, c.src, c.bytes, downStream); err != 0 && first.isOk())
          cudaFailed(err, "copying device input to host staging");
      for (const Coding& c : p.encode)
        if (int err = m->encode(&codec, c.src, c.count, c.dst, downStream); err != 0 && first.isOk())
          cudaFailed(err, "encoding device input into host staging");
      if (!first.isOk()) continue;
      if (int err = m->eventRecord(p.copied, downStream); err != 0) cudaFailed(err, "cudaEventRecord");
    }
    bool copiedUp = false;
    for (size_t k = 0; k < pieces.size(); ++k) {
      Piece& p = pieces[k];
      if (first.isOk() && p.before())
        if (int err = m->eventSynchronize(p.copied); err != 0)
          cudaFailed(err, "copying device input to host staging");
      clock.lap(PhaseClock::kCopyDown);
      // Every ticket is consumed, failed or not; after an abort each returns at once.
      Status s = tickets ? comm.run(tickets[k], p.op) : comm.runInline(p.op);
      clock.lap(PhaseClock::kCollective);
      if (!s.isOk()) {
        if (first.isOk()) first = s;
        continue;
      }
      for (const Copy& c : p.up) {
        if (!first.isOk()) break;
        if (int err = m->copy(c.dst, c.src, c.bytes, upStream); err != 0)
          cudaFailed(err, "copying host staging to the device output");
        copiedUp = true;
      }
      for (const Coding& c : p.decode) {
        if (!first.isOk()) break;
        if (int err = m->decode(&codec, c.src, c.count, c.dst, upStream); err != 0)
          cudaFailed(err, "decoding host staging into the device output");
        copiedUp = true;
      }
    }
    // Both copy streams idle before the staging memory goes back to its pool.
    if (copiedUp)
      if (int err = m->synchronize(upStream); err != 0)
        cudaFailed(err, "copying host staging to the device output");
    if (downStream)
      if (int err = m->synchronize(downStream); err != 0 && first.isOk())
        cudaFailed(err, "copying device input to host staging");
    clock.lap(PhaseClock::kCopyUp);
    if (order) order->release(sequence);
    clock.report(pieces.size());
    return first;
  }
};

// A quantized call coded on the device: wire staging on both sides, one piece.
Status planCoded(const StagingRequest& r, StagedCall* call) {
  auto* in = static_cast<const uint8_t*>(r.input);
  auto* out = static_cast<uint8_t*>(r.output);
  call->codec = r.codec;
  call->aBytes = r.wireInputBytes;
  call->bBytes = r.wireOutputBytes;
  call->pieces.resize(1);
  Piece& p = call->pieces.front();
  for (const StagingRequest::WireBlock& b : r.encodeBlocks)
    if (b.count) p.encode.push_back({in + b.valueOffset, kStandInA + b.wireOffset, b.count});
  for (const StagingRequest::WireBlock& b : r.decodeBlocks)
    if (b.count) p.decode.push_back({kStandInB + b.wireOffset, out + b.valueOffset, b.count});
  return r.build(kStandInA, kStandInB, r.count, &p.op);
}

// A blockwise call with both sides on the device (StagingRequest::
// inBlocks): piece k is elements [first, first + n) of every block. Its
// blocks lie side by side in its own stretch of the staging (piece-major),
// so its host op is the same collective over n elements; the copies gather
// the blocks' pieces down and scatter them back up. Every rank cuts alike:
// the pieces depend on count and the block counts only, the same on all.
Status planBlocked(const StagingRequest& r, const uint8_t* in, uint8_t* out, StagedCall* call) {
  const size_t es = r.elementSize, blocks = std::max(r.inBlocks, r.outBlocks);
  const size_t per = pieceElements(r.count * es * blocks, es * blocks);
  const size_t npieces = (r.count + per - 1) / per;
  call->aBytes = r.inputBytes;
  call->bBytes = r.outputBytes;
  call->pieces.resize(npieces);
  for (size_t k = 0; k < npieces; ++k) {
    Piece& p = call->pieces[k];
    const size_t first = k * per, n = std::min(per, r.count - first), bytes = n * es;
    uint8_t* pin = kStandInA + first * es * r.inBlocks;
    uint8_t* pout = kStandInB + first * es * r.outBlocks;
    for (size_t b = 0; b < r.inBlocks; ++b)
      p.down.push_back({pin + b * bytes, in + (b * r.count + first) * es, bytes});
    for (size_t b = 0; b < r.outBlocks; ++b)
      p.up.push_back({out + (b * r.count + first) * es, pout + b * bytes, bytes});
    BRAID_RETURN_IF_ERROR(r.build(pin, pout, n, &p.op));
  }
  return Status::ok();
}

// Decides the staging layout and builds the pieces' ops.
Status plan(const StagingRequest& r, int inDevice, int outDevice, bool mayCut, StagedCall* call) {
  const bool inStaged = inDevice >= 0, outStaged = outDevice >= 0;
  if (r.deviceCodes) {
    if (!inStaged || !outStaged) return internalError("device coding needs device input and output");
    return planCoded(r, call);
  }
  auto* in = static_cast<uint8_t*>(const_cast<void*>(r.input));
  auto* out = static_cast<uint8_t*>(r.output);
  // A side this rank does not use (a broadcast's input off the root) must
  // not reach the host op as a device pointer.
  if (!r.inputBytes && kernels::deviceOfPointer(in) >= 0) in = nullptr;
  if (!r.outputBytes && kernels::deviceOfPointer(out) >= 0) out = nullptr;
  if (mayCut && inStaged && outStaged && r.inBlocks && r.outBlocks && r.count > 0 &&
      r.inputBytes == r.inBlocks * r.count * r.elementSize &&
      r.outputBytes == r.outBlocks * r.count * r.elementSize)
    return planBlocked(r, in, out, call);
  uint8_t* hostIn = in;
  uint8_t* hostOut = out;
  if (inStaged && outStaged && within(out, r.outputBytes, in, r.inputBytes)) {
    // An in-place form (input inside output): one staging area, same layout.
    call->aBytes = r.outputBytes;
    hostOut = kStandInA;
    hostIn = hostOut + (in - out);
  } else if (inStaged && outStaged && within(in, r.inputBytes, out, r.outputBytes)) {
    call->aBytes = r.inputBytes;
    hostIn = kStandInA;
    hostOut = hostIn + (out - in);
  } else if (inStaged && outStaged && r.elementwise) {
    // Separate device buffers, but the host op may run in place.
    call->aBytes = r.inputBytes;
    hostIn = hostOut = kStandInA;
  } else {
    if (inStaged) {
      call->aBytes = r.inputBytes;
      hostIn = kStandInA;
    }
    if (outStaged) {
      call->bBytes = r.outputBytes;
      hostOut = kStandInB;
    }
  }
  const bool cut = mayCut && r.elementwise && (inStaged || outStaged) && r.count > 0;
  const size_t per = cut ? pieceElements(r.count * r.elementSize, r.elementSize) : r.count;
  const size_t npieces = cut ? (r.count + per - 1) / per : 1;
  call->pieces.resize(npieces);
  for (size_t k = 0; k < npieces; ++k) {
    Piece& p = call->pieces[k];
    const size_t first = cut ? k * per : 0;
    const size_t count = cut ? std::min(per, r.count - first) : r.count;
    const size_t offset = first * r.elementSize;
    const size_t inBytes = cut ? count * r.elementSize : r.inputBytes;
    const size_t outBytes = cut ? count * r.elementSize : r.outputBytes;
    uint8_t* pin = hostIn ? hostIn + offset : nullptr;
    uint8_t* pout = hostOut ? hostOut + offset : nullptr;
    if (inStaged && inBytes) p.down.push_back({pin, in + offset, inBytes});
    if (outStaged && !cut && !r.outputBlocks.empty()) {
      for (const auto& [at, bytes] : r.outputBlocks)
        if (bytes) p.up.push_back({out + at, hostOut + at, bytes});
    } else if (outStaged && outBytes) {
      p.up.push_back({out + offset, pout, outBytes});
    }
    BRAID_RETURN_IF_ERROR(r.build(pin, pout, count, &p.op));
  }
  return Status::ok();
}

}  // namespace

Status CudaStreamOrder::create(const kernels::DeviceModule& m, void* cudaStream,
                               std::unique_ptr<CudaStreamOrder>* out) {
  int device = -1;
  if (int err = m.getDevice(&device); err != 0) return cudaFailure(m, err, "cudaGetDevice");
  uint32_t* flag = nullptr;
  BRAID_RETURN_IF_ERROR(acquireFlag(m, &flag));
  out->reset(new CudaStreamOrder(m, cudaStream, device, flag));
  return Status::ok();
}

CudaStreamOrder::~CudaStreamOrder() { releaseFlag(flag_); }

Status StreamStaging::take(const kernels::DeviceModule& m, int which, size_t bytes,
                           std::shared_ptr<PinnedBlock>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<PinnedBlock>& mine = blocks_[which];
  if (!mine || mine->capacity() < bytes) {
    auto bigger = std::make_shared<PinnedBlock>();
    BRAID_RETURN_IF_ERROR(PinnedBlock::acquire(m, bytes, bigger.get()));
    mine = std::move(bigger);  // ops queued earlier keep the old one alive
  }
  *out = mine;
  return Status::ok();
}

Status CudaStreamOrder::markReady(void** readyEvent, uint32_t* sequence) {
  DeviceScope scope(m_, device_);
  BRAID_RETURN_IF_ERROR(scope.status());
  BRAID_RETURN_IF_ERROR(acquireEvent(m_, device_, readyEvent));
  if (int err = m_.eventRecord(*readyEvent, stream_); err != 0) {
    releaseEvent(device_, *readyEvent);
    *readyEvent = nullptr;
    return cudaFailure(m_, err, "cudaEventRecord on the bound CUDA stream");
  }
  *sequence = issued_.fetch_add(1, std::memory_order_relaxed) + 1;
  return Status::ok();
}

Status CudaStreamOrder::holdStream(uint32_t sequence) {
  DeviceScope scope(m_, device_);
  BRAID_RETURN_IF_ERROR(scope.status());
  if (int err = m_.streamWaitFlag(stream_, flag_, sequence); err != 0)
    return cudaFailure(m_, err,
                       "making the CUDA stream wait for the collective (it was queued and will run)");
  return Status::ok();
}

void CudaStreamOrder::release(uint32_t sequence) { __atomic_store_n(flag_, sequence, __ATOMIC_RELEASE); }

bool needsStaging(const void* input, const void* output, const CudaStreamOrder* order) {
  if (order) return true;
  return kernels::deviceOfPointer(input) >= 0 || kernels::deviceOfPointer(output) >= 0;
}

namespace {

// Runs the call now (stream == nullptr) or queues it; see launchStaged.
Status launchCall(const std::shared_ptr<Communicator>& comm, Stream* stream, CudaStreamOrder* order,
                  const std::shared_ptr<StagedCall>& call) {
  BRAID_RETURN_IF_ERROR(call->acquire());
  if (stream == nullptr) return call->run(*comm, nullptr);
  if (call->aBytes) BRAID_RETURN_IF_ERROR(stream->staging().take(*call->m, 0, call->aBytes, &call->a));
  if (call->bBytes) BRAID_RETURN_IF_ERROR(stream->staging().take(*call->m, 1, call->bBytes, &call->b));
  return queueDeviceCall(comm, *stream, order, call, call->pieces.size());
}

Status checkDevices(int inDevice, int outDevice, const CudaStreamOrder* order) {
  if (inDevice >= 0 && outDevice >= 0 && inDevice != outDevice)
    return notSupported("sendbuff is on CUDA device " + std::to_string(inDevice) +
                        " and recvbuff on device " + std::to_string(outDevice) +
                        "; both must be on one device");
  const int device = inDevice >= 0 ? inDevice : outDevice;
  if (order && device >= 0 && device != order->device())
    return notSupported("the buffers are on CUDA device " + std::to_string(device) +
                        " but the stream is bound to a CUDA stream of device " +
                        std::to_string(order->device()));
  return Status::ok();
}

}  // namespace

struct GroupStaging {
  int device = -1;
  std::vector<std::shared_ptr<PinnedBlock>> blocks;
  std::vector<Copy> down, up;
};

Status launchStaged(const std::shared_ptr<Communicator>& comm, Stream* stream, CudaStreamOrder* order,
                    StagingRequest&& request) {
  const kernels::DeviceModule* m = kernels::deviceModule();
  if (m == nullptr) return notSupported("device buffers: " + kernels::deviceUnavailableReason());
  const int inDevice = request.inputBytes ? kernels::deviceOfPointer(request.input) : -1;
  const int outDevice = request.outputBytes ? kernels::deviceOfPointer(request.output) : -1;
  BRAID_RETURN_IF_ERROR(checkDevices(inDevice, outDevice, order));
  auto call = std::make_shared<StagedCall>();
  call->m = m;
  call->device = inDevice >= 0 ? inDevice : outDevice;
  // A group member is fused with the others at braidGroupEnd: one op, its
  // staging taken now on the calling thread, its copies run around the
  // fused op (launchStagedGroup).
  const bool member = inGroup();
  if (member && request.deviceCodes) return internalError("device coding inside a group");
  BRAID_RETURN_IF_ERROR(plan(request, inDevice, outDevice, !member, call.get()));
  if (!member) return launchCall(comm, stream, order, call);
  BRAID_RETURN_IF_ERROR(call->takeStaging());
  Piece& piece = call->pieces.front();
  std::shared_ptr<GroupStaging> staging;
  if (call->device >= 0) {
    staging = std::make_shared<GroupStaging>();
    staging->device = call->device;
    for (auto& block : {call->a, call->b})
      if (block) staging->blocks.push_back(block);
    staging->down = std::move(piece.down);
    staging->up = std::move(piece.up);
  }
  return launch(comm, stream, std::move(piece.op), std::move(staging));
}

Status launchStagedGroup(const std::shared_ptr<Communicator>& comm, Stream* stream, Op&& fused,
                         const std::vector<std::shared_ptr<GroupStaging>>& members) {
  const kernels::DeviceModule* m = kernels::deviceModule();
  if (m == nullptr) return notSupported("device buffers: " + kernels::deviceUnavailableReason());
  CudaStreamOrder* order = stream ? stream->cudaOrder() : nullptr;
  auto call = std::make_shared<StagedCall>();
  call->m = m;
  call->pieces.resize(1);
  Piece& piece = call->pieces.front();
  piece.op = std::move(fused);
  for (const std::shared_ptr<GroupStaging>& g : members) {
    if (!g) continue;
    if (call->device >= 0 && g->device != call->device)
      return notSupported("braidGroupEnd: the group's device buffers are on CUDA devices " +
                          std::to_string(call->device) + " and " + std::to_string(g->device) +
                          "; one group stages through one device");
    BRAID_RETURN_IF_ERROR(checkDevices(g->device, -1, order));
    call->device = g->device;
    call->held.insert(call->held.end(), g->blocks.begin(), g->blocks.end());
    piece.down.insert(piece.down.end(), g->down.begin(), g->down.end());
    piece.up.insert(piece.up.end(), g->up.begin(), g->up.end());
  }
  return launchCall(comm, stream, order, call);
}

}  // namespace braid::core
