// C entry points of the collectives: validate everything first (nothing is
// sent and no buffer touched on error), then build the op and launch it.
#include <braid/braid.h>

#include "api/exchange.h"
#include "api/handles.h"
#include "api/validate.h"
#include "base/env.h"
#include "core/device_direct.h"
#include "core/device_staging.h"
#include "core/launch.h"
#include "kernels/device_loader.h"

using braid::Status;
using braid::algo::Collective;
namespace api = braid::api;
namespace core = braid::core;

namespace {

braid::DataType dt(braidDataType_t t) { return static_cast<braid::DataType>(t); }

// The bytes a collective reads and writes on this rank (0: none), for
// staging device buffers; elementwise: output element i depends on input
// element i alone, so the call may be cut into pieces. Blocks: buffers of
// that many blocks of count elements, where element i of an output block
// depends on element i of the input blocks alone (all-gather, reduce-scatter,
// all-to-all), so the call may be cut into pieces of the same elements of
// every block (core/device_staging.h).
struct Extents {
  size_t input = 0;
  size_t output = 0;
  bool elementwise = false;
  size_t inBlocks = 0, outBlocks = 0;
};

// A collective of device buffers between ranks of one host, device to
// device (core/device_direct.h), when the communicator can; *taken false:
// stage it instead.
Status launchDirect(braidComm_t comm, braidStream_t stream, core::CudaStreamOrder* order,
                    const braid::algo::CollectiveArgs& args, const void* input, void* output, Extents extents,
                    bool* taken) {
  *taken = false;
  core::DirectRequest call;
  call.collective = args.collective;
  call.input = extents.input ? input : nullptr;
  call.output = extents.output ? output : nullptr;
  call.count = args.count;
  call.dtype = args.dtype;
  call.op = args.op;
  call.root = args.root;
  const int inDevice = braid::kernels::deviceOfPointer(call.input);
  const int outDevice = braid::kernels::deviceOfPointer(call.output);
  // Both sides on one device, or one side there (the other is host memory,
  // which the copies in and out reach as well).
  if (inDevice >= 0 && outDevice >= 0 && inDevice != outDevice) return Status::ok();  // staging says why not
  call.device = inDevice >= 0 ? inDevice : outDevice;
  return core::launchDirect(comm->impl, stream ? &stream->stream : nullptr, order, call, taken);
}

// A quantized all-to-all or all-gather whose buffers are both on one device,
// outside a group: the GPU encodes and decodes (core/device_staging.h), the
// host op moves wire bytes. BRAID_CUDA_DEVICE_CODEC=0 stages the values and
// codes them on the CPU instead. Every choice here depends only on what
// every rank's call has alike (a call's buffers are device memory on every
// rank or on none).
bool codesOnDevice(const braid::algo::CollectiveArgs& args, const void* input, const void* output) {
  static const bool enabled = braid::env::getString("BRAID_CUDA_DEVICE_CODEC") != "0";
  if (!enabled || !args.quantized || core::inGroup() ||
      (args.collective != Collective::kAllToAll && args.collective != Collective::kAllGather))
    return false;
  const int in = braid::kernels::deviceOfPointer(input), out = braid::kernels::deviceOfPointer(output);
  return in >= 0 && in == out;
}

void planDeviceCoding(const braid::algo::CollectiveArgs& args, core::StagingRequest* r) {
  const braid::kernels::CodecParams& c = args.codec;
  const size_t es = args.elemSize(), n = static_cast<size_t>(args.nranks);
  const size_t blockWire = braid::kernels::encodedBytes(c, args.count);
  r->deviceCodes = true;
  r->codec = {static_cast<int>(c.format), static_cast<int>(c.hostType), c.lossScale, c.blockSize};
  r->elementwise = false;
  if (args.collective == Collective::kAllToAll) {
    r->wireInputBytes = r->wireOutputBytes = n * blockWire;
    for (size_t p = 0; p < n; ++p) {
      r->encodeBlocks.push_back({p * args.count * es, args.count, p * blockWire});
      r->decodeBlocks.push_back({p * args.count * es, args.count, p * blockWire});
    }
  } else {  // all-gather: the own block in, every block out
    r->wireInputBytes = blockWire;
    r->wireOutputBytes = n * blockWire;
    r->encodeBlocks.push_back({0, args.count, 0});
    for (size_t p = 0; p < n; ++p)
      r->decodeBlocks.push_back({p * args.count * es, args.count, p * blockWire});
  }
}

// Builds and launches a collective whose checks passed.
Status launchCollective(braidComm_t comm, braidStream_t stream, const braid::algo::CollectiveArgs& args,
                        const void* input, void* output, Extents extents) {
  core::CudaStreamOrder* order = stream ? stream->stream.cudaOrder() : nullptr;
  if (__builtin_expect(braid::kernels::deviceModule() != nullptr, 0) &&
      core::needsStaging(extents.input ? input : nullptr, extents.output ? output : nullptr, order)) {
    // PreMulSum's scaling is a host step of the staged op (device-direct
    // reduces with the module's kernels, which have no scaling).
    if (core::hasDirectForm(args.collective) && !args.quantized && !args.preMultiply) {
      bool direct = false;
      BRAID_RETURN_IF_ERROR(launchDirect(comm, stream, order, args, input, output, extents, &direct));
      if (direct) return Status::ok();
    }
    core::StagingRequest request;
    request.input = input;
    request.inputBytes = extents.input;
    request.output = output;
    request.outputBytes = extents.output;
    request.elementwise = extents.elementwise && !args.quantized;
    if (!args.quantized) {  // a wire format's scaled blocks must not be cut
      request.inBlocks = extents.inBlocks;
      request.outBlocks = extents.outBlocks;
    }
    request.elementSize = braid::dataTypeSize(args.dtype);
    request.count = args.count;
    if (args.collective == Collective::kAllToAllv)
      for (size_t p = 0; p < args.recvCounts.size(); ++p)
        request.outputBlocks.emplace_back(args.recvDispls[p] * request.elementSize,
                                          args.recvCounts[p] * request.elementSize);
    const bool coded = codesOnDevice(args, input, output);
    if (coded) planDeviceCoding(args, &request);
    auto impl = comm->impl;
    request.build = [impl, args, coded](const void* in, void* out, size_t count, core::Op* op) {
      braid::algo::CollectiveArgs piece = args;
      piece.count = count;
      piece.preEncoded = coded;
      return impl->buildCollective(piece, in, out, op);
    };
    return core::launchStaged(comm->impl, stream ? &stream->stream : nullptr, order, std::move(request));
  }
  core::Op op;
  BRAID_RETURN_IF_ERROR(comm->impl->buildCollective(args, input, output, &op));
  return core::launch(comm->impl, stream ? &stream->stream : nullptr, std::move(op));
}

braid::algo::CollectiveArgs argsOf(braidComm_t comm, Collective c, size_t count, braidDataType_t t) {
  braid::algo::CollectiveArgs a = comm->impl->argsFor(c);
  a.count = count;
  a.dtype = dt(t);
  return a;
}

// A quantized call: the schedule comes from algorithms/quantized, in codec's format.
void withCodec(const braid::kernels::CodecParams* codec, braid::algo::CollectiveArgs* args) {
  if (!codec) return;
  args->quantized = true;
  args->codec = *codec;
}

void withOp(const api::ResolvedOp& red, braid::algo::CollectiveArgs* args) {
  args->op = red.op;
  args->preMultiply = red.preMultiply;
  args->preMulScalar = red.preMulScalar;
}

#define CHECK(expr) BRAID_RETURN_IF_ERROR(expr)

Status allReduce(const void* send, void* recv, size_t count, braidDataType_t t, braidRedOp_t op,
                 braidComm_t comm, braidStream_t stream) {
  const char* fn = "braidAllReduce";
  CHECK(api::checkComm(fn, comm));
  CHECK(api::checkDataType(fn, t));
  api::ResolvedOp red;
  CHECK(api::checkRedOp(fn, comm, op, t, &red));
  size_t bytes = 0;
  CHECK(api::checkBytes(fn, "count", count, t, 1, &bytes));
  CHECK(api::checkBuffer(fn, "sendbuff", send, bytes));
  CHECK(api::checkBuffer(fn, "recvbuff", recv, bytes));
  CHECK(api::checkOverlap(fn, send, bytes, recv, bytes, send == recv, "in place means sendbuff == recvbuff"));
  auto args = argsOf(comm, Collective::kAllReduce, count, t);
  withOp(red, &args);
  return launchCollective(comm, stream, args, send, recv, {bytes, bytes, true});
}

Status broadcast(const void* send, void* recv, size_t count, braidDataType_t t, int root,
                 braidComm_t comm, braidStream_t stream) {
  const char* fn = "braidBroadcast";
  CHECK(api::checkComm(fn, comm));
  CHECK(api::checkDataType(fn, t));
  CHECK(api::checkRank(fn, "root", root, comm->impl->nranks()));
  size_t bytes = 0;
  CHECK(api::checkBytes(fn, "count", count, t, 1, &bytes));
  const bool isRoot = comm->impl->rank() == root;
  if (isRoot) CHECK(api::checkBuffer(fn, "sendbuff (on the root)", send, bytes));
  CHECK(api::checkBuffer(fn, "recvbuff", recv, bytes));
  if (isRoot) CHECK(api::checkOverlap(fn, send, bytes, recv, bytes, send == recv, "in place means sendbuff == recvbuff"));
  auto args = argsOf(comm, Collective::kBroadcast, count, t);
  args.root = root;
  return launchCollective(comm, stream, args, send, recv, {isRoot ? bytes : 0, bytes, true});
}

Status reduce(const void* send, void* recv, size_t count, braidDataType_t t, braidRedOp_t op,
              int root, braidComm_t comm, braidStream_t stream) {
  const char* fn = "braidReduce";
  CHECK(api::checkComm(fn, comm));
  CHECK(api::checkDataType(fn, t));
  api::ResolvedOp red;
  CHECK(api::checkRedOp(fn, comm, op, t, &red));
  CHECK(api::checkRank(fn, "root", root, comm->impl->nranks()));
  size_t bytes = 0;
  CHECK(api::checkBytes(fn, "count", count, t, 1, &bytes));
  CHECK(api::checkBuffer(fn, "sendbuff", send, bytes));
  const bool isRoot = comm->impl->rank() == root;
  if (isRoot) {
    CHECK(api::checkBuffer(fn, "recvbuff (on the root)", recv, bytes));
    CHECK(api::checkOverlap(fn, send, bytes, recv, bytes, send == recv, "in place means sendbuff == recvbuff"));
  }
  auto args = argsOf(comm, Collective::kReduce, count, t);
  withOp(red, &args);
  args.root = root;
  return launchCollective(comm, stream, args, send, isRoot ? recv : nullptr,
                          {bytes, isRoot ? bytes : 0, true});
}

}  // namespace

namespace braid::api {

Status allGather(const char* fn, const void* send, void* recv, size_t sendcount, braidDataType_t t,
                 const kernels::CodecParams* codec, braidComm_t comm, braidStream_t stream) {
  CHECK(api::checkComm(fn, comm));
  CHECK(api::checkDataType(fn, t));
  const int n = comm->impl->nranks(), r = comm->impl->rank();
  size_t bytes = 0, total = 0;
  CHECK(api::checkBytes(fn, "sendcount", sendcount, t, 1, &bytes));
  CHECK(api::checkBytes(fn, "sendcount", sendcount, t, n, &total));
  CHECK(api::checkBuffer(fn, "sendbuff", send, bytes));
  CHECK(api::checkBuffer(fn, "recvbuff", recv, total));
  bool inPlace = recv && send == static_cast<const char*>(recv) + r * bytes;
  CHECK(api::checkOverlap(fn, send, bytes, recv, total, inPlace,
                          "in place means sendbuff == recvbuff + rank * sendcount"));
  auto args = argsOf(comm, Collective::kAllGather, sendcount, t);
  withCodec(codec, &args);
  return launchCollective(comm, stream, args, send, recv, {bytes, total, false, 1, static_cast<size_t>(n)});
}

}  // namespace braid::api

namespace {

Status reduceScatter(const void* send, void* recv, size_t recvcount, braidDataType_t t,
                     braidRedOp_t op, braidComm_t comm, braidStream_t stream) {
  const char* fn = "braidReduceScatter";
  CHECK(api::checkComm(fn, comm));
  CHECK(api::checkDataType(fn, t));
  api::ResolvedOp red;
  CHECK(api::checkRedOp(fn, comm, op, t, &red));
  const int n = comm->impl->nranks(), r = comm->impl->rank();
  size_t bytes = 0, total = 0;
  CHECK(api::checkBytes(fn, "recvcount", recvcount, t, 1, &bytes));
  CHECK(api::checkBytes(fn, "recvcount", recvcount, t, n, &total));
  CHECK(api::checkBuffer(fn, "sendbuff", send, total));
  CHECK(api::checkBuffer(fn, "recvbuff", recv, bytes));
  bool inPlace = send && recv == static_cast<const char*>(send) + r * bytes;
  CHECK(api::checkOverlap(fn, send, total, recv, bytes, inPlace,
                          "in place means recvbuff == sendbuff + rank * recvcount"));
  auto args = argsOf(comm, Collective::kReduceScatter, recvcount, t);
  withOp(red, &args);
  return launchCollective(comm, stream, args, send, recv, {total, bytes, false, static_cast<size_t>(n), 1});
}

// What gather and scatter check alike: the communicator, datatype and root,
// and a block (*bytes) and nranks of them (*total) without overflow.
Status checkRootedBlocks(const char* fn, size_t count, braidDataType_t t, int root, braidComm_t comm,
                         size_t* bytes, size_t* total) {
  CHECK(api::checkComm(fn, comm));
  CHECK(api::checkDataType(fn, t));
  CHECK(api::checkRank(fn, "root", root, comm->impl->nranks()));
  CHECK(api::checkBytes(fn, "count", count, t, 1, bytes));
  return api::checkBytes(fn, "count", count, t, comm->impl->nranks(), total);
}

// Gather and scatter: the root holds the nranks blocks, the others one. The
// staging of device buffers is not cut into pieces (Extents without blocks):
// only the root has all the blocks, and every rank must cut alike.
Status gather(const void* send, void* recv, size_t count, braidDataType_t t, int root, braidComm_t comm,
              braidStream_t stream) {
  const char* fn = "braidGather";
  size_t bytes = 0, total = 0;
  CHECK(checkRootedBlocks(fn, count, t, root, comm, &bytes, &total));
  CHECK(api::checkBuffer(fn, "sendbuff", send, bytes));
  const bool isRoot = comm->impl->rank() == root;
  if (isRoot) {
    CHECK(api::checkBuffer(fn, "recvbuff (on the root)", recv, total));
    const bool inPlace = recv && send == static_cast<const char*>(recv) + root * bytes;
    CHECK(api::checkOverlap(fn, send, bytes, recv, total, inPlace,
                            "in place means sendbuff == recvbuff + root * count"));
  }
  auto args = argsOf(comm, Collective::kGather, count, t);
  args.root = root;
  return launchCollective(comm, stream, args, send, isRoot ? recv : nullptr,
                          {bytes, isRoot ? total : 0, false});
}

Status scatter(const void* send, void* recv, size_t count, braidDataType_t t, int root, braidComm_t comm,
               braidStream_t stream) {
  const char* fn = "braidScatter";
  size_t bytes = 0, total = 0;
  CHECK(checkRootedBlocks(fn, count, t, root, comm, &bytes, &total));
  CHECK(api::checkBuffer(fn, "recvbuff", recv, bytes));
  const bool isRoot = comm->impl->rank() == root;
  if (isRoot) {
    CHECK(api::checkBuffer(fn, "sendbuff (on the root)", send, total));
    const bool inPlace = send && recv == static_cast<const char*>(send) + root * bytes;
    CHECK(api::checkOverlap(fn, send, total, recv, bytes, inPlace,
                            "in place means recvbuff == sendbuff + root * count"));
  }
  auto args = argsOf(comm, Collective::kScatter, count, t);
  args.root = root;
  return launchCollective(comm, stream, args, isRoot ? send : nullptr, recv,
                          {isRoot ? total : 0, bytes, false});
}

}  // namespace

namespace braid::api {

Status allToAll(const char* fn, const void* send, void* recv, size_t count, braidDataType_t t,
                const kernels::CodecParams* codec, braidComm_t comm, braidStream_t stream) {
  CHECK(api::checkComm(fn, comm));
  CHECK(api::checkDataType(fn, t));
  size_t total = 0;
  CHECK(api::checkBytes(fn, "count", count, t, comm->impl->nranks(), &total));
  CHECK(api::checkBuffer(fn, "sendbuff", send, total));
  CHECK(api::checkBuffer(fn, "recvbuff", recv, total));
  CHECK(api::checkOverlap(fn, send, total, recv, total, false, "all-to-all has no in-place form"));
  auto args = argsOf(comm, Collective::kAllToAll, count, t);
  withCodec(codec, &args);
  const auto n = static_cast<size_t>(comm->impl->nranks());
  return launchCollective(comm, stream, args, send, recv, {total, total, false, n, n});
}

// Extent in bytes of the blocks (count[p], displ[p]) for all p.
Status vectorExtent(const char* fn, const char* countsName, const char* displsName, const size_t counts[],
                    const size_t displs[], int n, braidDataType_t t, size_t* extent) {
  *extent = 0;
  for (int p = 0; p < n; ++p) {
    size_t end = 0, endBytes = 0;
    std::string what = displsName;
    what.append("[").append(std::to_string(p)).append("] + ").append(countsName);
    what.append("[").append(std::to_string(p)).append("]");
    if (__builtin_add_overflow(counts[p], displs[p], &end))
      return braid::invalidArgument(std::string(fn) + ": " + what + " overflows");
    CHECK(api::checkBytes(fn, what.c_str(), end, t, 1, &endBytes));
    if (counts[p] > 0 && endBytes > *extent) *extent = endBytes;
  }
  return Status::ok();
}

Status allToAllv(const char* fn, const void* send, const size_t sendcounts[], const size_t sdispls[],
                 void* recv, const size_t recvcounts[], const size_t rdispls[], braidDataType_t t,
                 const kernels::CodecParams* codec, braidComm_t comm, braidStream_t stream) {
  CHECK(api::checkComm(fn, comm));
  CHECK(api::checkDataType(fn, t));
  if (!sendcounts || !sdispls || !recvcounts || !rdispls)
    return braid::invalidArgument(std::string(fn) + ": " +
                                  (!sendcounts ? "sendcounts" : !sdispls ? "sdispls" : !recvcounts ? "recvcounts" : "rdispls") +
                                  " is NULL");
  const int n = comm->impl->nranks();
  size_t sendExtent, recvExtent;
  CHECK(vectorExtent(fn, "sendcounts", "sdispls", sendcounts, sdispls, n, t, &sendExtent));
  CHECK(vectorExtent(fn, "recvcounts", "rdispls", recvcounts, rdispls, n, t, &recvExtent));
  CHECK(api::checkBuffer(fn, "sendbuff", send, sendExtent));
  CHECK(api::checkBuffer(fn, "recvbuff", recv, recvExtent));
  CHECK(api::checkOverlap(fn, send, sendExtent, recv, recvExtent, false, "all-to-all-v has no in-place form"));
  auto args = argsOf(comm, Collective::kAllToAllv, 0, t);
  args.sendCounts.assign(sendcounts, sendcounts + n);
  args.sendDispls.assign(sdispls, sdispls + n);
  args.recvCounts.assign(recvcounts, recvcounts + n);
  args.recvDispls.assign(rdispls, rdispls + n);
  if (codec && sendcounts[comm->impl->rank()] != recvcounts[comm->impl->rank()])
    return braid::invalidArgument(std::string(fn) + ": sendcounts[own rank] = " +
                                  std::to_string(sendcounts[comm->impl->rank()]) + " but recvcounts[own rank] = " +
                                  std::to_string(recvcounts[comm->impl->rank()]) +
                                  " (the own block goes through the codec into the output, so they must match)");
  withCodec(codec, &args);
  return launchCollective(comm, stream, args, send, recv, {sendExtent, recvExtent, false});
}

}  // namespace braid::api

namespace {

Status pointToPoint(bool isSend, const void* buf, size_t count, braidDataType_t t, int peer,
                    braidComm_t comm, braidStream_t stream) {
  const char* fn = isSend ? "braidSend" : "braidRecv";
  CHECK(api::checkComm(fn, comm));
  CHECK(api::checkDataType(fn, t));
  CHECK(api::checkRank(fn, "peer", peer, comm->impl->nranks()));
  size_t bytes = 0;
  CHECK(api::checkBytes(fn, "count", count, t, 1, &bytes));
  CHECK(api::checkBuffer(fn, isSend ? "sendbuff" : "recvbuff", buf, bytes));
  auto impl = comm->impl;
  auto build = [impl, isSend, bytes, peer, t, count](const void* in, void* out, size_t, core::Op* op) {
    CHECK(impl->buildPointToPoint(isSend, isSend ? in : out, bytes, peer, op));
    op->dtype = dt(t);
    op->count = count;
    op->rootOrPeer = peer;
    return Status::ok();
  };
  core::CudaStreamOrder* order = stream ? stream->stream.cudaOrder() : nullptr;
  if (__builtin_expect(braid::kernels::deviceModule() != nullptr, 0) &&
      core::needsStaging(buf, nullptr, order)) {
    core::StagingRequest request;
    if (isSend) {
      request.input = buf;
      request.inputBytes = bytes;
    } else {
      request.output = const_cast<void*>(buf);
      request.outputBytes = bytes;
    }
    request.count = count;
    request.build = build;
    return core::launchStaged(impl, stream ? &stream->stream : nullptr, order, std::move(request));
  }
  core::Op op;
  CHECK(build(buf, const_cast<void*>(buf), count, &op));
  return core::launch(comm->impl, stream ? &stream->stream : nullptr, std::move(op));
}

Status barrier(braidComm_t comm, braidStream_t stream) {
  CHECK(api::checkComm("braidBarrier", comm));
  return launchCollective(comm, stream, argsOf(comm, Collective::kBarrier, 0, braidUint8), nullptr, nullptr,
                          {});
}

}  // namespace

extern "C" {

braidResult_t braidAllReduce(const void* s, void* r, size_t count, braidDataType_t t, braidRedOp_t op,
                             braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, allReduce(s, r, count, t, op, comm, stream));
}
braidResult_t braidBroadcast(const void* s, void* r, size_t count, braidDataType_t t, int root,
                             braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, broadcast(s, r, count, t, root, comm, stream));
}
braidResult_t braidReduce(const void* s, void* r, size_t count, braidDataType_t t, braidRedOp_t op,
                          int root, braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, reduce(s, r, count, t, op, root, comm, stream));
}
braidResult_t braidAllGather(const void* s, void* r, size_t sendcount, braidDataType_t t,
                             braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, api::allGather("braidAllGather", s, r, sendcount, t, nullptr, comm, stream));
}
braidResult_t braidReduceScatter(const void* s, void* r, size_t recvcount, braidDataType_t t,
                                 braidRedOp_t op, braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, reduceScatter(s, r, recvcount, t, op, comm, stream));
}
braidResult_t braidGather(const void* s, void* r, size_t count, braidDataType_t t, int root, braidComm_t comm,
                          braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, gather(s, r, count, t, root, comm, stream));
}
braidResult_t braidScatter(const void* s, void* r, size_t count, braidDataType_t t, int root,
                           braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, scatter(s, r, count, t, root, comm, stream));
}
braidResult_t braidAllToAll(const void* s, void* r, size_t count, braidDataType_t t, braidComm_t comm,
                            braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, api::allToAll("braidAllToAll", s, r, count, t, nullptr, comm, stream));
}
braidResult_t braidAllToAllv(const void* s, const size_t sc[], const size_t sd[], void* r,
                             const size_t rc[], const size_t rd[], braidDataType_t t, braidComm_t comm,
                             braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, api::allToAllv("braidAllToAllv", s, sc, sd, r, rc, rd, t, nullptr, comm, stream));
}
braidResult_t braidSend(const void* s, size_t count, braidDataType_t t, int peer, braidComm_t comm,
                        braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, pointToPoint(true, s, count, t, peer, comm, stream));
}
braidResult_t braidRecv(void* r, size_t count, braidDataType_t t, int peer, braidComm_t comm,
                        braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, pointToPoint(false, r, count, t, peer, comm, stream));
}
braidResult_t braidBarrier(braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, barrier(comm, stream));
}
braidResult_t braidGroupStart(void) {
  core::groupStart();
  return braidSuccess;
}
braidResult_t braidGroupEnd(void) { return api::report(nullptr, core::groupEnd()); }

}  // extern "C"
