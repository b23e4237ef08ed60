// reduce(dst, a, b) for every datatype x op (Avg runs the Sum kernel, so it is
// left out), through kernels/reduce.h with the implementation this CPU gets.
#include <benchmark/benchmark.h>

#include "benches.h"
#include "buffers.h"
#include "kernels/reduce.h"

namespace braid::microbench {

void registerReduce() {
  for (int t = 0; t < kNumDataTypes; ++t) {
    const DataType type = static_cast<DataType>(t);
    for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin}) {
      for (size_t bytes : messageSizes()) {
        const std::string name =
            std::string("reduce/") + dataTypeName(type) + "/" + redOpName(op) + "/" + sizeName(bytes);
        benchmark::RegisterBenchmark(name.c_str(), [type, op, bytes](benchmark::State& state) {
          const size_t count = bytes / dataTypeSize(type);
          Buffer a(bytes), b(bytes), dst(bytes);
          fillValues(a, count, type, 1);
          fillValues(b, count, type, 2);
          for (auto _ : state) {
            kernels::reduce(dst.data(), a.data(), b.data(), count, type, op);
            benchmark::DoNotOptimize(dst.data());
            benchmark::ClobberMemory();
          }
          state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
          state.SetLabel(kernels::implementationName());
        });
      }
    }
  }
}

}  // namespace braid::microbench
