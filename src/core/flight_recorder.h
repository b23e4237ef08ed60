// FlightRecorder: the last K operations of a communicator, so that when
// something hangs or fails every rank can say which op it was in (MegaScale's
// lesson: localising a hang is what costs hours). Each entry holds the op's
// comm-wide sequence number and its number among ops of its kind (the
// "allreduce #12" of error messages), kind, dtype, count, algorithm, root or
// peer, state, timestamps and bytes moved.
//
// Written under a mutex by the thread running or queueing ops; cheap (no
// allocation after construction except the algorithm name, which is short).
// Dumped as JSON on failure, on SIGUSR1, and by braidCommDumpTrace.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/types.h"
#include "algorithms/collective.h"

namespace braid::core {

enum class OpState : uint8_t { kEnqueued, kStarted, kCompleted, kFailed };
const char* opStateName(OpState s);

struct OpRecord {
  uint64_t ticket = 0;   // comm-wide order of issue, from 0
  uint64_t kindSeq = 0;  // n-th op of its kind, from 1 (0 until started)
  algo::Collective collective = algo::Collective::kAllReduce;
  DataType dtype = DataType::kUint8;
  size_t count = 0;
  int rootOrPeer = -1;
  std::string algorithm;
  OpState state = OpState::kEnqueued;
  uint64_t enqueuedNs = 0, startedNs = 0, endedNs = 0;  // steady clock
  uint64_t bytes = 0;    // bytes this rank sent + received
  std::string error;     // when failed
};

class FlightRecorder {
 public:
  explicit FlightRecorder(size_t capacity);

  void enqueued(const OpRecord& record);
  // atNs: when it started (nowNs()), read once by the caller for this and the op's deadline.
  void started(uint64_t ticket, uint64_t kindSeq, uint64_t bytes, uint64_t atNs);
  void finished(uint64_t ticket, const Status& status);

  // The entries still held, oldest first.
  std::vector<OpRecord> snapshot() const;
  // JSON: {"rank":..,"nranks":..,"host":..,"pid":..,"now_ns":..,"ops":[...]}.
  std::string toJson(int rank, int nranks) const;
  // Writes toJson to `path` (atomically: temp file + rename).
  Status dump(const std::string& path, int rank, int nranks) const;

 private:
  OpRecord* find(uint64_t ticket);  // under mu_

  mutable std::mutex mu_;
  std::vector<OpRecord> ring_;
  uint64_t next_ = 0;  // total records ever added
};

}  // namespace braid::core
