#include "bench.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "calls.h"
#include "checks.h"
#include "types.h"

namespace braid::perf {

namespace {

void check(const RankContext& ctx, const char* what, braidResult_t rc) {
  if (rc != braidSuccess) fatal(ctx, what, rc);
}

void sync(const RankContext& ctx) {
  if (ctx.stream != nullptr) check(ctx, "braidStreamSynchronize", braidStreamSynchronize(ctx.stream));
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

}  // namespace

void fatal(const RankContext& ctx, const char* what, braidResult_t rc) {
  std::fprintf(stderr, "braid-perf: rank %d: %s failed [%s]: %s\n", ctx.rank, what, braidGetErrorString(rc),
               braidGetLastError(ctx.comm));
  std::fflush(stdout);
  if (ctx.comm != nullptr) braidCommAbort(ctx.comm);
  std::exit(1);
}

Result runCell(const RankContext& ctx, const PerfOptions& opts, const Layout& layout, const ValuePlan& plan,
               bool inPlace, Buffers& buffers) {
  const Collective& coll = *opts.collective;
  Result result;
  CallBuffers cb =
      prepareBuffers(coll, plan, layout, ctx.rank, opts.root, inPlace, buffers.send, buffers.recv);
  CallArgs args{cb.send,   cb.recv,  layout.count, plan.type, plan.op,
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
    prepareBuffers(coll, plan, layout, ctx.rank, opts.root, inPlace, buffers.send, buffers.recv);
    check(ctx, coll.name, call());
    sync(ctx);
    int64_t wrong = countWrong(coll, plan, layout, ctx.rank, opts.root, cb.recv);
    check(ctx, "braidAllReduce(#wrong)",
          braidAllReduce(&wrong, &wrong, 1, braidInt64, braidSum, ctx.comm, nullptr));
    result.wrong = wrong;
  }
  return result;
}

}  // namespace braid::perf
