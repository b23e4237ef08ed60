#include "render_text.h"

#include <algorithm>
#include <map>

#include "render_table.h"
#include "words.h"

namespace braid::trace {
namespace {

// Ranks that share a phrase, so a thousand ranks in one op make one clause.
struct Group {
  std::vector<int> ranks;
  double maxNs = 0;
  const RankStatus* first = nullptr;  // a member, for the phrase's details
  std::string what;                   // the ops the phrase names, where it names some
};

class Groups {
 public:
  Group& at(const std::string& key) {
    auto [it, fresh] = index_.emplace(key, groups_.size());
    if (fresh) groups_.emplace_back();
    return groups_[it->second];
  }
  // In order of each group's first rank, as ranks are added in rank order.
  const std::vector<Group>& all() const { return groups_; }

 private:
  std::map<std::string, size_t> index_;
  std::vector<Group> groups_;
};

// More distinct failures than this are counted, not quoted: the first ones
// usually hold the cause, the rest its echoes.
constexpr size_t kQuotedFailures = 6;

// " Text." with a capital first letter. Built by appending: GCC 12 warns
// (-Wrestrict, a false positive) on "literal" + std::string&& here.
std::string asSentence(const std::string& text) {
  std::string out = " ";
  out += sentence(text);
  out += ".";
  return out;
}

std::string overview(const Report& r) {
  std::vector<std::string> hosts;
  for (const RankStatus& s : r.ranks)
    if (std::find(hosts.begin(), hosts.end(), s.host) == hosts.end()) hosts.push_back(s.host);
  std::string where = hosts.size() == 1   ? "host " + hosts[0]
                      : hosts.size() <= 3 ? "hosts " + joinAnd(hosts)
                                          : std::to_string(hosts.size()) + " hosts";
  std::string out = std::to_string(r.nranks) + (r.nranks == 1 ? " rank, " : " ranks, ") +
                    std::to_string(r.ranks.size()) + (r.ranks.size() == 1 ? " dump" : " dumps") + " from " +
                    where + ".";
  if (!r.absent.empty()) out += " No dump from " + rankList(r.absent) + ".";
  return out;
}

std::string whereRanksAre(const Report& r) {
  Groups groups;
  for (const RankStatus& s : r.ranks) {
    if (s.stoppedByFailure) continue;  // the failure sentences say where they stopped
    std::string key = s.in              ? "in " + s.in->label()
                      : s.lastCompleted ? "done " + s.lastCompleted->label()
                                        : "none";
    Group& g = groups.at(key);
    g.ranks.push_back(s.rank);
    g.maxNs = std::max(g.maxNs, static_cast<double>(s.inForNs));
    if (g.first == nullptr) g.first = &s;
  }
  std::vector<std::string> parts;
  for (const Group& g : groups.all()) {
    const bool one = g.ranks.size() == 1;
    const RankStatus& s = *g.first;
    if (s.in)
      parts.push_back(rankList(g.ranks) + (one ? " is in " : " are in ") + s.in->label() + " (for " +
                      (one ? "" : "up to ") + duration(g.maxNs) + ")");
    else if (s.lastCompleted)
      parts.push_back(rankList(g.ranks) + " last completed " + s.lastCompleted->label());
    else
      parts.push_back(rankList(g.ranks) + (one ? " has" : " have") + " started no op");
  }
  if (parts.empty()) return "";
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += "; ";
    out += p;
  }
  return asSentence(out);
}

const RankStatus* statusOf(const Report& r, int rank) {
  for (const RankStatus& s : r.ranks)
    if (s.rank == rank) return &s;
  return nullptr;
}

std::string missingSentences(const Report& r) {
  Groups groups;
  for (const Missing& m : r.missing) {
    const RankStatus* s = statusOf(r, m.rank);
    std::vector<std::string> labels;
    for (const OpRef& op : m.from) labels.push_back(op.label());
    std::string key = joinAnd(labels) + "|" + (s->lastCompleted ? s->lastCompleted->label() : "") + "|" +
                      (s->in ? s->in->label() : "") + "|" + (s->stoppedByFailure ? s->failedIn->label() : "");
    Group& g = groups.at(key);
    g.ranks.push_back(m.rank);
    if (g.first == nullptr) g.first = s;
    g.what = joinAnd(labels);
  }
  std::string out;
  for (const Group& g : groups.all()) {
    const bool one = g.ranks.size() == 1;
    const RankStatus& s = *g.first;
    std::string text = rankList(g.ranks) + (one ? " is missing from " : " are missing from ") + g.what +
                       ": " + (one ? "it " : "they ") +
                       (s.lastCompleted ? "last completed " + s.lastCompleted->label() : "completed no op");
    if (s.in) text += (one ? " and is in " : " and are in ") + s.in->label();
    if (s.stoppedByFailure) text += " and failed in " + s.failedIn->label();
    out += asSentence(text);
  }
  return out;
}

std::string mismatchSentence(const Report& r) {
  if (!r.mismatch) return "";
  Groups groups;  // calls are in rank order, so each op is named in order of its first rank
  for (const auto& [rank, op] : r.mismatch->calls) {
    Group& g = groups.at(op.label());
    g.ranks.push_back(rank);
    g.what = op.label();
  }
  std::vector<std::string> parts;
  for (const Group& g : groups.all()) parts.push_back(g.what + " on " + rankList(g.ranks));
  // Tickets count from 0; "their 1st op" reads better than "ticket 0".
  return " Ranks called different collectives as their " + ordinal(r.mismatch->ticket + 1) +
         " op on the communicator: " + joinAnd(parts) + ".";
}

std::string failureSentences(const Report& r) {
  Groups groups;
  for (const RankStatus& s : r.ranks) {
    if (!s.failedIn) continue;
    Group& g = groups.at(s.failedIn->label() + "\n" + s.error);
    g.ranks.push_back(s.rank);
    if (g.first == nullptr) g.first = &s;
  }
  std::string out;
  size_t unquoted = 0;
  for (size_t i = 0; i < groups.all().size(); ++i) {
    const Group& g = groups.all()[i];
    if (i >= kQuotedFailures) {
      unquoted += g.ranks.size();
      continue;
    }
    const RankStatus& s = *g.first;
    // braid's messages start with the op ("allreduce #3: ..."), which the
    // sentence has just named.
    const std::string label = s.failedIn->label();
    std::string error = s.error;
    if (error.rfind(label + ": ", 0) == 0) error.erase(0, label.size() + 2);
    out += asSentence(rankList(g.ranks) + " failed in " + label + (error.empty() ? "" : ": " + error));
  }
  if (unquoted > 0)
    out += asSentence(std::to_string(unquoted) + (unquoted == 1 ? " more rank" : " more ranks") +
                      " failed otherwise (see --json)");
  return out;
}

std::string slowestSentence(const Report& r) {
  if (r.ranks.size() < 2) return "";
  if (!r.slowest) return " No op was completed by every rank with a dump, so none is named slowest.";
  const Slowest& s = *r.slowest;
  const std::string ops = "the " + std::to_string(s.commonOps) + (s.commonOps == 1 ? " op " : " ops ") +
                          (r.absent.empty() ? "every rank completed" : "every rank with a dump completed");
  const std::string how = s.fromStartTimes ? "start times, all dumps are from one host"
                                           : "from op durations, as the dumps come from " +
                                                 std::to_string(s.hosts) + " hosts whose clocks differ";
  const std::string late = (s.fromStartTimes ? "" : "an estimated ") + duration(s.meanLateNs);
  if (s.notable)
    return asSentence(rankList({s.rank}) + " is the slowest: it entered " + ops + " " + late +
                      " after the first rank on average (" + how + ")");
  return " No rank stands out as slow: the latest, " + rankList({s.rank}) + ", entered " + ops + " " + late +
         " after the first on average (" + how + ").";
}

std::string wrap(const std::string& text, size_t width) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line + "\n";
}

}  // namespace

std::string summary(const Report& r) {
  // A mismatch explains the rest, so it comes before who is missing where.
  return overview(r) + whereRanksAre(r) + mismatchSentence(r) + missingSentences(r) + failureSentences(r) +
         slowestSentence(r);
}

std::string renderText(const Report& r) { return printable(wrap(summary(r), 100) + "\n" + table(r)); }

}  // namespace braid::trace
