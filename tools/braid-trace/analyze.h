// What the dumps of all ranks say happened, as data: a pure function of the
// parsed dumps (no I/O, no clock), so every finding can be tested on dumps
// built in a test. render_text.h and render_json.h turn it into words.
//
// Ops are matched across ranks by kind and per-kind number ("allreduce #12"),
// not by ticket: every rank of a communicator runs the same collectives in the
// same order, but point-to-point ops differ per rank and would shift tickets.
// An op counts as reached by a rank once that rank started it (an op merely
// queued on a stream, or failed because the communicator had already failed,
// was never entered).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dump.h"

namespace braid::trace {

struct OpRef {
  std::string op;
  uint64_t seq = 0;  // 0: the op never started, so it has no number
  uint64_t ticket = 0;
  // "allreduce #12", or "allreduce (ticket 7, never started)".
  std::string label() const;
};

struct RankStatus {
  int rank = 0;
  std::string host, file;
  int64_t pid = 0;
  size_t recorded = 0;      // ops in the dump
  std::optional<OpRef> in;  // started and not ended: the op it is in
  uint64_t inForNs = 0;     // how long it had been in it when it dumped
  std::optional<OpRef> lastCompleted;
  std::optional<OpRef> failedIn;     // its first failed op
  std::string error;                 // that op's error
  bool stoppedByFailure = false;     // nothing started after failedIn
  size_t queued = 0;                 // ops issued but not started
  std::optional<double> meanLateNs;  // see Slowest; set when there are common ops
};

// A rank that never started ops some other rank started (leaving out, after
// a Mismatch, ops whose place the rank filled with a different collective).
struct Missing {
  int rank = 0;
  std::vector<OpRef> from;  // in the order the ranks that reached them ran them
};

// Ranks that ran different collectives at the same point of their call order.
// Only looked for when no dump holds point-to-point ops (those shift tickets).
struct Mismatch {
  uint64_t ticket = 0;
  std::vector<std::pair<int, OpRef>> calls;  // (rank, what it started there)
};

// "Slowest" means: entered the ops every dumped rank completed latest, on
// average. Lateness of a rank in one op is its start minus the earliest
// start, when all dumps come from one host (one steady clock). Across hosts
// the clocks are not comparable, so it is estimated from durations instead:
// a collective ends at about the same time everywhere, so a rank that came
// late spends that much less time in it (longest duration minus its own).
// Below this mean lateness a rank is not called slow: on a shared CPU host the
// scheduler alone delays ranks by time slices of about a millisecond.
constexpr double kNotableLateNs = 1e6;

struct Slowest {
  int rank = -1;
  double meanLateNs = 0;
  size_t commonOps = 0;
  size_t hosts = 0;
  bool fromStartTimes = false;  // false: estimated from durations
  bool notable = false;         // meanLateNs >= kNotableLateNs
};

struct Report {
  int nranks = 0;
  std::vector<RankStatus> ranks;  // one per dump, by rank
  std::vector<int> absent;        // ranks below nranks with no dump
  std::vector<Missing> missing;
  std::optional<Mismatch> mismatch;
  std::optional<Slowest> slowest;  // unset with fewer than 2 dumps or no common op
};

// Dumps as loadDumps returns them (one per rank, one nranks).
Report analyze(const std::vector<Dump>& dumps);

// Sets meanLateNs on report->ranks and returns the slowest; slowest.cc.
std::optional<Slowest> findSlowest(const std::vector<Dump>& dumps, Report* report);

}  // namespace braid::trace
