// See exhaustive.h. Each thread compares a grid-stride share of the inputs;
// atomics gather the count and the lowest differing input, whose bits a
// one-thread kernel then records.
#include "exhaustive.h"

#include "kernels/convert_impl.h"
#include "kernels/cuda/convert_fast.h"

namespace braid::cudabench {
namespace {

using namespace braid::kernels;        // NOLINT: the conversions under test
using namespace braid::kernels::cuda;  // NOLINT

enum Conversion { kEncodeHalf, kEncodeE4m3, kEncodeE5m2, kDecodeHalf, kDecodeE4m3, kDecodeE5m2, kCount };
constexpr const char* kNames[kCount] = {"encode fp16", "encode e4m3", "encode e5m2",
                                        "decode fp16", "decode e4m3", "decode e5m2"};
constexpr uint64_t kInputs[kCount] = {1ull << 32, 1ull << 32, 1ull << 32, 1ull << 16, 1ull << 8, 1ull << 8};

struct Tally {
  unsigned long long mismatches;
  unsigned int firstInput;  // UINT_MAX: none yet (atomicMin keeps the lowest)
  unsigned int got, want;
};

// got / want bits of conversion c at input u.
__device__ void convert(int c, uint32_t u, uint32_t* got, uint32_t* want) {
  const float f = floatOf(u);
  switch (c) {
    case kEncodeHalf: *got = fastEncodeHalf(f), *want = encodeHalf(f); break;
    case kEncodeE4m3: *got = fastEncodeE4m3(f), *want = E4m3Format::encode(u); break;
    case kEncodeE5m2: *got = fastEncodeE5m2(f), *want = E5m2Format::encode(u); break;
    case kDecodeHalf:
      *got = bitsOf(fastDecodeHalf(static_cast<uint16_t>(u))), *want = bitsOf(decodeHalf(static_cast<uint16_t>(u)));
      break;
    case kDecodeE4m3:
      *got = bitsOf(fastDecodeE4m3(static_cast<uint8_t>(u))), *want = bitsOf(E4m3Format::decode(u));
      break;
    default:
      *got = bitsOf(fastDecodeE5m2(static_cast<uint8_t>(u))), *want = bitsOf(E5m2Format::decode(u));
      break;
  }
}

__global__ void compareAll(int c, uint64_t inputs, Tally* tally) {
  unsigned long long mismatches = 0;
  uint32_t first = 0xFFFFFFFFu;
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < inputs; i += stride) {
    uint32_t got, want;
    convert(c, static_cast<uint32_t>(i), &got, &want);
    if (got != want) {
      if (mismatches++ == 0) first = static_cast<uint32_t>(i);
    }
  }
  if (mismatches == 0) return;
  atomicAdd(&tally->mismatches, mismatches);
  atomicMin(&tally->firstInput, first);
}

// After compareAll: the bits at the lowest differing input.
__global__ void describeFirst(int c, Tally* tally) {
  if (tally->mismatches) convert(c, tally->firstInput, &tally->got, &tally->want);
}

}  // namespace

std::vector<ConversionCheck> checkConversionsExhaustively(cudaStream_t stream, cudaError_t* err) {
  std::vector<ConversionCheck> out;
  Tally* tally = nullptr;
  if ((*err = cudaMallocManaged(&tally, sizeof(Tally) * kCount)) != cudaSuccess) return {};
  for (int c = 0; c < kCount; ++c) tally[c] = Tally{0, 0xFFFFFFFFu, 0, 0};
  int device = 0, sms = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  for (int c = 0; c < kCount; ++c) {
    compareAll<<<unsigned(sms) * 8, 256, 0, stream>>>(c, kInputs[c], tally + c);
    describeFirst<<<1, 1, 0, stream>>>(c, tally + c);
  }
  if ((*err = cudaGetLastError()) == cudaSuccess) *err = cudaStreamSynchronize(stream);
  if (*err == cudaSuccess) {
    for (int c = 0; c < kCount; ++c)
      out.push_back({kNames[c], kInputs[c], tally[c].mismatches, tally[c].firstInput, tally[c].got, tally[c].want});
  }
  cudaFree(tally);
  return out;
}

}  // namespace braid::cudabench
