#include "algorithms/local_step.h"

#include <cstring>

#include "kernels/codec.h"
#include "kernels/reduce.h"

namespace braid::algo {

bool isLocalStep(StepKind kind) {
  return kind != StepKind::kSend && kind != StepKind::kRecv && kind != StepKind::kRecvReduce;
}

void runLocalStep(const Step& step, const char* src, char* dst) {
  switch (step.kind) {
    case StepKind::kCopy:
      if (dst != src && step.dst.bytes > 0) std::memmove(dst, src, step.dst.bytes);
      break;
    case StepKind::kReduce:
      kernels::reduce(dst, dst, src, step.dst.bytes / dataTypeSize(step.dtype), step.dtype, step.op);
      break;
    case StepKind::kDivide:
      kernels::divideBy(dst, step.dst.bytes / dataTypeSize(step.dtype), step.dtype, step.divisor);
      break;
    case StepKind::kScale:
      kernels::scaleBy(dst, src, step.dst.bytes / dataTypeSize(step.dtype), step.dtype, step.scalarBits);
      break;
    case StepKind::kEncode:
      kernels::encode(step.codec, src, step.src.bytes / dataTypeSize(step.codec.hostType), dst);
      break;
    case StepKind::kDecode:
      kernels::decode(step.codec, src, step.dst.bytes / dataTypeSize(step.codec.hostType), dst);
      break;
    case StepKind::kSend:
    case StepKind::kRecv:
    case StepKind::kRecvReduce:
      break;  // not local: the caller never passes these
  }
}

}  // namespace braid::algo
