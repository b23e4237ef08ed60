#include "bench.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "calls.h"
#include "checks.h"
#include "codec.h"
#include "device_buffers.h"
#include "types.h"

namespace braid::perf {

namespace {

void check(const RankContext& ctx, const char* what, braidResult_t rc) {
  if (rc != braidSuccess) fatal(ctx, what, rc);
}

void checkText(const RankContext& ctx, const std::string& err) {
  if (!err.empty()) fatalMessage(ctx, err);
}

// Waits for the queued calls. A wrapped CUDA stream is waited on as its user
// would (cudaStreamSynchronize); the braid stream's synchronize after it then
// costs nothing and reports the first error of the calls queued.
void sync(const RankContext& ctx) {
  if (ctx.cudaStream != nullptr) checkText(ctx, device::streamSynchronize(ctx.cudaStream));
  if (ctx.stream != nullptr) check(ctx, "braidStreamSynchronize", braidStreamSynchronize(ctx.stream));
}

// prepareBuffers, then the inputs staged where the call reads them.
CallBuffers prepare(const RankContext& ctx, const PerfOptions& opts, const Layout& layout,
                    const ValuePlan& plan, bool inPlace, const Buffers& buffers, CallBuffers* host) {
  *host = prepareBuffers(*opts.collective, plan, layout, ctx.rank, opts.root, inPlace, buffers.send,
                         buffers.recv);
  CallBuffers call{};
  checkText(ctx, stageInputs(buffers, layout, typeInfo(plan.type).size, inPlace, *host, &call));
  return call;
}

// The reported time: every rank's average per iteration, combined.
double combineTime(const RankContext& ctx, TimeReduce how, double usec) {
  double v = usec;
  if (how == TimeReduce::kRank0) {
    check(ctx, "braidBroadcast(time)", braidBroadcast(&v, &v, 1, braidFloat64, 0, ctx.comm, nullptr));
    return v;
  }
  const braidRedOp_t op = how == TimeReduce::kAverage ? braidAvg
                          : how == TimeReduce::kMin   ? braidMin
                                                      : braidMax;
  check(ctx, "braidAllReduce(time)", braidAllReduce(&v, &v, 1, braidFloat64, op, ctx.comm, nullptr));
  return v;
}

// The op a cell's calls use: the plan's, or for premulsum one made on the
// communicator with this rank's scalar, destroyed with the cell.
struct MadeOp {
  MadeOp(const RankContext& ctx, const ValuePlan& plan) : comm(ctx.comm), op(plan.op) {
    if (plan.op != kPreMulSumOp) return;
    alignas(8) unsigned char scalar[8] = {};
    storeInt(scalar, 0, plan.type, preMulScalar(plan, ctx.rank));
    check(ctx, "braidRedOpCreatePreMulSum",
          braidRedOpCreatePreMulSum(&op, scalar, plan.type, braidScalarHostImmediate, ctx.comm));
    made = true;
  }
  ~MadeOp() {
    if (made) braidRedOpDestroy(op, comm);
  }
  MadeOp(const MadeOp&) = delete;
  MadeOp& operator=(const MadeOp&) = delete;
  braidComm_t comm;
  braidRedOp_t op;
  bool made = false;
};

}  // namespace

void fatal(const RankContext& ctx, const char* what, braidResult_t rc) {
  std::fprintf(stderr, "braid-perf: rank %d: %s failed [%s]: %s\n", ctx.rank, what, braidGetErrorString(rc),
               braidGetLastError(ctx.comm));
  std::fflush(stdout);
  if (ctx.comm != nullptr) braidCommAbort(ctx.comm);
  std::exit(1);
}

void fatalMessage(const RankContext& ctx, const std::string& message) {
  if (ctx.comm == nullptr) {
    std::fprintf(stderr, "braid-perf: %s\n", message.c_str());  // before init: no rank yet
  } else {
    std::fprintf(stderr, "braid-perf: rank %d: %s\n", ctx.rank, message.c_str());
  }
  std::fflush(stdout);
  if (ctx.comm != nullptr) braidCommAbort(ctx.comm);
  std::exit(1);
}

Result runCell(const RankContext& ctx, const PerfOptions& opts, const Layout& layout, const ValuePlan& plan,
               bool inPlace, Buffers& buffers) {
  const Collective& coll = *opts.collective;
  Result result;
  CallBuffers host{};
  const CallBuffers cb = prepare(ctx, opts, layout, plan, inPlace, buffers, &host);
  const MadeOp op(ctx, plan);
  CallArgs args{cb.send,   cb.recv,  layout.count, plan.type, op.op,
                opts.root, ctx.rank, ctx.nranks,   ctx.comm,  ctx.stream};
  auto call = [&] { return callCollective(coll.kind, args); };

  for (int i = 0; i < opts.warmupIters; ++i) {
    braidResult_t rc = call();
    if (rc == braidNotSupported && inPlace && i == 0) {
      result.skipped = true;
      return result;
    }
    check(ctx, coll.name, rc);
  }
  sync(ctx);
  check(ctx, "braidBarrier", braidBarrier(ctx.comm, nullptr));

  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < opts.iters; ++i) {
    braidResult_t rc = call();
    if (rc == braidNotSupported && inPlace && i == 0 && opts.warmupIters == 0) {
      result.skipped = true;
      return result;
    }
    check(ctx, coll.name, rc);
  }
  sync(ctx);
  const double usec =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      opts.iters;

  result.timeUs = combineTime(ctx, opts.timeReduce, usec);
  if (result.timeUs > 0) {
    result.algBw = static_cast<double>(layout.bytes) / 1e3 / result.timeUs;  // bytes/us -> GB/s
    result.busBw = result.algBw * coll.busFactor(ctx.nranks);
  }

  if (opts.check) {
    // The timed iterations may have reduced in place many times over: start
    // again from fresh inputs and check one call.
    // (The same offsets in the same buffers: cb stays the call's pointers.)
    prepare(ctx, opts, layout, plan, inPlace, buffers, &host);
    check(ctx, coll.name, call());
    sync(ctx);
    checkText(ctx, fetchResult(buffers, layout, typeInfo(plan.type).size, host, cb));
    int64_t wrong = countWrong(coll, plan, layout, ctx.rank, opts.root, host.recv);
    check(ctx, "braidAllReduce(#wrong)",
          braidAllReduce(&wrong, &wrong, 1, braidInt64, braidSum, ctx.comm, nullptr));
    result.wrong = wrong;
  }
  return result;
}

}  // namespace braid::perf
