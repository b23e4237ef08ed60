// The hosts of a communicator as the hierarchical algorithms see them
// (CollectiveArgs::hostOf): each host's ranks ascending, its leader the
// lowest, and the leaders in rank order.
#pragma once

#include <algorithm>
#include <map>
#include <vector>

#include "algorithms/collective.h"

namespace braid::algo {

struct HostLayout {
  std::vector<int> local;                 // this rank's host, ascending; local[0] is the leader
  std::vector<int> leaders;               // one per host, ascending
  int leaderIndex = -1;                   // this host's position in leaders
  std::vector<std::vector<int>> ranksOf;  // per leader index: that host's ranks, ascending
};

inline HostLayout layoutOf(const CollectiveArgs& a) {
  HostLayout h;
  auto hostOf = [&](int r) { return a.hostOf.empty() ? r : a.hostOf[r]; };
  std::map<int, std::vector<int>> byHost;  // host -> its ranks, ascending
  for (int r = 0; r < a.nranks; ++r) byHost[hostOf(r)].push_back(r);
  for (auto& [host, ranks] : byHost) h.ranksOf.push_back(ranks);
  std::sort(h.ranksOf.begin(), h.ranksOf.end());  // by leader
  for (const auto& ranks : h.ranksOf) h.leaders.push_back(ranks[0]);
  for (size_t i = 0; i < h.ranksOf.size(); ++i)
    if (hostOf(h.ranksOf[i][0]) == hostOf(a.rank)) h.leaderIndex = static_cast<int>(i);
  h.local = h.ranksOf[static_cast<size_t>(h.leaderIndex)];
  return h;
}

}  // namespace braid::algo
