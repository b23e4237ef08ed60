#include "options.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <climits>
#include <cstdio>

#ifndef BRAID_CUDA_MODULE_FROM_EXE
#define BRAID_CUDA_MODULE_FROM_EXE "libbraid-cuda.so"
#endif

namespace braid::cudabench {

namespace {

constexpr const char* kDescription =
    "braid-cuda-bench: the CUDA module's kernels in GB/s of memory traffic (bytes read + written),\n"
    "against a device-to-device cudaMemcpyAsync of the same size timed the same way.\n"
    "Pick the GPU with CUDA_VISIBLE_DEVICES. Exit status: 0 ok, 2 no device or no module,\n"
    "3 a kernel failed (or, with --verify, gave other bits than the CPU).";

const std::vector<std::string> kKernels = {"reduce", "divide", "encode", "decode"};

// The module this build made: BRAID_CUDA_MODULE_FROM_EXE from the directory
// of this executable.
std::string defaultModule() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return BRAID_CUDA_MODULE_FROM_EXE;
  const std::string path(exe, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + BRAID_CUDA_MODULE_FROM_EXE;
}

}  // namespace

std::optional<size_t> parseSize(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0 || pos > 12) return std::nullopt;
  size_t value = std::stoull(text.substr(0, pos));
  std::string unit = text.substr(pos);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!unit.empty() && unit.back() == 'B') unit.pop_back();  // "64MB", "64MiB"
  if (unit.size() == 2 && unit.back() == 'I') unit.pop_back();
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (shift < 0 || value > (SIZE_MAX >> shift)) return std::nullopt;
  return value << shift;
}

std::optional<Options> parseOptions(int argc, const char* const* argv, int* exitCode) {
  Options o;
  o.module = defaultModule();
  std::vector<std::string> sizes = {"1M", "4M", "16M", "64M", "256M"};
  o.kernels = kKernels;
  CLI::App app{kDescription, "braid-cuda-bench"};
  app.add_option("-s,--sizes", sizes, "Sizes of each kernel's host-typed buffer (K/M/G: powers of 1024)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("-k,--kernels", o.kernels,
                 "Kernels to time besides the copy (with --verify: to check): reduce divide encode decode")
      ->delimiter(',')
      ->check(CLI::IsMember(kKernels))
      ->capture_default_str();
  app.add_option("-w,--warmup", o.warmup, "Untimed launches before each row")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-n,--iters", o.iters, "Launches per timed repetition")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("-r,--reps", o.reps, "Repetitions; the median is reported")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--divisor", o.divisor, "divide's divisor")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--fp8-block", o.fp8Block, "fp8 codecs: values per scaled block (a multiple of 8, 8..65536)")
      ->check(CLI::Range(8u, 65536u))
      ->capture_default_str();
  app.add_option("--loss-scale", o.lossScale, "fp16 codec: loss scale")->capture_default_str();
  app.add_option("--csv", o.csv, "Also write the rows to this CSV file");
  app.add_option("-m,--module", o.module,
                 "The libbraid-cuda.so to load (default: the one built beside this executable)")
      ->capture_default_str();
  app.add_flag("--verify", o.verify,
               "Instead of timing: compare every kernel with the CPU kernels, bit for bit, at odd sizes and "
               "offset (unaligned) pointers");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exitCode = app.exit(e);
    return std::nullopt;
  }
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "braid-cuda-bench: %s\n", why.c_str());
    *exitCode = 1;
    return std::nullopt;
  };
  if (o.fp8Block % 8 != 0) return fail("--fp8-block must be a multiple of 8");
  for (const std::string& s : sizes) {
    const std::optional<size_t> v = parseSize(s);
    if (!v || *v == 0) return fail("--sizes: not a size: " + s);
    o.sizes.push_back(*v);
  }
  return o;
}

}  // namespace braid::cudabench
