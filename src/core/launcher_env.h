// Where braidCommInitFromEnv finds rank, size, rendezvous address and secret:
// the variables of the launchers people use (braid-run, torchrun, Open MPI,
// PMI, SLURM). A pure function of a getenv-like lookup, so tests can feed it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "transports/transport.h"

namespace braid::core {

struct LauncherEnv {
  int rank = -1;
  int nranks = 0;
  std::string rootAddress;  // host:port
  transport::Secret secret{};
  bool hasSecret = false;
  std::string source;  // which convention supplied rank/size, for messages
};

using Lookup = std::function<std::optional<std::string>(const char*)>;

// InvalidArgument naming the variables when no convention is complete or a
// value does not parse.
Status readLauncherEnv(const Lookup& lookup, LauncherEnv* out);
Status readLauncherEnv(LauncherEnv* out);  // from the process environment

}  // namespace braid::core
