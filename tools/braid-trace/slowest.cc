// Which rank the others wait for: see Slowest in analyze.h for the definition.
#include <map>
#include <set>

#include "analyze.h"

namespace braid::trace {
namespace {

using Key = std::pair<std::string, uint64_t>;  // (kind, number)

// Collectives every dump holds as completed, each with one record per dump
// (in dump order).
std::map<Key, std::vector<const OpRecord*>> commonOps(const std::vector<Dump>& dumps) {
  std::map<Key, std::vector<const OpRecord*>> ops;
  for (size_t i = 0; i < dumps.size(); ++i) {
    for (const OpRecord& r : dumps[i].ops) {
      // Point-to-point ops are not entered by every rank; timestamps out of
      // order mean a damaged record, which must not skew the average.
      if (r.state != OpState::kCompleted || r.seq == 0 || r.op == "sendrecv" || r.startedNs == 0 ||
          r.endedNs < r.startedNs)
        continue;
      std::vector<const OpRecord*>& per = ops[Key(r.op, r.seq)];
      per.resize(dumps.size(), nullptr);
      per[i] = &r;
    }
  }
  std::erase_if(ops, [](const auto& kv) {
    for (const OpRecord* r : kv.second)
      if (r == nullptr) return true;
    return false;
  });
  return ops;
}

}  // namespace

std::optional<Slowest> findSlowest(const std::vector<Dump>& dumps, Report* report) {
  if (dumps.size() < 2) return std::nullopt;
  const auto ops = commonOps(dumps);
  if (ops.empty()) return std::nullopt;
  std::set<std::string> hosts;
  for (const Dump& d : dumps) hosts.insert(d.host);
  const bool oneClock = hosts.size() == 1;

  std::vector<double> sum(dumps.size(), 0);
  for (const auto& [key, recs] : ops) {
    uint64_t firstStart = UINT64_MAX, longest = 0;
    for (const OpRecord* r : recs) {
      firstStart = std::min(firstStart, r->startedNs);
      longest = std::max(longest, r->endedNs - r->startedNs);
    }
    for (size_t i = 0; i < recs.size(); ++i) {
      const uint64_t late =
          oneClock ? recs[i]->startedNs - firstStart : longest - (recs[i]->endedNs - recs[i]->startedNs);
      sum[i] += static_cast<double>(late);
    }
  }
  Slowest s;
  s.commonOps = ops.size();
  s.hosts = hosts.size();
  s.fromStartTimes = oneClock;
  for (size_t i = 0; i < dumps.size(); ++i) {
    const double mean = sum[i] / static_cast<double>(ops.size());
    for (RankStatus& st : report->ranks)
      if (st.rank == dumps[i].rank) st.meanLateNs = mean;
    // Ties go to the lower rank, so the answer does not depend on file order.
    if (s.rank < 0 || mean > s.meanLateNs || (mean == s.meanLateNs && dumps[i].rank < s.rank)) {
      s.rank = dumps[i].rank;
      s.meanLateNs = mean;
    }
  }
  s.notable = s.meanLateNs >= kNotableLateNs;
  return s;
}

}  // namespace braid::trace
