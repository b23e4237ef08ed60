// braid-microbench: the kernels' throughput beside memcpy. Google Benchmark's
// flags apply, e.g. --benchmark_filter='codec/.*/64MiB' or
// --benchmark_min_time=0.1. See benches.h for what "bytes" means.
#include <benchmark/benchmark.h>

#include "benches.h"
#include "kernels/codec.h"
#include "kernels/reduce.h"

int main(int argc, char** argv) {
  braid::microbench::registerMemcpy();
  braid::microbench::registerReduce();
  braid::microbench::registerCodec();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("braid.reduce", braid::kernels::implementationName());
  benchmark::AddCustomContext("braid.codec", braid::kernels::codecImplementationName());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
