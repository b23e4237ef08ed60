// Text output in nccl-tests' layout, so that scripts written for nccl-tests
// parse braid-perf's output unchanged. Pure formatting: every function
// returns the text, without a trailing newline unless it spans several lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace braid::perf {

// value right-aligned in width, with 2, 1 or 0 decimals (the most that fit),
// or in scientific notation when even the integer part does not fit.
std::string floatCell(double value, int width);

// The three header lines above the table ("out-of-place / in-place", the
// column names, the units), each ending in '\n'.
std::string tableHeader();

// size, count, type, redop, root columns of one row.
std::string rowPrefix(size_t bytes, size_t count, const std::string& type, const std::string& op, int root);

// One out-of-place or in-place group of a row.
struct Result {
  bool skipped = false;  // not run (e.g. in place unsupported): "N/A" cells
  double timeUs = 0;
  double algBw = 0;              // GB/s
  double busBw = 0;              // GB/s
  std::optional<int64_t> wrong;  // nullopt: not checked (-c 0)
};
std::string resultCells(const Result& r);

// "#  Rank  0 Group  0 Pid  12345 on   hostname device cpu" (device: "cpu",
// or with --memory device "cuda:0 NVIDIA H100 80GB HBM3").
std::string rankLine(int rank, int pid, const std::string& host, const std::string& device = "cpu");

// "# Out of bounds values : 0 OK" and "# Avg bus bandwidth    : X", '\n' after each.
std::string footer(int64_t failedChecks, double avgBusBw);

}  // namespace braid::perf
