// One rank's flight-recorder dump, as braid writes it (FlightRecorder::toJson
// in src/core/flight_recorder.cc): plain data, filled by parse.h and read by
// analyze.h. The field meanings are the recorder's; only the names follow C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braid::trace {

enum class OpState { kEnqueued, kStarted, kCompleted, kFailed };

struct OpRecord {
  uint64_t ticket = 0;  // comm-wide order of issue on this rank, from 0
  uint64_t seq = 0;     // n-th op of its kind, from 1; 0 when it never started
  std::string op;       // "allreduce", "broadcast", ..., "sendrecv", "barrier"
  std::string dtype;
  uint64_t count = 0;
  int64_t rootOrPeer = -1;
  std::string algorithm;
  OpState state = OpState::kEnqueued;
  // Steady clock of the rank's host: comparable between processes of one
  // host, not across hosts.
  uint64_t enqueuedNs = 0, startedNs = 0, endedNs = 0;
  uint64_t bytes = 0;
  std::string error;  // when failed
};

struct Dump {
  std::string file;  // where it was read from, for messages
  int rank = 0;
  int nranks = 0;
  std::string host;
  int64_t pid = 0;
  uint64_t nowNs = 0;  // when the dump was written, on the same clock as the ops
  std::vector<OpRecord> ops;
};

}  // namespace braid::trace
