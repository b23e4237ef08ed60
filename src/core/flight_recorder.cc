#include "core/flight_recorder.h"

#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "base/deadline.h"

namespace braid::core {

const char* opStateName(OpState s) {
  switch (s) {
    case OpState::kEnqueued: return "enqueued";
    case OpState::kStarted: return "started";
    case OpState::kCompleted: return "completed";
    case OpState::kFailed: return "failed";
  }
  return "unknown";
}

FlightRecorder::FlightRecorder(size_t capacity) : ring_(capacity == 0 ? 1 : capacity) {
  if (ring_.size() > 1 && (ring_.size() & (ring_.size() - 1)) == 0) mask_ = ring_.size() - 1;
  for (OpRecord& r : ring_) r.ticket = kNoTicket;
}

OpRecord& FlightRecorder::enqueued(uint64_t ticket, uint64_t atNs) {
  // Filled in place: the slot's strings keep their buffers from op to op.
  OpRecord& slot = ring_[indexOf(ticket)];
  slot.ticket = ticket;
  slot.kindSeq = 0;
  slot.state = OpState::kEnqueued;
  slot.enqueuedNs = atNs;
  slot.startedNs = slot.endedNs = 0;
  slot.bytes = 0;
  slot.error.clear();
  if (ticket >= next_) next_ = ticket + 1;
  return slot;
}

OpRecord* FlightRecorder::find(uint64_t ticket) {
  OpRecord& slot = ring_[indexOf(ticket)];
  // A ticket's slot is fixed; it is gone once a ticket K later is recorded.
  return slot.ticket == ticket ? &slot : nullptr;
}

void FlightRecorder::started(uint64_t ticket, uint64_t kindSeq, uint64_t bytes, uint64_t atNs) {
  if (OpRecord* r = find(ticket)) {
    r->state = OpState::kStarted;
    r->kindSeq = kindSeq;
    r->bytes = bytes;
    r->startedNs = atNs;
  }
}

void FlightRecorder::finished(uint64_t ticket, const Status& status) {
  if (OpRecord* r = find(ticket)) {
    r->state = status.isOk() ? OpState::kCompleted : OpState::kFailed;
    r->endedNs = coarseNowNs();
    if (!status.isOk()) r->error = status.message();
  }
}

std::vector<OpRecord> FlightRecorder::snapshot() const {
  std::vector<OpRecord> out;
  const uint64_t held = next_ < ring_.size() ? next_ : ring_.size();
  for (uint64_t i = next_ - held; i < next_; ++i) {
    const OpRecord& r = ring_[indexOf(i)];
    if (r.ticket == i) out.push_back(r);  // else not recorded yet (queued behind its turn)
  }
  return out;
}

static std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string FlightRecorder::toJson(int rank, int nranks) const {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::ostringstream o;
  o << "{\"rank\":" << rank << ",\"nranks\":" << nranks << ",\"host\":" << jsonString(host)
    << ",\"pid\":" << getpid() << ",\"now_ns\":" << nowNs() << ",\"ops\":[";
  bool first = true;
  for (const OpRecord& r : snapshot()) {
    o << (first ? "" : ",") << "\n {\"ticket\":" << r.ticket << ",\"seq\":" << r.kindSeq
      << ",\"op\":" << jsonString(algo::collectiveName(r.collective))
      << ",\"dtype\":" << jsonString(dataTypeName(r.dtype)) << ",\"count\":" << r.count
      << ",\"root_or_peer\":" << r.rootOrPeer << ",\"algorithm\":" << jsonString(r.algorithm)
      << ",\"state\":" << jsonString(opStateName(r.state)) << ",\"enqueued_ns\":" << r.enqueuedNs
      << ",\"started_ns\":" << r.startedNs << ",\"ended_ns\":" << r.endedNs << ",\"bytes\":" << r.bytes;
    if (!r.error.empty()) o << ",\"error\":" << jsonString(r.error);
    o << "}";
    first = false;
  }
  o << "\n]}\n";
  return o.str();
}

Status FlightRecorder::writeJson(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  FILE* f = fopen(tmp.c_str(), "w");
  if (f == nullptr) return systemError("writing trace " + tmp, errno);
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  ok &= fclose(f) == 0;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return systemError("writing trace " + path, err);
  }
  return Status::ok();
}

}  // namespace braid::core
