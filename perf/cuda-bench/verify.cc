// --verify for reduce and divide (verify_codec.cc: the codecs).
#include "verify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "base/types.h"
#include "buffers.h"
#include "exhaustive.h"
#include "kernels/convert.h"
#include "kernels/reduce.h"

namespace braid::cudabench {

namespace {

constexpr size_t kMaxWrongLines = 40, kMaxNanLines = 5;

std::vector<uint8_t> randomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(rng());
  return v;
}

// Element offsets of d, a and b; inPlace: d is a's buffer (1) or b's (2).
struct Layout {
  size_t d, a, b;
  int inPlace;
};
constexpr Layout kLayouts[] = {{0, 0, 0, 0}, {1, 1, 1, 0}, {3, 3, 3, 0}, {0, 1, 2, 0},
                               {2, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 0, 2}};
// Counts around the vector width, and past one resident wave of threads (the
// loop's two-unit rounds): only the first two layouts at the biggest.
constexpr size_t kCounts[] = {1, 2, 3, 5, 15, 16, 17, 31, 33, 100, 4099, 100003, 5000003};
constexpr size_t kBig = 1000000;

std::string layoutName(const Layout& l) {
  if (l.inPlace)
    return std::string("in place (d = ") + (l.inPlace == 1 ? "a" : "b") + ") +" + std::to_string(l.a);
  return "d+" + std::to_string(l.d) + " a+" + std::to_string(l.a) + " b+" + std::to_string(l.b);
}

// Every pair of codes of a one-byte type, a's code the high byte of the
// index: the fp8 kernels' word forms (kernels/cuda/fp8_words.h) stand on an
// argument about double rounding, and this checks it for every input.
constexpr size_t kAllPairs = 65536;
void allPairs(std::vector<uint8_t>& a, std::vector<uint8_t>& b) {
  a.resize(kAllPairs);
  b.resize(kAllPairs);
  for (size_t i = 0; i < kAllPairs; ++i) {
    a[i] = static_cast<uint8_t>(i >> 8);
    b[i] = static_cast<uint8_t>(i);
  }
}

void verifyReduce(const kernels::DeviceModule& m, cudaStream_t s, VerifyLog& log) {
  for (int t = 0; t < kNumDataTypes && !log.broken(); ++t) {
    const DataType type = static_cast<DataType>(t);
    const size_t es = dataTypeSize(type);
    std::vector<size_t> counts(std::begin(kCounts), std::end(kCounts));
    if (es == 1) counts.push_back(kAllPairs);
    for (size_t n : counts) {
      std::vector<uint8_t> a = randomBytes(n * es, 100 * t + 1), b = randomBytes(n * es, 100 * t + 2);
      if (n == kAllPairs) allPairs(a, b);
      const size_t room = (n + 8) * es;
      DeviceMemory da(room), db(room), dd(room);
      if (!log.check(da.status(), "cudaMalloc") || !log.check(db.status(), "cudaMalloc") ||
          !log.check(dd.status(), "cudaMalloc"))
        return;
      for (int op = 0; op < kNumRedOps; ++op) {
        std::vector<uint8_t> want(n * es), got(n * es);
        kernels::reduce(want.data(), a.data(), b.data(), n, type, static_cast<RedOp>(op));
        const bool arithmetic = op == 0 || op == 1 || op == 4;
        for (const Layout& l : kLayouts) {
          if (n > kBig && &l - kLayouts > 1) break;
          uint8_t* pa = da.get() + l.a * es;
          uint8_t* pb = db.get() + l.b * es;
          uint8_t* pd = l.inPlace == 1 ? pa : l.inPlace == 2 ? pb : dd.get() + l.d * es;
          if (!toDevice(log, s, pa, a) || !toDevice(log, s, pb, b)) return;
          if (!log.check(m.reduce(pd, pa, pb, n, t, op, s), "reduce") ||
              !log.check(cudaStreamSynchronize(s), "reduce (on the device)") || !fromDevice(log, s, got, pd))
            return;
          const std::string key =
              std::string("reduce ") + dataTypeName(type) + " " + redOpName(static_cast<RedOp>(op));
          log.compare(
              key, key + " n=" + std::to_string(n) + " " + layoutName(l), got, want, es,
              [&](size_t i) {
                return arithmetic && isNanOf(&a[i * es], type) && isNanOf(&b[i * es], type) &&
                       isNanOf(&got[i * es], type) && isNanOf(&want[i * es], type);
              },
              [type](const uint8_t* p, size_t) { return isNanOf(p, type); });
        }
      }
    }
  }
}

void verifyDivide(const kernels::DeviceModule& m, cudaStream_t s, VerifyLog& log) {
  const uint64_t divisors[] = {
      1, 3, 7, 128, 255, 256, 65537, 1ull << 31, (1ull << 31) + 1, (1ull << 32) + 3, 1ull << 63, ~0ull};
  for (int t = 0; t < kNumDataTypes && !log.broken(); ++t) {
    const DataType type = static_cast<DataType>(t);
    const size_t es = dataTypeSize(type);
    for (size_t n : {size_t{1}, size_t{3}, size_t{17}, size_t{100}, size_t{4099}, size_t{100003}}) {
      const std::vector<uint8_t> x = randomBytes(n * es, 100 * t + 3);
      DeviceMemory dx((n + 8) * es);
      if (!log.check(dx.status(), "cudaMalloc")) return;
      for (uint64_t divisor : divisors) {
        std::vector<uint8_t> want = x, got(n * es);
        kernels::divideBy(want.data(), n, type, divisor);
        for (size_t off : {size_t{0}, size_t{1}, size_t{3}}) {
          uint8_t* p = dx.get() + off * es;
          if (!toDevice(log, s, p, x) || !log.check(m.divide(p, n, t, divisor, s), "divide") ||
              !log.check(cudaStreamSynchronize(s), "divide (on the device)") || !fromDevice(log, s, got, p))
            return;
          const std::string key = std::string("divide ") + dataTypeName(type);
          log.compare(
              key,
              key + " by " + std::to_string(divisor) + " n=" + std::to_string(n) + " +" + std::to_string(off),
              got, want, es, [](size_t) { return false; },
              [type](const uint8_t* p, size_t) { return isNanOf(p, type); });
        }
      }
    }
  }
}

}  // namespace

bool VerifyLog::check(int err, const std::string& what) {
  if (err == 0) return true;
  if (cudaError_.empty())
    cudaError_ = what + ": " + cudaGetErrorName(static_cast<cudaError_t>(err)) + " (" +
                 cudaGetErrorString(static_cast<cudaError_t>(err)) + ")";
  return false;
}

void VerifyLog::report(const std::string& key, const std::string& what, size_t wrong, size_t nan, size_t n,
                       size_t first, const uint8_t* got, const uint8_t* want, size_t es) {
  Tally& t = tally_[key];
  ++t.cases;
  t.wrongCases += wrong ? 1 : 0;
  t.wrong += wrong;
  t.nanCases += nan ? 1 : 0;
  t.nan += nan;
  if (wrong == 0 && nan == 0) return;
  if (wrong ? lines_++ >= kMaxWrongLines : nanLines_++ >= kMaxNanLines) return;
  std::printf("%s %s: %zu wrong, %zu another NaN, of %zu; first at %zu: got 0x", wrong ? "WRONG" : "NAN  ",
              what.c_str(), wrong, nan, n, first);
  for (size_t k = es; k-- > 0;) std::printf("%02x", got[first * es + k]);
  std::printf(", want 0x");
  for (size_t k = es; k-- > 0;) std::printf("%02x", want[first * es + k]);
  std::printf("\n");
  std::fflush(stdout);
}

bool VerifyLog::finish() const {
  Tally all;
  for (const auto& [key, t] : tally_) {
    all.cases += t.cases;
    all.wrongCases += t.wrongCases;
    all.nanCases += t.nanCases;
    if (t.wrongCases || t.nanCases)
      std::printf("  %-26s %5zu cases: %4zu with wrong values (%zu elements), %4zu with another NaN (%zu)\n",
                  key.c_str(), t.cases, t.wrongCases, t.wrong, t.nanCases, t.nan);
  }
  std::printf(
      "verify: %zu cases, %zu with wrong values, %zu differing only in which NaN (the GPU's canonical "
      "NaN)%s%s\n",
      all.cases, all.wrongCases, all.nanCases, broken() ? "; stopped by " : "", cudaError_.c_str());
  return all.wrongCases == 0 && !broken();
}

bool isNanOf(const uint8_t* p, DataType type) {
  switch (type) {
    case DataType::kFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return std::isnan(kernels::halfToFloat(h));
    }
    case DataType::kBfloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return std::isnan(kernels::bf16ToFloat(h));
    }
    case DataType::kFloat8e4m3:
      return std::isnan(kernels::e4m3ToFloat(*p));
    case DataType::kFloat8e5m2:
      return std::isnan(kernels::e5m2ToFloat(*p));
    case DataType::kFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return std::isnan(f);
    }
    case DataType::kFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return std::isnan(d);
    }
    default:
      return false;
  }
}

// On the stream the kernels run on: a pageable cudaMemcpy may return before
// its DMA lands, and that stream does not wait for the legacy one.
bool toDevice(VerifyLog& log, cudaStream_t s, uint8_t* dst, const std::vector<uint8_t>& src) {
  return log.check(cudaMemcpyAsync(dst, src.data(), src.size(), cudaMemcpyHostToDevice, s),
                   "copy to the device") &&
         log.check(cudaStreamSynchronize(s), "copy to the device");
}

bool fromDevice(VerifyLog& log, cudaStream_t s, std::vector<uint8_t>& dst, const uint8_t* src) {
  return log.check(cudaMemcpyAsync(dst.data(), src, dst.size(), cudaMemcpyDeviceToHost, s),
                   "copy from the device") &&
         log.check(cudaStreamSynchronize(s), "copy from the device");
}

// The module's conversions over every input; false on any difference.
bool verifyConversions(cudaStream_t s, VerifyLog& log) {
  cudaError_t err = cudaSuccess;
  const std::vector<ConversionCheck> checks = checkConversionsExhaustively(s, &err);
  if (!log.check(err, "exhaustive conversion check")) return false;
  bool ok = true;
  for (const ConversionCheck& c : checks) {
    std::printf("%-12s all %llu inputs: %llu differ", c.name.c_str(), (unsigned long long)c.inputs,
                (unsigned long long)c.mismatches);
    if (c.mismatches)
      std::printf(" (first: input 0x%08x gives 0x%08x, reference 0x%08x)", c.firstInput, c.gotBits,
                  c.wantBits);
    std::printf("\n");
    ok = ok && c.mismatches == 0;
  }
  return ok;
}

bool verifyAll(const kernels::DeviceModule& m, cudaStream_t s, const std::vector<std::string>& kernels) {
  const auto wanted = [&](const char* k) {
    return std::find(kernels.begin(), kernels.end(), k) != kernels.end();
  };
  VerifyLog log;
  const bool conversions = verifyConversions(s, log);
  if (wanted("reduce")) verifyReduce(m, s, log);
  if (!log.broken() && wanted("divide")) verifyDivide(m, s, log);
  if (!log.broken() && (wanted("encode") || wanted("decode"))) verifyCodecs(m, s, log);
  return log.finish() && conversions;
}

}  // namespace braid::cudabench
