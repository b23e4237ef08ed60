// A set of logical CPU (PU) numbers in the Linux "cpulist" text form used by
// /sys (e.g. "0-3,8,10-11"). The topology model, the topology file and the
// binding code all speak this form, so one parser with one set of limits
// serves them all.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace braid::topo {

// CPU numbers above this are refused: far beyond any machine, and it bounds
// the memory a hostile "0-999999999" could make us allocate.
constexpr int kMaxCpu = 1 << 16;

class CpuList {
 public:
  CpuList() = default;
  // Sorted, no duplicates; each in [0, kMaxCpu).
  explicit CpuList(std::vector<int> cpus);

  // Strict: digits, '-' ranges with lo <= hi, ',' separators, no spaces
  // (a trailing newline as /sys writes it is accepted). "" is the empty set.
  static Status parse(const std::string& text, CpuList* out);
  std::string toString() const;  // canonical, ranges merged

  const std::vector<int>& cpus() const { return cpus_; }
  bool empty() const { return cpus_.empty(); }
  size_t size() const { return cpus_.size(); }
  bool contains(int cpu) const;
  bool containsAll(const CpuList& other) const;
  CpuList intersect(const CpuList& other) const;
  CpuList unite(const CpuList& other) const;
  bool operator==(const CpuList& other) const { return cpus_ == other.cpus_; }

 private:
  std::vector<int> cpus_;
};

}  // namespace braid::topo
