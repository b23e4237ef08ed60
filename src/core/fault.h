// Fault: what one rank tells the others when the communicator fails, and what
// every rank then reports. It names the suspected rank (the culprit) and the
// rank that noticed (the reporter), so that every surviving rank can say who
// was at fault, not only the neighbour that saw the broken connection.
#pragma once

#include <string>

#include "base/status.h"

namespace braid::core {

struct Fault {
  Code code = Code::kOk;  // RemoteError (died, aborted, broke a link) or Timeout (silent)
  int culprit = -1;       // the rank suspected; -1 when unknown
  int reporter = -1;      // the rank that noticed
  std::string what;       // "rank 2 died (its control connection closed)"

  // The Status an op of another rank returns for this fault: Timeout stays
  // Timeout, everything else is a RemoteError from that rank's point of view.
  Status asRemoteStatus() const {
    const Code c = code == Code::kTimeout ? Code::kTimeout : Code::kRemoteError;
    return Status(c, "rank " + std::to_string(reporter) + " reports: " + what);
  }
};

}  // namespace braid::core
