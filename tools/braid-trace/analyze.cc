#include "analyze.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace braid::trace {
namespace {

bool started(const OpRecord& r) { return r.seq > 0 && r.state != OpState::kEnqueued; }

// Point-to-point ops involve two ranks, not all of them: no rank is "missing"
// from another pair's send, and their number shifts tickets between ranks.
bool pointToPoint(const OpRecord& r) { return r.op == "sendrecv"; }

OpRef refOf(const OpRecord& r) { return OpRef{r.op, r.seq, r.ticket}; }

std::vector<const OpRecord*> byTicket(const Dump& d) {
  std::vector<const OpRecord*> ops;
  for (const OpRecord& r : d.ops) ops.push_back(&r);
  std::sort(ops.begin(), ops.end(),
            [](const OpRecord* a, const OpRecord* b) { return a->ticket < b->ticket; });
  return ops;
}

RankStatus statusOf(const Dump& d) {
  RankStatus s;
  s.rank = d.rank;
  s.host = d.host;
  s.file = d.file;
  s.pid = d.pid;
  s.recorded = d.ops.size();
  uint64_t lastStartedTicket = 0;
  bool anyStarted = false;
  for (const OpRecord* r : byTicket(d)) {
    if (started(*r)) {
      lastStartedTicket = r->ticket;
      anyStarted = true;
    }
    switch (r->state) {
      case OpState::kEnqueued:
        s.queued++;
        break;
      case OpState::kStarted:
        // The executor runs one op at a time, so there is at most one; if a
        // dump somehow holds more, the oldest is the one the rest wait on.
        if (!s.in) {
          s.in = refOf(*r);
          s.inForNs = d.nowNs > r->startedNs ? d.nowNs - r->startedNs : 0;
        }
        break;
      case OpState::kCompleted:
        s.lastCompleted = refOf(*r);
        break;
      case OpState::kFailed:
        if (!s.failedIn) {
          s.failedIn = refOf(*r);
          s.error = r->error;
        }
        break;
    }
  }
  // Ops after the first failure fail at once without starting; a rank that
  // started nothing after it is stopped there.
  s.stoppedByFailure = s.failedIn && (!anyStarted || lastStartedTicket <= s.failedIn->ticket);
  return s;
}

struct Furthest {
  uint64_t seq = 0;
  uint64_t ticket = 0;  // on the rank that got furthest, to order ops of different kinds
};

// Per kind of collective, the highest number any rank started.
std::map<std::string, Furthest> furthestByKind(const std::vector<Dump>& dumps) {
  std::map<std::string, Furthest> out;
  for (const Dump& d : dumps) {
    for (const OpRecord& r : d.ops) {
      if (!started(r) || pointToPoint(r)) continue;
      Furthest& f = out[r.op];
      if (r.seq > f.seq) f = Furthest{r.seq, r.ticket};
    }
  }
  return out;
}

std::vector<OpRef> missedBy(const Dump& d, const std::map<std::string, Furthest>& furthest) {
  std::map<std::string, uint64_t> reached;  // kind -> highest number started
  uint64_t lastStarted = 0;
  for (const OpRecord& r : d.ops) {
    if (!started(r)) continue;
    reached[r.op] = std::max(reached[r.op], r.seq);
    lastStarted = std::max(lastStarted, r.ticket);
  }
  // The ring dropped older ops when it no longer holds the first one.
  const bool wrapped = !d.ops.empty() && std::none_of(d.ops.begin(), d.ops.end(),
                                                      [](const OpRecord& r) { return r.ticket == 0; });
  std::vector<OpRef> out;
  for (const auto& [kind, f] : furthest) {
    auto it = reached.find(kind);
    if (it != reached.end() && it->second >= f.seq) continue;
    // No op of this kind left in a wrapped ring: it may have run before the
    // window. Tickets are the only evidence left; they agree across ranks
    // unless point-to-point ops shifted them.
    if (it == reached.end() && wrapped && lastStarted >= f.ticket) continue;
    out.push_back(OpRef{kind, f.seq, f.ticket});
  }
  // Ties (ranks that parted ways at one ticket) go by name, so the order is
  // the same on every run.
  std::sort(out.begin(), out.end(), [](const OpRef& a, const OpRef& b) {
    return std::tie(a.ticket, a.op) < std::tie(b.ticket, b.op);
  });
  return out;
}

std::optional<Mismatch> findMismatch(const std::vector<Dump>& dumps) {
  std::map<uint64_t, std::vector<std::pair<int, OpRef>>> atTicket;
  for (const Dump& d : dumps) {
    for (const OpRecord& r : d.ops) {
      if (pointToPoint(r)) return std::nullopt;  // tickets no longer line up
      if (started(r)) atTicket[r.ticket].emplace_back(d.rank, refOf(r));
    }
  }
  for (auto& [ticket, calls] : atTicket) {
    const std::string& first = calls.front().second.op;
    bool differ =
        std::any_of(calls.begin(), calls.end(), [&](const auto& c) { return c.second.op != first; });
    if (!differ) continue;
    std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return Mismatch{ticket, calls};
  }
  return std::nullopt;
}

}  // namespace

std::string OpRef::label() const {
  if (seq == 0) return op + " (ticket " + std::to_string(ticket) + ", never started)";
  return op + " #" + std::to_string(seq);
}

Report analyze(const std::vector<Dump>& input) {
  std::vector<Dump> dumps = input;
  std::sort(dumps.begin(), dumps.end(), [](const Dump& a, const Dump& b) { return a.rank < b.rank; });
  Report report;
  for (const Dump& d : dumps) {
    report.nranks = std::max(report.nranks, d.nranks);
    report.ranks.push_back(statusOf(d));
  }
  std::vector<bool> present(report.nranks, false);
  for (const Dump& d : dumps)
    if (d.rank >= 0 && d.rank < report.nranks) present[d.rank] = true;
  for (int r = 0; r < report.nranks; ++r)
    if (!present[r]) report.absent.push_back(r);

  report.mismatch = findMismatch(dumps);
  const std::map<std::string, Furthest> furthest = furthestByKind(dumps);
  for (const Dump& d : dumps) {
    std::vector<OpRef> missed = missedBy(d, furthest);
    // Once call orders part, a rank that ran another op at the same ticket
    // did not fall behind: "rank 0 is missing from allgather #1" would only
    // restate the mismatch. A rank that started nothing there is still missing.
    if (report.mismatch) {
      std::erase_if(missed, [&](const OpRef& op) {
        return op.ticket >= report.mismatch->ticket &&
               std::any_of(d.ops.begin(), d.ops.end(),
                           [&](const OpRecord& r) { return started(r) && r.ticket == op.ticket; });
      });
    }
    if (!missed.empty()) report.missing.push_back(Missing{d.rank, std::move(missed)});
  }
  report.slowest = findSlowest(dumps, &report);
  return report;
}

}  // namespace braid::trace
