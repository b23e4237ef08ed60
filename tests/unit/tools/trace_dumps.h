// Dumps for braid-trace's tests, in the flight recorder's own format
// (FlightRecorder::toJson), written to a fresh directory per test.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace braid::trace::testing {

struct FakeOp {
  std::string op = "allreduce";
  uint64_t seq = 0;  // 0: never started
  std::string state = "completed";
  uint64_t startNs = 0, endNs = 0;
  std::string error;
};

struct FakeRank {
  int rank = 0, nranks = 1;
  std::string host = "node1";
  uint64_t firstTicket = 0;  // > 0: the ring dropped older ops
  uint64_t nowNs = 0;
  std::vector<FakeOp> ops;  // in ticket order from firstTicket

  nlohmann::json json() const {
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < ops.size(); ++i) {
      const FakeOp& o = ops[i];
      nlohmann::json j = {{"ticket", firstTicket + i},
                          {"seq", o.seq},
                          {"op", o.op},
                          {"dtype", "float"},
                          {"count", 1024},
                          {"root_or_peer", -1},
                          {"algorithm", "ring"},
                          {"state", o.state},
                          {"enqueued_ns", o.startNs},
                          {"started_ns", o.seq ? o.startNs : 0},
                          {"ended_ns", o.endNs},
                          {"bytes", 8192}};
      if (!o.error.empty()) j["error"] = o.error;
      list.push_back(j);
    }
    return {{"rank", rank},       {"nranks", nranks}, {"host", host},
            {"pid", 1000 + rank}, {"now_ns", nowNs},  {"ops", list}};
  }
};

// `n` completed all-reduces numbered from `firstSeq`, op k starting at
// base + k * 10 ms (+ lateNs) and lasting durNs.
inline std::vector<FakeOp> completedAllReduces(uint64_t firstSeq, int n, uint64_t baseNs, uint64_t lateNs = 0,
                                               uint64_t durNs = 1000000) {
  std::vector<FakeOp> ops;
  for (int k = 0; k < n; ++k) {
    uint64_t start = baseNs + uint64_t(k) * 10000000 + lateNs;
    ops.push_back(FakeOp{"allreduce", firstSeq + k, "completed", start, start + durNs, ""});
  }
  return ops;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/braid-trace-unit-XXXXXX";
    const char* d = mkdtemp(tmpl);
    path_ = d ? d : "";
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  // Under the name the recorder gives its dumps in BRAID_TRACE_DIR.
  std::string write(const FakeRank& r) const {
    return write("braid-trace." + r.host + "." + std::to_string(1000 + r.rank) + ".rank" +
                     std::to_string(r.rank) + ".json",
                 r.json().dump());
  }

 private:
  std::string path_;
};

}  // namespace braid::trace::testing
