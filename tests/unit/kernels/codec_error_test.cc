// The error bounds codec.h promises, asserted element by element on random
// data from several distributions: uniform, normal, heavy-tailed (Cauchy),
// log-uniform over 60 decades, and rows whose scales differ wildly from block
// to block (what fp8's per-block scale is for). Each bound is also checked to
// be nearly reached (the largest ratio is at least 1 / (1 + 2^-m-1), e.g.
// 0.89 for e5m2, at a tie just above a power of two), so a codec that quietly sent more precision (or a bound
// made vacuous by a typo) would fail too.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "codec_reference.h"
#include "kernels/codec.h"

namespace braid::kernels {
namespace {

constexpr size_t kCount = 1 << 16;
constexpr uint32_t kBlock = 256;

struct Distribution {
  const char* name;
  std::function<std::vector<float>(std::mt19937&)> make;
};

std::vector<float> generate(std::mt19937& rng, const std::function<float(std::mt19937&, size_t)>& f) {
  std::vector<float> v(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    v[i] = f(rng, i);
    if (!std::isfinite(v[i])) v[i] = 0;  // special values have tests of their own
  }
  return v;
}

std::vector<Distribution> distributions() {
  return {
      {"uniform",
       [](std::mt19937& r) {
         return generate(
             r, [](std::mt19937& g, size_t) { return std::uniform_real_distribution<float>(-1, 1)(g); });
       }},
      {"normal",
       [](std::mt19937& r) {
         return generate(r,
                         [](std::mt19937& g, size_t) { return std::normal_distribution<float>(0, 1000)(g); });
       }},
      {"cauchy",
       [](std::mt19937& r) {
         return generate(r, [](std::mt19937& g, size_t) { return std::cauchy_distribution<float>(0, 1)(g); });
       }},
      {"log-uniform",
       [](std::mt19937& r) {
         return generate(r, [](std::mt19937& g, size_t) {
           const float mag = std::pow(10.0f, std::uniform_real_distribution<float>(-30, 30)(g));
           return (g() & 1) ? mag : -mag;
         });
       }},
      {"rows",
       [](std::mt19937& r) {
         // Each block of kBlock values has its own scale, 10^-35 .. 10^35.
         std::vector<float> scales(kCount / kBlock);
         for (float& s : scales) s = std::pow(10.0f, std::uniform_real_distribution<float>(-35, 35)(r));
         return generate(r, [&](std::mt19937& g, size_t i) {
           return scales[i / kBlock] * std::normal_distribution<float>(0, 1)(g);
         });
       }},
  };
}

std::vector<float> roundTrip(const CodecParams& p, const std::vector<float>& x) {
  std::vector<uint8_t> wire(encodedBytes(p, x.size()));
  std::vector<float> d(x.size());
  encode(p, x.data(), x.size(), wire.data());
  decode(p, wire.data(), x.size(), d.data());
  return d;
}

// Asserts |d - x| <= bound(i) for every element and returns the largest
// err / bound seen.
double checkBound(const std::string& what, const std::vector<float>& x, const std::vector<float>& d,
                  const std::function<double(size_t)>& bound) {
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double err = std::fabs(static_cast<double>(d[i]) - static_cast<double>(x[i]));
    const double b = bound(i);
    EXPECT_LE(err, b) << what << " element " << i << " x " << x[i] << " decoded " << d[i];
    if (err > b) return worst;  // one report per case is enough
    worst = std::fmax(worst, err / b);
  }
  return worst;
}

TEST(CodecError, Fp16WithinHalfUlpOrSaturated) {
  std::mt19937 rng(1);
  for (const Distribution& dist : distributions()) {
    const std::vector<float> x = dist.make(rng);
    for (float s : {1.0f, 0x1p16f, 0x1p-10f, 3.0f}) {
      const CodecParams p{WireFormat::kFloat16, DataType::kFloat32, s, kBlock};
      const std::vector<float> d = roundTrip(p, x);
      const std::string what = std::string("fp16 ") + dist.name + " scale " + std::to_string(s);
      const float saturated = 65504.0f / s;
      const double worst = checkBound(what, x, d, [&](size_t i) {
        if (!(std::fabs(x[i]) * s <= 65504.0f)) {
          EXPECT_EQ(d[i], std::copysign(saturated, x[i])) << what << " element " << i;
          return static_cast<double>(INFINITY);
        }
        return 0x1p-11 * std::fabs(x[i]) * (1 + 0x1p-9) + 0x1p-25 / s;
      });
      EXPECT_GT(worst, 0.8) << what << ": bound far from reached";
    }
  }
}

TEST(CodecError, Bf16WithinHalfUlp) {
  std::mt19937 rng(2);
  for (const Distribution& dist : distributions()) {
    const std::vector<float> x = dist.make(rng);
    const CodecParams p{WireFormat::kBfloat16, DataType::kFloat32, 1.0f, kBlock};
    const std::vector<float> d = roundTrip(p, x);
    const double worst = checkBound(std::string("bf16 ") + dist.name, x, d,
                                    [&](size_t i) { return 0x1p-8 * std::fabs(x[i]) + 0x1p-134; });
    EXPECT_GT(worst, 0.8) << dist.name;
  }
}

// fp8: |d - x| <= max(2^-m |x|, 2^-f amax) + 2^-t per element, amax over the
// element's block (m: half an ulp; f: half the smallest subnormal under the
// block's scale; t: the floor for blocks below about 2^-118).
void checkFp8(WireFormat format, int m, int f, int t) {
  std::mt19937 rng(3);
  for (const Distribution& dist : distributions()) {
    const std::vector<float> x = dist.make(rng);
    for (uint32_t block : {kBlock, 128u, 8u}) {
      const CodecParams p{format, DataType::kFloat32, 1.0f, block};
      const std::vector<float> d = roundTrip(p, x);
      std::vector<double> amax(x.size() / block + 1, 0.0);
      for (size_t i = 0; i < x.size(); ++i) amax[i / block] = std::fmax(amax[i / block], std::fabs(x[i]));
      const std::string what =
          std::string(wireFormatName(format)) + " " + dist.name + " block " + std::to_string(block);
      const double worst = checkBound(what, x, d, [&](size_t i) {
        return std::fmax(std::ldexp(std::fabs(x[i]), -m), std::ldexp(amax[i / block], -f)) +
               std::ldexp(1.0, -t);
      });
      EXPECT_GT(worst, 0.8) << what << ": bound far from reached";
    }
  }
}

TEST(CodecError, E4m3BlockRelative) { checkFp8(WireFormat::kFloat8e4m3, 4, 17, 135); }
TEST(CodecError, E5m2BlockRelative) { checkFp8(WireFormat::kFloat8e5m2, 3, 31, 142); }

// Blocks far below fp32's normal range still meet the bound through its floor.
TEST(CodecError, Fp8TinyBlocks) {
  std::vector<float> x(kBlock);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(static_cast<float>(i) - 128.0f, -135);
  for (auto [format, m, f, t] :
       {std::tuple{WireFormat::kFloat8e4m3, 4, 17, 135}, std::tuple{WireFormat::kFloat8e5m2, 3, 31, 142}}) {
    const CodecParams p{format, DataType::kFloat32, 1.0f, kBlock};
    const std::vector<float> d = roundTrip(p, x);
    const double amax = 0x1p-128;
    // Copies: clang before 16 cannot capture structured bindings (C++20 allows it).
    checkBound(wireFormatName(format), x, d, [&, m = m, f = f, t = t](size_t i) {
      return std::fmax(std::ldexp(std::fabs(x[i]), -m), std::ldexp(amax, -f)) + std::ldexp(1.0, -t);
    });
  }
}

}  // namespace
}  // namespace braid::kernels
