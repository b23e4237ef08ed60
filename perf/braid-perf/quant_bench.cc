#include "quant_bench.h"

#include <algorithm>
#include <chrono>

namespace braid::perf {
namespace {

void check(const RankContext& ctx, const char* what, braidResult_t rc) {
  if (rc != braidSuccess) fatal(ctx, what, rc);
}

struct Call {
  const void* send;
  void* recv;
  size_t count;
  braidDataType_t type;
  braidQuantConfig_t config;
  bool allGather;
};

braidResult_t invoke(const RankContext& ctx, const QuantSettings& q, const Call& c) {
  if (c.allGather)
    return braidAllGatherQuantizedConfig(c.send, c.recv, c.count, c.type, q.codec, &c.config, ctx.comm, ctx.stream);
  return braidAllToAllQuantizedConfig(c.send, c.recv, c.count, c.type, q.codec, &c.config, ctx.comm, ctx.stream);
}

// Fills the send side (in place: the own block of recv) with fresh inputs.
void fillInputs(const RankContext& ctx, const Call& c, const Layout& l, void* sendBuf) {
  const size_t n = c.allGather ? c.count : l.sendCount;
  for (size_t j = 0; j < n; ++j) storeHost(sendBuf, j, c.type, quantInput(ctx.rank, j, c.type));
}

// Error of one received block of `count` values from `owner`, whose element i
// is the owner's input number first + i; fp8 bounds per scaled block.
void blockError(const QuantSettings& q, braidDataType_t type, const void* recv, size_t at, int owner, uint64_t first,
                size_t count, QuantError* err) {
  const size_t group = (q.codec == braidCodecFloat8e4m3 || q.codec == braidCodecFloat8e5m2) ? q.blockSize : count;
  std::vector<float> sent, got;
  for (size_t b = 0; b < count; b += group) {
    const size_t m = std::min(group, count - b);
    sent.resize(m);
    got.resize(m);
    for (size_t i = 0; i < m; ++i) {
      sent[i] = quantInput(owner, first + b + i, type);
      got[i] = loadHost(recv, at + b + i, type);
    }
    accumulateError(q, type, sent, got, err);
  }
}

}  // namespace

QuantResult runQuantCell(const RankContext& ctx, const PerfOptions& opts, const Layout& layout, braidDataType_t type,
                         bool inPlace, Buffers& buffers) {
  QuantResult out;
  const QuantSettings& q = opts.quant;
  const bool allGather = opts.collective->kind == CollectiveKind::kAllGather;
  if (inPlace && !allGather) {  // all-to-all has no in-place form
    out.timing.skipped = true;
    return out;
  }
  const size_t es = type == braidFloat32 ? 4 : 2;
  Call c{buffers.send, buffers.recv, layout.count, type, BRAID_QUANT_CONFIG_INITIALIZER, allGather};
  c.config.blockSize = q.blockSize;
  c.config.lossScale = q.lossScale;
  if (inPlace) c.send = static_cast<char*>(buffers.recv) + ctx.rank * layout.count * es;
  void* sendBuf = const_cast<void*>(c.send);
  fillInputs(ctx, c, layout, sendBuf);
  // --memory device: the calls get the device buffers, filled from the host
  // ones (memory.h); the host buffers stay what the check reads.
  const CallBuffers host{c.send, c.recv};
  CallBuffers call;
  const auto stage = [&] {
    if (std::string err = stageInputs(buffers, layout, es, inPlace, host, &call); !err.empty())
      fatalMessage(ctx, err);
    c.send = call.send;
    c.recv = call.recv;
  };
  stage();

  for (int i = 0; i < opts.warmupIters; ++i) check(ctx, opts.collective->name, invoke(ctx, q, c));
  if (ctx.stream) check(ctx, "braidStreamSynchronize", braidStreamSynchronize(ctx.stream));
  check(ctx, "braidBarrier", braidBarrier(ctx.comm, nullptr));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < opts.iters; ++i) check(ctx, opts.collective->name, invoke(ctx, q, c));
  if (ctx.stream) check(ctx, "braidStreamSynchronize", braidStreamSynchronize(ctx.stream));
  double usec =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / opts.iters;
  check(ctx, "braidAllReduce(time)", braidAllReduce(&usec, &usec, 1, braidFloat64, braidMax, ctx.comm, nullptr));
  out.timing.timeUs = usec;
  if (usec > 0) {
    out.timing.algBw = static_cast<double>(layout.bytes) / 1e3 / usec;
    out.timing.busBw = out.timing.algBw * opts.collective->busFactor(ctx.nranks);
  }
  if (!opts.check) return out;

  // One more call from fresh inputs (in place, the timed calls rewrote them).
  fillInputs(ctx, c, layout, sendBuf);
  stage();
  check(ctx, opts.collective->name, invoke(ctx, q, c));
  if (ctx.stream) check(ctx, "braidStreamSynchronize", braidStreamSynchronize(ctx.stream));
  if (std::string err = fetchResult(buffers, layout, es, host, call); !err.empty()) fatalMessage(ctx, err);
  QuantError& e = out.error;
  for (int owner = 0; owner < ctx.nranks; ++owner) {
    // All-gather: the owner's whole input; all-to-all: the owner's block for this rank.
    const uint64_t first = allGather ? 0 : static_cast<uint64_t>(ctx.rank) * layout.count;
    blockError(q, type, buffers.recv, owner * layout.count, owner, first, layout.count, &e);
  }
  double sums[2] = {e.sumSqRel, e.count};
  check(ctx, "braidAllReduce(error)", braidAllReduce(sums, sums, 2, braidFloat64, braidSum, ctx.comm, nullptr));
  check(ctx, "braidAllReduce(error)", braidAllReduce(&e.maxRel, &e.maxRel, 1, braidFloat64, braidMax, ctx.comm, nullptr));
  check(ctx, "braidAllReduce(error)",
        braidAllReduce(&e.violations, &e.violations, 1, braidInt64, braidSum, ctx.comm, nullptr));
  e.sumSqRel = sums[0];
  e.count = sums[1];
  out.timing.wrong = e.violations;
  return out;
}

}  // namespace braid::perf
