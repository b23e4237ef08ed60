#include "topo/cpulist.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace braid::topo {

CpuList::CpuList(std::vector<int> cpus) : cpus_(std::move(cpus)) {
  std::sort(cpus_.begin(), cpus_.end());
  cpus_.erase(std::unique(cpus_.begin(), cpus_.end()), cpus_.end());
  cpus_.erase(std::remove_if(cpus_.begin(), cpus_.end(), [](int c) { return c < 0 || c >= kMaxCpu; }),
              cpus_.end());
}

namespace {
// Reads a decimal number at text[*pos]; false when there is none or it is too big.
bool readNumber(const std::string& text, size_t* pos, int* value) {
  size_t start = *pos;
  long v = 0;
  while (*pos < text.size() && std::isdigit(static_cast<unsigned char>(text[*pos]))) {
    v = v * 10 + (text[*pos] - '0');
    if (v >= kMaxCpu) return false;
    ++*pos;
  }
  *value = static_cast<int>(v);
  return *pos > start;
}
}  // namespace

Status CpuList::parse(const std::string& input, CpuList* out) {
  std::string text = input;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  std::vector<int> cpus;
  size_t pos = 0;
  auto bad = [&](const char* why) {
    return invalidArgument("cpu list '" + input.substr(0, 64) + "': " + why + " at offset " +
                           std::to_string(pos) + " (expected e.g. 0-3,8,10-11, each below " +
                           std::to_string(kMaxCpu) + ")");
  };
  while (pos < text.size()) {
    int lo = 0, hi = 0;
    if (!readNumber(text, &pos, &lo)) return bad("expected a cpu number");
    hi = lo;
    if (pos < text.size() && text[pos] == '-') {
      ++pos;
      if (!readNumber(text, &pos, &hi)) return bad("expected a cpu number after '-'");
      if (hi < lo) return bad("range upper bound below lower bound");
    }
    // Bounds the work a hostile list of overlapping ranges can cause.
    if (cpus.size() + (hi - lo + 1) > 2 * static_cast<size_t>(kMaxCpu)) return bad("too many cpus");
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    if (pos == text.size()) break;
    if (text[pos] != ',') return bad("unexpected character");
    ++pos;
    if (pos == text.size()) return bad("trailing ','");
  }
  *out = CpuList(std::move(cpus));
  return Status::ok();
}

std::string CpuList::toString() const {
  std::string s;
  for (size_t i = 0; i < cpus_.size();) {
    size_t j = i;
    while (j + 1 < cpus_.size() && cpus_[j + 1] == cpus_[j] + 1) ++j;
    if (!s.empty()) s += ',';
    s += std::to_string(cpus_[i]);
    if (j > i) s += '-' + std::to_string(cpus_[j]);
    i = j + 1;
  }
  return s;
}

bool CpuList::contains(int cpu) const { return std::binary_search(cpus_.begin(), cpus_.end(), cpu); }

bool CpuList::containsAll(const CpuList& other) const {
  return std::includes(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end());
}

CpuList CpuList::intersect(const CpuList& other) const {
  std::vector<int> r;
  std::set_intersection(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(),
                        std::back_inserter(r));
  return CpuList(std::move(r));
}

CpuList CpuList::unite(const CpuList& other) const {
  std::vector<int> r;
  std::set_union(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(), std::back_inserter(r));
  return CpuList(std::move(r));
}

}  // namespace braid::topo
