#include "render_json.h"

#include "render_text.h"

namespace braid::trace {
namespace {

using Json = nlohmann::ordered_json;

Json opJson(const OpRef& op) {
  return Json{{"op", op.op}, {"seq", op.seq}, {"ticket", op.ticket}, {"label", op.label()}};
}

template <typename T, typename F>
Json orNull(const std::optional<T>& v, F f) {
  return v ? f(*v) : Json(nullptr);
}

Json rankJson(const RankStatus& s) {
  Json in = orNull(s.in, opJson);
  if (s.in) in["for_ns"] = s.inForNs;
  Json failed = orNull(s.failedIn, opJson);
  if (s.failedIn) failed["error"] = s.error;
  return Json{{"rank", s.rank},
              {"host", s.host},
              {"pid", s.pid},
              {"file", s.file},
              {"recorded", s.recorded},
              {"in", in},
              {"last_completed", orNull(s.lastCompleted, opJson)},
              {"failed", failed},
              {"stopped_by_failure", s.stoppedByFailure},
              {"queued", s.queued},
              {"mean_late_ns", orNull(s.meanLateNs, [](double v) { return Json(v); })}};
}

}  // namespace

Json toJson(const Report& r) {
  Json ranks = Json::array(), missing = Json::array();
  for (const RankStatus& s : r.ranks) ranks.push_back(rankJson(s));
  for (const Missing& m : r.missing) {
    Json from = Json::array();
    for (const OpRef& op : m.from) from.push_back(opJson(op));
    missing.push_back(Json{{"rank", m.rank}, {"from", from}});
  }
  Json mismatch = orNull(r.mismatch, [](const Mismatch& m) {
    Json calls = Json::array();
    for (const auto& [rank, op] : m.calls) {
      Json c = opJson(op);
      c["rank"] = rank;
      calls.push_back(c);
    }
    return Json{{"ticket", m.ticket}, {"calls", calls}};
  });
  Json slowest = orNull(r.slowest, [](const Slowest& s) {
    return Json{{"rank", s.rank},   {"mean_late_ns", s.meanLateNs},         {"common_ops", s.commonOps},
                {"hosts", s.hosts}, {"from_start_times", s.fromStartTimes}, {"notable", s.notable}};
  });
  return Json{{"summary", summary(r)}, {"nranks", r.nranks},   {"absent", r.absent}, {"ranks", ranks},
              {"missing", missing},    {"mismatch", mismatch}, {"slowest", slowest}};
}

}  // namespace braid::trace
