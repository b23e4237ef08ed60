// --verify: the module's kernels against the CPU kernels (kernels/reduce.h,
// kernels/codec.h), bit for bit, at sizes that leave heads and tails around
// the vectors, at sizes big enough for several grid-stride rounds, with
// pointers offset from 16-byte alignment (together, so the vectors start
// after a scalar head, and apart, so only the scalar path can run), and in
// place. Where reduce.h leaves a NaN's payload to the hardware (Sum / Prod /
// Avg of two NaNs) a NaN for a NaN is a match, as in tests/unit/kernels.
// Exit status of --verify: nonzero only for wrong values (see VerifyLog).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/types.h"
#include "kernels/device_module.h"

namespace braid::cudabench {

// Counts cases per kernel (the `key`: "reduce half sum", "encode e4m3 float"),
// prints the first differences, remembers a CUDA failure (after which nothing
// more is run: the device may be unusable).
//
// Two kinds of difference: wrong values, and a NaN where the CPU has another
// NaN. The second is the GPU's arithmetic, not the kernels' loops: its fp32
// add / mul / div return the canonical NaN (0x7FFFFFFF) for a NaN operand,
// where x86 returns that operand (quieted, sign and payload kept). It shows
// wherever a NaN goes through such an operation (reduce Sum / Prod / Avg of
// one NaN, divide, the fp16 loss scale, fp8 scaling), against reduce.h's and
// codec.h's promise of the operand's payload and sign; it is reported apart,
// and does not fail the check, so that the check tells about the loops.
class VerifyLog {
 public:
  // One comparison of elements of `es` bytes. excused(i): a difference the
  // contract allows (reduce.h: Sum / Prod / Avg of two NaNs); isNan(p, i):
  // element i, at p, is a NaN. Returns false on wrong values.
  template <class Excused, class IsNan>
  bool compare(const std::string& key, const std::string& what, const std::vector<uint8_t>& got,
               const std::vector<uint8_t>& want, size_t es, Excused excused, IsNan isNan);
  // False (and remembered) when err is not success.
  bool check(int err, const std::string& what);
  bool broken() const { return !cudaError_.empty(); }
  // Prints the summary; true when no value was wrong and nothing failed.
  bool finish() const;

 private:
  struct Tally {
    size_t cases = 0, wrongCases = 0, wrong = 0, nanCases = 0, nan = 0;
  };
  void report(const std::string& key, const std::string& what, size_t wrong, size_t nan, size_t n,
              size_t first, const uint8_t* got, const uint8_t* want, size_t es);
  std::map<std::string, Tally> tally_;
  size_t lines_ = 0, nanLines_ = 0;
  std::string cudaError_;
};

// Host bytes to device memory and back, finished on return.
bool toDevice(VerifyLog& log, cudaStream_t s, uint8_t* dst, const std::vector<uint8_t>& src);
bool fromDevice(VerifyLog& log, cudaStream_t s, std::vector<uint8_t>& dst, const uint8_t* src);

// Whether the element of `type` at p is a NaN (integers never are).
bool isNanOf(const uint8_t* p, DataType type);

// kernels: which of reduce, divide, encode, decode to check (encode and
// decode are checked together: a codec's decode reads the CPU's wire).
bool verifyAll(const kernels::DeviceModule& m, cudaStream_t stream, const std::vector<std::string>& kernels);
void verifyCodecs(const kernels::DeviceModule& m, cudaStream_t stream, VerifyLog& log);

template <class Excused, class IsNan>
bool VerifyLog::compare(const std::string& key, const std::string& what, const std::vector<uint8_t>& got,
                        const std::vector<uint8_t>& want, size_t es, Excused excused, IsNan isNan) {
  const size_t n = want.size() / es;
  size_t wrong = 0, nan = 0, firstWrong = n, firstNan = n;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t *g = &got[i * es], *w = &want[i * es];
    if (__builtin_memcmp(g, w, es) == 0 || excused(i)) continue;
    if (isNan(g, i) && isNan(w, i)) {
      if (nan++ == 0) firstNan = i;
    } else if (wrong++ == 0) {
      firstWrong = i;
    }
  }
  const size_t first = wrong ? firstWrong : firstNan;
  report(key, what, wrong, nan, n, first, got.data(), want.data(), es);
  return wrong == 0;
}

}  // namespace braid::cudabench
