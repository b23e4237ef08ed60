// braid-perf's command line: nccl-tests' flags, one sub-command per collective.
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "collectives.h"
#include "quant_error.h"

namespace braid::perf {

// How the per-rank times combine into the reported time (-a, as nccl-tests).
enum class TimeReduce { kRank0 = 0, kAverage = 1, kMin = 2, kMax = 3 };

// Where the buffers the collectives get live (--memory).
enum class MemoryKind { kHost, kDevice, kShareable };  // kShareable: host memory from braidMemAlloc

struct PerfOptions {
  const Collective* collective = nullptr;
  size_t minBytes = 32u << 20;
  size_t maxBytes = 32u << 20;
  size_t stepBytes = 1u << 20;
  size_t stepFactor = 1;
  int iters = 20;
  int warmupIters = 5;
  bool check = true;
  std::vector<braidDataType_t> types = {braidFloat32};
  std::vector<braidRedOp_t> ops = {braidSum};
  int root = 0;
  bool blocking = false;
  TimeReduce timeReduce = TimeReduce::kMax;
  std::string algo;  // -A: forced algorithm name, "" for the tuner's choice
  QuantSettings quant;  // -q: codec None runs the plain collective
  MemoryKind memory = MemoryKind::kHost;
  bool cudaStream = false;  // --cuda-stream: the braid stream wraps a cudaStream_t
  bool registerBuffers = false;  // -R 1: braidCommRegister on the buffers, as nccl-tests' -R
};

// Parses argv. On --help or a usage error, prints what CLI11 prints (or the
// reason) and returns std::nullopt with *exitCode set (0 for --help).
std::optional<PerfOptions> parseOptions(int argc, const char* const* argv, int* exitCode);

// BRAID_ALGO value forcing algo for collective, keeping the other collectives'
// entries of the current value ("allreduce:ring;broadcast:chain").
std::string withAlgo(const std::string& current, const std::string& collective, const std::string& algo);

}  // namespace braid::perf
