// braid-cuda-bench's command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace braid::cudabench {

struct Options {
  std::vector<size_t> sizes;         // bytes of each kernel's host-typed buffer
  std::vector<std::string> kernels;  // of reduce, divide, encode, decode (the copy always runs)
  int warmup = 5;                    // untimed launches before each row
  int iters = 20;                    // launches between the two events of one repetition
  int reps = 7;                      // repetitions; the row reports their median
  uint64_t divisor = 3;              // divide's divisor
  uint32_t fp8Block = 256;           // fp8 codecs: values per scaled block
  float lossScale = 1.0f;            // fp16 codec
  std::string csv;                   // also write the rows here
  std::string module;                // libbraid-cuda.so to measure
  bool verify = false;               // compare with the CPU kernels instead of timing
};

// The options, or std::nullopt with *exitCode set (help printed: 0; a bad
// flag, explained on stderr: nonzero).
std::optional<Options> parseOptions(int argc, const char* const* argv, int* exitCode);

// "64K", "16M", "1G" (powers of 1024) or plain bytes; std::nullopt otherwise.
std::optional<size_t> parseSize(const std::string& text);

}  // namespace braid::cudabench
