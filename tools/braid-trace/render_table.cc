#include "render_table.h"

#include <algorithm>

#include "words.h"

namespace braid::trace {
namespace {

std::string doing(const RankStatus& s) {
  if (s.in) return "in " + s.in->label() + " for " + duration(static_cast<double>(s.inForNs));
  if (s.stoppedByFailure) return "failed in " + s.failedIn->label();
  return "idle";
}

}  // namespace

std::string table(const Report& r) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"rank", "host", "pid", "now", "last completed", "queued", "late (mean)"});
  for (const RankStatus& s : r.ranks) {
    rows.push_back({std::to_string(s.rank), s.host, std::to_string(s.pid), doing(s),
                    s.lastCompleted ? s.lastCompleted->label() : "-", std::to_string(s.queued),
                    s.meanLateNs ? duration(*s.meanLateNs) : "-"});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace braid::trace
