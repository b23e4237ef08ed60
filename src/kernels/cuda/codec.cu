// Wire codecs on device memory (codec.h's formats and layout), built from the
// CPU's own per-element code (codec_scalar.h, convert_impl.h), so the bytes on
// the wire and the decoded values are those the host codecs produce.
//
// fp16 / bf16: one thread per element. fp8: one thread block per scaled block
// (blockSize <= 65536 values): the block's amax is a max over the bits of the
// finite |x| (for non-negative floats the bit order is the value order),
// reduced in shared memory, then every thread encodes its share.
#include <cuda_runtime.h>

#include "kernels/codec_scalar.h"
#include "kernels/cuda/launch.h"

namespace braid::kernels::cuda {
namespace {

struct DevF32 {
  using T = float;
  __device__ static float load(float v) { return HostF32::load(v); }
  __device__ static float store(float v) { return HostF32::store(v); }
};
struct DevBf16 {
  using T = uint16_t;
  __device__ static float load(uint16_t v) { return HostBf16::load(v); }
  __device__ static uint16_t store(float v) { return HostBf16::store(v); }
};
// The decode tables of the host are host memory: decode arithmetically (the
// tables are built from this same function).
struct DevE4m3 {
  using Format = E4m3Format;
  static constexpr int kMaxExp = E4m3Wire::kMaxExp;
};
struct DevE5m2 {
  using Format = E5m2Format;
  static constexpr int kMaxExp = E5m2Wire::kMaxExp;
};

#define GRID_STRIDE(i, n) \
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < (n); i += size_t(gridDim.x) * blockDim.x)

template <class Host>
__global__ void encodeHalfKernel(const typename Host::T* src, size_t n, float scale, uint16_t* dst) {
  GRID_STRIDE(i, n) dst[i] = encodeHalfWire(Host::load(src[i]), scale);
}
template <class Host>
__global__ void decodeHalfKernel(const uint16_t* src, size_t n, float scale, typename Host::T* dst) {
  GRID_STRIDE(i, n) dst[i] = Host::store(decodeHalfWire(src[i], scale));
}
template <class Host>
__global__ void encodeBf16Kernel(const typename Host::T* src, size_t n, uint16_t* dst) {
  GRID_STRIDE(i, n) dst[i] = encodeBf16Wire(Host::load(src[i]));
}
template <class Host>
__global__ void decodeBf16Kernel(const uint16_t* src, size_t n, typename Host::T* dst) {
  GRID_STRIDE(i, n) dst[i] = Host::store(decodeBf16Wire(src[i]));
}

// Byte-wise: a block's header sits at any 4-byte multiple of the wire buffer,
// which need not be 4-aligned when the caller passes an offset pointer.
__device__ void storeScale(uint8_t* p, float scale) {
  const uint32_t bits = bitsOf(scale);
  for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(bits >> (8 * k));
}
__device__ float loadScale(const uint8_t* p) {
  uint32_t bits = 0;
  for (int k = 0; k < 4; ++k) bits |= static_cast<uint32_t>(p[k]) << (8 * k);
  return floatOf(bits);
}

template <class Host, class Wire>
__global__ void encodeFp8Kernel(const typename Host::T* src, size_t n, uint32_t blockSize, uint8_t* dst) {
  __shared__ uint32_t partial[kBlockThreads];
  const size_t block = blockIdx.x, begin = block * blockSize;
  const size_t count = n - begin < blockSize ? n - begin : blockSize;
  uint32_t amax = 0;
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
    const uint32_t a = finiteAbsBits(Host::load(src[begin + i]));
    amax = a > amax ? a : amax;
  }
  partial[threadIdx.x] = amax;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s && partial[threadIdx.x + s] > partial[threadIdx.x]) partial[threadIdx.x] = partial[threadIdx.x + s];
    __syncthreads();
  }
  const int k = fp8BlockExponent(partial[0], Wire::kMaxExp);
  uint8_t* out = dst + block * (size_t(blockSize) + 4);
  if (threadIdx.x == 0) storeScale(out, powerOfTwo(-k));
  const float mul = powerOfTwo(k);
  for (size_t i = threadIdx.x; i < count; i += blockDim.x)
    out[4 + i] = static_cast<uint8_t>(Wire::Format::encode(bitsOf(Host::load(src[begin + i]) * mul)));
}

template <class Host, class Wire>
__global__ void decodeFp8Kernel(const uint8_t* src, size_t n, uint32_t blockSize, typename Host::T* dst) {
  GRID_STRIDE(i, n) {
    const size_t block = i / blockSize, at = block * (size_t(blockSize) + 4);
    const float q = Wire::Format::decode(src[at + 4 + i % blockSize]);
    dst[i] = Host::store(scaleDecoded(q, loadScale(src + at)));
  }
}

template <class Host>
int encodeAs(const DeviceCodec& p, const void* src, size_t n, void* dst, cudaStream_t s) {
  using T = typename Host::T;
  const T* in = static_cast<const T*>(src);
  const size_t blocks = (n + p.blockSize - 1) / (p.blockSize ? p.blockSize : 1);
  switch (p.format) {
    case 0: encodeHalfKernel<Host><<<gridFor(n), kBlockThreads, 0, s>>>(in, n, p.lossScale, static_cast<uint16_t*>(dst)); break;
    case 1: encodeBf16Kernel<Host><<<gridFor(n), kBlockThreads, 0, s>>>(in, n, static_cast<uint16_t*>(dst)); break;
    case 2: encodeFp8Kernel<Host, DevE4m3><<<blocks, kBlockThreads, 0, s>>>(in, n, p.blockSize, static_cast<uint8_t*>(dst)); break;
    case 3: encodeFp8Kernel<Host, DevE5m2><<<blocks, kBlockThreads, 0, s>>>(in, n, p.blockSize, static_cast<uint8_t*>(dst)); break;
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class Host>
int decodeAs(const DeviceCodec& p, const void* src, size_t n, void* dst, cudaStream_t s) {
  using T = typename Host::T;
  T* out = static_cast<T*>(dst);
  switch (p.format) {
    case 0: decodeHalfKernel<Host><<<gridFor(n), kBlockThreads, 0, s>>>(static_cast<const uint16_t*>(src), n, p.lossScale, out); break;
    case 1: decodeBf16Kernel<Host><<<gridFor(n), kBlockThreads, 0, s>>>(static_cast<const uint16_t*>(src), n, out); break;
    case 2: decodeFp8Kernel<Host, DevE4m3><<<gridFor(n), kBlockThreads, 0, s>>>(static_cast<const uint8_t*>(src), n, p.blockSize, out); break;
    case 3: decodeFp8Kernel<Host, DevE5m2><<<gridFor(n), kBlockThreads, 0, s>>>(static_cast<const uint8_t*>(src), n, p.blockSize, out); break;
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

constexpr int kFloat32 = 7, kBfloat16 = 9;  // DataType values

}  // namespace

int encode(const DeviceCodec* p, const void* src, size_t n, void* dst, void* stream) {
  if (n == 0) return 0;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (p->hostType == kFloat32) return encodeAs<DevF32>(*p, src, n, dst, s);
  if (p->hostType == kBfloat16) return encodeAs<DevBf16>(*p, src, n, dst, s);
  return static_cast<int>(cudaErrorInvalidValue);
}

int decode(const DeviceCodec* p, const void* src, size_t n, void* dst, void* stream) {
  if (n == 0) return 0;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (p->hostType == kFloat32) return decodeAs<DevF32>(*p, src, n, dst, s);
  if (p->hostType == kBfloat16) return decodeAs<DevBf16>(*p, src, n, dst, s);
  return static_cast<int>(cudaErrorInvalidValue);
}

}  // namespace braid::kernels::cuda
