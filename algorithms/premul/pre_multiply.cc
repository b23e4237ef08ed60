#include "algorithms/premul/pre_multiply.h"

#include <algorithm>
#include <string>
#include <vector>

namespace braid::algo {

namespace {

// Pieces of the scaling at most: a step spanning the whole input waits for each.
constexpr size_t kMaxPieces = 64;

// Bytes of this rank's input.
size_t inputBytes(const CollectiveArgs& a) {
  const size_t vector = a.count * a.elemSize();
  return a.collective == Collective::kReduceScatter ? vector * static_cast<size_t>(a.nranks) : vector;
}

}  // namespace

Status buildPreMultiplied(const Algorithm& inner, const CollectiveArgs& args, Schedule* out) {
  const Collective c = args.collective;
  if (c != Collective::kAllReduce && c != Collective::kReduce && c != Collective::kReduceScatter)
    return invalidArgument(std::string("PreMulSum is an op of reductions, not of ") + collectiveName(c));
  CollectiveArgs sum = args;
  sum.op = RedOp::kSum;
  sum.preMultiply = false;
  Schedule body;
  BRAID_RETURN_IF_ERROR(inner.build(sum, &body));

  *out = Schedule();
  out->scratchBytes = body.scratchBytes;
  const size_t bytes = inputBytes(args);
  const int scaled = c == Collective::kAllReduce ? kOutput : out->addScratch(bytes);

  // The scaling in pieces of at least a chunk (at most kMaxPieces of them),
  // in order, so that the body's first sends leave while later pieces are
  // still being scaled. The body's steps are added again behind them, reading
  // the scaled copy instead of the input; a step that touches bytes of the
  // scaled copy (reads them, or writes them: all-reduce works in its output)
  // waits for the pieces that hold them, and for what it waited for before.
  const size_t es = args.elemSize();
  const size_t piece = std::max(args.chunkBytes, (bytes + kMaxPieces - 1) / kMaxPieces + es - 1) / es * es;
  for (size_t off = 0; off < bytes; off += piece) {
    const size_t len = std::min(piece, bytes - off);
    out->add(scaleStep({kInput, off, len}, {scaled, off, len}, args.dtype, args.preMulScalar));
  }
  const StepId shift = static_cast<StepId>(out->steps.size());
  auto reads = [&](Region r) {
    if (r.buffer == kInput) r.buffer = scaled;
    return r;
  };
  std::vector<StepId> after;
  auto waitForPieces = [&](const Region& r) {
    if (r.buffer != scaled || r.bytes == 0) return;
    for (size_t p = r.offset / piece; p <= (r.offset + r.bytes - 1) / piece; ++p)
      after.push_back(static_cast<StepId>(p));
  };
  for (const Step& step : body.steps) {
    Step s = step;
    s.src = reads(s.src);
    s.dst = reads(s.dst);
    after.clear();
    for (uint32_t k = 0; k < step.depCount; ++k) after.push_back(body.deps[step.depBegin + k] + shift);
    waitForPieces(s.src);
    waitForPieces(s.dst);  // all-reduce's bodies are in-place safe, so their writes wait anyway: a guard
    // The body's steps were kept when it was built: keep them all (ids stay in step).
    out->add(s, after, /*keepEmpty=*/true);
  }
  return Status::ok();
}

}  // namespace braid::algo
