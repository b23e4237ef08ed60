// See narrow_avx2_check.h. Compiled with -mavx2 -mf16c -mfma.
#include "narrow_avx2_check.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/codec_avx2_ops.h"

namespace braid::kernels::avx2check {
namespace {

template <class Format>
Mismatches encodeNarrowRangeOf(uint64_t lo, uint64_t hi) {
  Mismatches r;
  constexpr uint32_t kChunk = 1024;
  alignas(32) uint32_t want[kChunk];
  alignas(32) uint32_t got[kChunk];
  for (uint64_t b = lo; b < hi; b += kChunk) {
    const uint32_t base = static_cast<uint32_t>(b);
    const uint32_t n = hi - b < kChunk ? static_cast<uint32_t>(hi - b) : kChunk;
    // The scalar reference, in a loop of its own so that the compiler can
    // vectorise it: the sweep is 2^32 values.
    for (uint32_t i = 0; i < kChunk; ++i) want[i] = Format::encode(base + i);
    __m256i diff = _mm256_setzero_si256();
    for (uint32_t i = 0; i < kChunk; i += 8) {
      const __m256i x = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(base + i)),
                                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      const __m256i c = encodeNarrow<Format>(_mm256_castsi256_ps(x));
      _mm256_store_si256(reinterpret_cast<__m256i*>(got + i), c);
      diff = _mm256_or_si256(
          diff, _mm256_xor_si256(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(want + i))));
    }
    r.checked += n;
    if (_mm256_testz_si256(diff, diff)) continue;
    for (uint32_t i = 0; i < n; ++i) {
      if (got[i] == want[i]) continue;
      if (r.count++ == 0) {
        r.bits = base + i;
        r.got = got[i];
        r.want = want[i];
      }
    }
  }
  return r;
}

template <class Wire>
constexpr int minK() {
  return Wire::kMaxExp - 128;  // fp8BlockExponent of FLT_MAX
}

// Encodes xs (host values of type T, each with |x * 2^k| within the format)
// in blocks of 256 through encodeFp8Block, on the multiply-first path and, for
// the k it is taken for, the fused one, and compares each code with the
// scalar encode of x * 2^k.
template <class H, class Wire, class T>
void compareBlocks(const std::vector<T>& xs, int k, Mismatches& r) {
  using Format = typename Wire::Format;
  constexpr size_t kBlock = 256;
  const float mul = powerOfTwo(k);
  uint8_t out[4 + kBlock];
  for (size_t i = 0; i < xs.size(); i += kBlock) {
    const size_t n = xs.size() - i < kBlock ? xs.size() - i : kBlock;
    for (int fused = 0; fused < (k <= NarrowScale<Format>::kMaxK ? 2 : 1); ++fused) {
      if (fused) {
        encodeFp8Block<H, Wire, true>(xs.data() + i, n, out, k);
      } else {
        encodeFp8Block<H, Wire, false>(xs.data() + i, n, out, k);
      }
      for (size_t j = 0; j < n; ++j) {
        const float x = H::Vec::Scalar::load(xs[i + j]);
        const uint32_t want = Format::encode(bitsOf(x * mul));
        ++r.checked;
        if (out[4 + j] == want) continue;
        if (r.count++ == 0) {
          if constexpr (sizeof(T) == 2) {
            r.bits = xs[i + j];
          } else {
            r.bits = bitsOf(x);
          }
          r.k = k;
          r.got = out[4 + j];
          r.want = want;
        }
      }
    }
  }
}

template <class Wire>
bool withinFormat(float x, int k) {
  const float y = x * powerOfTwo(k);
  return isFiniteBits(bitsOf(x)) && (y < 0 ? -y : y) <= 1.75f * powerOfTwo(Wire::kMaxExp);
}

template <class Wire>
Mismatches fp8BlockF32Of(int k) {
  std::mt19937 rng(static_cast<uint32_t>(k + 1000));
  std::vector<uint32_t> mantissas;
  for (int p = 0; p < 23; ++p) {
    for (uint32_t a = 0; a < 16; ++a) {
      for (int delta = -1; delta <= 1; ++delta) {
        mantissas.push_back(((a << p) + static_cast<uint32_t>(delta)) & 0x7FFFFFu);
      }
    }
  }
  for (int i = 0; i < 64; ++i) mantissas.push_back(rng() & 0x7FFFFFu);
  std::vector<float> xs;
  for (uint32_t e = 0; e < 255; ++e) {
    for (uint32_t m : mantissas) {
      for (uint32_t sign : {0u, 0x80000000u}) {
        const float x = floatOf(sign | (e << 23) | m);
        if (withinFormat<Wire>(x, k)) xs.push_back(x);
      }
    }
  }
  // Shuffled, so that every group of 8 lanes sees mixed signs and magnitudes.
  std::shuffle(xs.begin(), xs.end(), rng);
  Mismatches r;
  compareBlocks<HostF32Fp8, Wire>(xs, k, r);
  return r;
}

template <class Wire>
Mismatches fp8BlockBf16Of(int k) {
  std::vector<uint16_t> xs;
  for (uint32_t c = 0; c < 65536; ++c) {
    if (withinFormat<Wire>(decodeBf16(static_cast<uint16_t>(c)), k)) xs.push_back(static_cast<uint16_t>(c));
  }
  std::mt19937 rng(static_cast<uint32_t>(k + 1000));
  std::shuffle(xs.begin(), xs.end(), rng);
  Mismatches r;
  compareBlocks<HostBf16Fp8, Wire>(xs, k, r);
  return r;
}

}  // namespace

Mismatches encodeNarrowRange(Fp8 format, uint64_t lo, uint64_t hi) {
  return format == Fp8::kE4m3 ? encodeNarrowRangeOf<E4m3Format>(lo, hi)
                              : encodeNarrowRangeOf<E5m2Format>(lo, hi);
}

int minBlockExponent(Fp8 format) { return format == Fp8::kE4m3 ? minK<E4m3Wire>() : minK<E5m2Wire>(); }
int maxFusedExponent(Fp8 format) {
  return format == Fp8::kE4m3 ? NarrowScale<E4m3Format>::kMaxK : NarrowScale<E5m2Format>::kMaxK;
}

Mismatches fp8BlockF32(Fp8 format, int k) {
  return format == Fp8::kE4m3 ? fp8BlockF32Of<E4m3Wire>(k) : fp8BlockF32Of<E5m2Wire>(k);
}
Mismatches fp8BlockBf16(Fp8 format, int k) {
  return format == Fp8::kE4m3 ? fp8BlockBf16Of<E4m3Wire>(k) : fp8BlockBf16Of<E5m2Wire>(k);
}

}  // namespace braid::kernels::avx2check
