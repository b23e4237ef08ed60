#include "report.h"

#include <cstdio>

namespace braid::perf {

namespace {

// Widths of nccl-tests' columns.
constexpr int kSizeW = 12, kCountW = 12, kTypeW = 8, kOpW = 6, kRootW = 6;
constexpr int kTimeW = 7, kBwW = 6, kWrongW = 5;

template <typename... Args>
std::string format(const char* fmt, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), fmt, args...);
  return buf;
}

std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string centred(const std::string& text, int width) {
  const int left = (width - static_cast<int>(text.size())) / 2;
  return std::string(left, ' ') + text + std::string(width - left - text.size(), ' ');
}

}  // namespace

std::string floatCell(double value, int width) {
  for (int decimals = 2; decimals >= 0; --decimals) {
    std::string s = format("%*.*f", width, decimals, value);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  return format("%*.*e", width, width >= 8 ? 2 : width >= 7 ? 1 : 0, value);
}

std::string tableHeader() {
  const int prefixW = kSizeW + 2 + kCountW + 2 + kTypeW + 2 + kOpW + 2 + kRootW;
  const int groupW = 2 + kTimeW + 2 + kBwW + 2 + kBwW + 2 + kWrongW;
  // "#wrong" is one character wider than its column: it eats one separator.
  auto line = [](const char* size, const char* count, const char* type, const char* op, const char* root,
                 const char* time, const char* alg, const char* bus, const char* wrong) {
    const std::string group = format("  %7s  %6s  %6s %6s", time, alg, bus, wrong);
    return rtrim(format("# %10s  %12s  %8s  %6s  %6s", size, count, type, op, root) + group + group) + "\n";
  };
  return rtrim("#" + std::string(prefixW - 1, ' ') + centred("out-of-place", groupW) +
               centred("in-place", groupW)) +
         "\n" + line("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong") +
         line("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
}

std::string rowPrefix(size_t bytes, size_t count, const std::string& type, const std::string& op, int root) {
  return format("%*zu  %*zu  %*s  %*s  %*d", kSizeW, bytes, kCountW, count, kTypeW, type.c_str(), kOpW,
                op.c_str(), kRootW, root);
}

std::string resultCells(const Result& r) {
  if (r.skipped)
    return format("  %*s  %*s  %*s  %*s", kTimeW, "N/A", kBwW, "N/A", kBwW, "N/A", kWrongW, "N/A");
  const std::string wrong =
      r.wrong ? format("%*lld", kWrongW, static_cast<long long>(*r.wrong)) : format("%*s", kWrongW, "N/A");
  return "  " + floatCell(r.timeUs, kTimeW) + "  " + floatCell(r.algBw, kBwW) + "  " +
         floatCell(r.busBw, kBwW) + "  " + wrong;
}

std::string rankLine(int rank, int pid, const std::string& host, const std::string& device) {
  return format("#  Rank %2d Group  0 Pid %6d on %10s device %s", rank, pid, host.c_str(), device.c_str());
}

std::string footer(int64_t failedChecks, double avgBusBw) {
  return format("# Out of bounds values : %lld %s\n", static_cast<long long>(failedChecks),
                failedChecks ? "FAILED" : "OK") +
         format("# Avg bus bandwidth    : %g \n", avgBusBw);
}

}  // namespace braid::perf
