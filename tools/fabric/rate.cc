#include "rate.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace braid::fabric {

namespace {

// Splits "12.5mbit" into 12.5 and "mbit" (lowercased). nullopt when the
// number is missing, negative, not finite, or followed by nothing parseable.
std::optional<std::pair<double, std::string>> splitNumber(const std::string& text) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value <= 0) return std::nullopt;
  std::string unit(end);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::make_pair(value, unit);
}

template <size_t N>
std::optional<double> scale(const std::array<std::pair<const char*, double>, N>& units,
                            const std::string& unit) {
  for (const auto& [name, factor] : units) {
    if (unit == name) return factor;
  }
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> parseRate(const std::string& text) {
  static constexpr std::array<std::pair<const char*, double>, 9> kUnits = {{{"bit", 1},
                                                                            {"kbit", 1e3},
                                                                            {"mbit", 1e6},
                                                                            {"gbit", 1e9},
                                                                            {"tbit", 1e12},
                                                                            {"bps", 8},
                                                                            {"kbps", 8e3},
                                                                            {"mbps", 8e6},
                                                                            {"gbps", 8e9}}};
  auto parts = splitNumber(text);
  if (!parts) return std::nullopt;
  auto factor = scale(kUnits, parts->second);
  if (!factor) return std::nullopt;
  const double bits = parts->first * *factor;
  if (bits < 8e3 || bits > 1e13) return std::nullopt;
  return static_cast<uint64_t>(std::llround(bits));
}

std::optional<uint64_t> parseSize(const std::string& text) {
  static constexpr std::array<std::pair<const char*, double>, 8> kUnits = {{{"", 1},
                                                                            {"b", 1},
                                                                            {"k", 1024.0},
                                                                            {"kb", 1024.0},
                                                                            {"m", 1024.0 * 1024},
                                                                            {"mb", 1024.0 * 1024},
                                                                            {"g", 1024.0 * 1024 * 1024},
                                                                            {"gb", 1024.0 * 1024 * 1024}}};
  auto parts = splitNumber(text);
  if (!parts) return std::nullopt;
  auto factor = scale(kUnits, parts->second);
  if (!factor) return std::nullopt;
  const double bytes = parts->first * *factor;
  if (bytes < 1 || bytes > 4e9) return std::nullopt;  // tbf's bucket is a 32-bit byte count
  return static_cast<uint64_t>(std::llround(bytes));
}

uint64_t defaultBurstBytes(uint64_t bitsPerSec) {
  const uint64_t fourMs = bitsPerSec / 8 / 250;
  return std::max<uint64_t>(fourMs, 64 * 1024);
}

std::string formatRate(double bitsPerSec) {
  static constexpr std::array<std::pair<const char*, double>, 4> kUnits = {
      {{"Gbit/s", 1e9}, {"Mbit/s", 1e6}, {"kbit/s", 1e3}, {"bit/s", 1}}};
  for (const auto& [name, factor] : kUnits) {
    if (bitsPerSec >= factor || factor == 1) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.3g %s", bitsPerSec / factor, name);
      return buf;
    }
  }
  return "0 bit/s";
}

}  // namespace braid::fabric
