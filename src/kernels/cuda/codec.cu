// Wire codecs on device memory (codec.h's formats and layout), built from the
// CPU's own per-element code (codec_scalar.h) with the narrow conversions done
// by the device's instructions (convert_fast.h, patched to convert_impl.h's
// bits), so the bytes on the wire and the decoded values are those the host
// codecs produce.
//
// fp16 / bf16: launch.h's element-wise kernel (16-byte vectors where the
// pointers allow, one element at a time elsewhere); bf16 values eight at a
// time through the pair conversions where none is inf or NaN.
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
// one-element-per-thread loops) instead. Where every full block is the same
// whole number of runs per lane, groups hold a block in registers and load
// the next ones meanwhile (the register paths below).
#include <cuda_runtime.h>

#include "kernels/codec_scalar.h"
#include "kernels/cuda/convert_fast.h"
#include "kernels/cuda/fp8_words.h"
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
    if constexpr (HasPack<F>::value) {
      if (f.pack(in.v, out.v)) {
        storePack(dst + i, out);
        return;
      }
    }
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
//
// bf16 values also go eight at a time (pack) where none is inf or NaN and the
// scale is finite: the products are then finite, clamped as encodeHalfWire
// clamps them, and converted two per instruction, which rounds as the
// single conversion does; fastEncodeHalf's NaN select has nothing to do.
// Per element that is some six instructions against sixteen (an H200 ran
// the per-element form at 0.75 of a copy).
template <class Host>
struct EncodeHalf {
  static constexpr bool kHasPack = std::is_same_v<Host, DevBf16>;
  float scale;
  bool finiteScale;
  __device__ uint16_t operator()(typename Host::T v) const {
    const float x = Host::load(v);
    float y = x * scale;
    if (isFiniteBits(bitsOf(x))) y = clampTo(y, kHalfMax);
    return fastEncodeHalf(y);
  }
  __device__ bool pack(const uint16_t (&in)[8], uint16_t (&out)[8]) const {
    if (!finiteScale) return false;
    uint32_t w[4], o[4];
    __builtin_memcpy(w, in, sizeof(w));
    if (anyInfOrNan16<kBf16Exponent>(w)) return false;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float lo = clampTo(floatOf(w[k] << 16) * scale, kHalfMax);
      const float hi = clampTo(floatOf(w[k] & 0xFFFF0000u) * scale, kHalfMax);
      asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(o[k]) : "f"(hi), "f"(lo));
    }
    __builtin_memcpy(out, o, sizeof(o));
    return true;
  }
};
// decodeHalfWire: value / scale. A division costs the device a dozen
// instructions; for a power-of-two scale (the usual loss scales) the product
// with its reciprocal is the same real number, hence the same rounded bits.
//
// To bf16 values, eight codes at a time (pack) where none is inf or NaN and the
// scale is a power of two whose reciprocal keeps every product below bf16's
// largest (|q| <= 65504, reciprocal <= 2^111): HostBf16::store's clamp then
// has nothing to do and its rounding is the pair conversion's.
template <class Host>
struct DecodeHalf {
  static constexpr bool kHasPack = std::is_same_v<Host, DevBf16>;
  float scale, reciprocal;  // reciprocal: 0 unless scale is a power of two
  bool plainReciprocal;     // reciprocal is nonzero and at most 2^111
  __device__ typename Host::T operator()(uint16_t h) const {
    const float q = fastDecodeHalf(h);
    return Host::store(reciprocal != 0.0f ? q * reciprocal : q / scale);
  }
  __device__ bool pack(const uint16_t (&in)[8], uint16_t (&out)[8]) const {
    if (!plainReciprocal) return false;
    uint32_t w[4], o[4];
    __builtin_memcpy(w, in, sizeof(w));
    if (anyInfOrNan16<kHalfExponent>(w)) return false;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float lo = hwHalfToFloat(static_cast<uint16_t>(w[k])) * reciprocal;
      const float hi = hwHalfToFloat(static_cast<uint16_t>(w[k] >> 16)) * reciprocal;
      asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(o[k]) : "f"(hi), "f"(lo));
    }
    __builtin_memcpy(out, o, sizeof(o));
    return true;
  }
};
// 1 / scale where that is exact and scale is a normal power of two, else 0.
float powerOfTwoReciprocal(float scale) {
  const uint32_t x = bitsOf(scale);
  const uint32_t e = (x >> 23) & 0xFFu;
  return (x & 0x807FFFFFu) == 0 && e != 0 && e != 0xFFu ? 1.0f / scale : 0.0f;
}
template <class Host>
DecodeHalf<Host> decodeHalfFor(float scale) {
  const float reciprocal = powerOfTwoReciprocal(scale);
  return {scale, reciprocal, reciprocal != 0.0f && reciprocal <= 0x1p111f};
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

// --- fp8 blocks held in registers. -------------------------------------------
//
// Where a block is a whole number R (1, 2 or 4) of runs per lane, a group
// loads its block once into registers, takes the amax there and encodes from
// there; the per-run bounds checks and the second pass of the general loop
// (about 45 instructions an element, against some ten here: an H200 issued
// instructions, not bytes, at 0.5 of a copy) are gone. Non-finite values are
// rare and need convert_fast.h's patches and an amax over finite values only,
// so a warp that meets one takes the patched per-element path; otherwise the
// scaled values are finite and at most the format's largest (the block
// exponent sees to it), which the saturating pair conversions round exactly
// as convert_impl.h does, two codes per instruction.

// Pair conversions, sm_89 and later (the module is built for sm_90).
struct E4m3Pairs {
  // Four finite values, |x| <= 448, to four codes (x0 the low byte).
  __device__ static uint32_t encodeFour(float x0, float x1, float x2, float x3) {
    uint16_t lo = 0, hi = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(x1), "f"(x0));
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(x3), "f"(x2));
#endif
    return uint32_t(lo) | (uint32_t(hi) << 16);
  }
  // Codes 2 * pair and 2 * pair + 1 as an fp16 pair; not for NaN codes.
  __device__ static uint32_t halves(uint32_t codes, int pair) { return E4m3Words::widen(codes, pair); }
  // Whether any of four codes is a NaN (S.1111.111): the low seven bits plus one carry into bit 7.
  __device__ static bool anyNan(uint32_t codes) {
    return (((codes & 0x7F7F7F7Fu) + 0x01010101u) & 0x80808080u) != 0;
  }
};
struct E5m2Pairs {
  __device__ static uint32_t encodeFour(float x0, float x1, float x2, float x3) {
    uint16_t lo = 0, hi = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(x1), "f"(x0));
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(x3), "f"(x2));
#endif
    return uint32_t(lo) | (uint32_t(hi) << 16);
  }
  __device__ static uint32_t halves(uint32_t codes, int pair) { return E5m2Words::widen(codes, pair); }
  // NaN codes are S.11111.01 to .11: the low seven bits plus three carry into bit 7 (inf, .00, does not).
  __device__ static bool anyNan(uint32_t codes) {
    return (((codes & 0x7F7F7F7Fu) + 0x03030303u) & 0x80808080u) != 0;
  }
};
template <class Wire>
using PairsOf = std::conditional_t<Wire::kMaxExp == E4m3Wire::kMaxExp, E4m3Pairs, E5m2Pairs>;

// Two unsigned 16-bit maxima at once.
__device__ __forceinline__ uint32_t maxU16x2(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t m;
  asm("max.u16x2 %0, %1, %2;" : "=r"(m) : "r"(a), "r"(b));
  return m;
#else
  return __vmaxu2(a, b);
#endif
}

// Host values as fp32 and back where no NaN is among them (the fast paths):
// bf16 widens by a shift and narrows with the device's pair conversion,
// which rounds to nearest even as encodeBf16 does.
template <class Host>
struct PlainHost;
template <>
struct PlainHost<DevF32> {
  __device__ static float widen(float v) { return v; }
  // The bits of the largest |x| of a lane's runs (for non-negative floats the
  // bit order is the value order).
  template <int R>
  __device__ static uint32_t absMaxBits(const Pack<float, kRun> (&v)[R]) {
    uint32_t amax = 0;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int k = 0; k < kRun; ++k) amax = max(amax, bitsOf(v[r].v[k]) & kAbsMask);
    return amax;
  }
  __device__ static void narrowFour(const float (&x)[kRun], float* out) {
    for (int k = 0; k < kRun; ++k) out[k] = x[k];
  }
};
template <>
struct PlainHost<DevBf16> {
  __device__ static float widen(uint16_t v) { return floatOf(uint32_t(v) << 16); }
  // As for fp32, over the 16-bit codes two at a time: bf16 is fp32's top half,
  // so the widened bits' maximum is the codes' maximum shifted. Two
  // instructions per pair of values, against three per value widened.
  template <int R>
  __device__ static uint32_t absMaxBits(const Pack<uint16_t, kRun> (&v)[R]) {
    uint32_t pairMax = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      uint32_t w[kRun / 2];
      __builtin_memcpy(w, v[r].v, sizeof(w));
#pragma unroll
      for (int k = 0; k < kRun / 2; ++k) pairMax = maxU16x2(pairMax, w[k] & 0x7FFF7FFFu);
    }
    return max(pairMax & 0xFFFFu, pairMax >> 16) << 16;
  }
  __device__ static void narrowFour(const float (&x)[kRun], uint16_t* out) {
    for (int k = 0; k < kRun; k += 2) {
      uint32_t pair;
      asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(x[k + 1]), "f"(x[k]));
      out[k] = static_cast<uint16_t>(pair);
      out[k + 1] = static_cast<uint16_t>(pair >> 16);
    }
  }
};

// Straight-line (a loop over g / 2, g / 4, ... cost each lane some thirty
// instructions a block); off < g is the same for the whole warp.
__device__ __forceinline__ uint32_t groupMax(uint32_t v, unsigned g) {
#pragma unroll
  for (unsigned off = 16; off > 0; off /= 2)
    if (off < g) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, off));
  return v;
}

// Blocks whose loads a group keeps in flight while it works on one (the
// register paths). On an H200 at 64 MiB, three made encodes slower than one
// (bf16 values 0.63 -> 0.48 of a copy: more registers, fewer warps) and
// decodes a little faster (0.84 -> 0.85). Two, with bf16's narrower groups
// (encodeGroupSize), took bf16 encodes from 0.85 to 0.80.
constexpr int kEncodeInFlight = 1, kDecodeInFlight = 3;

// The loads of the blocks after the one being worked on, oldest first:
// kInFlight - 1 of them wait here while the newest is issued.
template <class Loaded, int kInFlight>
struct LoadQueue {
  Loaded waiting[kInFlight > 1 ? kInFlight - 1 : 1];
  // Takes the oldest load out (the next block's) and queues the newest.
  __device__ Loaded next(const Loaded& newest) {
    if constexpr (kInFlight == 1) {
      return newest;
    } else {
      const Loaded oldest = waiting[0];
#pragma unroll
      for (int k = 0; k + 1 < kInFlight - 1; ++k) waiting[k] = waiting[k + 1];
      waiting[kInFlight - 2] = newest;
      return oldest;
    }
  }
};

// A lane's R runs of one full block.
template <class T, int R>
struct BlockValues {
  Pack<T, kRun> v[R];
};
template <class T, int R>
__device__ __forceinline__ BlockValues<T, R> loadBlockValues(const T* in, unsigned lane, unsigned g) {
  BlockValues<T, R> b;
#pragma unroll
  for (int r = 0; r < R; ++r) b.v[r] = loadPack<T, kRun>(in + (size_t(r) * g + lane) * kRun);
  return b;
}

// One full block per group, its values loaded. Every lane of the warp calls
// it (the shuffles and the vote are the warp's).
template <class Host, class Wire, int R>
__device__ __forceinline__ void encodeBlockInRegisters(const BlockValues<typename Host::T, R>& values,
                                                       uint8_t* out, unsigned lane, unsigned g) {
  const auto& v = values.v;
  uint32_t amax = groupMax(PlainHost<Host>::template absMaxBits<R>(v), g);
  const bool plain = !__any_sync(0xFFFFFFFFu, amax >= kInfBits);
  if (!plain) {  // a NaN or inf in the warp: the amax over finite values only
    amax = 0;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int k = 0; k < kRun; ++k) amax = max(amax, finiteAbsBits(Host::load(v[r].v[k])));
    amax = groupMax(amax, g);
  }
  const int e = fp8BlockExponent(amax, Wire::kMaxExp);
  if (lane == 0) *reinterpret_cast<uint32_t*>(out) = bitsOf(powerOfTwo(-e));
  const float mul = powerOfTwo(e);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    uint32_t codes;
    if (plain) {
      float x[kRun];
#pragma unroll
      for (int k = 0; k < kRun; ++k) x[k] = PlainHost<Host>::widen(v[r].v[k]) * mul;
      codes = PairsOf<Wire>::encodeFour(x[0], x[1], x[2], x[3]);
    } else {
      Pack<uint8_t, kRun> c;
#pragma unroll
      for (int k = 0; k < kRun; ++k) c.v[k] = Wire::encode(Host::load(v[r].v[k]) * mul);
      __builtin_memcpy(&codes, c.v, 4);
    }
    *reinterpret_cast<uint32_t*>(out + 4 + (size_t(r) * g + lane) * kRun) = codes;
  }
}

// The general loop: any block (a short last one too), any number of runs.
template <class Host, class Wire>
__device__ void encodeBlockInLoop(const typename Host::T* in, size_t count, uint8_t* out, unsigned lane,
                                  unsigned g) {
  using T = typename Host::T;
  uint32_t amax = 0;
#pragma unroll 4
  for (size_t i = size_t(lane) * kRun; i < count; i += size_t(g) * kRun) {
    if (i + kRun <= count) {
      const Pack<T, kRun> v = loadPack<T, kRun>(in + i);
#pragma unroll
      for (int k = 0; k < kRun; ++k) amax = max(amax, finiteAbsBits(Host::load(v.v[k])));
    } else {
      for (size_t j = i; j < count; ++j) amax = max(amax, finiteAbsBits(Host::load(in[j])));
    }
  }
  amax = groupMax(amax, g);
  if (count == 0) return;
  const int k = fp8BlockExponent(amax, Wire::kMaxExp);
  if (lane == 0) *reinterpret_cast<uint32_t*>(out) = bitsOf(powerOfTwo(-k));
  const float mul = powerOfTwo(k);
  for (size_t i = size_t(lane) * kRun; i < count; i += size_t(g) * kRun) {
    if (i + kRun <= count) {
      const Pack<T, kRun> v = loadPack<T, kRun>(in + i);
      Pack<uint8_t, kRun> codes;
#pragma unroll
      for (int r = 0; r < kRun; ++r) codes.v[r] = Wire::encode(Host::load(v.v[r]) * mul);
      storePack(out + 4 + i, codes);
    } else {
      for (size_t j = i; j < count; ++j) out[4 + j] = Wire::encode(Host::load(in[j]) * mul);
    }
  }
}

// R: runs per lane when every block but a short last one is R runs per lane
// (the register path), 0 otherwise (the general loop throughout).
template <class Host, class Wire, int R>
__global__ void __launch_bounds__(kBlockThreads)
    encodeFp8Groups(const typename Host::T* src, size_t n, uint32_t blockSize, unsigned g, uint8_t* dst) {
  const GroupIndex at(g);
  const size_t blocks = (n + blockSize - 1) / blockSize, fullBlocks = n / blockSize;
  const size_t groupsPerWarp = 32 >> at.log2G;
  const size_t warpFirst = at.group & ~(groupsPerWarp - 1);  // the warp's first group
  const size_t mine = at.group - warpFirst;                  // this group's block is base + mine
  size_t base = warpFirst;
  if constexpr (R > 0) {
    // While every group of the warp has a full block: the next kEncodeAhead
    // blocks' values load while this one's are encoded, so that a warp keeps
    // loads in flight across the shuffles and the stores.
    using Values = BlockValues<typename Host::T, R>;
    const auto full = [&](size_t b) {
      return b + groupsPerWarp <= fullBlocks;
    };  // the same for the whole warp
    const auto load = [&](size_t b) {
      return loadBlockValues<typename Host::T, R>(src + (b + mine) * blockSize, at.lane, g);
    };
    if (full(base)) {
      Values current = load(base);
      LoadQueue<Values, kEncodeInFlight> queue;
#pragma unroll
      for (int k = 0; k + 1 < kEncodeInFlight; ++k)
        if (full(base + (k + 1) * at.groups)) queue.waiting[k] = load(base + (k + 1) * at.groups);
      for (;;) {
        const size_t newest = base + kEncodeInFlight * at.groups;
        Values incoming;
        if (full(newest)) incoming = load(newest);
        encodeBlockInRegisters<Host, Wire, R>(current, dst + (base + mine) * (size_t(blockSize) + 4), at.lane,
                                              g);
        base += at.groups;
        if (!full(base)) break;
        current = queue.next(incoming);
      }
    }
  }
  for (; base < blocks; base += at.groups) {
    const size_t block = base + mine, begin = block * blockSize;
    const size_t count = block < blocks ? (n - begin < blockSize ? n - begin : blockSize) : 0;
    encodeBlockInLoop<Host, Wire>(src + begin, count, dst + block * (size_t(blockSize) + 4), at.lane, g);
  }
}

// Decodes: no shuffles, so each group decides for itself. A full block whose
// scale keeps every product finite (q * scale < 2^127 for |q| <= 57344 when
// scale <= 2^111, so scaleDecoded's clamp cannot act) and whose run of four
// codes has no NaN goes through the pair conversions.
constexpr float kPlainScaleMax = 0x1p111f;

template <class Host, class Wire>
__device__ __forceinline__ void decodeRun(uint32_t codes, typename Host::T* out, float scale,
                                          bool plainScale) {
  using T = typename Host::T;
  Pack<T, kRun> v;
  if (plainScale && !PairsOf<Wire>::anyNan(codes)) {
    float x[kRun];
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      const uint32_t h2 = PairsOf<Wire>::halves(codes, pair);
      x[2 * pair] = hwHalfToFloat(static_cast<uint16_t>(h2)) * scale;
      x[2 * pair + 1] = hwHalfToFloat(static_cast<uint16_t>(h2 >> 16)) * scale;
    }
    PlainHost<Host>::narrowFour(x, v.v);
  } else {
#pragma unroll
    for (int r = 0; r < kRun; ++r)
      v.v[r] = Host::store(scaleDecoded(Wire::decode(static_cast<uint8_t>(codes >> (8 * r))), scale));
  }
  storePack(out, v);
}

// A lane's R words of codes of one full block, and the block's scale.
template <int R>
struct BlockCodes {
  float scale;
  uint32_t codes[R];
};
template <int R>
__device__ __forceinline__ BlockCodes<R> loadBlockCodes(const uint8_t* in, unsigned lane, unsigned g) {
  BlockCodes<R> b;
  b.scale = floatOf(*reinterpret_cast<const uint32_t*>(in));
#pragma unroll
  for (int r = 0; r < R; ++r)
    b.codes[r] = *reinterpret_cast<const uint32_t*>(in + 4 + (size_t(r) * g + lane) * kRun);
  return b;
}

// R as for encodeFp8Groups. Full blocks load the next block's codes while
// this one's are decoded and stored.
template <class Host, class Wire, int R>
__global__ void __launch_bounds__(kBlockThreads)
    decodeFp8Groups(const uint8_t* src, size_t n, uint32_t blockSize, unsigned g, typename Host::T* dst) {
  using T = typename Host::T;
  const GroupIndex at(g);
  const size_t blocks = (n + blockSize - 1) / blockSize, fullBlocks = n / blockSize;
  const size_t wireBlock = size_t(blockSize) + 4;
  size_t block = at.group;
  if constexpr (R > 0) {
    const auto load = [&](size_t b) { return loadBlockCodes<R>(src + b * wireBlock, at.lane, g); };
    if (block < fullBlocks) {
      BlockCodes<R> current = load(block);
      LoadQueue<BlockCodes<R>, kDecodeInFlight> queue;
#pragma unroll
      for (int k = 0; k + 1 < kDecodeInFlight; ++k)
        if (block + (k + 1) * at.groups < fullBlocks) queue.waiting[k] = load(block + (k + 1) * at.groups);
      for (;;) {
        const size_t newest = block + kDecodeInFlight * at.groups;
        BlockCodes<R> incoming;
        if (newest < fullBlocks) incoming = load(newest);
        T* out = dst + block * blockSize;
        const bool plainScale = current.scale <= kPlainScaleMax;
#pragma unroll
        for (int r = 0; r < R; ++r)
          decodeRun<Host, Wire>(current.codes[r], out + (size_t(r) * g + at.lane) * kRun, current.scale,
                                plainScale);
        block += at.groups;
        if (block >= fullBlocks) break;
        current = queue.next(incoming);
      }
    }
  }
  for (; block < blocks; block += at.groups) {
    const size_t begin = block * blockSize, count = n - begin < blockSize ? n - begin : blockSize;
    const uint8_t* in = src + block * (size_t(blockSize) + 4);
    const float scale = floatOf(*reinterpret_cast<const uint32_t*>(in));
    const bool plainScale = scale <= kPlainScaleMax;
    T* out = dst + begin;
    // Not unrolled: the loads are 4 bytes of codes against 8 or 16 written,
    // and unrolling spills the decoders' registers.
    for (size_t i = size_t(at.lane) * kRun; i < count; i += size_t(g) * kRun) {
      if (i + kRun <= count) {
        decodeRun<Host, Wire>(*reinterpret_cast<const uint32_t*>(in + 4 + i), out + i, scale, plainScale);
      } else {
        for (size_t j = i; j < count; ++j) out[j] = Host::store(scaleDecoded(Wire::decode(in[4 + j]), scale));
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

template <class Host, class Wire, int R>
int launchEncodeGroups(const typename Host::T* src, size_t n, uint32_t blockSize, unsigned g, uint8_t* dst,
                       cudaStream_t s) {
  static std::atomic<int> cache{0};
  const auto kernel = &encodeFp8Groups<Host, Wire, R>;
  const size_t blocks = (n + blockSize - 1) / blockSize;
  const unsigned grid = gridFor(blocks * g, blocksPerSm(cache, reinterpret_cast<const void*>(kernel)));
  kernel<<<grid, kBlockThreads, 0, s>>>(src, n, blockSize, g, dst);
  return static_cast<int>(cudaGetLastError());
}

template <class Host, class Wire, int R>
int launchDecodeGroups(const uint8_t* src, size_t n, uint32_t blockSize, unsigned g, typename Host::T* dst,
                       cudaStream_t s) {
  static std::atomic<int> cache{0};
  const auto kernel = &decodeFp8Groups<Host, Wire, R>;
  const size_t blocks = (n + blockSize - 1) / blockSize;
  const unsigned grid = gridFor(blocks * g, blocksPerSm(cache, reinterpret_cast<const void*>(kernel)));
  kernel<<<grid, kBlockThreads, 0, s>>>(src, n, blockSize, g, dst);
  return static_cast<int>(cudaGetLastError());
}

// Encodes of bf16 values: groups half as wide or narrower, so that a lane
// carries four runs (32 bytes) of a block where the block allows, as fp32's
// lanes carry two at the default block of 256. A warp then keeps as many
// bytes of loads in flight for bf16 as for fp32: on an H200 at 64 MiB and
// blocks of 256, 0.75 -> 0.85 of a copy. fp32 keeps groupSize: narrower
// groups at blocks of 64 lost 0.02 there.
template <class Host>
unsigned encodeGroupSize(uint32_t blockSize) {
  unsigned g = groupSize(blockSize);
  if constexpr (sizeof(typename Host::T) == 2) {
    constexpr uint32_t kRunsWanted = 4;
    const uint32_t runs = blockSize / kRun;
    while (g > 1 && runs % (g / 2) == 0 && runs / (g / 2) <= kRunsWanted) g /= 2;
  }
  return g;
}

// Runs of kRun each lane of a group of g has in a block, when every lane has
// the same whole number of them; 0 otherwise.
inline uint32_t runsPerLane(uint32_t blockSize, unsigned g) {
  const uint32_t runs = blockSize / kRun;
  return runs % g == 0 ? runs / g : 0;
}

template <class Host, class Wire>
int encodeFp8(const typename Host::T* src, size_t n, uint32_t blockSize, uint8_t* dst, cudaStream_t s) {
  const size_t blocks = (n + blockSize - 1) / blockSize;
  if (groupsFit<Host>(blockSize, src, dst)) {
    const unsigned g = encodeGroupSize<Host>(blockSize);
    switch (runsPerLane(blockSize, g)) {
      case 1:
        return launchEncodeGroups<Host, Wire, 1>(src, n, blockSize, g, dst, s);
      case 2:
        return launchEncodeGroups<Host, Wire, 2>(src, n, blockSize, g, dst, s);
      case 4:
        return launchEncodeGroups<Host, Wire, 4>(src, n, blockSize, g, dst, s);
      default:
        return launchEncodeGroups<Host, Wire, 0>(src, n, blockSize, g, dst, s);
    }
  } else {
    encodeFp8Kernel<Host, Wire><<<blocks, kBlockThreads, 0, s>>>(src, n, blockSize, dst);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class Host, class Wire>
int decodeFp8(const uint8_t* src, size_t n, uint32_t blockSize, typename Host::T* dst, cudaStream_t s) {
  if (groupsFit<Host>(blockSize, dst, src)) {
    const unsigned g = groupSize(blockSize);
    switch (runsPerLane(blockSize, g)) {
      case 1:
        return launchDecodeGroups<Host, Wire, 1>(src, n, blockSize, g, dst, s);
      case 2:
        return launchDecodeGroups<Host, Wire, 2>(src, n, blockSize, g, dst, s);
      case 4:
        return launchDecodeGroups<Host, Wire, 4>(src, n, blockSize, g, dst, s);
      default:
        return launchDecodeGroups<Host, Wire, 0>(src, n, blockSize, g, dst, s);
    }
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
    case 0:
      return launchMap<T, uint16_t>(src, dst, n,
                                    EncodeHalf<Host>{p.lossScale, isFiniteBits(bitsOf(p.lossScale))}, s);
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
    case 0:
      return launchMap<uint16_t, T>(src, dst, n, decodeHalfFor<Host>(p.lossScale), s);
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
