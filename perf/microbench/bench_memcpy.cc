// memcpy of each message size: the ceiling the kernels are measured against
// (a kernel reading one message and writing one can at best match it).
#include <benchmark/benchmark.h>

#include <cstring>

#include "benches.h"
#include "buffers.h"

namespace braid::microbench {

void registerMemcpy() {
  for (size_t bytes : messageSizes()) {
    benchmark::RegisterBenchmark(("memcpy/" + sizeName(bytes)).c_str(), [bytes](benchmark::State& state) {
      Buffer src(bytes), dst(bytes);
      std::memset(src.data(), 1, bytes);
      for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), bytes);
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
      }
      state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
    });
  }
}

}  // namespace braid::microbench
