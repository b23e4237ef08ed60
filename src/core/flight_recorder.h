// FlightRecorder: the last K operations of a communicator, so that when
// something hangs or fails every rank can say which op it was in (MegaScale's
// lesson: localising a hang is what costs hours). Each entry holds the op's
// comm-wide sequence number and its number among ops of its kind (the
// "allreduce #12" of error messages), kind, dtype, count, algorithm, root or
// peer, state, timestamps and bytes moved.
//
// Not thread-safe by itself: its owner serialises every call (the
// communicator holds its own mutex around each, which it takes for its ticket
// bookkeeping anyway, so an op costs no extra lock). Cheap: no allocation after
// construction except the algorithm name, which is short. Dumped as JSON on
// failure, on SIGUSR1, and by braidCommDumpTrace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/collective.h"
#include "base/status.h"
#include "base/types.h"

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
  uint64_t enqueuedNs = 0, startedNs = 0, endedNs = 0;  // steady clock (coarseNow: ms resolution)
  uint64_t bytes = 0;    // bytes this rank sent + received
  std::string error;     // when failed
};

class FlightRecorder {
 public:
  explicit FlightRecorder(size_t capacity);

  // Times are steady-clock nanoseconds the caller read (one reading serves
  // the record and the op's deadline; coarseNow() is precise enough).
  // A new record for `ticket`, state enqueued; the caller fills in what the
  // op is. Tickets may come out of order: an op queued on a stream is
  // recorded when its turn comes (so that queuing it takes no lock), after
  // later tickets run inline have been.
  OpRecord& enqueued(uint64_t ticket, uint64_t atNs);
  void started(uint64_t ticket, uint64_t kindSeq, uint64_t bytes, uint64_t atNs);
  void finished(uint64_t ticket, const Status& status);

  // The entries still held, oldest first.
  std::vector<OpRecord> snapshot() const;
  // JSON: {"rank":..,"nranks":..,"host":..,"pid":..,"now_ns":..,"ops":[...]}.
  std::string toJson(int rank, int nranks) const;
  // Writes toJson's text to `path` (atomically: temp file + rename); needs no
  // recorder, so the owner can write outside its lock.
  static Status writeJson(const std::string& path, const std::string& json);

 private:
  OpRecord* find(uint64_t ticket);
  // Where a ticket's record lives. The default capacity is a power of two,
  // which makes this a mask instead of a division (three per op).
  size_t indexOf(uint64_t ticket) const {
    return mask_ != 0 ? static_cast<size_t>(ticket & mask_) : static_cast<size_t>(ticket % ring_.size());
  }

  static constexpr uint64_t kNoTicket = ~uint64_t{0};  // a slot never written

  std::vector<OpRecord> ring_;
  uint64_t mask_ = 0;  // ring_.size() - 1 when that is a power of two above 1
  uint64_t next_ = 0;  // one past the highest ticket recorded
};

}  // namespace braid::core
