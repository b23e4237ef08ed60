#include "algorithms/registry.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <sstream>

#include <strings.h>

namespace braid::algo {
namespace {

std::mutex& tableMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<Algorithm>& table() {
  static std::vector<Algorithm> algorithms;
  return algorithms;
}

// Below this many bytes all-reduce is latency-bound: recursive doubling sends
// log2(N) messages where the ring sends 2(N-1).
constexpr size_t kAllReduceLatencyBytes = 16 * 1024;

// The fallback table (the tuner's cost model replaces it when it has
// parameters). The first registered per collective would depend on link
// order, so names are fixed here.
const char* fallbackName(Collective c, size_t bytes, int nranks) {
  switch (c) {
    case Collective::kAllReduce:
      // Large: halving-doubling needs a power of two to avoid its fold; the
      // ring pipelines any N (and for N = 2 they are the same exchange, which
      // the ring pipelines better). Measured on loopback TCP, 2 and 4 ranks.
      if (bytes <= kAllReduceLatencyBytes) return "rd";
      return nranks > 2 && (nranks & (nranks - 1)) == 0 ? "rhd" : "ring";
    case Collective::kBroadcast: return "chain";
    case Collective::kReduce: return "chain";
    case Collective::kAllGather: return "ring";
    case Collective::kReduceScatter: return "ring";
    case Collective::kAllToAll: return "pairwise";
    case Collective::kAllToAllv: return "pairwise";
    case Collective::kBarrier: return "dissemination";
    // The root's port carries N - 1 blocks either way; the tree pays log2(N)
    // latencies instead of N - 1 while blocks are small (registry.h).
    case Collective::kGather:
    case Collective::kScatter:
      return bytes <= kRootedTreeBytes ? "binomial" : "linear";
    case Collective::kSendRecv: return "";
  }
  return "";
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "allreduce";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kAllGather: return "allgather";
    case Collective::kReduceScatter: return "reducescatter";
    case Collective::kAllToAll: return "alltoall";
    case Collective::kAllToAllv: return "alltoallv";
    case Collective::kSendRecv: return "sendrecv";
    case Collective::kBarrier: return "barrier";
    case Collective::kGather:
      return "gather";
    case Collective::kScatter:
      return "scatter";
  }
  return "unknown";
}

bool parseCollective(const char* name, Collective* out) {
  for (int i = 1; i < kNumCollectives; ++i) {
    auto c = static_cast<Collective>(i);
    if (strcasecmp(name, collectiveName(c)) == 0) {
      *out = c;
      return true;
    }
  }
  return false;
}

void registerAlgorithm(const Algorithm& algorithm) {
  std::lock_guard<std::mutex> lock(tableMutex());
  table().push_back(algorithm);
}

std::vector<Algorithm> registeredAlgorithms() {
  std::lock_guard<std::mutex> lock(tableMutex());
  return table();
}

const Algorithm* findAlgorithm(Collective collective, const std::string& name) {
  std::lock_guard<std::mutex> lock(tableMutex());
  for (const Algorithm& a : table())
    if (a.collective == collective && strcasecmp(a.name, name.c_str()) == 0) return &a;
  return nullptr;
}

bool parseSize(const std::string& text, size_t* out) {
  std::string t = trim(text);
  if (strcasecmp(t.c_str(), "inf") == 0) {
    *out = SIZE_MAX;
    return true;
  }
  if (t.empty() || !std::isdigit(static_cast<unsigned char>(t[0]))) return false;
  size_t value = 0, i = 0;
  for (; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i) {
    size_t digit = t[i] - '0';
    if (value > (SIZE_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  int shift = 0;
  if (i < t.size()) {
    switch (std::tolower(static_cast<unsigned char>(t[i]))) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: return false;
    }
    if (++i != t.size()) return false;
  }
  if (shift && value > (SIZE_MAX >> shift)) return false;
  *out = value << shift;
  return true;
}

namespace {

std::string knownAlgorithms(Collective c) {
  std::string known;
  for (const Algorithm& k : registeredAlgorithms())
    if (k.collective == c) known += (known.empty() ? "" : ", ") + std::string(k.name);
  return known.empty() ? "none" : known;
}

// One "lo-hi:name" or "name" item of a collective's list.
Status parseRule(Collective c, const std::string& collName, const std::string& item,
                 AlgorithmOverrides::Rule* rule) {
  std::string algoName = item;
  size_t colon = item.find(':');
  if (colon != std::string::npos) {
    std::string range = trim(item.substr(0, colon));
    algoName = item.substr(colon + 1);
    size_t dash = range.find('-');
    if (dash == std::string::npos || !parseSize(range.substr(0, dash), &rule->lo) ||
        !parseSize(range.substr(dash + 1), &rule->hi))
      return invalidArgument("BRAID_ALGO: '" + range + "' for " + collName +
                             " is not a size range like 0-64k or 64k-inf (k, m, g suffixes)");
    if (rule->lo >= rule->hi)
      return invalidArgument("BRAID_ALGO: range '" + range + "' for " + collName + " is empty");
  }
  algoName = trim(algoName);
  rule->algorithm = findAlgorithm(c, algoName);
  if (rule->algorithm == nullptr)
    return invalidArgument("BRAID_ALGO: no algorithm '" + algoName + "' for " + collName +
                           " (known: " + knownAlgorithms(c) + ")");
  return Status::ok();
}

}  // namespace

Status AlgorithmOverrides::parse(const std::string& spec, AlgorithmOverrides* out) {
  AlgorithmOverrides parsed;
  std::stringstream entries(spec);
  std::string entry;
  while (std::getline(entries, entry, ';')) {
    entry = trim(entry);
    if (entry.empty()) continue;
    size_t colon = entry.find(':');
    if (colon == std::string::npos)
      return invalidArgument("BRAID_ALGO entry '" + entry + "' is not collective:algorithm");
    std::string collName = trim(entry.substr(0, colon));
    Collective c;
    if (!parseCollective(collName.c_str(), &c))
      return invalidArgument("BRAID_ALGO names unknown collective '" + collName + "'");
    std::stringstream items(entry.substr(colon + 1));
    std::string item;
    bool any = false;
    while (std::getline(items, item, ',')) {
      Rule rule;
      BRAID_RETURN_IF_ERROR(parseRule(c, collName, item, &rule));
      parsed.rules_[static_cast<int>(c)].push_back(rule);
      any = true;
      if (c == Collective::kAllToAll) {  // one name steers both all-to-all forms
        if (const Algorithm* v = findAlgorithm(Collective::kAllToAllv, rule.algorithm->name))
          parsed.rules_[static_cast<int>(Collective::kAllToAllv)].push_back({rule.lo, rule.hi, v});
      }
    }
    if (!any) return invalidArgument("BRAID_ALGO entry '" + entry + "' names no algorithm");
  }
  *out = std::move(parsed);
  return Status::ok();
}

const Algorithm* AlgorithmOverrides::forced(Collective c, size_t bytes) const {
  for (const Rule& r : rules_[static_cast<int>(c)])
    if (bytes >= r.lo && bytes < r.hi) return r.algorithm;
  return nullptr;
}

const Algorithm* AlgorithmOverrides::forced(Collective c) const {
  const std::vector<Rule>& rules = rules_[static_cast<int>(c)];
  if (rules.empty() || rules[0].lo != 0 || rules[0].hi != SIZE_MAX) return nullptr;
  return rules[0].algorithm;
}

bool AlgorithmOverrides::empty() const {
  for (const std::vector<Rule>& r : rules_)
    if (!r.empty()) return false;
  return true;
}

const Algorithm* fallbackAlgorithm(Collective collective, size_t bytes, int nranks) {
  return findAlgorithm(collective, fallbackName(collective, bytes, nranks));
}

const Algorithm* selectAlgorithm(Collective collective, size_t bytes, int nranks,
                                 const AlgorithmOverrides& overrides) {
  if (const Algorithm* a = overrides.forced(collective, bytes)) return a;
  return fallbackAlgorithm(collective, bytes, nranks);
}

}  // namespace braid::algo
