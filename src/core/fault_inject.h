// Test-only fault injection (BRAID_FAULT_INJECT), so that fault tests can
// break a real connection at a chosen point without a transport knowing about
// collectives: the communicator applies it to its Connections right before the
// chosen op runs on the chosen rank.
//
// Spec: "rank=R,op=N,kind=K[,peer=P]"; op counts this communicator's ops from
// 1; peer defaults to (R + 1) % nranks. Kinds:
//   close-socket   the links to P are closed (the peer sees a real EOF) and
//                  later sends/receives to P fail on this rank;
//   corrupt-header the next message to P carries a corrupted tag in its frame
//                  header (the receiver's transport rejects the frame);
//   kill / stop    the process raises SIGKILL / SIGSTOP as the op starts.
// Not for production use: it exists so that every failure path is tested.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "core/connections.h"

namespace braid::core {

struct FaultInjection {
  enum class Kind { kNone, kCloseSocket, kCorruptHeader, kKill, kStop };
  Kind kind = Kind::kNone;
  int rank = -1;
  uint64_t op = 0;
  int peer = -1;
  std::string spec;  // as given, for messages

  // "" gives kNone. InvalidArgument names the bad field.
  static Status parse(const std::string& spec, FaultInjection* out);
  bool armedFor(int rank, uint64_t opNumber) const { return kind != Kind::kNone && rank == this->rank && opNumber == op; }
  // Breaks what the spec says. Called by the ticket holder before the op runs.
  Status apply(int nranks, Connections& connections) const;
};

}  // namespace braid::core
