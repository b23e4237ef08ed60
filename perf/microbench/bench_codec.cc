// encode / decode of every wire format from fp32 and bf16, with the vector
// implementation this CPU gets and with the portable baseline (forced through
// the kernels' test hook for the duration of the benchmark).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "benches.h"
#include "buffers.h"
#include "kernels/codec.h"
#include "kernels/convert.h"
#include "kernels/dispatch.h"

namespace braid::microbench {
namespace {

using kernels::CodecParams;
using kernels::WireFormat;

// Host values from N(0, 1), in the host type.
void fillHost(Buffer& buf, size_t count, DataType host) {
  std::vector<float> f(count);
  fillNormalFloats(f.data(), count, 7);
  if (host == DataType::kFloat32) {
    std::memcpy(buf.data(), f.data(), count * 4);
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint16_t b = kernels::floatToBf16(f[i]);
    std::memcpy(buf.data() + 2 * i, &b, 2);
  }
}

void run(benchmark::State& state, const CodecParams& p, bool encode, bool baseline, size_t bytes) {
  const size_t count = bytes / dataTypeSize(p.hostType);
  Buffer host(bytes), wire(kernels::encodedBytes(p, count));
  fillHost(host, count, p.hostType);
  kernels::encode(p, host.data(), count, wire.data());
  kernels::forceBaselineForTesting(baseline);
  state.SetLabel(kernels::codecImplementationName());
  for (auto _ : state) {
    if (encode) {
      kernels::encode(p, host.data(), count, wire.data());
      benchmark::DoNotOptimize(wire.data());
    } else {
      kernels::decode(p, wire.data(), count, host.data());
      benchmark::DoNotOptimize(host.data());
    }
    benchmark::ClobberMemory();
  }
  kernels::forceBaselineForTesting(false);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

}  // namespace

void registerCodec() {
  const bool hasVector = kernels::cpuSupportsAvx2() && kernels::avx2Kernels() != nullptr;
  for (WireFormat f :
       {WireFormat::kFloat16, WireFormat::kBfloat16, WireFormat::kFloat8e4m3, WireFormat::kFloat8e5m2}) {
    for (DataType host : {DataType::kFloat32, DataType::kBfloat16}) {
      const CodecParams p{f, host, 1.0f, kernels::kDefaultFp8BlockSize};
      for (bool encode : {true, false}) {
        for (bool baseline : {false, true}) {
          if (baseline && !hasVector) continue;  // the first run already was the baseline
          for (size_t bytes : messageSizes()) {
            const std::string name = std::string("codec/") + kernels::wireFormatName(f) + "/" +
                                     dataTypeName(host) + (encode ? "/encode/" : "/decode/") +
                                     (baseline ? "baseline/" : "best/") + sizeName(bytes);
            benchmark::RegisterBenchmark(
                name.c_str(), [=](benchmark::State& state) { run(state, p, encode, baseline, bytes); });
          }
        }
      }
    }
  }
}

}  // namespace braid::microbench
