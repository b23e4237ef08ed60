#include "sizes.h"

#include <cctype>
#include <limits>

namespace braid::perf {

std::optional<size_t> parseSize(const std::string& text) {
  size_t pos = 0;
  size_t value = 0;
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    const size_t digit = static_cast<size_t>(text[pos] - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
    ++pos;
  }
  if (pos == 0) return std::nullopt;
  std::string suffix = text.substr(pos);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.ends_with("IB")) {
    suffix.resize(suffix.size() - 2);
    if (suffix.empty()) return std::nullopt;  // "8iB" means nothing
  } else if (suffix.ends_with("B")) {
    suffix.resize(suffix.size() - 1);
  }
  int shift = 0;
  if (suffix == "K") {
    shift = 10;
  } else if (suffix == "M") {
    shift = 20;
  } else if (suffix == "G") {
    shift = 30;
  } else if (suffix == "T") {
    shift = 40;
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  if (shift > 0 && value > (kMax >> shift)) return std::nullopt;
  return value << shift;
}

std::vector<size_t> sizeSweep(size_t minBytes, size_t maxBytes, size_t stepFactor, size_t stepBytes) {
  std::vector<size_t> sizes;
  if (minBytes > maxBytes) return sizes;
  size_t size = minBytes;
  while (true) {
    sizes.push_back(size);
    size_t next;
    if (stepFactor > 1) {
      if (size == 0 || size > maxBytes / stepFactor) break;  // 0 never grows; overflow
      next = size * stepFactor;
    } else {
      if (stepBytes == 0 || size > maxBytes - stepBytes) break;
      next = size + stepBytes;
    }
    if (next > maxBytes) break;
    size = next;
  }
  return sizes;
}

}  // namespace braid::perf
