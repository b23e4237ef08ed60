#include "algorithms/premul/pre_multiply.h"

#include <string>
#include <vector>

namespace braid::algo {

namespace {

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
  const StepId scale =
      out->add(scaleStep({kInput, 0, bytes}, {scaled, 0, bytes}, args.dtype, args.preMulScalar));

  // The body again, reading the scaled copy instead of the input; its first
  // steps wait for the scaling (the rest wait for those). Ids shift by the
  // one step in front (none when the input is empty and the scaling dropped).
  auto reads = [&](Region r) {
    if (r.buffer == kInput) r.buffer = scaled;
    return r;
  };
  const StepId shift = scale == kNoStep ? 0 : 1;
  std::vector<StepId> after;
  for (const Step& step : body.steps) {
    Step s = step;
    s.src = reads(s.src);
    s.dst = reads(s.dst);
    after.clear();
    for (uint32_t k = 0; k < step.depCount; ++k) after.push_back(body.deps[step.depBegin + k] + shift);
    if (after.empty()) after.push_back(scale);
    // The body's steps were kept when it was built: keep them all (ids stay in step).
    out->add(s, after, /*keepEmpty=*/true);
  }
  return Status::ok();
}

}  // namespace braid::algo
