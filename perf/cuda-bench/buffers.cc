#include "buffers.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "kernels/convert.h"

namespace braid::cudabench {

namespace {

// Room past `bytes` for an fp8 wire's block headers.
constexpr size_t kSlack = 64 * 1024;
// The host pattern tiled over the device buffers (generating 256 MiB of
// normal draws per type would cost seconds, and the values' period does not
// matter to bandwidth).
constexpr size_t kPattern = 1 << 20;

template <class T>
void put(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(v));
}

cudaError_t tile(uint8_t* dst, size_t bytes, const std::vector<uint8_t>& pattern) {
  for (size_t at = 0; at < bytes; at += pattern.size()) {
    const cudaError_t err =
        cudaMemcpy(dst + at, pattern.data(), std::min(pattern.size(), bytes - at), cudaMemcpyHostToDevice);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

}  // namespace

std::vector<uint8_t> sampleValues(DataType type, size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  const size_t es = dataTypeSize(type), n = bytes / es;
  std::vector<uint8_t> out(n * es);
  for (size_t i = 0; i < n; ++i) {
    uint8_t* p = &out[i * es];
    switch (type) {
      case DataType::kFloat16:
        put(p, kernels::floatToHalf(normal(rng)));
        break;
      case DataType::kFloat32:
        put(p, normal(rng));
        break;
      case DataType::kFloat64:
        put(p, static_cast<double>(normal(rng)));
        break;
      case DataType::kBfloat16:
        put(p, kernels::floatToBf16(normal(rng)));
        break;
      case DataType::kFloat8e4m3:
        put(p, kernels::floatToE4m3(normal(rng)));
        break;
      case DataType::kFloat8e5m2:
        put(p, kernels::floatToE5m2(normal(rng)));
        break;
      default: {
        const uint64_t bits = rng();
        std::memcpy(p, &bits, es);
      }
    }
  }
  return out;
}

Buffers::Buffers(size_t bytes) : bytes_(bytes), a_(bytes + kSlack), b_(bytes + kSlack), d_(bytes + kSlack) {}

cudaError_t Buffers::status() const {
  for (cudaError_t err : {a_.status(), b_.status(), d_.status()})
    if (err != cudaSuccess) return err;
  return cudaSuccess;
}

cudaError_t Buffers::fill(DataType type) {
  if (filled_ == static_cast<int>(type)) return cudaSuccess;
  filled_ = -1;
  const size_t pattern = std::min(bytes_, kPattern);
  cudaError_t err = tile(a(), bytes_, sampleValues(type, pattern, 1));
  if (err == cudaSuccess) err = tile(b(), bytes_, sampleValues(type, pattern, 2));
  // A pageable cudaMemcpy may return before its DMA lands, and the kernels
  // run on a stream that does not wait for the legacy one.
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err == cudaSuccess) filled_ = static_cast<int>(type);
  return err;
}

}  // namespace braid::cudabench
