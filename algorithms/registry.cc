#include "algorithms/registry.h"

#include <cstring>
#include <mutex>
#include <sstream>

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

// The algorithm used when nothing is forced. The first registered per
// collective would depend on link order, so defaults are named here.
const char* defaultName(Collective c, size_t bytes, int nranks) {
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
    std::string collName = trim(entry.substr(0, colon)), algoName = trim(entry.substr(colon + 1));
    Collective c;
    if (!parseCollective(collName.c_str(), &c))
      return invalidArgument("BRAID_ALGO names unknown collective '" + collName + "'");
    const Algorithm* a = findAlgorithm(c, algoName);
    if (a == nullptr) {
      std::string known;
      for (const Algorithm& k : registeredAlgorithms())
        if (k.collective == c) known += (known.empty() ? "" : ", ") + std::string(k.name);
      return invalidArgument("BRAID_ALGO: no algorithm '" + algoName + "' for " + collName +
                             " (known: " + known + ")");
    }
    parsed.forced_[static_cast<int>(c)] = a;
    if (c == Collective::kAllToAll) {  // one name steers both all-to-all forms
      if (const Algorithm* v = findAlgorithm(Collective::kAllToAllv, algoName))
        parsed.forced_[static_cast<int>(Collective::kAllToAllv)] = v;
    }
  }
  *out = parsed;
  return Status::ok();
}

const Algorithm* selectAlgorithm(Collective collective, size_t bytes, int nranks,
                                 const AlgorithmOverrides& overrides) {
  if (const Algorithm* a = overrides.forced(collective)) return a;
  return findAlgorithm(collective, defaultName(collective, bytes, nranks));
}

}  // namespace braid::algo
