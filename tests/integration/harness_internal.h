// Shared by the harness's two halves: harness.cc (the gtest parent, which
// forks and supervises) and harness_child.cc (what runs in each child).
#pragma once

#include <unistd.h>

#include <set>
#include <vector>

#include "harness.h"

namespace braid::itest::detail {

struct Pipe {
  int r = -1, w = -1;
};

// Everything the fork()ed children need to find their pipes.
struct Plumbing {
  std::vector<Pipe> report;  // one per child (ranks first, then sidecars)
  std::vector<Pipe> id;      // one per rank (index 0 unused)
  std::vector<Pipe> toSidecar, fromSidecar;
  std::vector<int> all() const {
    std::vector<int> v;
    for (auto* group : {&report, &id, &toSidecar, &fromSidecar})
      for (const Pipe& p : *group) v.insert(v.end(), {p.r, p.w});
    return v;
  }
  void closeAllBut(const std::set<int>& keep) const {
    for (int fd : all())
      if (fd >= 0 && !keep.count(fd)) close(fd);
  }
};

// The child's whole life; both end with _exit().
[[noreturn]] void rankMain(const RunOptions& o, const RankBody& body, const Plumbing& p, int rank,
                           void* shared);
[[noreturn]] void sidecarMain(const RunOptions& o, const Plumbing& p, int k, int reportIndex);

}  // namespace braid::itest::detail
