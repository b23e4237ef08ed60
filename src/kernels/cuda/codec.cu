// Wire codecs on device memory (codec.h's formats and layout), built from the
// CPU's own per-element code (codec_scalar.h) with the narrow conversions done
// by the device's instructions (convert_fast.h, patched to convert_impl.h's
// bits), so the bytes on the wire and the decoded values are those the host
// codecs produce.
//
// fp16 / bf16: launch.h's element-wise kernel (16-byte vectors where the
// pointers allow, one element at a time elsewhere).
//
// fp8: a group of G threads (a power of two up to a warp) per scaled block,
// each thread taking runs of 4 elements: 16 (fp32) or 8 (bf16) bytes of
// values, one 4-byte word of codes. A block's codes start 4 bytes past its
// header, and headers lie (blockSize + 4) bytes apart, a multiple of 4, so a
// 4-byte word is the widest access every block allows. The block's amax, a
// max over the bits of the finite |x| (for non-negative floats the bit order
// is the value order), is reduced over the group with shuffles. Blocks too
// big for a group to keep the device busy, and pointers off those
// alignments, take the one-block-per-thread-block kernels (and their
// one-element-per-thread loops) instead.
#include <cuda_runtime.h>

#include "kernels/codec_scalar.h"
#include "kernels/cuda/convert_fast.h"
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
// The fp8 wires: the host's maxima, the device's conversions (the host's
// decode tables are host memory, and hold these same values).
struct DevE4m3 : FastE4m3 {
  static constexpr int kMaxExp = E4m3Wire::kMaxExp;
};
struct DevE5m2 : FastE5m2 {
  static constexpr int kMaxExp = E5m2Wire::kMaxExp;
};

// --- fp16 / bf16: element-wise, In values to Out values. -------------------

// F: `Out operator()(In) const`, the scalar code. A unit is 16 bytes of
// output, so that every store of a warp is one contiguous run (two 16-byte
// stores per thread side by side would leave each store of the warp half of
// every sector: fp32 decodes ran at 0.6 of the copy that way, 0.85 this way,
// on an H200). Loads of fp32 are then two 16-byte accesses, and of 16-bit
// values one of 8 bytes. Same-size types load four units ahead (0.78 -> 0.81
// of the copy for bf16 -> bf16); with fp32 on one side two (four costs
// registers, and fp32 decodes lose a third).
template <class In, class Out, class F>
struct MapElems {
  static constexpr int kPer = kVectorBytes / sizeof(Out);
  static constexpr int kUnroll = sizeof(In) == sizeof(Out) ? 4 : 2;
  const In* src;
  Out* dst;
  F f;

  __device__ Pack<In, kPer> load(size_t i) const { return loadPack<In, kPer>(src + i); }
  __device__ void store(size_t i, const Pack<In, kPer>& in) const {
    Pack<Out, kPer> out;
#pragma unroll
    for (int k = 0; k < kPer; ++k) out.v[k] = f(in.v[k]);
    storePack(dst + i, out);
  }
  __device__ void one(size_t i) const { dst[i] = f(src[i]); }
};

template <class In, class Out, class F>
int launchMap(const void* src, void* dst, size_t n, F f, cudaStream_t s) {
  using E = MapElems<In, Out, F>;
  const Split split = splitFor(n, E::kPer, {src, dst}, {sizeof(In), sizeof(Out)});
  return launchElementwise(E{static_cast<const In*>(src), static_cast<Out*>(dst), f}, n, split, s);
}

// codec_scalar.h's encodeHalfWire with the device's conversion.
template <class Host>
struct EncodeHalf {
  float scale;
  __device__ uint16_t operator()(typename Host::T v) const {
    const float x = Host::load(v);
    float y = x * scale;
    if (isFiniteBits(bitsOf(x))) y = clampTo(y, kHalfMax);
    return fastEncodeHalf(y);
  }
};
// decodeHalfWire: value / scale. A division costs the device a dozen
// instructions; for a power-of-two scale (the usual loss scales) the product
// with its reciprocal is the same real number, hence the same rounded bits.
template <class Host>
struct DecodeHalf {
  float scale, reciprocal;  // reciprocal: 0 unless scale is a power of two
  __device__ typename Host::T operator()(uint16_t h) const {
    const float q = fastDecodeHalf(h);
    return Host::store(reciprocal != 0.0f ? q * reciprocal : q / scale);
  }
};
// 1 / scale where that is exact and scale is a normal power of two, else 0.
float powerOfTwoReciprocal(float scale) {
  const uint32_t x = bitsOf(scale);
  const uint32_t e = (x >> 23) & 0xFFu;
  return (x & 0x807FFFFFu) == 0 && e != 0 && e != 0xFFu ? 1.0f / scale : 0.0f;
}
template <class Host>
struct EncodeBf16 {
  __device__ uint16_t operator()(typename Host::T x) const { return encodeBf16Wire(Host::load(x)); }
};
template <class Host>
struct DecodeBf16 {
  __device__ typename Host::T operator()(uint16_t b) const { return Host::store(decodeBf16Wire(b)); }
};

// --- fp8: groups of threads per scaled block. ------------------------------

constexpr uint32_t kGroupMaxBlock = 4096;  // larger blocks: too few groups to fill the device
constexpr int kRun = 4;                    // elements per access: one 4-byte word of codes

// Threads per block: the smallest power of two >= the block's runs, at most a warp.
unsigned groupSize(uint32_t blockSize) {
  const uint32_t runs = (blockSize + kRun - 1) / kRun;
  unsigned g = 1;
  while (g < runs && g < 32) g *= 2;
  return g;
}

// The thread's group, its lane in it, and the groups of the whole grid. Blocks
// are dealt to groups by a warp-uniform loop (every lane of a warp runs the
// same iterations, as the full-warp shuffles need); a group past the last
// block idles through its last iteration.
struct GroupIndex {
  size_t group, groups;
  unsigned lane, log2G;
  __device__ explicit GroupIndex(unsigned g) {
    log2G = __ffs(g) - 1;
    const size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    group = t >> log2G;
    groups = (size_t(gridDim.x) * blockDim.x) >> log2G;
    lane = threadIdx.x & (g - 1);
  }
};

template <class Host, class Wire>
__global__ void __launch_bounds__(kBlockThreads)
    encodeFp8Groups(const typename Host::T* src, size_t n, uint32_t blockSize, unsigned g, uint8_t* dst) {
  using T = typename Host::T;
  const GroupIndex at(g);
  const size_t blocks = (n + blockSize - 1) / blockSize;
  const size_t warpFirst = at.group & ~size_t((32 >> at.log2G) - 1);  // the warp's first group
  for (size_t base = warpFirst; base < blocks; base += at.groups) {
    const size_t block = base + (at.group - warpFirst), begin = block * blockSize;
    const size_t count = block < blocks ? (n - begin < blockSize ? n - begin : blockSize) : 0;
    const T* in = src + begin;
    uint32_t amax = 0;
#pragma unroll 4
    for (size_t i = size_t(at.lane) * kRun; i < count; i += size_t(g) * kRun) {
      if (i + kRun <= count) {
        const Pack<T, kRun> v = loadPack<T, kRun>(in + i);
#pragma unroll
        for (int k = 0; k < kRun; ++k) amax = max(amax, finiteAbsBits(Host::load(v.v[k])));
      } else {
        for (size_t j = i; j < count; ++j) amax = max(amax, finiteAbsBits(Host::load(in[j])));
      }
    }
    for (unsigned off = g / 2; off > 0; off /= 2) amax = max(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, off));
    if (count == 0) continue;
    const int k = fp8BlockExponent(amax, Wire::kMaxExp);
    uint8_t* out = dst + block * (size_t(blockSize) + 4);
    if (at.lane == 0) *reinterpret_cast<uint32_t*>(out) = bitsOf(powerOfTwo(-k));
    const float mul = powerOfTwo(k);
    for (size_t i = size_t(at.lane) * kRun; i < count; i += size_t(g) * kRun) {
      if (i + kRun <= count) {
        const Pack<T, kRun> v = loadPack<T, kRun>(in + i);
        Pack<uint8_t, kRun> codes;
#pragma unroll
        for (int r = 0; r < kRun; ++r)
          codes.v[r] = Wire::encode(Host::load(v.v[r]) * mul);
        storePack(out + 4 + i, codes);
      } else {
        for (size_t j = i; j < count; ++j)
          out[4 + j] = Wire::encode(Host::load(in[j]) * mul);
      }
    }
  }
}

template <class Host, class Wire>
__global__ void __launch_bounds__(kBlockThreads)
    decodeFp8Groups(const uint8_t* src, size_t n, uint32_t blockSize, unsigned g, typename Host::T* dst) {
  using T = typename Host::T;
  const GroupIndex at(g);
  const size_t blocks = (n + blockSize - 1) / blockSize;
  for (size_t block = at.group; block < blocks; block += at.groups) {
    const size_t begin = block * blockSize, count = n - begin < blockSize ? n - begin : blockSize;
    const uint8_t* in = src + block * (size_t(blockSize) + 4);
    const float scale = floatOf(*reinterpret_cast<const uint32_t*>(in));
    T* out = dst + begin;
    // Not unrolled: the loads are 4 bytes of codes against 8 or 16 written,
    // and unrolling spills the decoders' registers.
    for (size_t i = size_t(at.lane) * kRun; i < count; i += size_t(g) * kRun) {
      if (i + kRun <= count) {
        const Pack<uint8_t, kRun> codes = loadPack<uint8_t, kRun>(in + 4 + i);
        Pack<T, kRun> v;
#pragma unroll
        for (int r = 0; r < kRun; ++r)
          v.v[r] = Host::store(scaleDecoded(Wire::decode(codes.v[r]), scale));
        storePack(out + i, v);
      } else {
        for (size_t j = i; j < count; ++j)
          out[j] = Host::store(scaleDecoded(Wire::decode(in[4 + j]), scale));
      }
    }
  }
}

// Whether the group kernels may run: blocks small enough, values aligned for
// kRun of them (every block then is: blockSize is a multiple of 8), the wire
// aligned for 4-byte words (every header then is).
template <class Host>
bool groupsFit(uint32_t blockSize, const void* values, const void* wire) {
  return blockSize <= kGroupMaxBlock && blockSize % kRun == 0 &&
         reinterpret_cast<uintptr_t>(values) % (kRun * sizeof(typename Host::T)) == 0 &&
         reinterpret_cast<uintptr_t>(wire) % 4 == 0;
}

// --- fp8 fallback: one thread block per scaled block. ----------------------

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
    out[4 + i] = Wire::encode(Host::load(src[begin + i]) * mul);
}

template <class Host, class Wire>
__global__ void decodeFp8Kernel(const uint8_t* src, size_t n, uint32_t blockSize, typename Host::T* dst) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const size_t block = i / blockSize, at = block * (size_t(blockSize) + 4);
    const float q = Wire::decode(src[at + 4 + i % blockSize]);
    dst[i] = Host::store(scaleDecoded(q, loadScale(src + at)));
  }
}

// --- Dispatch. ----------------------------------------------------------------

template <class Host, class Wire>
int encodeFp8(const typename Host::T* src, size_t n, uint32_t blockSize, uint8_t* dst, cudaStream_t s) {
  const size_t blocks = (n + blockSize - 1) / blockSize;
  if (groupsFit<Host>(blockSize, src, dst)) {
    static std::atomic<int> cache{0};
    const auto kernel = &encodeFp8Groups<Host, Wire>;
    const unsigned g = groupSize(blockSize);
    const unsigned grid = gridFor(blocks * g, blocksPerSm(cache, reinterpret_cast<const void*>(kernel)));
    kernel<<<grid, kBlockThreads, 0, s>>>(src, n, blockSize, g, dst);
  } else {
    encodeFp8Kernel<Host, Wire><<<blocks, kBlockThreads, 0, s>>>(src, n, blockSize, dst);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class Host, class Wire>
int decodeFp8(const uint8_t* src, size_t n, uint32_t blockSize, typename Host::T* dst, cudaStream_t s) {
  if (groupsFit<Host>(blockSize, dst, src)) {
    static std::atomic<int> cache{0};
    const auto kernel = &decodeFp8Groups<Host, Wire>;
    const unsigned g = groupSize(blockSize);
    const size_t blocks = (n + blockSize - 1) / blockSize;
    const unsigned grid = gridFor(blocks * g, blocksPerSm(cache, reinterpret_cast<const void*>(kernel)));
    kernel<<<grid, kBlockThreads, 0, s>>>(src, n, blockSize, g, dst);
  } else {
    static std::atomic<int> cache{0};
    const auto kernel = &decodeFp8Kernel<Host, Wire>;
    kernel<<<gridFor(n, blocksPerSm(cache, reinterpret_cast<const void*>(kernel))), kBlockThreads, 0, s>>>(
        src, n, blockSize, dst);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class Host>
int encodeAs(const DeviceCodec& p, const void* src, size_t n, void* dst, cudaStream_t s) {
  using T = typename Host::T;
  const T* in = static_cast<const T*>(src);
  if ((p.format == 2 || p.format == 3) && p.blockSize == 0) return static_cast<int>(cudaErrorInvalidValue);
  switch (p.format) {
    case 0: return launchMap<T, uint16_t>(src, dst, n, EncodeHalf<Host>{p.lossScale}, s);
    case 1: return launchMap<T, uint16_t>(src, dst, n, EncodeBf16<Host>{}, s);
    case 2: return encodeFp8<Host, DevE4m3>(in, n, p.blockSize, static_cast<uint8_t*>(dst), s);
    case 3: return encodeFp8<Host, DevE5m2>(in, n, p.blockSize, static_cast<uint8_t*>(dst), s);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <class Host>
int decodeAs(const DeviceCodec& p, const void* src, size_t n, void* dst, cudaStream_t s) {
  using T = typename Host::T;
  T* out = static_cast<T*>(dst);
  if ((p.format == 2 || p.format == 3) && p.blockSize == 0) return static_cast<int>(cudaErrorInvalidValue);
  switch (p.format) {
    case 0: return launchMap<uint16_t, T>(src, dst, n, DecodeHalf<Host>{p.lossScale, powerOfTwoReciprocal(p.lossScale)}, s);
    case 1: return launchMap<uint16_t, T>(src, dst, n, DecodeBf16<Host>{}, s);
    case 2: return decodeFp8<Host, DevE4m3>(static_cast<const uint8_t*>(src), n, p.blockSize, out, s);
    case 3: return decodeFp8<Host, DevE5m2>(static_cast<const uint8_t*>(src), n, p.blockSize, out, s);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
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
